"""Importing a Multimodal RewardBench 2 task file with its images (issue 24).

The file is read pair by pair (jsonscan, memory-mapped) in two passes: the
first checks every pair and image (Pillow, in threads, each distinct image
once) and nothing is written if anything is wrong; the second writes the
items and their parts in one transaction, the images through the MRB
import's content-addressed storage (deduplicated by SHA-256, thumbnails
made by a task). The domain is the task (`mmrb2-t2i`, … created if
missing); the pair's `chosen`, `human_annotations`, `prompt_source`,
`prompt_metadata` (and any other key) are kept verbatim in
`Item.meta["mmrb2"]`, image paths in each part's `source_path`, so the
export writes the file back byte for byte.

`update` follows the MRB import's `--update`: a changed pair under an
existing ID replaces its item (columns, parts, meta) if nobody has claimed
or judged it; one with votes or claims is replaced only when what the
annotators saw (each part's kind, text and image bytes) is the same, i.e.
only its metadata changed (model names, chosen, human_annotations,
prompt_source, prompt_metadata, image file names). Without `update` a
changed pair is refused.

The task file may also come inside a zip with its images
(`import_items_from_paths` finds it; image paths resolve against its folder).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from functools import partial
from pathlib import Path

from django.db import transaction

from annotate import signals
from annotate.importing import mmrb2_format
from annotate.importing.bounds import RecordCount, import_bounds
from annotate.importing.images import check_image, pillow_limits
from annotate.importing.imagestore import ImageCopies, remove_orphans, store_images
from annotate.importing.jsonscan import DatasetFile, iter_json_array, open_dataset_file
from annotate.importing.options import Wording
from annotate.importing.records import (
    IMAGE_THREADS,
    MAX_IMAGE_PATH_LENGTH,
    ImageInfo,
    ImportFailed,
    ImportProblem,
    ProblemLog,
    check_storable,
)
from annotate.importing.service import ImportResult, image_limits
from annotate.importing.sources import (
    ZIP_ERRORS,
    DirectoryImageSource,
    ImageSource,
    ZipImageSource,
    safe_relative_path,
)
from annotate.models import (
    Domain,
    DomainKind,
    Item,
    ItemPart,
    PartKind,
    Project,
    shuffle_key,
)

FORMAT = "mmrb2"
_WRITE_BATCH = 500


def task_domain(project: Project, task: str) -> Domain:
    """The project's domain for an MMRB2 task, created if missing."""
    domain, _ = Domain.objects.get_or_create(
        project=project,
        slug=f"mmrb2-{task}",
        defaults={
            "title": mmrb2_format.TASKS[task],
            "export_category": f"mmrb2/{task}",
            "kind": DomainKind.PREFERENCE,
            "position": 100 + list(mmrb2_format.TASKS).index(task),
        },
    )
    return domain


def is_task_file(dataset: Path, fmt: str | None) -> bool:
    """Whether the import service hands `dataset` to this module."""
    if fmt is not None:
        return fmt == FORMAT
    if dataset.suffix.lower() != ".json" or not dataset.is_file():
        return False
    with dataset.open("rb") as fh:
        return mmrb2_format.looks_like_task_file(fh.read(4096))


def is_task_member(archive: ZipImageSource, member: str, fmt: str | None) -> bool:
    """Whether the dataset member of a zip is an MMRB2 task file."""
    if fmt is not None:
        return fmt == FORMAT
    if not member.lower().endswith(".json"):
        return False
    try:
        with archive.zip.open(archive.members[member]) as fh:
            head = fh.read(4096)
    except ZIP_ERRORS:  # encrypted, corrupt: the dataset reader says so clearly
        return False
    return mmrb2_format.looks_like_task_file(head)


def import_mmrb2_from_zip(
    *,
    project: Project,
    archive: ZipImageSource,
    member: str,
    update: bool = False,
    wording: Wording | None = None,
    cast_votes: bool = False,
) -> ImportResult:
    """Import the task file `member` of a zip with the images beside it in
    the zip (the caller set `archive.prefix` to the member's folder)."""
    filename = f"{archive.label}:{member}"
    task = mmrb2_format.task_of(member)
    if task is None:
        raise ImportFailed([ImportProblem(filename, _UNKNOWN_TASK)])
    with archive.open_dataset(member) as data:
        return import_mmrb2(
            project=project,
            data=data,
            filename=filename,
            images=archive,
            task=task,
            update=update,
            wording=wording,
            cast_votes=cast_votes,
        )


_UNKNOWN_TASK = (
    f"unknown MMRB2 task; name the file {', '.join(mmrb2_format.TASKS)}.json or give the task"
)


def import_mmrb2_from_paths(
    *,
    project: Project,
    dataset: Path,
    images: Path | None = None,
    task: str | None = None,
    update: bool = False,
    wording: Wording | None = None,
    cast_votes: bool = False,
) -> ImportResult:
    """Import a task file; its image paths resolve in `images` (a folder or a
    zip; default: the task file's own folder, as the published layout has it)."""
    task = task or mmrb2_format.task_of(dataset.name)
    if task not in mmrb2_format.TASKS:
        raise ImportFailed([ImportProblem(dataset.name, _UNKNOWN_TASK)])
    if not dataset.is_file():
        raise ImportFailed([ImportProblem(str(dataset), "file not found")])
    images = images if images is not None else dataset.parent
    with ExitStack() as stack:
        if images.is_dir():
            source: ImageSource = DirectoryImageSource(images)
        elif images.is_file():
            source = ZipImageSource(images)
            stack.callback(source.close)
        else:
            raise ImportFailed([ImportProblem(str(images), "image folder or zip not found")])
        data = stack.enter_context(open_dataset_file(dataset))
        return import_mmrb2(
            project=project,
            data=data,
            filename=dataset.name,
            images=source,
            task=task,
            update=update,
            wording=wording,
            cast_votes=cast_votes,
        )


def import_mmrb2(
    *,
    project: Project,
    data: bytes | DatasetFile,
    filename: str,
    images: ImageSource,
    task: str,
    update: bool = False,
    wording: Wording | None = None,
    cast_votes: bool = False,
) -> ImportResult:
    """Validate the whole task file and its images, then write it in one
    transaction (ImportFailed: nothing written). Re-importing the same file
    is a no-op; a changed pair under an existing ID is refused, or with
    `update` replaces its item (see the module's docstring). `cast_votes`:
    the new pairs' `human_annotations` become votes of imported annotators
    (annotate.importing.imported_votes)."""
    if project.archived_at is not None:
        raise ImportFailed([ImportProblem(filename, "the project is archived (read-only)")])
    wording = wording or Wording()
    bounds = import_bounds()
    log = ProblemLog(filename, bounds.max_errors, wording)
    limits = image_limits()
    start = mmrb2_format.pairs_array_start(data)
    if start is None:
        raise ImportFailed([ImportProblem(filename, 'not an MMRB2 task file {"pairs": [...]}')])

    def pairs() -> Iterator[tuple[int, int, mmrb2_format.Pair | None]]:
        # Every pass stops at the record cap (only the first can reach it),
        # before the record past it is looked at.
        count = RecordCount(bounds, log)
        for line, index, value in iter_json_array(
            data, log, max_record_bytes=bounds.max_record_bytes, start=start, trailer=b"}"
        ):
            count.add(line=line, index=index)
            # What the database cannot hold (NUL, lone surrogates, NaN, deep
            # nesting) is refused here, not by a failed write.
            if isinstance(value, dict) and not check_storable(value, log, line, index):
                yield line, index, None
                continue
            pair, problems = mmrb2_format.parse_pair(value)
            for where, message in problems:
                log.add(message, line=line, index=index, field=where or None)
            yield line, index, pair

    # Pass 1: every pair's shape, IDs, image paths; then every image. It
    # stops at the record cap and at the error cap (a repeated problem only
    # counts, so the record cap is what bounds a file of one bad shape).
    refs: dict[str, tuple[int, int]] = {}  # normalised path -> where first used
    seen: set[str] = set()
    for line, index, pair in pairs():
        if pair is None:
            if log.full:
                log.truncated = True
                break
            continue
        if pair.external_id in seen:
            log.add(f"duplicate id {pair.external_id!r}", line=line, index=index, field="id")
        seen.add(pair.external_id)
        for path in pair.image_paths:
            ref = safe_relative_path(path)
            if len(path) > MAX_IMAGE_PATH_LENGTH:
                log.add(
                    f"image path is longer than {MAX_IMAGE_PATH_LENGTH}", line=line, index=index
                )
            elif ref is None:
                log.add(f"image path {path!r} is absolute or contains '..'", line=line, index=index)
            else:
                refs.setdefault(ref, (line, index))
        if log.full:
            break
    log.raise_if_any()
    infos = _check_images(images, limits, refs, log)
    log.raise_if_any()

    existing = {
        ext_id: (pk, digest, live > 0)
        for ext_id, pk, digest, live in Item.objects.filter(project=project).values_list(
            "external_id", "pk", "content_hash", "live_assignments"
        )
    }
    result = ImportResult(format=FORMAT)
    # A pass comparing contents only when some ID is already there (re-imports).
    replace: dict[str, int] = {}  # external ID -> pk of the item an update replaces
    busy: dict[int, tuple] = {}  # pk -> (line, index, what annotators saw in the file)
    for line, index, pair in pairs() if existing.keys() & seen else ():
        if pair.external_id not in existing:
            continue
        pk, digest, claimed = existing[pair.external_id]
        if digest == _content_hash(pair, infos):
            continue
        if not update:
            log.add(
                f"ID {pair.external_id!r} already exists with different content "
                f"(import again with {wording.setting('update')} to replace it)",
                line=line,
                index=index,
                field="id",
            )
            continue
        replace[pair.external_id] = pk
        if claimed:
            busy[pk] = (line, index, pair.external_id, _seen_content(pair, infos))
    # Claimed or judged items: only their metadata may change.
    for pk, seen_before in _stored_content(list(busy)).items():
        line, index, ext_id, seen_now = busy[pk]
        if seen_now != seen_before:
            log.add(
                f"ID {ext_id!r} already has votes or claims: only its metadata (model "
                "names, chosen, human_annotations, prompt fields, image file names) can "
                "be updated, not its text or images",
                line=line,
                index=index,
                field="id",
            )
    log.raise_if_any()
    needed = {info.sha256: info for info in infos.values()}
    written: list[str] = []
    try:
        with transaction.atomic(), ImageCopies(images, limits, written) as copies:
            domain = task_domain(project, task)
            image_ids, new_images = store_images(needed, copies)
            result.images_stored = len(new_images)
            batch: list[tuple[Item, mmrb2_format.Pair]] = []
            updated_ids: list[int] = []
            published: dict[str, object] = {}  # new pairs' human_annotations (cast_votes)
            for _, _, pair in pairs():
                if pair.external_id in replace:
                    pk = replace[pair.external_id]
                    _replace(pk, _item(project, domain, task, pair, infos, image_ids), pair)
                    _create_parts([(pk, pair)], infos, image_ids)
                    updated_ids.append(pk)
                    continue
                if pair.external_id in existing:
                    result.unchanged += 1
                    continue
                if cast_votes:
                    published[pair.external_id] = pair.fields["human_annotations"]
                batch.append((_item(project, domain, task, pair, infos, image_ids), pair))
                if len(batch) >= _WRITE_BATCH:
                    result.item_ids += _create(batch, infos, image_ids)
                    batch = []
            if batch:
                result.item_ids += _create(batch, infos, image_ids)
            result.created = len(result.item_ids)
            result.updated = len(updated_ids)
            signals.items_imported.send(
                sender=Item, project=project, item_ids=result.item_ids, updated_ids=updated_ids
            )
            if published:
                result.votes_cast = _cast_published(project, task, published, filename)
            from annotate.importing.tasks import make_thumbnails, render_part_html
            from config.celery import enqueue_on_commit

            if new_images:
                enqueue_on_commit(make_thumbnails, new_images)
            if result.item_ids or updated_ids:
                # The parts' HTML (the first view renders it otherwise).
                enqueue_on_commit(render_part_html, [*result.item_ids, *updated_ids])
    except BaseException:
        remove_orphans(written)
        raise
    return result


def _cast_published(project: Project, task: str, published: dict, filename: str) -> int:
    """The new pairs' published annotations as votes (imported_votes)."""
    from annotate.importing import imported_votes

    pks = dict(
        Item.objects.filter(project=project, external_id__in=list(published)).values_list(
            "external_id", "pk"
        )
    )
    votes = {
        pks[pair_id]: imported_votes.mmrb2_votes(
            task=task,
            annotations=annotations,
            scale=project.preference_scale,
            filename=filename,
            pair_id=pair_id,
        )
        for pair_id, annotations in published.items()
    }
    return imported_votes.cast_votes(project=project, votes=votes, filename=filename)


def _check_images(
    source: ImageSource, limits, refs: dict[str, tuple[int, int]], log: ProblemLog
) -> dict[str, ImageInfo]:
    """Each distinct image read and checked once, in threads."""

    check = partial(check_image, source, limits)
    infos: dict[str, ImageInfo] = {}
    with (
        pillow_limits(limits),
        ThreadPoolExecutor(IMAGE_THREADS, thread_name_prefix="import-image") as pool,
    ):
        for ref, outcome in zip(refs, pool.map(check, refs), strict=True):
            if isinstance(outcome, ImageInfo):
                infos[ref] = outcome
            else:
                line, index = refs[ref]
                log.add(f"image {ref!r}: {outcome}", line=line, index=index)
    return infos


def _content_hash(pair: mmrb2_format.Pair, infos: dict[str, ImageInfo]) -> str:
    """A stable fingerprint of the pair and its images' bytes."""
    shas = [infos[safe_relative_path(path) or ""].sha256 for path in pair.image_paths]
    payload = [
        FORMAT,
        pair.external_id,
        pair.model_1,
        pair.model_2,
        pair.parts,
        pair.fields,
        shas,
    ]
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _item(project, domain, task, pair, infos, image_ids) -> Item:
    """The item of a pair: its text columns hold the text parts joined; its
    image is the prompt's image only if the pair has the MRB shape."""
    image_id, image_path = None, ""
    if pair.mrb_shaped():
        image_path = pair.parts["prompt"][0][1]
        image_id = image_ids[infos[safe_relative_path(image_path)].sha256]
    return Item(
        project=project,
        domain=domain,
        external_id=pair.external_id,
        prompt=pair.text("prompt"),
        image_id=image_id,
        image_path=image_path,
        response_1=pair.text("response_1"),
        response_2=pair.text("response_2"),
        model_1=pair.model_1,
        model_2=pair.model_2,
        meta={"mmrb2": mmrb2_meta(task, pair)},
        content_hash=_content_hash(pair, infos),
        shuffle_key=shuffle_key(project.seed, pair.external_id),
        votes_needed=project.votes_per_item,
    )


def mmrb2_meta(task: str, pair: mmrb2_format.Pair) -> dict:
    """Item.meta["mmrb2"]: the pair's own fields as JSON text (`fields`, in
    the file's key order: PostgreSQL's jsonb reorders an object's keys, and
    the export must write them back as they were), and the few that queries
    read (prompt_source for sub-buckets, chosen, human_annotations)."""
    return {
        "task": task,
        "prompt_source": pair.fields["prompt_source"],
        "chosen": pair.fields["chosen"],
        "human_annotations": pair.fields["human_annotations"],
        "fields": json.dumps(pair.fields),
    }


def _seen_content(pair: mmrb2_format.Pair, infos: dict[str, ImageInfo]) -> list[tuple]:
    """What annotators see of a pair: (slot, position, kind, text or image
    SHA-256), in order; not image file names or model names."""
    return sorted(
        (
            slot,
            position,
            kind,
            infos[safe_relative_path(value)].sha256 if kind == "image" else value,
        )
        for slot, entries in pair.parts.items()
        for position, (kind, value) in enumerate(entries)
    )


def _stored_content(pks: list[int]) -> dict[int, list[tuple]]:
    """_seen_content of stored items, by pk (one query)."""
    out: dict[int, list[tuple]] = {pk: [] for pk in pks}
    rows = ItemPart.objects.filter(item_id__in=pks).values_list(
        "item_id", "slot", "position", "kind", "text", "image__sha256"
    )
    for pk, slot, position, kind, text, sha in rows:
        out[pk].append((slot, position, kind, sha if kind == PartKind.IMAGE else text))
    return {pk: sorted(content) for pk, content in out.items()}


# Columns an update rewrites; the stored HTML is made again by the task.
_REPLACED = (
    "prompt",
    "image_id",
    "image_path",
    "response_1",
    "response_2",
    "model_1",
    "model_2",
    "meta",
    "content_hash",
)


def _replace(pk: int, item: Item, pair: mmrb2_format.Pair) -> None:
    """Rewrite an existing item from a changed pair (its parts go; the
    caller writes them again)."""
    Item.objects.filter(pk=pk).update(
        **{name: getattr(item, name) for name in _REPLACED},
    )
    ItemPart.objects.filter(item_id=pk).delete()


def _create(batch, infos, image_ids) -> list[int]:
    items = Item.objects.bulk_create([item for item, _ in batch])
    _create_parts(
        [(item.pk, pair) for item, (_, pair) in zip(items, batch, strict=True)], infos, image_ids
    )
    return [item.pk for item in items]


def _create_parts(pairs, infos, image_ids) -> None:
    """The parts of (item pk, pair)s."""
    parts = []
    for pk, pair in pairs:
        for slot, entries in pair.parts.items():
            for position, (kind, value) in enumerate(entries):
                if kind == "image":
                    sha = infos[safe_relative_path(value)].sha256
                    part = ItemPart(kind=PartKind.IMAGE, image_id=image_ids[sha], source_path=value)
                else:
                    part = ItemPart(kind=PartKind.TEXT, text=value)
                part.item_id, part.slot, part.position = pk, slot, position
                parts.append(part)
    ItemPart.objects.bulk_create(parts, batch_size=2000)
