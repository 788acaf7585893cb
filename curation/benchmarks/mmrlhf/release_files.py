"""A release's MM-RLHF-RewardBench file (issue 34) in the published layout:
`mmrlhf/mm_rlhf_rewardbench.jsonl`, one line per pair, the pairs of a
prompt id on consecutive lines, its media beside it at the paths the lines
name (`mmrlhf/mcq/….png`, a video's frames under `mmrlhf/video/<folder>/`).

A member is an included item of a domain whose export Category is
``mmrlhf/<category>``, decided for one side. A decision for response 1 (the
imported chosen) gives the imported line byte for byte; one for response 2
gives the line with chosen and rejected (and their reasons) traded; a tie
or no pick is no line (a warning names them). An item not imported from
such a file is written as a new line whose media path is
``<category>/<sha256>.<ext>``. Re-keyed releases give each prompt id an
``mm_<hash>`` id and list the groups in the order of their new ids.

A pair's ID in the release is ``<line id>#<k>``, k its place among the
lines of its id in the file (the scorer's grouping); :func:`layout` gives
the order and the IDs, to the writer and to the per-item results alike.
"""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from django.core.files.storage import default_storage

from annotate.importing.formats.mmrlhf import EXPORT_PREFIX, pair_id, record_line
from annotate.models import Item, ItemPart, PartKind
from curation.benchmarks.mmrlhf.card import FILE, FOLDER
from curation.releases.rekey import rekeyed_id

REKEY_PREFIX = "mm"
_BATCH = 500


@dataclass
class Written:
    """A line written (what the release records of it)."""

    item_id: int
    external_id: str
    released_id: str
    domain: str
    category: str
    chosen: str  # the canonical slot chosen, "1" or "2"
    provenance: str
    mrb_shaped: bool  # also a record of the pair layout (one prompt image)
    video: str = ""  # a video's folder, as the line names it
    frames: tuple[str, ...] = ()  # its frames' file names, in order


def layout(rows: list[tuple], salt: str) -> list[tuple[tuple, str | None, str]]:
    """(row, new line id or None to keep the file's, pair ID) of rows
    (item_id, group_key or external_id, pair place, …) in file order: import
    order, or by new group id then place when re-keyed."""
    if salt:
        rows = sorted(rows, key=lambda r: (rekeyed_id(salt, REKEY_PREFIX, r[1]), r[2], r[0]))
    seen: dict[str, int] = {}
    out = []
    for row in rows:
        group = rekeyed_id(salt, REKEY_PREFIX, row[1]) if salt else row[1]
        k = seen[group] = seen.get(group, 0) + 1
        out.append((row, group if salt else None, pair_id(group, k)))
    return out


def member_rows(items) -> list[tuple]:
    """Layout rows of items (a queryset of Item), in import order."""
    out = []
    for pk, ext_id, group, meta in items.order_by("pk").values_list(
        "pk", "external_id", "group_key", "meta"
    ):
        place = ((meta or {}).get("mmrlhf") or {}).get("pair", 1)
        out.append((pk, group or ext_id, place))
    return out


def write_file(folder: Path, members, *, salt: str, domains: dict[str, str]):
    """Write FILE and its media under `folder` for the verdicts `members`.
    Returns the lines written and warnings."""
    decided = dict(members.values_list("item_id", "final_choice"))
    provenance = dict(members.values_list("item_id", "provenance"))
    rows = [
        r for r in member_rows(Item.objects.filter(pk__in=decided)) if decided[r[0]] in ("1", "2")
    ]
    skipped = [pk for pk, choice in decided.items() if choice not in ("1", "2")]
    written: list[Written] = []
    media: dict[str, str] = {}
    path = folder / FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as fh:
        for line in _lines(folder, layout(rows, salt), decided, provenance, domains, written,
                           skipped, media):  # fmt: skip
            fh.write(line + "\n")
    warnings = []
    if skipped:
        ids = list(Item.objects.filter(pk__in=skipped[:5]).values_list("external_id", flat=True))
        warnings.append(
            f"{len(skipped)} MM-RLHF pair{'s' if len(skipped) != 1 else ''} left out of {FILE} "
            f"(decided as a tie or no pick, or media that cannot be written): "
            + ", ".join(ids) + (", …" if len(skipped) > 5 else "")
        )  # fmt: skip
    return written, warnings


def _copy(image, relative: str, folder: Path, media: dict[str, str]) -> bool:
    """Copy a stored image to mmrlhf/<relative> once; False if another is there."""
    target_ref = f"{FOLDER}/{relative}"
    if target_ref in media:
        return media[target_ref] == image.sha256
    target = folder / target_ref
    target.parent.mkdir(parents=True, exist_ok=True)
    with default_storage.open(image.file, "rb") as src, target.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    media[target_ref] = image.sha256
    return True


def _lines(folder, laid, decided, provenance, domains, written, skipped, media) -> Iterator[str]:
    for start in range(0, len(laid), _BATCH):
        chunk = laid[start : start + _BATCH]
        ids = [row[0] for row, _, _ in chunk]
        items = Item.objects.order_by().select_related("domain").in_bulk(ids)
        parts: dict[int, dict[str, list]] = {pk: defaultdict(list) for pk in ids}
        for part in (
            ItemPart.objects.filter(item_id__in=ids).select_related("image")
            .order_by("item_id", "slot", "position")
        ):  # fmt: skip
            parts[part.item_id][part.slot].append(part)
        for row, new_id, released_id in chunk:
            item = items[row[0]]
            category = domains[item.domain.slug].removeprefix(EXPORT_PREFIX)
            slots = parts[item.pk]
            line = _line(folder, item, slots, decided[item.pk], new_id, category, media)
            if line is None:
                skipped.append(item.pk)
                continue
            video = json.loads(line).get("video") or ""
            frames = tuple(p.source_path.rsplit("/", 1)[-1] for p in slots.get("prompt", [])
                           if p.kind == PartKind.IMAGE) if video else ()  # fmt: skip
            written.append(
                Written(item.pk, item.external_id, released_id, item.domain.slug, category,
                        decided[item.pk], provenance[item.pk], item.image_id is not None,
                        video, frames)
            )  # fmt: skip
            yield line


def _text(parts) -> str:
    return "".join(p.text for p in parts if p.kind == PartKind.TEXT)


def _line(folder, item, slots, choice, new_id, category, media) -> str | None:
    images = [p for p in slots.get("prompt", []) if p.kind == PartKind.IMAGE and p.image]
    texts = [_text(slots.get("response_1", [])), _text(slots.get("response_2", []))]
    chosen, rejected = texts if choice == "1" else texts[::-1]
    prompt = _text(slots.get("prompt", []))
    meta = (item.meta or {}).get("mmrlhf")
    if meta is not None and "fields" in meta:
        for part in images:
            if not _copy(part.image, part.source_path, folder, media):
                return None
        return record_line(meta, prompt=prompt, chosen=chosen, rejected=rejected,
                           swapped=choice == "2", record_id=new_id)  # fmt: skip
    if len(images) != 1:
        return None
    image = images[0].image
    relative = f"{category}/{image.sha256}.{image.format.lower()}"
    if not _copy(image, relative, folder, media):
        return None
    value = {"id": new_id or item.group_key or item.external_id, "prompt": prompt,
             "chosen": chosen, "rejected": rejected, "image": relative}  # fmt: skip
    return json.dumps(value, ensure_ascii=False)
