"""Scoring a model on Omni-RewardBench (arXiv 2510.23451) as the published
code does, per task. Pure Python, no Django.

**Generative judges** (``evaluation_experiments/run_exp.py``,
``utils/video_utils.py``). An answer is parsed by ``parse_judgement``:

    if "[[A]]" in generation and "[[B]]" in generation: return None
    if r"\\boxed{A}" in generation and r"\\boxed{B}" in generation: return None
    # labels_dict: [[A]], [[B]], \\boxed{A}, \\boxed{B}, [[C]], \\boxed{C} in this order
    for kw, label in labels_dict.items():
        if kw in generation: return label    # response1, response2, …, tie
    return None

(case-sensitive substring tests). The script asks again while the answer is
unparsed (``for retry in range(5)``: five attempts in all; the studio's judge
runs make the same five: the benchmark's ``judge_retries`` = 4 re-asks) and keeps the
last answer; a final miss (``predicted = None``) is wrong. **Without ties**
(the default) ``samples = [elem for elem in samples if
elem['criteria_preference'] != 'tie']`` and the prompt offers [[A]]/[[B]];
**with ties** every item counts and [[C]] means tie. Accuracy =
``true_count / len(results)``, ``true_count`` counting
``elem["predicted"] == elem["criteria_preference"]``. Response1 is always A.

**Scalar reward models** (``OmniReward-Factory/src/llamafactory/train/rm/
metric.py``): human label h = 1 (response1), -1 (response2), 0 (tie),
m = score(A) - score(B), and ``suff_stats(h, m, epsilon)`` counts C
(h·m > 0), D (otherwise), Th (h = 0, |m| > ε), Tm (h ≠ 0, |m| ≤ ε), Thm
(h = 0, |m| ≤ ε), in that order of tests. **Accuracy without ties** =
``C / (C + D + Tm)`` at ε = -1 (so Tm = 0, m = 0 counts as D and tie-labelled
items, Th, leave the denominator). **Accuracy with ties** (Deutsch et al.,
arXiv 2305.14324, ``calc_accuracy_with_ties``) = the best
``(C + Thm) / (C + D + Th + Tm + Thm)`` over the sweep the code makes: the
pairs sorted by |m| (a stable sort), ε set to each |m| in turn and only that
pair re-counted, so step k counts the first k pairs as model ties and the rest
as at ε = -1 (ε = -1 itself, no model tie, is not a candidate; equal |m| values
give one step each).

The code scores one task at a time and averages nothing across tasks; the
studio's **overall** is the unweighted mean of the tasks' accuracies (stated
wherever it is shown). An item without a prediction is wrong for a judge and
left out (counted as missing) for a reward model.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from curation.benchmarks.common.predictions import first_line_object

LABELS = {"[[A]]": "response1", "[[B]]": "response2", r"\boxed{A}": "response1",
          r"\boxed{B}": "response2", "[[C]]": "tie", r"\boxed{C}": "tie"}  # fmt: skip
GOLD = {"1": "response1", "2": "response2", "tie": "tie"}
HUMAN = {"response1": 1, "response2": -1, "tie": 0}
KINDS = ("output", "predicted", "scores")
DEFINITIONS = (
    "Omni-RewardBench's published rules, per task: a judge's answer is parsed as "
    "none if it holds both [[A]] and [[B]] (or both \\boxed{A} and \\boxed{B}), else by "
    "the first of [[A]], [[B]], \\boxed{A}, \\boxed{B}, [[C]], \\boxed{C} it holds "
    "(response1 is A; [[C]] is a tie); accuracy = share of items whose parse equals "
    "criteria_preference, tie-labelled items dropped without ties, a miss wrong. A reward "
    "model's m = score(A) - score(B) against h = 1/-1/0: without ties C/(C+D+Tm); with ties "
    "the tie-calibrated accuracy max over ε of (C+Thm)/(C+D+Th+Tm+Thm) (Deutsch et al. "
    "2023, the published ε sweep). Overall: the unweighted mean over the tasks (the "
    "published code reports tasks only)."
)


class PredictionsError(ValueError):
    """A predictions file these rules refuse (the message names file, line, field)."""


def parse_judgement(generation: str) -> str | None:
    """The published parse (module docstring): response1, response2, tie or None."""
    if "[[A]]" in generation and "[[B]]" in generation:
        return None
    if r"\boxed{A}" in generation and r"\boxed{B}" in generation:
        return None
    for keyword, label in LABELS.items():
        if keyword in generation:
            return label
    return None


def suff_stats(h: Sequence[int], m: Sequence[float], epsilon: float) -> list[int]:
    """[C, D, Th, Tm, Thm] as ``metric.suff_stats`` counts them."""
    stats = [0, 0, 0, 0, 0]
    for hi, mi in zip(h, m, strict=True):
        stats[_cell(hi, mi, epsilon)] += 1
    return stats


def _cell(hi: int, mi: float, epsilon: float) -> int:
    if hi == 0:
        return 4 if abs(mi) <= epsilon else 2
    if abs(mi) <= epsilon:
        return 3
    return 0 if hi * mi > 0 else 1


def accuracy_without_ties(h: Sequence[int], m: Sequence[float]) -> float | None:
    """C / (C + D + Tm) at ε = -1 (None when no item has a preference)."""
    c, d, _, tm, _ = suff_stats(h, m, -1)
    return c / (c + d + tm) if c + d + tm else None


def accuracy_with_ties(h: Sequence[int], m: Sequence[float]) -> tuple[float | None, float | None]:
    """(tie-calibrated accuracy, the ε reaching it) by the published sweep
    (module docstring); (None, None) with no items."""
    stats = suff_stats(h, m, -1)
    best, best_epsilon = -math.inf, None
    for hi, mi in sorted(zip(h, m, strict=True), key=lambda pair: abs(pair[1])):
        stats[_cell(hi, mi, -1)] -= 1  # sorted: |m| >= the last ε, counted at ε = -1
        epsilon = abs(mi)
        stats[_cell(hi, mi, epsilon)] += 1
        c, d, th, tm, thm = stats
        accuracy = (c + thm) / (c + d + th + tm + thm)
        if accuracy > best:
            best, best_epsilon = accuracy, epsilon
    return (None, None) if best_epsilon is None else (best, best_epsilon)


@dataclass(frozen=True)
class Item:
    """What scoring needs of one release record: its unique ID (the
    studio's ``<task>:<id>[~hash]``), task, gold label, and the file's own
    ``id`` and ``criteria`` (a predictions line may name it by those)."""

    id: str
    task: str
    gold: str  # response1, response2, tie
    file_id: str = ""
    criteria: str = ""


@dataclass(frozen=True)
class Prediction:
    predicted: str | None = None  # a judge's parsed label
    margin: float | None = None  # a reward model's score(A) - score(B)


def prediction_of(record: dict, where: str) -> tuple[str, Prediction, bool | None]:
    """(kind, prediction, with_ties) of one predictions line."""
    given = [k for k in KINDS if k in record]
    if len(given) != 1:
        raise PredictionsError(
            f"{where}: give one of 'output' (the judge's answer), 'predicted' (response1, "
            "response2, tie or null) or 'scores' ([score of response1, score of response2])"
        )
    kind = given[0]
    ties = record.get("with_ties")
    if ties is not None and not isinstance(ties, bool):
        raise PredictionsError(f"{where}, field 'with_ties': expected true or false")
    value = record[kind]
    if kind == "output":
        if not isinstance(value, str):
            raise PredictionsError(f"{where}, field 'output': expected the answer's text")
        swapped = record.get("swapped", False)
        if not isinstance(swapped, bool):
            raise PredictionsError(f"{where}, field 'swapped': expected true or false")
        predicted = parse_judgement(value)
        if swapped:  # response2 was shown as A (text_to_audio, run_exp_t2a.py): map back
            predicted = {"response1": "response2", "response2": "response1"}.get(
                predicted, predicted
            )
        return "judge", Prediction(predicted=predicted), ties
    if kind == "predicted":
        if value is not None and value not in HUMAN:
            raise PredictionsError(
                f"{where}, field 'predicted': expected response1, response2, tie or null"
            )
        return "judge", Prediction(predicted=value), ties
    if (not isinstance(value, list) or len(value) != 2 or not all(
            isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
            for v in value)):  # fmt: skip
        raise PredictionsError(f"{where}, field 'scores': expected two finite numbers")
    return "scalar", Prediction(margin=float(value[0]) - float(value[1])), ties


class Resolver:
    """Finds the item a predictions line names: by the studio's ID, or by the
    file's ``id`` narrowed by ``task`` and ``criteria`` when that ID is in
    several tasks or names several criteria."""

    def __init__(self, items: Sequence[Item]):
        self.ids = {i.id for i in items}
        self.by_file_id: dict[str, list[Item]] = {}
        for item in items:
            self.by_file_id.setdefault(item.file_id, []).append(item)

    def __call__(self, record: dict, item_id: str, where: str) -> str | None:
        if item_id in self.ids:
            return item_id
        found = self.by_file_id.get(item_id, [])
        for key in ("task", "criteria"):
            if key in record:
                found = [i for i in found if getattr(i, key) == record[key]]
        if len(found) > 1:
            tasks = sorted({i.task for i in found})
            field = "task" if len(tasks) > 1 and "task" not in record else "criteria"
            raise PredictionsError(
                f"{where}, field {field!r}: ID {item_id!r} names {len(found)} items (tasks "
                f"{', '.join(tasks)}); give its {field}, or the item's ID "
                f"({found[0].id}, …)"
            )
        return found[0].id if found else None


def read_predictions(text: str, filename: str, items: Sequence[Item]) -> dict[str, Any]:
    """{"kind", "with_ties", "predictions" by item ID, "repeated", "unknown"}:
    one kind per file; a repeated item's last line counts."""
    resolve = Resolver(items)
    out: dict[str, Prediction] = {}
    kinds, ties, seen = set(), set(), set()
    repeated = unknown = lines = 0
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{filename}:{n}"
        try:
            record = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise PredictionsError(f"{where}: not valid JSON ({exc})") from None
        if not isinstance(record, dict):
            raise PredictionsError(f"{where}: expected an object with 'id'")
        item_id = record.get("id")
        if isinstance(item_id, int) and not isinstance(item_id, bool):
            item_id = str(item_id)
        if not isinstance(item_id, str) or not item_id:
            raise PredictionsError(f"{where}, field 'id': expected the item's ID")
        kind, prediction, with_ties = prediction_of(record, where)
        kinds.add(kind)
        ties.add(bool(with_ties))
        if len(kinds) > 1 or len(ties) > 1:
            raise PredictionsError(
                f"{where}: one file holds one kind of prediction (judge answers or scores) "
                "and one ties mode"
            )
        lines += 1
        key = resolve(record, item_id, where)
        if key is None:
            unknown += 1
            continue
        repeated += key in seen
        seen.add(key)
        out[key] = prediction
    if not lines:
        raise PredictionsError(f"{filename}: holds no predictions")
    return {"kind": kinds.pop(), "with_ties": ties.pop(), "predictions": out,
            "repeated": repeated, "unknown": unknown}  # fmt: skip


def score_task(items: Sequence[Item], predictions: dict[str, Prediction], kind: str,
               with_ties: bool) -> dict[str, Any]:  # fmt: skip
    """One task's report."""
    if kind == "judge":
        counted = [i for i in items if with_ties or i.gold != "tie"]
        got = [predictions.get(i.id, Prediction()).predicted for i in counted]
        correct = sum(p == i.gold for p, i in zip(got, counted, strict=True))
        return {"items": len(counted), "correct": correct,
                "missing": sum(i.id not in predictions for i in counted),
                "unparsed": sum(p is None for p in got),
                "accuracy": correct / len(counted) if counted else None}  # fmt: skip
    scored = [i for i in items if i.id in predictions]
    h = [HUMAN[i.gold] for i in scored]
    m = [predictions[i.id].margin for i in scored]
    with_ties_accuracy, epsilon = accuracy_with_ties(h, m)
    without = accuracy_without_ties(h, m)
    return {"items": len(scored), "missing": len(items) - len(scored),
            "stats": dict(zip(("C", "D", "Th", "Tm", "Thm"), suff_stats(h, m, -1), strict=True)),
            "accuracy_without_ties": without, "accuracy_with_ties": with_ties_accuracy,
            "epsilon": epsilon,
            "accuracy": with_ties_accuracy if with_ties else without}  # fmt: skip


def score(items: Sequence[Item], read: dict[str, Any]) -> dict[str, Any]:
    """The report: per task (in the release's order) and their mean."""
    tasks: dict[str, list[Item]] = {}
    for item in items:
        tasks.setdefault(item.task, []).append(item)
    kind, with_ties = read["kind"], read["with_ties"]
    rows = [{"task": task, **score_task(group, read["predictions"], kind, with_ties)}
            for task, group in tasks.items()]  # fmt: skip
    values = [r["accuracy"] for r in rows if r["accuracy"] is not None]
    return {"kind": kind, "with_ties": with_ties, "tasks": rows,
            "overall": sum(values) / len(values) if values else None,
            "repeated_ids": read["repeated"], "unknown_ids": read["unknown"],
            "definitions": DEFINITIONS}  # fmt: skip


def item_rows(items: Sequence[Item], read: dict[str, Any]) -> list[dict[str, Any]]:
    """Per-item results: the item, its gold and the prediction (None: none)."""
    rows = []
    for item in items:
        if read["kind"] == "judge" and not read["with_ties"] and item.gold == "tie":
            continue
        p = read["predictions"].get(item.id)
        rows.append({"id": item.id, "task": item.task, "gold": item.gold,
                     "predicted": None if p is None else p.predicted,
                     "margin": None if p is None else p.margin})  # fmt: skip
    return rows


def looks_like_predictions(head: str) -> bool:
    """Whether a file's start is JSONL lines with "id" and "output",
    "predicted" or a two-number "scores" with "with_ties" or Omni's keys."""
    record = first_line_object(head)
    if record is None or "id" not in record:
        return False
    return "predicted" in record or "output" in record or "with_ties" in record
