"""Writing a project's Multimodal RewardBench 2 items in the published layout
(issue 24): `<task>.json` per MMRB2 domain beside `images/` and
`input_images/`, each file as `json.dump(indent=2)` writes it, images at the
paths the pairs name, so a task file imported and exported again is the same
bytes.

`human_annotations` and `chosen` are the imported ones for now (graded votes
will write them). With `rekey`, IDs are replaced by label-free ones (the
published reasoning IDs name the chosen model first) and response images
renamed `images/{new id}_{k}{ext}` to match; the old-to-new map is returned
to the caller, never written into the release.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import shutil
from pathlib import Path
from typing import Any

from django.core.files.storage import default_storage

from annotate.importing.mmrb2_format import pair_record, write_task_file
from annotate.importing.sources import safe_relative_path
from annotate.models import Domain, Item, ItemPart, PartKind, Project

_BATCH = 500


class ExportConflict(Exception):
    """Two different images would be written at one path."""


def mmrb2_domains(project: Project) -> list[tuple[str, Domain]]:
    """(task, domain) of the project's MMRB2 domains, in the project's order."""
    return [
        (domain.export_category.removeprefix("mmrb2/"), domain)
        for domain in project.domains.filter(export_category__startswith="mmrb2/")
    ]


def rekeyed_id(salt: str, task: str, external_id: str) -> str:
    """A label-free, stable ID: nothing of the old one shows."""
    return f"{task}_{hashlib.sha256(f'{salt}:{task}:{external_id}'.encode()).hexdigest()[:16]}"


def export_mmrb2(
    *,
    project: Project,
    folder: Path,
    rekey: bool = False,
    salt: str = "",
    item_ids: Any = None,
    domain_slugs: Any = None,
) -> dict[str, Any]:
    """Write every MMRB2 task of the project into `folder` (only the items in
    `item_ids` and the domains in `domain_slugs` if given: a release's).
    Returns {"tasks": {task: pairs written}, "images": files written,
    "ids": {old: new}}."""
    folder.mkdir(parents=True, exist_ok=True)
    written_images: dict[str, str] = {}  # release path -> sha256
    summary: dict[str, Any] = {"tasks": {}, "images": 0, "ids": {}}
    for task, domain in mmrb2_domains(project):
        if domain_slugs is not None and domain.slug not in domain_slugs:
            continue
        items = domain.items.filter(meta__has_key="mmrb2").order_by("pk")
        if item_ids is not None:
            items = items.filter(pk__in=item_ids)
        count = 0

        def pairs(items=items, task=task):
            nonlocal count
            for item, parts in _items_with_parts(items):
                new_id = rekeyed_id(salt, task, item.external_id) if rekey else item.external_id
                if rekey:
                    summary["ids"][item.external_id] = new_id
                content: dict[str, list[tuple[str, str]]] = {}
                k = 0
                for slot in ("response_1", "response_2", "prompt"):
                    content[slot] = []
                    for part in parts.get(slot, ()):
                        if part.kind == PartKind.TEXT:
                            content[slot].append(("text", part.text))
                            continue
                        path = part.source_path
                        if rekey and slot != "prompt":
                            ext = posixpath.splitext(path)[1]
                            path = f"images/{new_id}_{k}{ext}"
                            k += 1
                        _copy_image(part.image, path, folder, written_images)
                        content[slot].append(("image", path))
                # The pair's fields in their own key order (see mmrb2_meta).
                fields = json.loads(item.meta["mmrb2"]["fields"])
                count += 1
                yield pair_record(
                    external_id=new_id,
                    model_1=item.model_1,
                    model_2=item.model_2,
                    parts=content,
                    fields=fields,
                )

        with (folder / f"{task}.json").open("w", encoding="utf-8", newline="") as fh:
            write_task_file(pairs(), fh)
        summary["tasks"][task] = count
    summary["images"] = len(written_images)
    return summary


def _items_with_parts(items) -> Any:
    """(item, {slot: [parts]}) in batches: two queries per _BATCH items."""
    ids = list(items.values_list("pk", flat=True))
    for start in range(0, len(ids), _BATCH):
        chunk = ids[start : start + _BATCH]
        by_item: dict[int, dict[str, list[ItemPart]]] = {pk: {} for pk in chunk}
        parts = (
            ItemPart.objects.filter(item_id__in=chunk)
            .select_related("image")
            .order_by("item_id", "slot", "position")
        )
        for part in parts:
            by_item[part.item_id].setdefault(part.slot, []).append(part)
        for item in Item.objects.filter(pk__in=chunk).order_by("pk"):
            yield item, by_item[item.pk]


def _copy_image(image, path: str, folder: Path, written: dict[str, str]) -> None:
    """Copy a stored image to `path` under `folder` (once per path)."""
    ref = safe_relative_path(path)
    if ref is None:
        raise ExportConflict(f"image path {path!r} leaves the release folder")
    known = written.get(ref)
    if known is not None:
        if known != image.sha256:
            raise ExportConflict(f"two different images would be written to {ref!r}")
        return
    target = folder / ref
    target.parent.mkdir(parents=True, exist_ok=True)
    with default_storage.open(image.file, "rb") as src, target.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    written[ref] = image.sha256
