"""A release's ranked file (issue 33): `ranked/rankings.jsonl`, one record a
line in the generic ranked layout of MR²Bench's training data (card.LAYOUT),
the prompts' images beside it under `ranked/`.

A member is an included item of a domain whose export Category is
``ranked/<category>``. Its rankings are its verdict's final ranking
(VerdictRank: curation.verdicts.ranked), or, for a decision without one (a
best-of-N pick, a pair's side), the pick first and the others tied second;
a tie, "none" or no decision is no ranked record (a warning says which were
left out). An imported record (annotate.importing.formats.ranked) keeps every
other field in its own key order and its rankings' form; when nothing of it
changed, its line is the imported line, byte for byte, and its images are
written at the paths it names. Re-keyed releases give ``rk_<hash>`` IDs, in
the order of the new IDs.
"""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from django.core.files.storage import default_storage

from annotate.importing.formats.ranked import EXPORT_PREFIX, competition, record_line
from annotate.importing.sources import safe_relative_path
from annotate.models import Item, ItemPart, PartKind
from curation.benchmarks.common.release import (
    left_out,
    released_ids,
    response_slots,
    write_lines,
)
from curation.benchmarks.ranked.card import FILE
from curation.models import VerdictRank

REKEY_PREFIX = "rk"
FOLDER = "ranked"
_BATCH = 500


def category_of(export_category: str) -> str:
    return export_category.removeprefix(EXPORT_PREFIX)


def ranks_of(stored: list[int] | None, final_choice: str, n: int) -> list[int] | None:
    """The member's rankings (competition form), or None (no ranked record):
    its stored final ranking, else a pick first and the rest tied second."""
    if stored and len(stored) == n:
        return competition(stored)
    if final_choice.isdigit() and 1 <= int(final_choice) <= n:
        return [1 if k == int(final_choice) else 2 for k in range(1, n + 1)]
    return None


@dataclass
class Written:
    """A record written (what the release records of it)."""

    item_id: int
    external_id: str
    released_id: str
    domain: str
    category: str
    best: str  # the first slot ranked first, "1".."8" (ReleaseItem.chosen)
    provenance: str
    n: int
    from_pick: bool  # ranked from a pick, not a stored ranking
    changed: bool  # its rankings differ from the imported ones
    mrb_shaped: bool = False  # also a record of the pair layout (one prompt image, two texts)


def write_file(
    folder: Path, rows: list[tuple], *, salt: str, domains: dict[str, str]
) -> tuple[list[Written], list[str]]:
    """Write `FILE` (and its images) under `folder` from (item_id,
    external_id, domain slug, final_choice, provenance, verdict_id) rows in
    import order. Returns the records written and warnings for those left out."""
    released, rows = released_ids(rows, salt, REKEY_PREFIX)
    written: list[Written] = []
    skipped: list[str] = []
    images: dict[str, str] = {}  # release path -> sha256
    write_lines(folder / FILE, _lines(folder, rows, released, domains, written, skipped, images))
    why = (
        "decided with no ranking and no single response picked, or an image path another "
        "image already has"
    )
    return written, left_out(skipped, "ranked", FILE, why)


def _copy_image(image, relative: str, folder: Path, images: dict[str, str]) -> bool:
    """Copy a stored image to ranked/<relative> (once per path); False if
    another image is already there."""
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
        stored: dict[int, dict[int, int]] = defaultdict(dict)
        for verdict_id, slot, rank in VerdictRank.objects.filter(
            verdict_id__in=[row[5] for row in chunk]
        ).values_list("verdict_id", "slot", "rank"):
            stored[verdict_id][slot] = rank
        for item_id, ext_id, slug, final_choice, provenance, verdict_id in chunk:
            slots = parts[item_id]
            names = response_slots(slots)
            responses = [
                "".join(p.text for p in slots[s] if p.kind == PartKind.TEXT) for s in names
            ]
            given = [stored[verdict_id][k] for k in sorted(stored[verdict_id])]
            ranks = ranks_of(given, final_choice, len(responses))
            meta = (items[item_id].meta or {}).get("ranked")
            line = ranks and _record(
                folder, meta, slots.get("prompt", []), responses, ranks,
                released[ext_id], category_of(domains[slug]), images,
            )  # fmt: skip
            if not line:
                skipped.append(ext_id)
                continue
            imported = meta.get("rankings") if meta else None
            written.append(
                Written(
                    item_id, ext_id, released[ext_id], slug, category_of(domains[slug]),
                    str(ranks.index(1) + 1), provenance, len(responses), not given,
                    imported is not None and competition(imported) != ranks,
                    items[item_id].image_id is not None,
                )
            )  # fmt: skip
            yield line


def _record(folder, meta, prompt_parts, responses, ranks, released_id, category,
            images) -> str | None:  # fmt: skip
    prompt = "".join(p.text for p in prompt_parts if p.kind == PartKind.TEXT)
    paths = []
    for part in (p for p in prompt_parts if p.kind == PartKind.IMAGE and p.image is not None):
        kept = meta is not None and safe_relative_path(part.source_path or "")
        relative = kept or f"images/{part.image.sha256}.{part.image.format.lower()}"
        if not _copy_image(part.image, relative, folder, images):
            return None
        paths.append(part.source_path if kept else relative)
    if meta is not None:
        return record_line(
            meta,
            prompt=prompt,
            responses=responses,
            rankings=ranks,
            record_id=released_id,
        )
    value = {"id": released_id, "prompt": prompt, **({"images": paths} if paths else {}),
             "responses": responses, "rankings": ranks, "category": category}  # fmt: skip
    return json.dumps(value, ensure_ascii=False)
