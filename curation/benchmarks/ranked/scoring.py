"""Scoring a model against a release's human rankings (issue 33): MR²Bench-
style top-1 accuracy and Kendall's τ-b. Pure Python, numpy and scipy; no
Django.

MR²Bench (arXiv 2604.10966) publishes its training data's ``rankings`` but
no scorer, so these are **the studio's definitions**, stated wherever they
are shown:

- **top-1 accuracy** of a prompt: the share of the model's top responses
  (those it gives its best score or place; several when it ties them) that
  the humans ranked first (rank 1, several when they tied). 1 when the
  model's single top response is a human first, 1/k when it ties k responses
  at its top and one is a human first (RewardBench 2's shared point,
  generalised), 0 otherwise or with no prediction. Overall and per category:
  the mean over the release's prompts.
- **Kendall's τ-b** of a prompt: ``scipy.stats.kendalltau(human ranks, model
  ranks, variant="b")``, model ranks being the negated scores (or the
  ranking given), so 1 = the model orders the responses as the humans did
  and ties are corrected for. Undefined (nan: every human or every model
  place tied) prompts and prompts without a prediction are left out of the
  mean, which is over the rest (the count is reported).
- **Acc+** (issue 34; curation.releases.groups): a prompt decomposed into
  the pairs its human ranking implies (every two responses the humans placed
  apart) counts right only when the model orders every such pair the same
  way, strictly (a model tie or no prediction is wrong); a prompt of a group
  counts only with the rest of its group. The share of groups right
  (prompts without a group: each its own).

A prediction is a JSONL line ``{"id": "…", "scores": [N numbers]}`` (higher
is better: a reward model's score per response, in the file's order) or
``{"id": "…", "ranking": [N ints]}`` (1 = best, ties allowed); a repeated ID's
last line counts, as RewardBench 2's reader does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from curation.benchmarks.common.predictions import first_line_object, prediction_lines

# numpy and scipy.stats are imported where a file is scored: the benchmark
# registry imports this module in every web and Celery process
# (tests/test_import_weight.py).

DEFINITIONS = (
    "The studio's definitions (MR²Bench publishes no scorer): top-1 accuracy = per prompt, "
    "the share of the model's top-scored responses (ties share) that the humans ranked "
    "first, 0 without a prediction, averaged over the prompts; Kendall's τ-b = "
    "scipy.stats.kendalltau(human ranks, model ranks, variant='b') per prompt, averaged over "
    "the prompts where it is defined and predicted; Acc+ = the share of prompt groups (a "
    "prompt without a group is its own) whose every human-ordered pair the model orders "
    "the same way, strictly."
)
PREDICTION_KEYS = ("scores", "ranking")


class PredictionsError(ValueError):
    """A predictions file these rules refuse (the message names file, line, field)."""


@dataclass(frozen=True)
class Prompt:
    """What scoring needs of one record of the release's ranked file."""

    id: str
    category: str
    ranks: tuple[int, ...]  # the human ranking, 1 = best


@dataclass(frozen=True)
class Prediction:
    """A model's order of one prompt's responses: lower key = better."""

    keys: tuple[float, ...]


def top1(human: Sequence[int], keys: Sequence[float]) -> float:
    """One prompt's top-1 accuracy (see the module)."""
    import numpy as np

    values = np.asarray(keys, dtype=float)
    top = values == values.min()
    best = np.asarray(human) == min(human)
    return float(np.sum(top & best) / np.sum(top))


def pairs_right(human: Sequence[int], keys: Sequence[float]) -> bool:
    """Whether the model orders, strictly, every pair of responses that the
    humans placed apart as the humans did (lower rank and key = better)."""
    n = len(human)
    return all(
        (keys[i] < keys[j]) if human[i] < human[j] else (keys[j] < keys[i])
        for i in range(n)
        for j in range(i + 1, n)
        if human[i] != human[j]
    )


def tau_b(human: Sequence[int], keys: Sequence[float]) -> float | None:
    """One prompt's Kendall τ-b (None where scipy gives nan)."""
    from scipy import stats

    tau = stats.kendalltau(human, keys, variant="b").statistic
    return None if math.isnan(tau) else float(tau)


def prediction_of(record: dict, where: str, n: int | None) -> Prediction:
    given = [k for k in PREDICTION_KEYS if k in record]
    if len(given) != 1:
        raise PredictionsError(f"{where}: give one of 'scores' (higher is better) or 'ranking'")
    key = given[0]
    values = record[key]
    if not isinstance(values, list) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in values
    ):
        raise PredictionsError(f"{where}, field {key!r}: expected a list of finite numbers")
    if n is not None and len(values) != n:
        raise PredictionsError(
            f"{where}, field {key!r}: holds {len(values)} values; the prompt has {n} responses"
        )
    if key == "ranking":
        if not all(isinstance(v, int) and v >= 1 for v in values):
            raise PredictionsError(f"{where}, field 'ranking': places are integers from 1 (best)")
        return Prediction(tuple(float(v) for v in values))
    return Prediction(tuple(-float(v) for v in values))


def read_predictions(
    text: str, filename: str, sizes: dict[str, int]
) -> tuple[dict[str, Prediction], int, int]:
    """Predictions by prompt ID (a known ID's list must have its prompt's
    length, `sizes`), the count of repeated IDs (the last line counts) and
    of lines whose ID is not in the release."""
    out: dict[str, Prediction] = {}
    repeated = unknown = 0
    seen: set[str] = set()
    for _, where, record in prediction_lines(text, filename, PredictionsError, "'id'"):
        prompt_id = record.get("id")
        if not isinstance(prompt_id, str) or not prompt_id:
            raise PredictionsError(f"{where}, field 'id': expected the prompt's ID (a string)")
        prediction = prediction_of(record, where, sizes.get(prompt_id))
        repeated += prompt_id in seen
        seen.add(prompt_id)
        if prompt_id in sizes:
            out[prompt_id] = prediction
        else:
            unknown += 1
    if not seen:
        raise PredictionsError(f"{filename}: holds no predictions")
    return out, repeated, unknown


def _summary(rows: list[tuple[float, float | None, bool]]) -> dict[str, Any]:
    import numpy as np

    taus = [t for _, t, _ in rows if t is not None]
    return {
        "prompts": len(rows),
        "missing": sum(missing for *_, missing in rows),
        "top1": float(np.mean([r for r, _, _ in rows])) if rows else None,
        "tau_b": float(np.mean(taus)) if taus else None,
        "tau_prompts": len(taus),
    }


def score(
    prompts: Sequence[Prompt],
    predictions: dict[str, Prediction],
    groups: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The report: overall, then per category in the release's order, and
    Acc+ over `groups` ({prompt ID: group key}; none: each prompt its own)."""
    from curation.releases.groups import acc_plus

    rows: dict[str, list[tuple[float, float | None, bool]]] = {}
    every = []
    right: dict[str, bool] = {}
    for p in prompts:
        got = predictions.get(p.id)
        row = (0.0, None, True) if got is None else (
            top1(p.ranks, got.keys), tau_b(p.ranks, got.keys), False)  # fmt: skip
        right[p.id] = got is not None and pairs_right(p.ranks, got.keys)
        rows.setdefault(p.category, []).append(row)
        every.append(row)
    return {
        **_summary(every),
        "categories": [{"category": c, **_summary(r)} for c, r in rows.items()],
        "acc_plus": acc_plus([p.id for p in prompts], groups or {}, right).as_dict(),
        "definitions": DEFINITIONS,
    }


def looks_like_predictions(head: str) -> bool:
    """Whether a file's start is JSONL lines with "id" and "ranking" (a line
    with "scores" is RewardBench 2's shape too: name this format for it)."""
    record = first_line_object(head)
    return record is not None and "id" in record and "ranking" in record
