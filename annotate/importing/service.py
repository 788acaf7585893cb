"""The one import writer (issue 32 item 3): whatever the format, a dataset
is read and checked whole by its format module (annotate.importing.formats),
then written here in one transaction, with one update rule
(annotate.importing.conflicts: what annotators saw may not change once an
item has votes or claims; its metadata may) and every record-level option.
Images are stored once by SHA-256 (thumbnails and the stored Markdown HTML
are made by tasks); content goes through annotate.importing.content.
"""

from __future__ import annotations

import io
import logging
import tempfile
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction

from annotate import signals
from annotate.importing import formats
from annotate.importing.bounds import import_bounds
from annotate.importing.conflicts import CREATE, plan_import, renamed
from annotate.importing.content import CONTENT_COLUMNS, content_columns, write_parsed_parts
from annotate.importing.formats import DatasetSource, ParsedFile, ParsedItem, ReadContext
from annotate.importing.formats import release as release_reader
from annotate.importing.imagestore import (
    ImageCopies,
    remove_orphans,
    store_images,
)
from annotate.importing.jsonscan import DatasetFile
from annotate.importing.options import ImportOptions, option_problems
from annotate.importing.records import (
    PAIRS_FIELDS,
    ImageLimits,
    ImportFailed,
    ImportProblem,
    ProblemLog,
)
from annotate.importing.sources import (
    DirectoryImageSource,
    ImageSource,
    NoImageSource,
    ZipImageSource,
    find_dataset_in_zip,
)
from annotate.models import Domain, ImageAsset, Item, Project, shuffle_key
from annotate.models.parts import response_count_problem
from common.bulk import insert_rows

log = logging.getLogger(__name__)


THUMBNAIL_SIZE = (384, 384)


def image_limits() -> ImageLimits:
    return ImageLimits(
        max_pixels=settings.IMAGE_MAX_PIXELS,
        max_bytes=settings.IMAGE_MAX_BYTES,
        allowed_formats=tuple(settings.IMAGE_ALLOWED_FORMATS),
    )


@dataclass
class ImportResult:
    format: str
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    images_stored: int = 0
    media_stored: int = 0  # new videos and audio files (issue 35)
    duplicates_skipped: int = 0  # later records of a repeated ID (keep-first)
    duplicates_renamed: int = 0  # later records of a repeated ID (suffix)
    votes_cast: int = 0  # published annotations cast as votes (cast_votes)
    item_ids: list[int] = field(default_factory=list)
    release: dict = field(default_factory=dict)  # the release a release import read
    frame: str = "{}"  # the format's words around the summary

    def summary(self) -> str:
        text = (
            f"{self.created} created, {self.updated} updated, {self.unchanged} unchanged; "
            f"{self.images_stored} new images stored"
        )
        if self.media_stored:
            text += f", {self.media_stored} new videos or audio files"
        if self.duplicates_skipped:
            text += f"; {self.duplicates_skipped} records with a repeated ID left out"
        if self.duplicates_renamed:
            text += f"; {self.duplicates_renamed} records with a repeated ID renamed"
        if self.votes_cast:
            text += f"; {self.votes_cast} published annotations cast as imported votes"
        return self.frame.format(text)


NO_PUBLISHED_VOTES = (
    "casting published annotations as votes needs a format that carries per-annotator "
    "labels; this file has none"
)


def import_items_from_paths(
    *,
    project: Project,
    dataset: Path,
    images: Path | None = None,
    fmt: str | None = None,
    domain: str | None = None,
    field_map: dict[str, str] | None = None,
    seed: int | None = None,
    gold_from_label: bool = False,
    update: bool = False,
    options: ImportOptions | None = None,
    progress: Callable[[int], None] | None = None,
    cast_votes: bool = False,
    task: str | None = None,
    image_source: ImageSource | None = None,
) -> ImportResult:
    """Import from files on disk: `dataset` is a file (.json, .jsonl,
    .parquet, a task file, …), a zip holding one with its images, or a
    release (zip or folder); `images` a folder or a zip (or `image_source`:
    where they are, such as a bucket). The format is
    `fmt`, else the first registered format that detects the dataset.

    Raises ImportFailed (nothing written) if any record, image or conflict
    with existing items is wrong. Re-importing the same file is a no-op.
    `options`: duplicate IDs, derived domains, conflicts, and the surface
    whose option names problems use (annotate.importing.options)."""
    options = options or ImportOptions()
    given = {
        "fmt": fmt,
        "domain": domain,
        "field_map": field_map,
        "gold_from_label": gold_from_label,
        "update": update,
        "task": task,
    }
    with ExitStack() as stack:
        if dataset.suffix.lower() == ".zip" and dataset.is_file():
            archive = ZipImageSource(dataset)
            stack.callback(archive.close)
            source = DatasetSource(dataset, archive)
            if release_reader.release_folder_in_zip(archive) is None:
                source.member, archive.prefix = find_dataset_in_zip(archive)
        else:
            if not dataset.exists():
                raise ImportFailed([ImportProblem(str(dataset), "file not found")])
            source = DatasetSource(dataset)
        image_source = image_source or _image_source(images, stack)
        return _import(
            project=project,
            source=source,
            images=image_source,
            images_path=images,
            stack=stack,
            options=options,
            given=given,
            seed=seed,
            progress=progress,
            cast_votes=cast_votes,
        )


def import_items(
    *,
    project: Project,
    data: bytes | DatasetFile,
    filename: str,
    images: ImageSource | None = None,
    fmt: str | None = None,
    domain: str | None = None,
    field_map: dict[str, str] | None = None,
    seed: int | None = None,
    gold_from_label: bool = False,
    update: bool = False,
    options: ImportOptions | None = None,
    progress: Callable[[int], None] | None = None,
) -> ImportResult:
    """Import a JSON or JSONL dataset held in memory (or mapped): as
    import_items_from_paths does for such a file."""
    options = options or ImportOptions()
    given = {"fmt": fmt, "domain": domain, "field_map": field_map, "update": update}
    given["gold_from_label"] = gold_from_label
    with ExitStack() as stack:
        return _import(
            project=project,
            source=DatasetSource(Path(filename)),
            images=images,
            images_path=None,
            stack=stack,
            options=options,
            given=given,
            seed=seed,
            progress=progress,
            cast_votes=False,
            data=data,
        )


def _image_source(images: Path | None, stack: ExitStack) -> ImageSource | None:
    if images is None:
        return None
    if images.is_dir():
        return DirectoryImageSource(images)
    if images.is_file():
        source = ZipImageSource(images)
        stack.callback(source.close)
        return source
    raise ImportFailed([ImportProblem(str(images), "image folder or zip not found")])


def _import(
    *,
    project,
    source,
    images,
    images_path,
    stack,
    options,
    given,
    seed,
    progress,
    cast_votes,
    data=None,
) -> ImportResult:
    if given.get("update") and options.conflicts == "refuse":
        options = replace(options, conflicts="replace")  # the older flag
    filename = source.label
    if project.archived_at is not None:
        raise ImportFailed([ImportProblem(filename, "the project is archived (read-only)")])
    domains = {d.slug: d for d in project.domains.all()}
    known: dict[str, str] = {}
    for d in domains.values():
        known[d.slug] = d.slug
        known[d.export_category] = d.slug
    domain, field_map = given.get("domain"), given.get("field_map") or {}
    if domain is not None and domain not in known:
        raise ImportFailed(
            [
                ImportProblem(
                    filename, f"unknown domain {domain!r}; known: {', '.join(sorted(domains))}"
                )
            ]
        )
    unknown_fields = [name for name in field_map if name not in PAIRS_FIELDS]
    if unknown_fields:
        # A typo here would otherwise surface as "field is missing" on every record.
        raise ImportFailed(
            [
                ImportProblem(
                    filename,
                    f"field map names unknown field {name!r}; ours are: {', '.join(PAIRS_FIELDS)}",
                )
                for name in unknown_fields
            ]
        )
    wrong = option_problems(options, known, domain=domain)
    if wrong:
        raise ImportFailed([ImportProblem(filename, message) for message in wrong])
    context = ReadContext(
        project=project,
        known=known,
        options=options,
        images=images,
        images_path=images_path,
        limits=image_limits(),
        bounds=import_bounds(),
        stack=stack,
        fmt=given.get("fmt"),
        domain=domain,
        field_map=field_map,
        seed=project.seed if seed is None else seed,
        gold_from_label=bool(given.get("gold_from_label")),
        cast_votes=cast_votes,
        progress=progress,
        given=given,
    )
    if data is not None:  # in memory: JSON or JSONL
        parsed = formats.fallback().read_data(
            data,
            filename=filename,
            fmt=context.fmt,
            images=images or NoImageSource(),
            context=context,
        )
    else:
        module = formats.find(source, context.fmt)
        if cast_votes and not getattr(module, "CASTS_VOTES", False):
            raise ImportFailed([ImportProblem(source.path.name, NO_PUBLISHED_VOTES)])
        parsed = module.read(source, context)
    if cast_votes and parsed.votes is None:
        raise ImportFailed([ImportProblem(source.path.name, NO_PUBLISHED_VOTES)])
    try:
        return write_parsed(
            project=project,
            parsed=parsed,
            conflicts=options.conflicts,
            wording=options.wording,
            limits=context.limits,
            cast_votes=cast_votes,
        )
    except ImportFailed as exc:
        if parsed.restate is None:
            raise
        raise parsed.restate(exc) from None


def write_parsed(
    *,
    project: Project,
    parsed: ParsedFile,
    conflicts: str,
    wording,
    limits: ImageLimits,
    cast_votes: bool = False,
) -> ImportResult:
    """Write a checked file in one transaction (the one writer)."""
    result = ImportResult(
        format=parsed.format,
        duplicates_skipped=parsed.skipped,
        duplicates_renamed=parsed.renamed,
        unchanged=parsed.unchanged,
        release=parsed.extra.get("release", {}),
        frame=parsed.extra.get("summary", "{}"),
    )
    problems = ProblemLog(parsed.filename, settings.IMPORT_MAX_ERRORS, wording)
    existing = {
        ext_id: (pk, digest, live > 0)
        for ext_id, pk, digest, live in Item.objects.filter(project=project).values_list(
            "external_id", "pk", "content_hash", "live_assignments"
        )
    }
    if existing.keys() & set(parsed.ids):
        plan = plan_import(parsed=parsed, existing=existing, mode=conflicts, log=problems)
        actions, renames = plan.actions, plan.renames
        result.unchanged += plan.unchanged
    else:  # a new dataset (the usual case): every item is created
        actions, renames = [CREATE] * parsed.count, {}
    del existing
    problems.raise_if_any()
    if all(action is None for action in actions):
        return result
    if renames or any(action != CREATE for action in actions) or parsed.skipped:
        needed = _needed_images(parsed, actions)
    else:  # every item is new: every image checked is stored (no pass over the file)
        needed = {info.sha256: info for info in parsed.images.values()}
    written: list[str] = []
    try:
        # Leaving the inner block waits for the image copies (made in threads
        # while the rows are inserted); a failed copy rolls the transaction back.
        with transaction.atomic(), ImageCopies(parsed.image_source, limits, written) as copies:
            for slug, fields in parsed.new_domains.items():
                Domain.objects.get_or_create(project=project, slug=slug, defaults=fields)
            domains = {d.slug: d.pk for d in project.domains.all()}
            image_ids, new_images = store_images(needed, copies)
            result.images_stored = len(new_images)
            del needed
            media_ids, new_media = {}, []
            if parsed.media:  # videos and audio files (issue 35)
                from annotate.importing.media import media_limits, store_media

                media_ids, new_media = store_media(
                    parsed.media, parsed.image_source, media_limits(), written
                )
                result.media_stored = len(new_media)

            def image_id(ref: str) -> int:
                """An image part's ImageAsset id; a video or audio part's MediaAsset id."""
                if ref in media_ids:
                    return media_ids[ref]
                return image_ids[parsed.images[ref].sha256]

            labelled: dict[int, ParsedItem] | None = {} if cast_votes else None
            created, updated = _write_items(
                project, parsed, actions, renames, domains, image_id, labelled, problems
            )
            result.created, result.updated, result.item_ids = len(created), len(updated), created
            signals.items_imported.send(
                sender=Item, project=project, item_ids=created, updated_ids=updated
            )
            if labelled:
                result.votes_cast = _cast_votes(project, parsed, labelled)
            if parsed.after_write is not None:
                parsed.after_write(project, created)
            from annotate.importing.tasks import make_thumbnails, render_part_html
            from config.celery import enqueue_on_commit

            if new_images:
                enqueue_on_commit(make_thumbnails, new_images)
            if new_media:
                from annotate.importing.tasks import derive_media

                enqueue_on_commit(derive_media, new_media)
            # Rendering the texts would double the import's CPU time: a worker
            # stores the HTML (the first view does if none has).
            enqueue_on_commit(render_part_html, [*created, *updated])
    except BaseException:
        remove_orphans(written)
        raise
    return result


def _needed_images(parsed: ParsedFile, actions: list) -> dict:
    """The images of the items an import writes, by SHA-256."""
    needed = {}
    for item, action in zip(parsed.items(), actions, strict=True):
        if action is None:
            continue
        for parts in item.slots().values():
            for part in parts:
                if part.kind == formats.IMAGE:
                    info = parsed.images[part.ref]
                    needed[info.sha256] = info
    return needed


# The fields of a new item's row (_write_items builds the tuples), in order.
_ITEM_FIELDS = (
    "project_id",
    "votes_needed",
    "content_hash",
    "shuffle_key",
    "domain_id",
    "external_id",
    "model_1",
    "model_2",
    "gold_choice",
    "reference_answer",
    "group_key",
    "criterion",
    "meta",
    *formats.GATE_FIELDS,
    *CONTENT_COLUMNS,
)
# How many new items are inserted at a time.
_WRITE_BATCH = 500


def _cast_votes(project: Project, parsed: ParsedFile, labelled: dict[int, ParsedItem]) -> int:
    """The new items' per-annotator labels as votes (imported_votes)."""
    from annotate.importing import imported_votes

    assert parsed.votes is not None
    scale = project.preference_scale
    votes = {pk: parsed.votes(item, scale) for pk, item in labelled.items()}
    return imported_votes.cast_votes(project=project, votes=votes, filename=parsed.filename)


def _write_items(project, parsed, actions, renames, domains, image_id, labelled, problems):
    """Insert and update the items (a batch of plain rows at a time: COPY on
    PostgreSQL, common.bulk); the pks created and updated. `labelled`, if
    not None, gets each created item's labels (its parts left out).

    An item whose number of responses the project cannot hold (2 to
    ITEM_MAX_RESPONSES; exactly two for a pairwise task:
    response_count_problem) is logged in `problems`; from the first one
    nothing more is written, the rest of the file is only checked, and
    ImportFailed names every such record (the transaction rolls back)."""
    responses_field = parsed.labels.get("responses", "responses")
    created: list[int] = []
    updated: list[int] = []
    batch: list[tuple] = []
    batch_items: list[ParsedItem] = []

    def flush():
        if problems.problems:
            batch.clear()
            batch_items.clear()
            return
        pks = insert_rows(Item, _ITEM_FIELDS, batch, return_ids=True)
        write_parsed_parts(list(zip(pks, batch_items, strict=True)), image_id)
        if labelled is not None:
            for pk, item in zip(pks, batch_items, strict=True):
                labelled[pk] = replace(item, prompt=[], responses=[], meta={})
        created.extend(pks)
        batch.clear()
        batch_items.clear()

    # The file is decoded again, and written _WRITE_BATCH items at a time:
    # no list of every item is ever held.
    for item, action in zip(parsed.items(), actions, strict=True):
        if action is None:
            continue
        problem = response_count_problem(len(item.responses), project.task)
        if problem:
            problems.add(problem, line=item.line, index=item.index, field=responses_field)
            continue
        if problems.problems:
            continue  # only checking from here: nothing is written
        if item.index in renames:  # suffix: a new item beside the existing one
            item = renamed(item, renames[item.index])
        digest = parsed.fingerprint(item)
        if action == CREATE:
            batch.append(
                (
                    project.pk,
                    item.votes_needed(project.votes_per_item),
                    digest,
                    shuffle_key(project.seed, item.external_id, item.group),
                    domains[item.domain],
                    item.external_id,
                    item.model(0),
                    item.model(1),
                    item.gold,
                    item.reference_answer,
                    item.group,
                    item.criterion,
                    item.meta,
                    *item.gate().values(),
                    *content_columns(item, image_id),
                )
            )
            batch_items.append(item)
            if len(batch) >= _WRITE_BATCH:
                flush()
            continue
        pk = action[1]  # an update: the one rule allowed it (conflicts)
        Item.objects.filter(pk=pk).update(
            domain_id=domains[item.domain],
            model_1=item.model(0),
            model_2=item.model(1),
            gold_choice=item.gold,
            reference_answer=item.reference_answer,
            group_key=item.group,
            shuffle_key=shuffle_key(project.seed, item.external_id, item.group),
            criterion=item.criterion,
            meta=item.meta,
            content_hash=digest,
            **item.gate(),
        )
        write_parsed_parts([(pk, item)], image_id, replace=True)
        updated.append(pk)
    if batch:
        flush()
    problems.raise_if_any()
    return created, updated


def import_uploaded_items(
    *,
    project: Project,
    dataset: UploadedFile,
    images: UploadedFile | None = None,
    **options,
) -> ImportResult:
    """Import uploaded files (the upload page and the API): each is written
    to a private temporary folder under its base name only (the client's
    name is untrusted), then imported as `import_items_from_paths` does, so
    problems name the uploaded file."""
    with tempfile.TemporaryDirectory(prefix="import-") as tmp:
        # Separate folders: the two uploads may share a file name.
        dataset_path = _save_upload(dataset, Path(tmp) / "dataset")
        images_path = _save_upload(images, Path(tmp) / "images") if images else None
        return import_items_from_paths(
            project=project, dataset=dataset_path, images=images_path, **options
        )


def _save_upload(upload: UploadedFile, folder: Path) -> Path:
    name = Path(upload.name or "").name or "upload"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    with path.open("wb") as fh:
        for chunk in upload.chunks():
            fh.write(chunk)
    return path


def make_thumbnails(*, image_ids: list[int]) -> int:
    """Make missing thumbnails (idempotent). Returns how many were made."""
    from PIL import Image  # heavy: loaded where used (issue 32)

    made = 0
    for asset in ImageAsset.objects.filter(pk__in=image_ids, thumbnail=""):
        if asset.width <= THUMBNAIL_SIZE[0] and asset.height <= THUMBNAIL_SIZE[1]:
            # Already thumbnail-sized: re-encoding would only cost time.
            ImageAsset.objects.filter(pk=asset.pk, thumbnail="").update(thumbnail=asset.file)
            made += 1
            continue
        with default_storage.open(asset.file, "rb") as fh, Image.open(fh) as img:
            img.thumbnail(THUMBNAIL_SIZE)
            if img.mode not in ("RGB", "RGBA"):
                img = img.convert("RGBA" if "transparency" in img.info else "RGB")
            out = io.BytesIO()
            # method=0: WebP's fastest encoder (~3x faster, slightly larger files).
            img.save(out, format="WEBP", quality=80, method=0)
        name = f"thumbs/{asset.sha256[:2]}/{asset.sha256}.webp"
        if default_storage.exists(name):
            default_storage.delete(name)
        default_storage.save(name, ContentFile(out.getvalue()))
        ImageAsset.objects.filter(pk=asset.pk, thumbnail="").update(thumbnail=name)
        made += 1
    return made
