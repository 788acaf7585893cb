"""Model probability that canonical response 1 is better, per item and entry,
and the ensemble over entries. No Django import.

Canonical terms: the project's item has ``response_1`` and ``response_2`` in
import order. A release writes them as ``Output1``/``Output2`` after a seeded
shuffle; the release item records which canonical side was chosen
(``chosen`` = "1" or "2") and in which slot it was written (``better`` =
"Output1" or "Output2"). A prediction line in the original order shows
Output1 first (assistant A, ``score_1``); in the swapped order it shows
Output2 first.

* Reward model (``score_1``/``score_2``): ``sigmoid(s(response 1) - s(response 2))``;
  with both orders given, the mean of the two.
* Chosen/rejected scores: ``sigmoid(chosen - rejected)`` for the chosen side.
* Judge (text or ``Label``): its share of votes for response 1 over the orders
  it answered, smoothed by adding half a vote to each side
  (``(k + 0.5) / (n + 1)``, the Jeffreys prior): one order → 0.75 or 0.25,
  both orders agreeing → 5/6, the orders disagreeing → 0.5. A line with no
  ``[[A]]``/``[[B]]`` (the official scorer draws a random verdict for it) is no
  evidence and counts as unanswered; an entry with no answer has no
  probability (None), never a made-up 0.5.
* Ensemble: the mean over the selected entries that have a probability for
  the item (None when none has).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

JUDGE_SMOOTHING = 0.5  # pseudo-votes added to each side


def sigmoid(x: float) -> float:
    """Logistic function, stable for large |x|."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def other(side: str) -> str:
    return "2" if side == "1" else "1"


def slot_to_canonical(slot: str, *, better: str, chosen: str) -> str:
    """The canonical side ("1"/"2") written in release slot Output1/Output2."""
    return chosen if slot == better else other(chosen)


def first_shown_slot(order: str) -> str:
    return "Output1" if order == "original" else "Output2"


def second_shown_slot(order: str) -> str:
    return "Output2" if order == "original" else "Output1"


def line_pick(prediction, *, better: str, chosen: str) -> str:
    """Canonical side a prediction line picks: "1", "2", or "" (no pick: equal
    scores, or judge text without a verdict)."""
    order = prediction.order
    if prediction.kind in ("judge", "label"):
        if prediction.verdict is None:
            return ""
        slot = first_shown_slot(order) if prediction.verdict == "A" else second_shown_slot(order)
        return slot_to_canonical(slot, better=better, chosen=chosen)
    if prediction.kind == "scores":
        if prediction.score_1 == prediction.score_2:
            return ""
        slot = (
            first_shown_slot(order)
            if prediction.score_1 > prediction.score_2
            else (second_shown_slot(order))
        )
        return slot_to_canonical(slot, better=better, chosen=chosen)
    if prediction.chosen_score == prediction.rejected_score:
        return ""
    return chosen if prediction.chosen_score > prediction.rejected_score else other(chosen)


def line_probability(prediction, *, better: str, chosen: str) -> float | None:
    """P(response 1 better) from one score line; None for judge lines."""
    if prediction.kind == "scores":
        first = slot_to_canonical(first_shown_slot(prediction.order), better=better, chosen=chosen)
        diff = prediction.score_1 - prediction.score_2
        return sigmoid(diff if first == "1" else -diff)
    if prediction.kind == "pairs":
        p_chosen = sigmoid(prediction.chosen_score - prediction.rejected_score)
        return p_chosen if chosen == "1" else 1.0 - p_chosen
    return None


def judge_share(picks: Iterable[str], smoothing: float = JUDGE_SMOOTHING) -> float | None:
    """Smoothed share of votes for response 1 among picks ("1"/"2"; "" = none)."""
    answered = [p for p in picks if p]
    if not answered:
        return None
    k = sum(1 for p in answered if p == "1")
    return (k + smoothing) / (len(answered) + 2 * smoothing)


def entry_probability(lines: Sequence, *, better: str, chosen: str) -> float | None:
    """P(response 1 better) from an entry's lines for one item (at most one
    per order: the first line of each, as the official strict count uses)."""
    scored = [line_probability(p, better=better, chosen=chosen) for p in lines]
    numbers = [p for p in scored if p is not None]
    if numbers:
        return sum(numbers) / len(numbers)
    return judge_share(line_pick(p, better=better, chosen=chosen) for p in lines)


def ensemble(probabilities: Iterable[float | None]) -> float | None:
    """Mean over the entries that have a probability for the item."""
    values = [p for p in probabilities if p is not None]
    return sum(values) / len(values) if values else None
