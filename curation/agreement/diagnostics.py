"""Per-item and per-annotator agreement (DESIGN §6): how each item's votes
split, and how each annotator compares with the others, leans to a side and
how fast they vote. Pure Python/numpy over curation.agreement.stats' votes
and count matrices; each figure is defined where it is computed.

Two choices the code alone does not show: ties alone never make a conflict
(DESIGN §6: "the only dissent is ties" can still be agreed), and the side-bias
test runs once per annotator, so its p-values are adjusted with
Benjamini-Hochberg over the annotators with at least ``MIN_SIDE_VOTES``
non-tie votes. Degenerate data never raises and never yields a made-up
number: every statistic is ``float | Undefined``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from curation.agreement.stats import (
    _ONE,
    _TIE,
    _TWO,
    CHOICES,
    LABELS,
    RESPONSES,
    Interval,
    Stat,
    Undefined,
    Vote,
    _alpha_from_sums,
    _alpha_parts,
    _codes,
    _index,
    _Table,
    _tally,
    nominal_alpha,
)

# Side bias: annotators with fewer non-tie votes are not tested, and the
# false discovery rate the Benjamini-Hochberg adjustment controls.
MIN_SIDE_VOTES = 30
SIDE_BIAS_FDR = 0.05


@dataclass(frozen=True, slots=True)
class ItemStats:
    counts: dict[str, int]  # canonical choice -> votes
    n_votes: int
    majority: str | None
    winner_share: float
    entropy: float  # normalised to [0, 1]
    conflict: bool
    contradictions: int  # votes that contradict their own correctness labels
    correctness_counts: dict[str, dict[str, int]]  # response -> label -> count

    @property
    def contradiction(self) -> bool:
        return self.contradictions > 0


@dataclass(frozen=True, slots=True)
class Consensus:
    """How one annotator's values compare with everyone else's on one variable."""

    n_values: int
    n_compared: int  # values whose unit has a leave-one-out majority
    agreement: Stat  # share of compared values equal to the leave-one-out majority
    kappa: Stat  # Cohen's kappa, annotator vs leave-one-out majority
    alpha_delta: Stat  # alpha without the annotator - alpha with everyone (> 0: better without)

    @property
    def n_agreeing(self) -> int:
        """Compared values equal to the leave-one-out majority (the k of k/n)."""
        return round(self.agreement * self.n_compared) if self.n_compared else 0


@dataclass(frozen=True, slots=True)
class AnnotatorStats:
    n_votes: int
    choice: Consensus
    correctness: Consensus
    gold_accuracy: Stat
    n_gold: int  # a tie on a gold item counts as wrong
    left_pick_rate: Stat  # share of non-tie votes for the response displayed left
    left_pick_ci: Interval | Undefined
    n_sided: int  # non-tie votes: the left-pick denominator
    left_pick_p: Stat  # exact binomial test of 50% (Undefined below MIN_SIDE_VOTES)
    left_pick_p_adjusted: Stat  # Benjamini-Hochberg over the annotators tested

    @property
    def side_bias(self) -> bool:
        """Flagged: adjusted p-value below SIDE_BIAS_FDR (enough votes to test)."""
        q = self.left_pick_p_adjusted
        return isinstance(q, float) and q < SIDE_BIAS_FDR

    tie_rate: float
    median_seconds: float


# --- small statistics ----------------------------------------------------------


def wilson_interval(k: int, n: int, confidence: float = 0.95) -> Interval | Undefined:
    """Wilson score interval for k successes in n trials (scipy)."""
    if n <= 0:
        return Undefined("no trials")
    if not 0 <= k <= n:
        raise ValueError("need 0 <= k <= n")
    from scipy.stats import binomtest  # heavy: loaded where used (annotator statistics)

    ci = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    return Interval(float(ci.low), float(ci.high))


@functools.lru_cache(maxsize=65_536)
def _even_split_p(k: int, n: int) -> float:
    """The exact two-sided binomial test's p-value of k left picks in n at a
    50 % rate: a function of (k, n) alone, so each pair is computed once
    (a team's annotators share vote counts; the agreement page recomputes)."""
    from scipy.stats import binomtest  # heavy: loaded where used

    return binomtest(k, n, 0.5).pvalue


def side_bias_p_values(
    counts: Sequence[tuple[int, int]], *, min_votes: int = MIN_SIDE_VOTES
) -> list[tuple[Stat, Stat]]:
    """(p-value, Benjamini-Hochberg adjusted p-value) of each (left picks,
    non-tie votes) pair: the exact two-sided binomial test of a 50% left-pick
    rate, adjusted over the pairs with at least `min_votes` votes; the others
    are Undefined (not tested)."""
    from scipy.stats import false_discovery_control  # heavy: loaded where used

    tested = [i for i, (_, n) in enumerate(counts) if n >= min_votes]
    raw = [_even_split_p(int(counts[i][0]), int(counts[i][1])) for i in tested]
    adjusted = false_discovery_control(raw, method="bh") if raw else []
    untested = Undefined(f"fewer than {min_votes} non-tie votes")
    result: list[tuple[Stat, Stat]] = [(untested, untested)] * len(counts)
    for i, p, q in zip(tested, raw, adjusted, strict=True):
        result[i] = (float(p), float(q))
    return result


def _kappa_from_confusion(confusion: np.ndarray) -> Stat:
    n = float(confusion.sum())
    if n == 0:
        return Undefined("nothing to compare")
    observed = float(np.trace(confusion)) / n
    chance = float((confusion.sum(axis=1) * confusion.sum(axis=0)).sum()) / (n * n)
    if chance >= 1:
        return Undefined("both raters used one and the same category throughout")
    return (observed - chance) / (1 - chance)


def cohen_kappa(a: Sequence[str], b: Sequence[str], categories: Sequence[str]) -> Stat:
    """Cohen's kappa between two paired sequences of labels."""
    if len(a) != len(b):
        raise ValueError("a and b must be the same length")
    k = len(categories)
    confusion = _tally(
        _codes(a, categories, missing=None), _codes(b, categories, missing=None), k, k
    )
    return _kappa_from_confusion(confusion)


def majority(row: Sequence[int] | np.ndarray, categories: Sequence[str] = CHOICES) -> str | None:
    """The category with the most values if exactly one has that many, else None."""
    row = np.asarray(row)
    top = row.max(initial=0)
    if top == 0 or (row == top).sum() != 1:
        return None
    return categories[int(row.argmax())]


def normalised_entropy(row: Sequence[int] | np.ndarray) -> Stat:
    """Shannon entropy of a count distribution divided by log(number of categories)."""
    row = np.asarray(row, dtype=np.float64)
    total = row.sum()
    if total == 0:
        return Undefined("no votes")
    p = row[row > 0] / total
    return float(max(0.0, -(p * np.log(p)).sum() / math.log(len(row))))


# --- per item and per annotator ------------------------------------------------


def item_stats(votes: Sequence[Vote]) -> dict[Hashable, ItemStats]:
    """Per-item counts, majority, spread and flags, keyed by item in first-seen order.

    Same definitions as ``majority`` and ``normalised_entropy``, vectorised.
    """
    table = _Table.of(votes)
    counts = table.choice_counts()
    n = counts.sum(axis=1)  # every listed item has at least one vote
    top = counts.max(axis=1, initial=0)
    unique_top = (counts == top[:, np.newaxis]).sum(axis=1) == 1
    majorities = np.where(unique_top, counts.argmax(axis=1), -1)
    share = top / np.maximum(n, 1)
    p = counts / np.maximum(n, 1)[:, np.newaxis]
    entropy = -(p * np.log(np.where(counts > 0, p, 1.0))).sum(axis=1) / math.log(len(CHOICES))
    entropy = np.maximum(entropy, 0.0)  # no -0.0
    conflict = (counts[:, _ONE] > 0) & (counts[:, _TWO] > 0)  # ties alone never conflict
    contradictions = np.bincount(table.item[table.contradicts()], minlength=len(table.items))
    labels = table.label_counts(keep_empty=True).reshape(-1, len(RESPONSES), len(LABELS))

    result: dict[Hashable, ItemStats] = {}
    for item, c, m, total, s, h, flag, k, lab in zip(
        table.items,
        counts.tolist(),
        majorities.tolist(),
        n.tolist(),
        share.tolist(),
        entropy.tolist(),
        conflict.tolist(),
        contradictions.tolist(),
        labels.tolist(),
        strict=True,
    ):
        result[item] = ItemStats(
            counts=dict(zip(CHOICES, c, strict=True)),
            n_votes=total,
            majority=CHOICES[m] if m >= 0 else None,
            winner_share=s,
            entropy=h,
            conflict=flag,
            contradictions=k,
            correctness_counts={
                response: dict(zip(LABELS, row, strict=True))
                for response, row in zip(RESPONSES, lab, strict=True)
            },
        )
    return result


def _consensus(
    unit: np.ndarray, rater: np.ndarray, value: np.ndarray, n_units: int, n_raters: int, k: int
) -> list[Consensus]:
    """Leave-one-out comparison of each rater with the others, one entry per
    rater: each value against the majority of the other raters' values on its
    unit (units with no such majority are not compared). ``unit``, ``rater``
    and ``value`` have one entry per value given."""
    counts = _tally(unit, value, n_units, k)
    # Each rater's own values on each unit they rated (normally a single one).
    pairs, pair_of_value = np.unique(rater * n_units + unit, return_inverse=True)
    pair_rater, pair_unit = pairs // n_units, pairs % n_units
    own = _tally(pair_of_value, value, len(pairs), k)
    before = counts[pair_unit]
    others = before - own

    # Leave-one-out majority: the unique most-voted value among the others' values.
    top = others.max(axis=1, initial=0)
    unique_top = (others == top[:, np.newaxis]).sum(axis=1) == 1
    loo = np.where((top > 0) & unique_top, others.argmax(axis=1), -1)[pair_of_value]
    compared = loo >= 0
    n_values = np.bincount(rater, minlength=n_raters)
    n_compared = np.bincount(rater[compared], minlength=n_raters)
    cell = (rater[compared] * k + value[compared]) * k + loo[compared]
    confusion = np.bincount(cell, minlength=n_raters * k * k).reshape(n_raters, k, k)

    # Alpha without each rater: take their units' contributions out of the closed-form sums.
    d_before, n_before = _alpha_parts(before)
    d_after, n_after = _alpha_parts(others)
    d_all, n_all = _alpha_parts(counts)
    removed_d = np.bincount(pair_rater, weights=d_before - d_after, minlength=n_raters)
    removed_n = np.zeros((n_raters, k))
    np.add.at(removed_n, pair_rater, n_before - n_after)
    alpha_without = _alpha_from_sums(d_all.sum() - removed_d, n_all.sum(axis=0) - removed_n)
    alpha_all = nominal_alpha(counts)

    result = []
    for r in range(n_raters):
        if isinstance(alpha_all, Undefined):
            delta: Stat = alpha_all
        elif np.isnan(alpha_without[r]):
            delta = Undefined("alpha is undefined without this annotator")
        else:
            delta = float(alpha_without[r]) - alpha_all
        m = int(n_compared[r])
        result.append(
            Consensus(
                n_values=int(n_values[r]),
                n_compared=m,
                agreement=(
                    float(np.trace(confusion[r])) / m
                    if m
                    else Undefined("no value has a leave-one-out majority to compare with")
                ),
                kappa=_kappa_from_confusion(confusion[r]),
                alpha_delta=delta,
            )
        )
    return result


def _group_medians(values: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """Median of ``values`` within each group (NaN for an empty group)."""
    order = np.lexsort((values, group))
    ordered = values[order]
    size = np.bincount(group, minlength=n_groups)
    start = np.cumsum(size) - size
    lower = start + np.maximum(size - 1, 0) // 2
    upper = start + size // 2
    valid = size > 0
    medians = np.full(n_groups, np.nan)
    medians[valid] = (ordered[lower[valid]] + ordered[upper[valid]]) / 2
    return medians


def annotator_stats(votes: Sequence[Vote]) -> dict[Hashable, AnnotatorStats]:
    """Per-annotator agreement, bias and speed, keyed by annotator in first-seen order."""
    table = _Table.of(votes)
    annotators, rater = _index([v.annotator for v in votes])
    n_raters = len(annotators)
    swapped = np.array([v.shown_swapped for v in votes], dtype=bool)
    seconds = np.array([v.seconds for v in votes], dtype=np.float64)
    gold = _codes([v.gold for v in votes], RESPONSES, missing="")

    choice = _consensus(table.item, rater, table.choice, len(table.items), n_raters, len(CHOICES))
    vote, unit, label = table.label_values()
    correctness = _consensus(unit, rater[vote], label, 2 * len(table.items), n_raters, len(LABELS))

    def per_rater(mask: np.ndarray) -> list[int]:
        return np.bincount(rater[mask], minlength=n_raters).tolist()

    n_votes = np.bincount(rater, minlength=n_raters).tolist()
    ties = per_rater(table.choice == _TIE)
    # Left = displayed left: canonical 2 when the pair was shown swapped (Vote.picked_left).
    left = per_rater(table.choice == np.where(swapped, _TWO, _ONE))
    n_gold = per_rater(gold >= 0)
    gold_right = per_rater((gold >= 0) & (table.choice == gold))  # CHOICES starts with "1", "2"
    medians = _group_medians(seconds, rater, n_raters).tolist()

    result: dict[Hashable, AnnotatorStats] = {}
    side = side_bias_p_values([(left[r], n_votes[r] - ties[r]) for r in range(n_raters)])
    for r, annotator in enumerate(annotators):
        sided = n_votes[r] - ties[r]
        result[annotator] = AnnotatorStats(
            n_votes=n_votes[r],
            choice=choice[r],
            correctness=correctness[r],
            gold_accuracy=gold_right[r] / n_gold[r] if n_gold[r] else Undefined("no gold items"),
            n_gold=n_gold[r],
            left_pick_rate=(
                left[r] / sided if sided else Undefined("only ties, which pick no side")
            ),
            left_pick_ci=wilson_interval(left[r], sided),
            n_sided=sided,
            left_pick_p=side[r][0],
            left_pick_p_adjusted=side[r][1],
            tie_rate=ties[r] / n_votes[r],  # every listed annotator has a vote
            median_seconds=medians[r],
        )
    return result
