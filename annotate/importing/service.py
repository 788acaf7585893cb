"""Writing an import: items, images (stored once by SHA-256), thumbnails and
the stored Markdown HTML.
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
from PIL import Image

from annotate import signals
from annotate.importing import hfparquet, release_import
from annotate.importing.bounds import import_bounds
from annotate.importing.conflicts import CREATE as _CREATE
from annotate.importing.conflicts import METADATA, plan_import, renamed
from annotate.importing.imagestore import (
    ImageCopies,
    image_storage_name,  # noqa: F401 (bench scripts import it from here)
    remove_orphans,
    store_images,
)
from annotate.importing.jsonscan import DatasetFile, open_dataset_file
from annotate.importing.options import ImportOptions, Wording, option_problems
from annotate.importing.parse import PairsOptions, ParsedDataset, content_hash, parse_dataset
from annotate.importing.records import (
    PAIRS_FIELDS,
    ImageInfo,
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
from annotate.models import ImageAsset, Item, Project, shuffle_key
from annotate.models.parts import (
    DERIVED_COLUMNS,
    MRB_PART_FIELDS,
    ItemPart,
    image_part,
    mrb_part_rows,
    render_parts_html,
    text_part,
    write_item_content,
)
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
    duplicates_skipped: int = 0  # later records of a repeated ID (keep-first)
    duplicates_renamed: int = 0  # later records of a repeated ID (suffix)
    votes_cast: int = 0  # published annotations cast as votes (cast_votes)
    item_ids: list[int] = field(default_factory=list)

    def summary(self) -> str:
        text = (
            f"{self.created} created, {self.updated} updated, {self.unchanged} unchanged; "
            f"{self.images_stored} new images stored"
        )
        if self.duplicates_skipped:
            text += f"; {self.duplicates_skipped} records with a repeated ID left out"
        if self.duplicates_renamed:
            text += f"; {self.duplicates_renamed} records with a repeated ID renamed"
        if self.votes_cast:
            text += f"; {self.votes_cast} published annotations cast as imported votes"
        return text


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
    """Validate a whole dataset file, then write it in one transaction.

    Raises ImportFailed (nothing written) if any record, image or conflict
    with existing items is wrong. Re-importing the same file is a no-op.
    `options`: duplicate IDs, derived domains, and the surface whose option
    names problems use (annotate.importing.options).
    """
    options = options or ImportOptions()
    if update and options.conflicts == "refuse":
        options = replace(options, conflicts="replace")  # the older flag
    w = options.wording
    if project.archived_at is not None:
        raise ImportFailed([ImportProblem(filename, "the project is archived (read-only)")])
    domains = {d.slug: d for d in project.domains.all()}
    known: dict[str, str] = {}
    for d in domains.values():
        known[d.slug] = d.slug
        known[d.export_category] = d.slug
    if domain is not None and domain not in known:
        raise ImportFailed(
            [
                ImportProblem(
                    filename,
                    f"unknown domain {domain!r}; known: {', '.join(sorted(domains))}",
                )
            ]
        )
    unknown_fields = [name for name in field_map or {} if name not in PAIRS_FIELDS]
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
    limits = image_limits()
    bounds = import_bounds()
    source = images or NoImageSource()
    parsed = parse_dataset(
        data,
        filename=filename,
        fmt=fmt,
        pairs_options=PairsOptions(
            domain=domain,
            field_map=field_map or {},
            seed=project.seed if seed is None else seed,
            gold_from_label=gold_from_label,
        ),
        known_categories=known,
        images=source,
        limits=limits,
        options=options,
        max_errors=bounds.max_errors,
        max_records=bounds.max_records,
        max_record_bytes=bounds.max_record_bytes,
        progress=progress,
    )
    return _write_dataset(
        project=project,
        parsed=parsed,
        filename=filename,
        domains=domains,
        source=source,
        limits=limits,
        conflicts=options.conflicts,
        wording=w,
    )


def _write_dataset(
    *,
    project: Project,
    parsed: ParsedDataset,
    filename: str,
    domains: dict,
    source: ImageSource,
    limits: ImageLimits,
    conflicts: str,
    wording: Wording,
) -> ImportResult:
    result = ImportResult(
        format=parsed.format,
        duplicates_skipped=parsed.skipped,
        duplicates_renamed=parsed.renamed,
    )
    existing = {
        ext_id: (pk, digest, has_votes)
        for ext_id, pk, digest, has_votes in _existing_items(project)
    }
    problems = ProblemLog(filename, settings.IMPORT_MAX_ERRORS, wording)
    id_field = "ID" if parsed.format == "mrb" else "id"
    # What to do with each record, in file order (annotate.importing.conflicts):
    # decided before the transaction, from one record at a time.
    needed: dict[str, ImageInfo] = {}
    renames: dict[int, str] = {}
    if any(ref.external_id in existing for ref in parsed.records):
        plan = plan_import(
            parsed=parsed, existing=existing, mode=conflicts, log=problems, id_field=id_field
        )
        actions, renames, result.unchanged = plan.actions, plan.renames, plan.unchanged
        for ref, action in zip(parsed.records, actions, strict=True):
            if action is not None:
                info = parsed.images[ref.image_ref]
                needed[info.sha256] = info
    else:  # a new dataset (the usual case): every record is created
        actions = [_CREATE] * len(parsed.records)
        for ref in parsed.records:
            info = parsed.images[ref.image_ref]
            needed[info.sha256] = info
    problems.raise_if_any()
    if not needed:
        return result

    written: list[str] = []
    try:
        # Leaving the inner block waits for the image copies (made in threads
        # while the rows are inserted); a failed copy rolls the transaction back.
        with transaction.atomic(), ImageCopies(source, limits, written) as copies:
            image_ids, new_images = store_images(needed, copies)
            result.images_stored = len(new_images)
            del needed
            created_ids: list[int] = []
            updated_ids: list[int] = []
            batch: list[tuple] = []
            # The file is decoded a third time, and written _WRITE_BATCH
            # records at a time: no list of every record is ever held.
            for record, action in zip(parsed.iter_records(), actions, strict=True):
                if action is None:
                    continue
                if record.index in renames:  # suffix: a new item beside the existing one
                    record = renamed(record, renames[record.index])
                info = parsed.images[record.image_ref]
                digest = content_hash(record, info.sha256)
                if isinstance(action, tuple):  # metadata: nothing annotators saw changes
                    Item.objects.filter(pk=action[1]).update(
                        content_hash=digest, **{name: getattr(record, name) for name in METADATA}
                    )
                    updated_ids.append(action[1])
                    continue
                if action == _CREATE:
                    batch.append(
                        (
                            project.pk,
                            project.votes_per_item,
                            digest,
                            shuffle_key(project.seed, record.external_id),
                            image_ids[info.sha256],
                            domains[record.category].pk,
                            record.external_id,
                            record.prompt,
                            record.image_ref,
                            record.response_1,
                            record.response_2,
                            record.model_1,
                            record.model_2,
                            record.gold_choice,
                            record.reference_answer,
                            record.meta,
                        )
                    )
                    if len(batch) >= _WRITE_BATCH:
                        created_ids += _create_items(batch)
                        batch = []
                    continue
                fields = _item_fields(record, domains)
                content = {name: fields.pop(name) for name in DERIVED_COLUMNS if name in fields}
                Item.objects.filter(pk=action).update(content_hash=digest, **fields)
                write_item_content(
                    Item(pk=action),
                    [
                        image_part(image_ids[info.sha256], content["image_path"]),
                        text_part(content["prompt"]),
                    ],
                    [[text_part(content["response_1"])], [text_part(content["response_2"])]],
                    render=False,
                )
                updated_ids.append(action)
            if batch:
                created_ids += _create_items(batch)
            del batch
            result.created = len(created_ids)
            result.updated = len(updated_ids)
            result.item_ids = created_ids
            signals.items_imported.send(
                sender=Item, project=project, item_ids=result.item_ids, updated_ids=updated_ids
            )
            from annotate.importing.tasks import make_thumbnails, render_part_html
            from config.celery import enqueue_on_commit

            if new_images:
                enqueue_on_commit(make_thumbnails, new_images)
            # Rendering 3 texts an item would double the import's CPU time:
            # a worker stores the parts' HTML (the first view does if none has).
            enqueue_on_commit(render_part_html, [*result.item_ids, *updated_ids])
    except BaseException:
        remove_orphans(written)
        raise
    return result


# The fields of a new item's row (_write_dataset builds the tuples), in order.
_ITEM_FIELDS = (
    "project_id",
    "votes_needed",
    "content_hash",
    "shuffle_key",
    "image_id",
    "domain_id",
    "external_id",
    "prompt",
    "image_path",
    "response_1",
    "response_2",
    "model_1",
    "model_2",
    "gold_choice",
    "reference_answer",
    "meta",
)


def _create_items(batch: list[tuple]) -> list[int]:
    """Insert items (rows of _ITEM_FIELDS) and their parts (issue 24); their pks.
    Plain rows, no Item instances: COPY on PostgreSQL (common.bulk)."""
    ids = insert_rows(Item, _ITEM_FIELDS, batch, return_ids=True)
    insert_rows(
        ItemPart,
        MRB_PART_FIELDS,
        [
            part
            for pk, row in zip(ids, batch, strict=True)
            for part in mrb_part_rows(pk, row[4], row[8], row[7], row[9], row[10])
        ],
    )
    return ids


# How many new items are inserted at a time.
_WRITE_BATCH = 500


def render_item_html(*, item_ids: list[int]) -> int:
    """The items' parts' HTML (render_parts_html; the name kept for its
    callers and the queued tasks of an earlier release)."""
    return render_parts_html(item_ids=item_ids)


def _existing_items(project: Project) -> list[tuple[str, int, str, bool]]:
    """(external_id, pk, content_hash, has votes or claims) of the project's items."""
    return [
        (ext_id, pk, digest, live > 0)
        for ext_id, pk, digest, live in Item.objects.filter(project=project).values_list(
            "external_id", "pk", "content_hash", "live_assignments"
        )
    ]


def _item_fields(record, domains) -> dict:
    return {
        "domain": domains[record.category],
        "external_id": record.external_id,
        "prompt": record.prompt,
        "image_path": record.image_ref,
        "response_1": record.response_1,
        "response_2": record.response_2,
        "model_1": record.model_1,
        "model_2": record.model_2,
        "gold_choice": record.gold_choice,
        "reference_answer": record.reference_answer,
        "meta": record.meta,
    }


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


NO_PUBLISHED_VOTES = (
    "casting published annotations as votes needs a format that carries per-annotator "
    "labels (an MMRB2 task file's human_annotations); this file has none"
)


def import_items_from_paths(
    *,
    project: Project,
    dataset: Path,
    images: Path | None = None,
    **options,
) -> ImportResult:
    """Import from files on disk. `dataset` is a .json/.jsonl file or a zip
    holding one together with its images; `images` a folder or a zip.

    The dataset is read from disk, mapped (a zip member is first decompressed
    into a temporary file), never as one bytes object: the parser's passes
    give back what they have read, so memory grows with the largest record.

    An MMRB2 task file (`{"pairs": [...]}`, or `fmt="mmrb2"`) goes to
    annotate.importing.mmrb2 (its images: `images`, else its own folder)."""
    from annotate.importing import mmrb2

    cast_votes = options.pop("cast_votes", False)
    mmrb2_options = {
        "update": options.get("update", False)
        or (options.get("options") or ImportOptions()).conflicts == "replace",
        "wording": (options.get("options") or ImportOptions()).wording,
        "cast_votes": cast_votes,
    }
    if mmrb2.is_task_file(dataset, options.get("fmt")):
        return mmrb2.import_mmrb2_from_paths(
            project=project, dataset=dataset, images=images, **mmrb2_options
        )
    if cast_votes and not dataset.suffix.lower() == ".zip":
        raise ImportFailed([ImportProblem(dataset.name, NO_PUBLISHED_VOTES)])
    with ExitStack() as stack:
        if dataset.suffix.lower() == ".zip":
            archive = ZipImageSource(dataset)
            stack.callback(archive.close)
            source: ImageSource | None = archive
            if cast_votes and (
                release_import.release_folder_in_zip(archive) is not None
                or not mmrb2.is_task_member(
                    archive, find_dataset_in_zip(archive)[0], options.get("fmt")
                )
            ):
                raise ImportFailed([ImportProblem(dataset.name, NO_PUBLISHED_VOTES)])
            if release_import.release_folder_in_zip(archive) is not None:
                return release_import.import_release(
                    project=project, path=dataset, archive=archive, **options
                )
            member, folder = find_dataset_in_zip(archive)
            archive.prefix = folder
            if mmrb2.is_task_member(archive, member, options.get("fmt")):
                return mmrb2.import_mmrb2_from_zip(
                    project=project, archive=archive, member=member, **mmrb2_options
                )
            data = stack.enter_context(archive.open_dataset(member))
            filename = f"{dataset.name}:{member}"
        else:
            if release_import.is_release_folder(dataset):
                return release_import.import_release(project=project, path=dataset, **options)
            if not dataset.is_file():
                raise ImportFailed([ImportProblem(str(dataset), "file not found")])
            source = None
            if images is not None:
                if images.is_dir():
                    source = DirectoryImageSource(images)
                elif images.is_file():
                    source = ZipImageSource(images)
                    stack.callback(source.close)
                else:
                    raise ImportFailed(
                        [ImportProblem(str(images), "image folder or zip not found")]
                    )
            if dataset.suffix.lower() == hfparquet.PARQUET_SUFFIX:
                return hfparquet.import_parquet(
                    project=project, path=dataset, images=source, **options
                )
            data = stack.enter_context(open_dataset_file(dataset))
            filename = dataset.name
        return import_items(project=project, data=data, filename=filename, images=source, **options)


def make_thumbnails(*, image_ids: list[int]) -> int:
    """Make missing thumbnails (idempotent). Returns how many were made."""
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
