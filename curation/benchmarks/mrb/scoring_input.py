"""Reading what is scored (curation.benchmarks.mrb.scoring, whose docstring states
the official semantics): a predictions file, line by line, and a release's
records. No Django import. Every problem raises ScoringInputError naming the
file, the line (or record) and the field.

Kinds of prediction line accepted (besides ``ID``; other fields are ignored):

``output``
    Judge text (the official format; its verdict is taken as
    curation.benchmarks.mrb.scoring says). A ``Label`` on the same line is the
    official gold and is only cross-checked.
``Label`` (without ``output``)
    A verdict already extracted: exactly ``"A"`` or ``"B"``. The official
    script compares verdicts exactly, so ``"a"`` or ``" A"`` is an error here,
    not a silent miss.
``score_1``, ``score_2``
    Scalar reward-model scores (BaseReward style) for the response shown
    first and second, i.e. Output1 and Output2 in the original order. The
    higher score wins; equal scores are wrong.
``chosen_score``, ``rejected_score``
    Scores of the chosen and rejected responses; correct iff chosen > rejected.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ORDERS = ("original", "swapped")
# The most prediction lines one file may hold: a release holds at most
# 200,000 records (the import's cap), a few samples each. Every line is kept
# (a Prediction of ~200 bytes), so this bounds what a file of short lines costs.
MAX_PREDICTION_LINES = 1_000_000
KINDS = ("judge", "label", "scores", "pairs")
BETTER_VALUES = ("Output1", "Output2")


class ScoringInputError(ValueError):
    """A predictions or release file that cannot be scored. The message names
    the file, the line (or record) and the field."""

    def __init__(self, source: str, where: str, field_name: str | None, message: str):
        self.source = source
        self.where = where
        self.field = field_name
        self.message = message
        located = f"{source}, {where}" if where else source
        if field_name is not None:
            located += f", field {field_name!r}"
        super().__init__(f"{located}: {message}")


@dataclass(frozen=True, slots=True)
class Prediction:
    line: int
    id: str
    kind: str  # one of KINDS
    order: str = "original"  # one of ORDERS
    verdict: str | None = None  # "A" | "B" for judge (None: no verdict) and label
    score_1: float | None = None  # the response shown first
    score_2: float | None = None
    chosen_score: float | None = None
    rejected_score: float | None = None
    gold_label: str | None = None  # official "Label" next to "output": cross-checked only
    meta_category: str | None = None  # official "Meta.Category": cross-checked only
    text: str | None = None  # the judge's text, kept for per-item drill-down


def check_records(records: Sequence[dict], source: str) -> None:
    seen: set[str] = set()
    for index, record in enumerate(records):
        where = f"record {index}"
        if not isinstance(record, dict):
            raise ScoringInputError(source, where, None, "a record must be a JSON object")
        rid = record.get("ID")
        if not isinstance(rid, str) or not rid:
            raise ScoringInputError(source, where, "ID", "missing or not a non-empty string")
        where = f"record {index} (ID {rid!r})"
        if rid in seen:
            raise ScoringInputError(source, where, "ID", "duplicate ID in the release")
        seen.add(rid)
        if record.get("Better") not in BETTER_VALUES:
            raise ScoringInputError(
                source,
                where,
                "Better",
                f"must be 'Output1' or 'Output2', got {record.get('Better')!r}",
            )
        category = record.get("Category")
        if not isinstance(category, str) or not category:
            raise ScoringInputError(source, where, "Category", "missing or not a non-empty string")


def load_release_records(path: str | Path) -> list[dict]:
    """The records of a release: a release folder (its ``all_data.json``) or a
    JSON file holding an array of records. Checks ``ID``, ``Better`` and
    ``Category`` of every record and that IDs are unique."""
    path = Path(path)
    if path.is_dir():
        path = path / "all_data.json"
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ScoringInputError(source, "", None, f"cannot read: {exc.strerror or exc}") from None
    return parse_release_records(text, source)


def parse_release_records(text: str, source: str) -> list[dict]:
    """The records of a release's ``all_data.json`` text (see
    load_release_records); `source` names it in errors."""
    text = text.removeprefix("\ufeff")
    try:
        records = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScoringInputError(
            source, f"line {exc.lineno}", None, f"not valid JSON: {exc.msg}"
        ) from None
    if not isinstance(records, list):
        raise ScoringInputError(source, "", None, "must hold a JSON array of records")
    check_records(records, source)
    return records


def _number(value: Any, source: str, where: str, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ScoringInputError(source, where, name, f"must be a number, got {value!r}")
    if math.isnan(value):
        raise ScoringInputError(source, where, name, "must be a number, got NaN")
    return float(value)


def _ab(value: Any, source: str, where: str, name: str) -> str:
    if value not in ("A", "B"):
        raise ScoringInputError(
            source,
            where,
            name,
            f'must be exactly "A" or "B" (compared case-sensitively, as the official '
            f"scorer does), got {value!r}",
        )
    return value


def extract_verdict(text: str) -> str | None:
    """The official verdict of judge text: "A" if it contains "[[A]]" (checked
    first), else "B" if it contains "[[B]]", else None (a random verdict)."""
    if "[[A]]" in text:
        return "A"
    if "[[B]]" in text:
        return "B"
    return None


def _parse_line(obj: Any, *, source: str, where: str, line: int, order: str | None) -> Prediction:
    if not isinstance(obj, dict):
        raise ScoringInputError(source, where, None, "a prediction must be a JSON object")
    rid = obj.get("ID")
    if "ID" not in obj:
        raise ScoringInputError(source, where, "ID", "missing")
    if not isinstance(rid, str) or not rid:
        raise ScoringInputError(source, where, "ID", f"must be a non-empty string, got {rid!r}")

    line_order = obj.get("order")
    if line_order is not None and line_order not in ORDERS:
        raise ScoringInputError(
            source, where, "order", f'must be "original" or "swapped", got {line_order!r}'
        )
    if order is not None and line_order is not None and line_order != order:
        raise ScoringInputError(
            source,
            where,
            "order",
            f"the line says {line_order!r} but the whole file was given as {order!r} "
            "predictions: a line cannot be in both orders",
        )
    resolved = line_order or order or "original"

    judge = "output" in obj or "Label" in obj
    scores = "score_1" in obj or "score_2" in obj
    pairs = "chosen_score" in obj or "rejected_score" in obj
    present = [
        name
        for name, flag in (
            ("output/Label", judge),
            ("score_1/score_2", scores),
            ("chosen_score/rejected_score", pairs),
        )
        if flag
    ]
    if len(present) > 1:
        raise ScoringInputError(
            source,
            where,
            None,
            f"ambiguous: fields of more than one kind of prediction ({', '.join(present)})",
        )
    if not present:
        hint = ""
        if "outputs" in obj:
            hint = (
                " ('outputs' holds several samples, which the official scorer does not score; "
                "write one 'output' per line)"
            )
        raise ScoringInputError(
            source,
            where,
            None,
            "no usable field: give 'output' (judge text), 'Label' (\"A\"/\"B\"), "
            f"'score_1' and 'score_2', or 'chosen_score' and 'rejected_score'{hint}",
        )

    meta_category = None
    meta = obj.get("Meta")
    if isinstance(meta, dict) and isinstance(meta.get("Category"), str):
        meta_category = meta["Category"]

    if judge:
        label = _ab(obj["Label"], source, where, "Label") if "Label" in obj else None
        if "output" not in obj:
            return Prediction(line, rid, "label", resolved, verdict=label)
        text = obj["output"]
        if not isinstance(text, str):
            raise ScoringInputError(
                source, where, "output", f"must be the judge's text (a string), got {text!r}"
            )
        return Prediction(
            line,
            rid,
            "judge",
            resolved,
            verdict=extract_verdict(text),
            gold_label=label,
            meta_category=meta_category,
            text=text,
        )
    if scores:
        for name in ("score_1", "score_2"):
            if name not in obj:
                raise ScoringInputError(source, where, name, "missing (give both scores)")
        return Prediction(
            line,
            rid,
            "scores",
            resolved,
            score_1=_number(obj["score_1"], source, where, "score_1"),
            score_2=_number(obj["score_2"], source, where, "score_2"),
            meta_category=meta_category,
        )
    for name in ("chosen_score", "rejected_score"):
        if name not in obj:
            raise ScoringInputError(source, where, name, "missing (give both scores)")
    return Prediction(
        line,
        rid,
        "pairs",
        resolved,
        chosen_score=_number(obj["chosen_score"], source, where, "chosen_score"),
        rejected_score=_number(obj["rejected_score"], source, where, "rejected_score"),
        meta_category=meta_category,
    )


def _unstorable_text(value: Any) -> str | None:
    """Why a decoded line holds text no database or UTF-8 file can store (a
    NUL, an unpaired surrogate), or None. Iterative: the decoder allows
    nesting deeper than a recursive walk would."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            if "\x00" in item:
                return "contains a NUL character (\\u0000)"
            if not item.isascii():
                try:
                    item.encode()
                except UnicodeEncodeError:
                    return (
                        "contains an unpaired surrogate (\\ud800-\\udfff), "
                        "which is not valid Unicode"
                    )
    return None


def parse_predictions(
    lines: Iterable[str],
    *,
    filename: str,
    order: str | None = None,
    max_lines: int = MAX_PREDICTION_LINES,
) -> list[Prediction]:
    """Predictions from JSONL lines, in file order. Blank lines are skipped
    (line numbers still count them). ``order="swapped"`` marks every line as a
    swapped-order prediction (a line saying otherwise is an error). Raises
    ``ScoringInputError`` naming the file, line and field of the first problem."""
    if order is not None and order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
    out: list[Prediction] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        where = f"line {number}"
        if len(out) >= max_lines:
            raise ScoringInputError(
                filename,
                where,
                None,
                f"more than {max_lines} predictions, the most one file may hold "
                "(a release holds at most 200,000 records)",
            )
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ScoringInputError(filename, where, None, f"not valid JSON: {exc.msg}") from None
        except RecursionError:
            raise ScoringInputError(
                filename, where, None, "not valid JSON: values are nested too deeply"
            ) from None
        except ValueError as exc:  # an integer past Python's digit limit
            reason = "a number has too many digits" if "digits" in str(exc) else str(exc)
            raise ScoringInputError(filename, where, None, f"not valid JSON: {reason}") from None
        problem = _unstorable_text(obj)
        if problem:
            raise ScoringInputError(filename, where, None, problem)
        out.append(_parse_line(obj, source=filename, where=where, line=number, order=order))
    return out
