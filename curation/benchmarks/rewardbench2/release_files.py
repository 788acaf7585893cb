"""A release's RewardBench 2 file (issue 33): `rewardbench2/test.jsonl`, one
record a line in the layout of allenai/reward-bench-2 (split `test`), which
``scripts/run_v2.py --dataset <file>.jsonl`` reads (``pd.read_json(lines=True)``).

A member is an included item of a domain whose export Category is
``rewardbench2/<Subset>`` (its `subset`). Its correct completions come from
its verdict (:func:`correct_slots`), **chosen first** in slot order, then
the rest (`rejected`), with ``num_correct``, ``num_incorrect`` and
``total_completions`` counted from them and ``models`` in the same order. An
imported record keeps every other field (``additional_metadata`` and any
key of its own) in its own key order; when nothing of it changed, its line
is the imported line, byte for byte (annotate.importing.formats.rewardbench2).

Re-keyed releases give label-free IDs that keep the Ties pairing the scorer
reads: ``ref:<n>`` and ``tied:<n>`` get one new number, a salted
permutation of the numbers present (:func:`ties_ids`); other IDs become
``rb2_<hash>`` (curation.releases.rekey).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from annotate.importing.formats.rewardbench2 import (
    BY_LOWER,
    EXPORT_PREFIX,
    TIES_ID,
    record_value,
)
from annotate.importing.jsonscan import styled_line
from annotate.models import Item, ItemPart, PartKind
from curation.benchmarks.common.release import (
    left_out,
    released_ids,
    response_slots,
    write_lines,
)

FILE = "rewardbench2/test.jsonl"
REKEY_PREFIX = "rb2"
_BATCH = 500


def subset_of(export_category: str) -> str:
    """The `subset` a domain's export Category names (canonical if published)."""
    name = export_category.removeprefix(EXPORT_PREFIX)
    return BY_LOWER.get(name.lower(), name)


def correct_slots(slots: int, imported_correct: int | None, final_choice: str) -> list[int] | None:
    """The 0-based slots released as `chosen`, or None (not in the file).

    The verdict's choice is a slot number (a pair's "1"/"2"; a best-of-N
    pick). When it is one of the imported correct completions the imported
    set stands (the Ties subset's several correct answers), else the picked
    slot alone. A tie, "none" or no decision is no RewardBench 2 record (it
    needs one correct completion and at least one incorrect)."""
    if not final_choice.isdigit() or not 1 <= int(final_choice) <= slots or slots < 2:
        return None
    pick = int(final_choice) - 1
    if imported_correct and pick < imported_correct < slots:
        return list(range(imported_correct))
    return [pick]


def ties_ids(salt: str, ids: Iterable[str]) -> dict[str, str]:
    """New Ties IDs: each number n of ref:<n>/tied:<n> becomes its rank in a
    salted order of the numbers present (a ref and its tied keep one number)."""
    numbers = sorted({int(i.split(":", 1)[1]) for i in ids})
    order = sorted(numbers, key=lambda n: hashlib.sha256(f"{salt}:ties:{n}".encode()).hexdigest())
    new = {n: k for k, n in enumerate(order)}
    return {i: f"{i.split(':', 1)[0]}:{new[int(i.split(':', 1)[1])]}" for i in ids}


def record_line(
    meta: dict | None,
    *,
    released_id: str,
    prompt: str,
    completions: list[str],
    models: list[str],
    correct: list[int],
    subset: str,
) -> str:
    """One line of the file (see the module)."""
    chosen = [completions[i] for i in correct]
    rest = [i for i in range(len(completions)) if i not in correct]
    rejected = [completions[i] for i in rest]
    counts = {
        "num_correct": len(chosen),
        "num_incorrect": len(rejected),
        "total_completions": len(completions),
    }
    if meta is None:
        value: dict[str, Any] = {
            "id": released_id,
            "prompt": prompt,
            "chosen": chosen,
            "rejected": rejected,
            **counts,
            "models": [models[i] for i in [*correct, *rest]] if models else [],
            "subset": subset,
            "additional_metadata": {},
        }
        return json.dumps(value, ensure_ascii=False)
    value = record_value(meta, prompt, chosen, rejected)
    old_models = value.get("models")
    if isinstance(old_models, list) and len(old_models) == len(completions):
        value["models"] = [old_models[i] for i in [*correct, *rest]]
    value.update({k: v for k, v in counts.items() if k in value})
    value["id"] = released_id
    if subset.lower() != str(value.get("subset", "")).lower():  # else as the file wrote it
        value["subset"] = subset
    return styled_line(meta, value)


@dataclass
class Written:
    """A record written (what the release records of it)."""

    item_id: int
    external_id: str
    released_id: str
    domain: str
    subset: str
    final_choice: str
    provenance: str
    correct: int
    total: int
    changed: bool  # its correct completions differ from the imported ones


def write_file(
    folder: Path, rows: list[tuple], *, salt: str, domains: dict[str, str]
) -> tuple[list[Written], list[str]]:
    """Write `FILE` under `folder` from (item_id, external_id, domain slug,
    final_choice, provenance) rows (import order). Returns the records
    written and warnings for the members left out."""
    released, rows = released_ids(rows, salt, REKEY_PREFIX, _ties)
    written: list[Written] = []
    skipped: list[str] = []
    write_lines(folder / FILE, _lines(rows, released, domains, written, skipped))
    why = (
        "decided as a tie or with no single response picked; a record needs one correct "
        "completion and one incorrect"
    )
    return written, left_out(skipped, "RewardBench 2", FILE, why)


def _ties(salt: str, ids: list[str]) -> dict[str, str]:
    return ties_ids(salt, [i for i in ids if TIES_ID.fullmatch(i)])


def _lines(rows, released, domains, written, skipped) -> Iterator[str]:
    for start in range(0, len(rows), _BATCH):
        chunk = rows[start : start + _BATCH]
        ids = [row[0] for row in chunk]
        items = Item.objects.order_by().in_bulk(ids)
        texts: dict[int, dict[str, list[str]]] = {pk: {} for pk in ids}
        for item_id, slot, kind, text in (
            ItemPart.objects.filter(item_id__in=ids)
            .order_by("item_id", "slot", "position")
            .values_list("item_id", "slot", "kind", "text")
        ):
            if kind == PartKind.TEXT:
                texts[item_id].setdefault(slot, []).append(text)
        for item_id, ext_id, slug, final_choice, provenance in chunk:
            item = items[item_id]
            parts = texts[item_id]
            slots = response_slots(parts)
            completions = ["".join(parts[s]) for s in slots]
            meta = (item.meta or {}).get("rewardbench2")
            imported = meta.get("num_correct") if meta else None
            correct = correct_slots(len(completions), imported, final_choice)
            if correct is None:
                skipped.append(ext_id)
                continue
            subset = subset_of(domains[slug])
            written.append(
                Written(
                    item_id, ext_id, released[ext_id], slug, subset, final_choice, provenance,
                    len(correct), len(completions), correct != list(range(imported or 0)),
                )
            )  # fmt: skip
            yield record_line(
                meta,
                released_id=released[ext_id],
                prompt="".join(parts.get("prompt", [])),
                completions=completions,
                models=[],
                correct=correct,
                subset=subset,
            )
