"""Scoring predictions on a VideoRewardBench-style release (arXiv
2509.00484; issue 35 item 5). Pure Python; no Django.

The paper reports accuracy overall and on its five dimensions (long-form
perception, short-form perception, knowledge, reasoning, safety), and the
macro average of the five. No scoring script is published, so the studio
states its rules:

- a sample is **correct** when its predictions line gives the chosen a
  strictly higher score than the rejected (``chosen_score >
  rejected_score``; a tie is wrong, as a pairwise judge that cannot decide
  gets no credit);
- **accuracy** = correct samples / samples, overall (every sample of the
  release's file) and per dimension; **macro accuracy** = the mean of the
  dimensions' accuracies (of the dimensions the release holds);
- a sample without a predictions line is wrong and stays in the
  denominators (counted as ``missing``); lines of IDs the release does not
  hold are counted (``unknown_ids``), not scored; an ID given twice is refused.

Predictions are JSONL lines ``{"id": …, "chosen_score": …,
"rejected_score": …}``: a reward model's two scalar rewards, or a judge's
votes for each side (a judge run writes such lines).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from curation.benchmarks.common.predictions import first_line_object, prediction_lines

DIMENSIONS = (
    "long_form_perception",
    "short_form_perception",
    "knowledge",
    "reasoning",
    "safety",
)
DEFINITIONS = (
    "Accuracy = share of samples whose chosen_score > rejected_score (strictly: a tie is "
    "wrong), overall and per dimension; macro accuracy = mean of the dimensions' accuracies. "
    "A sample without a prediction is wrong."
)
KEYS = ("chosen_score", "rejected_score")


class PredictionsError(ValueError):
    """A predictions file these rules refuse (the message names file, line, field)."""


@dataclass(frozen=True)
class Sample:
    """What scoring needs of one line of the release's file."""

    id: str
    dimension: str


def samples_of(lines: Sequence[dict]) -> list[Sample]:
    return [Sample(str(v["id"]), str(v["dimension"])) for v in lines]


def _score(record: dict, key: str, where: str) -> float:
    value = record.get(key)
    if value is None:
        raise PredictionsError(f"{where}, field '{key}': is missing")
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise PredictionsError(f"{where}, field '{key}': expected a finite number")
    return float(value)


def read_predictions(
    text: str, filename: str, samples: Sequence[Sample]
) -> tuple[dict[str, tuple[float, float]], int]:
    """(chosen's, rejected's) scores by sample ID, and the count of lines of
    IDs the release does not hold."""
    known = {s.id for s in samples}
    out: dict[str, tuple[float, float]] = {}
    first: dict[str, int] = {}
    unknown = lines = 0
    expected = f"'id', {', '.join(KEYS)}"
    for n, where, record in prediction_lines(text, filename, PredictionsError, expected):
        lines += 1
        sample = record.get("id")
        if isinstance(sample, bool) or not isinstance(sample, str | int) or sample == "":
            raise PredictionsError(f"{where}, field 'id': expected the sample's id")
        sample = str(sample)
        scores = (_score(record, KEYS[0], where), _score(record, KEYS[1], where))
        if sample in first:
            raise PredictionsError(
                f"{where}, field 'id': {sample!r} is predicted twice (first on line "
                f"{first[sample]})"
            )
        first[sample] = n
        if sample in known:
            out[sample] = scores
        else:
            unknown += 1
    if not lines:
        raise PredictionsError(f"{filename}: holds no predictions")
    return out, unknown


def correct(scores: tuple[float, float] | None) -> bool:
    return scores is not None and scores[0] > scores[1]


def _ratio(n: int, d: int) -> float | None:
    return n / d if d else None


def score(samples: Sequence[Sample], predictions: dict[str, tuple[float, float]]) -> dict:
    """The report: overall, macro, per dimension (the paper's order, then any
    other as met), and each sample's result (``items``)."""
    order = list(DIMENSIONS)
    order += [d for d in dict.fromkeys(s.dimension for s in samples) if d not in order]
    stats = {d: {"samples": 0, "correct": 0, "missing": 0} for d in order}
    items: list[dict[str, Any]] = []
    for s in samples:
        got = predictions.get(s.id)
        ok = correct(got)
        entry = stats[s.dimension]
        entry["samples"] += 1
        entry["correct"] += ok
        entry["missing"] += got is None
        items.append({"id": s.id, "dimension": s.dimension,
                      "scores": list(got) if got else None, "correct": ok})  # fmt: skip
    held = [(d, e) for d, e in stats.items() if e["samples"]]
    macro = [e["correct"] / e["samples"] for _, e in held]
    dimensions = [{"dimension": d, **e, "accuracy": _ratio(e["correct"], e["samples"])}
                  for d, e in held]  # fmt: skip
    right = sum(e["correct"] for e in stats.values())
    return {
        "samples": len(items),
        "correct": right,
        "missing": sum(i["scores"] is None for i in items),
        "accuracy": _ratio(right, len(items)),
        "macro_accuracy": sum(macro) / len(macro) if macro else None,
        "dimensions": dimensions,
        "items": items,
        "definitions": DEFINITIONS,
    }


def looks_like_predictions(head: str) -> bool:
    """Whether a file's first line is a JSON object with "id" and both scores."""
    record = first_line_object(head)
    return record is not None and "id" in record and all(k in record for k in KEYS)
