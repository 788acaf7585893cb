"""A release's VideoRewardBench-style file (issue 35 item 5):
`videorb/videorewardbench.jsonl`, one line per sample, its videos beside it
at the paths the lines name (`videorb/<video path>`).

A member is an included item of a domain whose export Category is
``videorb/<dimension>``, decided for one side, whose prompt holds one video.
A decision for response 1 (the imported chosen) gives the imported line byte
for byte (its video copied back byte for byte: stored content-addressed,
never re-encoded); one for response 2 gives the line with chosen and
rejected traded; a tie or no pick is no line (a warning names them). The
line's dimension is its domain's. An item not imported from such a file is
written as a new line whose video is ``videos/<sha256>.<ext>``. Re-keyed
releases give ``vrb_<hash>`` IDs, listed in the order of the new IDs.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from annotate.importing.formats.videorb import EXPORT_PREFIX, record_line
from annotate.importing.sources import safe_relative_path
from annotate.models import Item, PartKind
from curation.benchmarks.common.release import (
    MEMBER_COLUMNS,
    copy_image,
    left_out,
    parts_by_slot,
    released_ids,
    write_lines,
)
from curation.benchmarks.videorb.card import FILE, FOLDER

REKEY_PREFIX = "vrb"
_BATCH = 500


@dataclass
class Written:
    """A line written (what the release records of it)."""

    item_id: int
    external_id: str
    released_id: str
    domain: str
    dimension: str
    chosen: str  # the canonical slot chosen, "1" or "2"
    provenance: str
    video: str  # its path in the line (under the benchmark's folder)
    mrb_shaped: bool = False  # never a pair-layout record (its prompt is a video)


def write_file(folder: Path, members, *, salt: str, domains: dict[str, str]):
    """Write FILE and its videos under `folder` for the verdicts `members`.
    Returns the lines written and warnings."""
    rows = list(members.order_by("item_id").values_list(*MEMBER_COLUMNS))
    released, rows = released_ids(rows, salt, REKEY_PREFIX)
    skipped = [row[1] for row in rows if row[3] not in ("1", "2")]
    rows = [row for row in rows if row[3] in ("1", "2")]
    written: list[Written] = []
    copied: dict[str, str] = {}
    lines = _lines(folder, rows, released if salt else {}, domains, written, skipped, copied)
    write_lines(folder / FILE, lines)
    why = "decided as a tie or no pick, or not one video in the prompt"
    return written, left_out(skipped, "VideoRewardBench", FILE, why)


def _lines(folder, rows, new_ids, domains, written, skipped, copied) -> Iterator[str]:
    for start in range(0, len(rows), _BATCH):
        chunk = rows[start : start + _BATCH]
        ids = [row[0] for row in chunk]
        items = Item.objects.order_by().in_bulk(ids)
        parts = parts_by_slot(ids)
        for item_id, ext_id, slug, choice, provenance in chunk:
            dimension = domains[slug].removeprefix(EXPORT_PREFIX)
            got = _line(folder, items[item_id], parts[item_id], choice, new_ids.get(ext_id),
                        dimension, copied)  # fmt: skip
            if got is None:
                skipped.append(ext_id)
                continue
            line, video = got
            written.append(Written(item_id, ext_id, new_ids.get(ext_id, ext_id), slug,
                                   dimension, choice, provenance, video))  # fmt: skip
            yield line


def _text(parts) -> str:
    return "".join(p.text for p in parts if p.kind == PartKind.TEXT)


def _line(folder, item, slots, choice, new_id, dimension, copied) -> tuple[str, str] | None:
    prompt = slots.get("prompt", [])
    videos = [p for p in prompt if p.kind == PartKind.VIDEO and p.media_id is not None]
    if len(videos) != 1 or any(p.kind not in (PartKind.TEXT, PartKind.VIDEO) for p in prompt):
        return None
    media = videos[0].media
    texts = [_text(slots.get("response_1", [])), _text(slots.get("response_2", []))]
    chosen, rejected = texts if choice == "1" else texts[::-1]
    meta = (item.meta or {}).get("videorb")
    kept = meta is not None and "fields" in meta
    path = (kept and safe_relative_path(videos[0].source_path or "")) or ""
    if not path or not copy_image(media, f"{FOLDER}/{path}", folder, copied):
        path = f"videos/{media.sha256}{Path(str(media.file)).suffix}"
        if not copy_image(media, f"{FOLDER}/{path}", folder, copied):
            return None
    if meta is not None and kept:
        fields = {"dimension": dimension}
        if new_id is not None:
            fields["id"] = new_id
        if path != safe_relative_path(videos[0].source_path or ""):
            fields["video"] = path
        line = record_line(meta, prompt=_text(prompt), chosen=chosen, rejected=rejected,
                           swapped=choice == "2", **fields)  # fmt: skip
        return line, path
    value = {"id": new_id or item.external_id, "video": path, "prompt": _text(prompt),
             "chosen": chosen, "rejected": rejected, "dimension": dimension}  # fmt: skip
    return json.dumps(value, ensure_ascii=False), path
