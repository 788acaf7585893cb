"""A release's VL-RewardBench file: `vlrb/vl_rewardbench.jsonl`, one
official record a line (`id, query, response, image, human_ranking`, 0 =
preferred; card.LAYOUT), the images beside it under `vlrb/`.

A member is an included pair imported in the official shape
(annotate.importing.formats.vlrb: Item.meta["vlrb"]) decided for one
response; a tie, "none" or no decision is no record (a warning says which
were left out). A record keeps every other field in its own key order; when
nothing of it changed its line is the imported line, byte for byte, and its
image is written at the path it names. Re-keyed releases give ``<official prefix>_<hash>`` IDs (the
prefix kept so the official id grouping still holds), in new-ID order.
"""

from __future__ import annotations

import shutil
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from django.core.files.storage import default_storage

from annotate.importing.formats.vlrb import GROUPS, group_of, id_prefix, ranking_of, record_line
from annotate.importing.sources import safe_relative_path
from annotate.models import Item, ItemPart, PartKind
from curation.benchmarks.vlrb.card import FILE
from curation.releases.rekey import in_new_id_order, rekeyed_id

FOLDER = "vlrb"
_BATCH = 500


@dataclass
class Written:
    """A record written (what the release records of it)."""

    item_id: int
    external_id: str
    released_id: str
    domain: str
    group: str  # by the official id grouping of its released ID
    chosen: str  # "1"/"2": the canonical slot preferred
    provenance: str
    changed: bool  # its ranking differs from the imported one
    other_group: bool  # its domain's group is not its ID's
    mrb_shaped: bool  # also a record of the pair layout (it has a prompt image)


def write_file(
    folder: Path, rows: list[tuple], *, salt: str, domains: dict[str, str]
) -> tuple[list[Written], list[str]]:
    """Write `FILE` (and its images) under `folder` from (item_id,
    external_id, domain slug, final_choice, provenance) rows in import order.
    Returns the records written and warnings for those left out."""
    released = {row[1]: row[1] for row in rows}
    if salt:
        released = {x: rekeyed_id(salt, id_prefix(x), x) for x in released}
        rows = in_new_id_order(rows, lambda row: released[row[1]])
    written: list[Written] = []
    skipped: list[str] = []
    images: dict[str, str] = {}
    path = folder / FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as fh:
        for line in _lines(folder, rows, released, domains, written, skipped, images):
            fh.write(line + "\n")
    warnings = []
    if skipped:
        warnings.append(
            f"{len(skipped)} VL-RewardBench item{'s' if len(skipped) != 1 else ''} left out of "
            f"{FILE} (not decided for one of two responses, or an image path another image "
            f"already has): {', '.join(skipped[:5])}" + (", …" if len(skipped) > 5 else "")
        )
    return written, warnings


def _copy_image(image, relative: str, folder: Path, images: dict[str, str]) -> bool:
    target_ref = f"{FOLDER}/{relative}"
    if target_ref in images:
        return images[target_ref] == image.sha256
    target = folder / target_ref
    target.parent.mkdir(parents=True, exist_ok=True)
    with default_storage.open(image.file, "rb") as src, target.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    images[target_ref] = image.sha256
    return True


def _lines(folder, rows, released, domains, written, skipped, images) -> Iterator[str]:
    for start in range(0, len(rows), _BATCH):
        chunk = rows[start : start + _BATCH]
        ids = [row[0] for row in chunk]
        items = Item.objects.order_by().in_bulk(ids)
        parts: dict[int, dict[str, list]] = {pk: defaultdict(list) for pk in ids}
        for part in (
            ItemPart.objects.filter(item_id__in=ids)
            .select_related("image")
            .order_by("item_id", "slot", "position")
            .only("item_id", "slot", "kind", "text", "source_path", "image")
        ):
            parts[part.item_id][part.slot].append(part)
        for item_id, ext_id, slug, final_choice, provenance in chunk:
            slots = parts[item_id]
            responses = [
                "".join(p.text for p in slots.get(s, []) if p.kind == PartKind.TEXT)
                for s in ("response_1", "response_2")
            ]
            ranking = ranking_of(final_choice)
            meta = (items[item_id].meta or {}).get("vlrb")
            line = ranking and meta and "response_3" not in slots and _record(
                folder, meta, slots.get("prompt", []), responses, ranking, released[ext_id],
                images,
            )  # fmt: skip
            if not line:
                skipped.append(ext_id)
                continue
            group = group_of(released[ext_id])
            written.append(
                Written(
                    item_id, ext_id, released[ext_id], slug, group, final_choice, provenance,
                    meta.get("human_ranking") != ranking,
                    domains.get(slug) != group, items[item_id].image_id is not None,
                )
            )  # fmt: skip
            yield line


def _record(folder, meta, prompt_parts, responses, ranking, released_id, images) -> str | None:
    query = "".join(p.text for p in prompt_parts if p.kind == PartKind.TEXT)
    paths = []
    for part in (p for p in prompt_parts if p.kind == PartKind.IMAGE and p.image is not None):
        kept = safe_relative_path(part.source_path or "")
        relative = kept or f"images/{part.image.sha256}.{part.image.format.lower()}"
        if not _copy_image(part.image, relative, folder, images):
            return None
        paths.append(part.source_path if kept else relative)
    if len(paths) > 1:  # the official record has one image
        return None
    return record_line(
        meta, query=query, responses=responses, ranking=ranking, record_id=released_id
    )


def group_counts(written: list[Written]) -> dict[str, int]:
    return {g: sum(r.group == g for r in written) for g in GROUPS}
