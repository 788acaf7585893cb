"""A release's Omni-RewardBench files (issue 34): one
``omni/<task>_preferences.json`` per task, the published layout (a JSON array
as ``json.dump(samples, f, indent=4)`` writes it; see
annotate.importing.formats.omni), the media beside them under
``omni/media_data/`` at the paths the records name.

A member is an item of a domain whose export Category is ``omni/<task>``
whose verdict is releasable with a side (``criteria_preference`` response1 /
response2) or a tie (``tie``: a curator's or the agreed tie, which the
pair layout cannot hold). An imported record keeps its other fields, key
order and writing; when nothing of it changed its text is the imported text
and the file, when every record is unchanged and in the imported order, is
the imported file byte for byte. Re-keyed releases give ``om_<hash>`` IDs in
the order of the new IDs.
"""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from django.core.files.storage import default_storage

from annotate.importing.formats.omni import (
    EXPORT_PREFIX,
    FILE_SUFFIX,
    SHAPES,
    TASKS,
    dumped,
    file_text,
    imported_preference,
    record_text,
    record_value,
)
from annotate.importing.sources import safe_relative_path
from annotate.models import Item, ItemPart, PartKind
from curation.releases.rekey import in_new_id_order, rekeyed_id

FOLDER = "omni"
MEDIA = "media_data"
REKEY_PREFIX = "om"
PREFERENCE_NAMES = {"1": "response1", "2": "response2", "tie": "tie"}


def file_of(task: str) -> str:
    return f"{FOLDER}/{task}{FILE_SUFFIX}"


@dataclass
class Written:
    item_id: int
    external_id: str
    released_id: str
    domain: str
    task: str
    preference: str  # "1", "2", "tie"
    provenance: str
    changed: bool  # its preference differs from the imported one
    mrb_shaped: bool = False  # a side with one prompt image: a pair-layout record too


def write_files(folder: Path, rows: list[tuple], *, salt: str,
                domains: dict[str, str]) -> tuple[list[Written], list[str]]:  # fmt: skip
    """Write the task files from (item_id, external_id, domain slug,
    final_choice, provenance) rows in import order; returns the records
    written and warnings for those left out."""
    released = {row[1]: (rekeyed_id(salt, REKEY_PREFIX, row[1]) if salt else row[1])
                for row in rows}  # fmt: skip
    if salt:
        rows = in_new_id_order(rows, lambda row: released[row[1]])
    items = Item.objects.order_by().in_bulk([row[0] for row in rows])
    parts: dict[int, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for part in (
        ItemPart.objects.filter(item_id__in=[row[0] for row in rows])
        .select_related("image", "media")
        .order_by("item_id", "slot", "position")
    ):
        parts[part.item_id][part.slot].append(part)
    by_task: dict[str, list[str]] = defaultdict(list)
    envelopes: dict[str, dict | None] = {}
    written, skipped = [], []
    for item_id, ext_id, slug, choice, provenance in rows:
        task = domains[slug].removeprefix(EXPORT_PREFIX)
        item = items[item_id]
        meta = (item.meta or {}).get("omni")
        # Not re-keyed: the file's own id (an external ID may carry a criterion hash).
        record_id = released[ext_id] if salt else None
        text = task in TASKS and _record(folder, item, meta, parts[item_id], choice,
                                         record_id, ext_id, task)  # fmt: skip
        if not text:
            skipped.append(ext_id)
            continue
        by_task[task].append(text)
        envelopes.setdefault(task, meta.get("envelope") if meta else None)
        imported = imported_preference(meta) if meta else ""
        written.append(Written(item_id, ext_id, released[ext_id], slug, task, choice,
                               provenance, bool(imported) and imported != choice,
                               item.image_id is not None and choice != "tie"))  # fmt: skip
    for task, records in by_task.items():
        path = folder / file_of(task)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(file_text(records, envelopes[task]).encode("utf-8"))
    warnings = []
    if skipped:
        warnings.append(
            f"{len(skipped)} Omni-RewardBench item{'s' if len(skipped) != 1 else ''} left out "
            f"(not a task's shape, or an image path another image has): {', '.join(skipped[:5])}"
        )
    return written, warnings


def _copy(stored, relative: str, folder: Path) -> bool:
    target = folder / FOLDER / MEDIA / relative
    if target.exists():
        return True
    target.parent.mkdir(parents=True, exist_ok=True)
    with default_storage.open(stored.file, "rb") as src, target.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return True


def _stored(part):
    """The part's stored image or media file (None if it has none)."""
    return part.image if part.kind == PartKind.IMAGE else part.media


def _media(part, folder: Path, kept: bool) -> str | None:
    stored = _stored(part)
    if part.kind == PartKind.IMAGE:
        fallback = f"images/{stored.sha256}.{stored.format.lower()}"
    else:  # a video or audio file: its stored name's extension
        fallback = f"{part.kind}s/{stored.sha256}{Path(str(stored.file)).suffix}"
    relative = (kept and safe_relative_path(part.source_path or "")) or fallback
    return relative if _copy(stored, relative, folder) else None


def _record(folder, item, meta, slots, choice, released_id, ext_id, task) -> str | None:
    prompt_key, prompt_kind, response_kind = SHAPES[task]
    prompt = slots.get("prompt", [])
    texts = "".join(p.text for p in prompt if p.kind == PartKind.TEXT)
    files = [p for p in prompt if p.kind == prompt_kind != PartKind.TEXT and _stored(p)]
    others = [p for p in prompt if p.kind not in (PartKind.TEXT, prompt_kind)]
    if len(files) != int(bool(prompt_key)) or others:
        return None
    responses = []
    for slot in ("response_1", "response_2"):
        got = slots.get(slot, [])
        if response_kind != PartKind.TEXT:
            pics = [p for p in got if p.kind == response_kind and _stored(p) is not None]
            path = len(pics) == 1 and _media(pics[0], folder, meta is not None)
            if not path:
                return None
            responses.append(path)
        else:
            responses.append("".join(p.text for p in got if p.kind == PartKind.TEXT))
    path = _media(files[0], folder, meta is not None) if prompt_key else None
    if meta is not None:
        value = record_value(meta, prompt=texts, criteria=item.criterion, responses=responses,
                             preference=choice, record_id=released_id)  # fmt: skip
        if path is not None:
            value[prompt_key] = path
        return record_text(meta, value)
    media = {prompt_key: path} if path else {}
    value = {"id": released_id or ext_id, "prompt": texts, **media,
             "response1": responses[0], "response2": responses[1],
             "model1": item.model_1, "model2": item.model_2,
             "criteria": item.criterion,
             "criteria_preference": PREFERENCE_NAMES[choice]}  # fmt: skip
    return dumped(json.loads(json.dumps(value)), ascii_only=False)
