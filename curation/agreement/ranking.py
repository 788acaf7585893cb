"""Agreement for rankings and best-of-N picks (issue 33, deliverable 3), and
the aggregates a curator adjudicates a ranking with (deliverable 4).

Pure Python/numpy/scipy, no Django import (tests/curation/test_pure_modules).

Everything is in CANONICAL slot terms: an item has N response slots
(2..MAX_SLOTS, slot 0 = the first imported response); a ranking gives each
slot a rank number, 1 = best, equal numbers tie, None = not ranked (missing
data); a pick names one slot, or None for "none is acceptable". The order the
responses were displayed in (``shown[p]`` = the slot displayed at position p)
feeds exactly one statistic, the position-bias test.

Rank numbers are read by their order only: [1, 2, 2, 4], [1, 2, 2, 3] and
[1, 2.5, 2.5, 4] are the same ranking. Each ranking is turned into mid-ranks
(scipy.stats.rankdata, method "average", over its ranked slots) before any
statistic reads it.

Definitions:

* Nominal alpha over picks: unit = item, one category per slot plus "none";
  stats.nominal_alpha (krippendorff.alpha, nominal) of the item x category
  count matrix.
* Pairwise-preference alpha: unit = item x slot pair (i < j); each ranking
  that ranks both gives one value, "i better", "j better" or "tie"; nominal
  krippendorff.alpha of that count matrix.
* Ordinal alpha over ranks: unit = item x slot, value = the slot's mid-rank
  (half steps 1, 1.5, ..., MAX_SLOTS); krippendorff.alpha at the ordinal
  level, value_domain = those half steps (ordinal alpha reads only their
  order and how often each is used).
* Kendall's W per item, from the item's complete rankings (every slot
  ranked; at least two of them), with the tie correction:
  W = 12 S / (m^2 (n^3 - n) - m sum_j T_j), S = sum_i (R_i - m (n + 1) / 2)^2,
  R_i = the sum of slot i's mid-ranks, T_j = sum over the tie groups of
  ranking j of (t^3 - t). Undefined with fewer than two complete rankings or
  when every ranking ties every slot (zero denominator). The project figure
  is the mean over items where it is defined.
* Kendall's tau-b for each pair of rankings of one item, over the slots both
  ranked: scipy.stats.kendalltau's tau-b, computed for all pairs at once as
  sum(s_a s_b) / sqrt(sum s_a^2 sum s_b^2), s = sign of the rank difference
  of every slot pair (tests hold it equal to scipy to 1e-9; scipy is ~0.4 ms
  a call, 2 minutes for 300,000 pairs). Undefined for a pair when either
  ranking ties every common slot. The project figure is the mean over all
  defined pairs.
* Item bootstrap: items with two or more rankings, resampled with
  replacement; see ``bootstrap_ranking``.
* Position bias, per annotator: the displayed position of each unique top
  pick (a pick, or the one slot ranked first; tied tops and "none" are left
  out) against uniform chance over the item's N positions,
  scipy.stats.chisquare; Benjamini-Hochberg (scipy.stats.
  false_discovery_control) across the annotators that have a test.
* Aggregates: Borda (a slot scores one point per ranking and slot it beats,
  half per tie, over the slots both ranked; for complete rankings that is
  n - mid-rank) and exact Kemeny-Young by enumerating every strict order of
  the N <= MAX_KEMENY_SLOTS slots (8! = 40,320 orders).

Degenerate data never raises and never yields a made-up number: statistics
are ``float | Undefined`` with the reason. Invalid input raises ValueError.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations
from typing import NamedTuple

import krippendorff
import numpy as np
from scipy import stats as scipy_stats

from curation.agreement.stats import Interval, Stat, Undefined, bootstrap_alpha_ci, nominal_alpha

MIN_SLOTS = 2
MAX_SLOTS = 8
MAX_KEMENY_SLOTS = 8  # 8! = 40,320 orders, ~10 ms; 9! would be 362,880
PAIR_CATEGORIES = ("first", "second", "tie")  # slot i better, slot j better, tied (i < j)
MIN_EXPECTED = 5.0  # chi-squared: every position expects at least this many top picks


def mid_rank_domain(n_slots: int = MAX_SLOTS) -> np.ndarray:
    """The values a mid-rank can take among n slots: 1, 1.5, ..., n."""
    return np.arange(2, 2 * n_slots + 1) / 2


@dataclass(frozen=True, slots=True)
class Ranking:
    """One annotator's ranking of one item's slots, in canonical terms."""

    item: Hashable
    annotator: Hashable
    ranks: Sequence[float | None]  # per slot; 1 = best, equal = tie, None = not ranked
    shown: Sequence[int] = ()  # slot displayed at each position; () = not recorded


@dataclass(frozen=True, slots=True)
class Pick:
    """One annotator's best-of-N pick on one item, in canonical terms."""

    item: Hashable
    annotator: Hashable
    slot: int | None  # None = "none is acceptable"
    n_slots: int
    shown: Sequence[int] = ()


def _index(keys: Iterable[Hashable]) -> tuple[list[Hashable], np.ndarray]:
    position: dict[Hashable, int] = {}
    setdefault = position.setdefault
    rows = [setdefault(key, len(position)) for key in keys]
    return list(position), np.asarray(rows, dtype=np.int64)


def _check_common(
    item: np.ndarray, annotator: np.ndarray, n_slots: np.ndarray, shown: np.ndarray, n_items: int
) -> None:
    if n_slots.size and (n_slots.min() < MIN_SLOTS or n_slots.max() > MAX_SLOTS):
        raise ValueError(f"an item has {MIN_SLOTS} to {MAX_SLOTS} response slots")
    first = np.full(n_items, -1, dtype=np.int64)
    first[item] = n_slots
    if (first[item] != n_slots).any():
        raise ValueError("every judgement of one item has the item's number of slots")
    key = item * (int(annotator.max(initial=0)) + 1) + annotator
    if len(np.unique(key)) != len(key):
        raise ValueError("one judgement per item and annotator")
    recorded = (shown >= 0).any(axis=1)
    slots = np.arange(shown.shape[1])
    inside = slots < n_slots[:, np.newaxis]
    in_order = np.sort(np.where(inside, shown, shown.shape[1]), axis=1)
    wrong = (np.where(inside, in_order != slots, False).any(axis=1) & recorded) | (
        np.where(inside, False, shown != -1).any(axis=1)
    )
    if wrong.any():
        raise ValueError("shown is a permutation of the item's slots")


def _shown_array(shown: Sequence[Sequence[int]], width: int) -> np.ndarray:
    out = np.full((len(shown), width), -1, dtype=np.int64)
    for row, order in enumerate(shown):
        if len(order) > width:
            raise ValueError("shown is a permutation of the item's slots")
        out[row, : len(order)] = order
    return out


class RankTable(NamedTuple):
    """Rankings as columns: one row per ranking, slots padded to ``width``."""

    items: list[Hashable]
    annotators: list[Hashable]
    item: np.ndarray  # (R,) row in items
    annotator: np.ndarray  # (R,) row in annotators
    ranks: np.ndarray  # (R, width) float; NaN = not ranked or no such slot
    n_slots: np.ndarray  # (R,) the item's N
    shown: np.ndarray  # (R, width) slot at each displayed position; -1 = unknown/padding

    @classmethod
    def of(cls, rankings: Sequence[Ranking]) -> RankTable:
        items, item = _index([r.item for r in rankings])
        annotators, annotator = _index([r.annotator for r in rankings])
        n_slots = np.fromiter((len(r.ranks) for r in rankings), dtype=np.int64)
        width = int(n_slots.max(initial=MIN_SLOTS))
        if width > MAX_SLOTS:
            raise ValueError(f"an item has {MIN_SLOTS} to {MAX_SLOTS} response slots")
        ranks = np.full((len(rankings), width), np.nan)
        for row, r in enumerate(rankings):
            ranks[row, : len(r.ranks)] = [np.nan if v is None else v for v in r.ranks]
        return cls.from_arrays(
            items=items,
            annotators=annotators,
            item=item,
            annotator=annotator,
            ranks=ranks,
            n_slots=n_slots,
            shown=_shown_array([r.shown for r in rankings], width),
        )

    @classmethod
    def from_arrays(
        cls,
        *,
        item: np.ndarray,
        annotator: np.ndarray,
        ranks: np.ndarray,
        n_slots: np.ndarray | None = None,
        shown: np.ndarray | None = None,
        items: list[Hashable] | None = None,
        annotators: list[Hashable] | None = None,
    ) -> RankTable:
        """The table from arrays (row indices, ranks with NaN for not ranked);
        ``n_slots`` defaults to the width of ``ranks``."""
        item = np.asarray(item, dtype=np.int64)
        annotator = np.asarray(annotator, dtype=np.int64)
        ranks = np.asarray(ranks, dtype=float)
        if ranks.ndim != 2 or len(ranks) != len(item) or len(annotator) != len(item):
            raise ValueError("one row of ranks per (item, annotator)")
        width = ranks.shape[1]
        n_slots = (
            np.full(len(item), width, dtype=np.int64)
            if n_slots is None
            else np.asarray(n_slots, dtype=np.int64)
        )
        shown = (
            np.full(ranks.shape, -1, dtype=np.int64)
            if shown is None
            else np.asarray(shown, dtype=np.int64)
        )
        n_items = int(item.max(initial=-1)) + 1
        n_annotators = int(annotator.max(initial=-1)) + 1
        if n_slots.size and n_slots.max() > width:
            raise ValueError("ranks has a column per slot")
        _check_common(item, annotator, n_slots, shown, n_items)
        inside = np.arange(width) < n_slots[:, np.newaxis]
        given = ~np.isnan(ranks)
        if (given & ~inside).any():
            raise ValueError("a rank for a slot the item does not have")
        if not np.isfinite(ranks[given]).all() or (ranks[given] <= 0).any():
            raise ValueError("a rank is a positive number (1 = best) or None")
        if len(item) and not given.any(axis=1).all():
            raise ValueError("a ranking ranks at least one slot")
        return cls(
            items=list(range(n_items)) if items is None else list(items),
            annotators=list(range(n_annotators)) if annotators is None else list(annotators),
            item=item,
            annotator=annotator,
            ranks=ranks,
            n_slots=n_slots,
            shown=shown,
        )

    @property
    def width(self) -> int:
        return self.ranks.shape[1]


def mid_ranks(ranks: np.ndarray) -> np.ndarray:
    """Each ranking's mid-ranks over its ranked slots (scipy.stats.rankdata,
    "average"); NaN stays NaN. Not-ranked slots are put last while ranking,
    so they cannot move the ranked ones."""
    ranks = np.atleast_2d(np.asarray(ranks, dtype=float))
    missing = np.isnan(ranks)
    out = scipy_stats.rankdata(np.where(missing, np.inf, ranks), method="average", axis=1)
    out[missing] = np.nan
    return out


# --- count matrices ------------------------------------------------------------------


@lru_cache(maxsize=MAX_SLOTS + 1)
def slot_pairs(width: int) -> tuple[np.ndarray, np.ndarray]:
    """The slot pairs (i < j) of ``width`` slots, in combinations order."""
    pairs = np.array(list(combinations(range(width), 2)), dtype=np.int64).reshape(-1, 2)
    return pairs[:, 0], pairs[:, 1]


def _pair_values(ranks: np.ndarray) -> np.ndarray:
    """(R, P) index in PAIR_CATEGORIES of every ranking's preference on every
    slot pair; -1 where either slot is not ranked."""
    first, second = slot_pairs(ranks.shape[1])
    diff = ranks[:, second] - ranks[:, first]  # > 0: the first slot has the better rank
    values = np.where(diff > 0, 0, np.where(diff < 0, 1, 2))
    return np.where(np.isnan(diff), -1, values)


def _tally(units: np.ndarray, values: np.ndarray, n_units: int, n_values: int) -> np.ndarray:
    keep = values >= 0
    flat = units[keep] * n_values + values[keep]
    return np.bincount(flat, minlength=n_units * n_values).reshape(n_units, n_values)


def pair_counts(table: RankTable) -> np.ndarray:
    """(items x slot pairs, 3) counts: unit row = item * P + pair."""
    values = _pair_values(table.ranks)
    n_pairs = values.shape[1]
    units = table.item[:, np.newaxis] * n_pairs + np.arange(n_pairs)
    return _tally(units.ravel(), values.ravel(), len(table.items) * n_pairs, 3)


def rank_counts(table: RankTable) -> np.ndarray:
    """(items x slots, 2 * width - 1) counts of mid-ranks (column 2 r - 2 for
    mid-rank r): unit row = item * width + slot."""
    mids = mid_ranks(table.ranks)
    width = table.width
    values = np.where(np.isnan(mids), -1, np.nan_to_num(2 * mids - 2)).astype(np.int64)
    units = table.item[:, np.newaxis] * width + np.arange(width)
    return _tally(units.ravel(), values.ravel(), len(table.items) * width, 2 * width - 1)


def _ordinal_alpha(counts: np.ndarray) -> Stat:
    """krippendorff.alpha, ordinal, of a unit x mid-rank count matrix."""
    counts = counts[counts.sum(axis=1) >= 2]
    if not len(counts):
        return Undefined("no slot is ranked by two or more annotators")
    if np.count_nonzero(counts.sum(axis=0)) < 2:
        return Undefined("every paired rank is the same, so chance disagreement is zero")
    with np.errstate(divide="ignore", invalid="ignore"):
        value = float(
            krippendorff.alpha(
                value_counts=counts,
                value_domain=mid_rank_domain(counts.shape[1] // 2 + 1),
                level_of_measurement="ordinal",
            )
        )
    if not math.isfinite(value):
        return Undefined("alpha is not a finite number for this data")
    return value


def pairwise_alpha(table: RankTable) -> Stat:
    """Nominal alpha over the pairwise preferences the rankings imply."""
    return nominal_alpha(pair_counts(table))


def ordinal_alpha(table: RankTable) -> Stat:
    """Ordinal alpha over the slots' mid-ranks (unit = item x slot)."""
    return _ordinal_alpha(rank_counts(table))


# --- per item: Kendall's W, tau-b, the top --------------------------------------------


class ItemRankingStats(NamedTuple):
    """Per-item figures, one entry per table item (NaN: undefined)."""

    items: list[Hashable]
    n_rankings: np.ndarray
    w: np.ndarray  # Kendall's W over the item's complete rankings
    tau_b: np.ndarray  # mean tau-b over the item's pairs of rankings
    tau_sum: np.ndarray  # sum of defined pairwise tau-b
    tau_pairs: np.ndarray  # how many pairs have a defined tau-b
    top: np.ndarray  # the slot most rankings put alone at the top; -1 if none leads alone
    top_share: np.ndarray  # rankings putting `top` alone first / all the item's rankings


def kendalls_w(table: RankTable) -> np.ndarray:
    """Kendall's W (tie-corrected) of every item; NaN where undefined."""
    n_items = len(table.items)
    mids = mid_ranks(table.ranks)
    complete = ~np.isnan(mids).any(axis=1, where=np.arange(table.width) < table.n_slots[:, None])
    item, mids, ranks = table.item[complete], mids[complete], table.ranks[complete]
    n = np.zeros(n_items)
    n[table.item] = table.n_slots
    m = np.bincount(item, minlength=n_items).astype(float)
    rank_sums = np.zeros((n_items, table.width))
    np.add.at(rank_sums, item, np.nan_to_num(mids))
    inside = np.arange(table.width) < n[:, np.newaxis]
    s = (np.where(inside, rank_sums - (m * (n + 1) / 2)[:, np.newaxis], 0) ** 2).sum(axis=1)
    # Sum over tie groups of t^3 - t = sum over slots of t_slot^2 - 1.
    same = (ranks[:, :, np.newaxis] == ranks[:, np.newaxis, :]).sum(axis=2)
    ties = np.where(np.isnan(ranks), 0, same.astype(float) ** 2 - 1).sum(axis=1)
    t = np.bincount(item, weights=ties, minlength=n_items)
    denominator = m**2 * (n**3 - n) - m * t
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((m >= 2) & (denominator > 0), 12 * s / denominator, np.nan)


def _ranking_pairs(item: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every pair (a, b), a < b in sorted order, of rows with the same item."""
    order = np.argsort(item, kind="stable")
    sorted_item = item[order]
    firsts, seconds = [], []
    for lag in range(1, len(item)):
        same = sorted_item[lag:] == sorted_item[:-lag]
        if not same.any():
            break
        firsts.append(order[:-lag][same])
        seconds.append(order[lag:][same])
    if not firsts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(firsts), np.concatenate(seconds)


def pairwise_tau_b(table: RankTable) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(first row, second row, tau-b) for every pair of rankings of one item,
    over the slots both ranked; tau-b NaN where undefined."""
    a, b = _ranking_pairs(table.item)
    first, second = slot_pairs(table.width)
    diff = table.ranks[:, second] - table.ranks[:, first]
    common = ~np.isnan(diff[a]) & ~np.isnan(diff[b])
    sa = np.where(common, np.sign(np.nan_to_num(diff[a])), 0)
    sb = np.where(common, np.sign(np.nan_to_num(diff[b])), 0)
    numerator = (sa * sb).sum(axis=1)
    denominator = np.sqrt((sa * sa).sum(axis=1) * (sb * sb).sum(axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = np.where(denominator > 0, numerator / denominator, np.nan)
    return a, b, tau


def unique_tops(ranks: np.ndarray) -> np.ndarray:
    """The slot each ranking puts alone at the top; -1 when first place is tied."""
    best = np.nanmin(np.where(np.isnan(ranks), np.inf, ranks), axis=1)
    at_top = ranks == best[:, np.newaxis]
    return np.where(at_top.sum(axis=1) == 1, at_top.argmax(axis=1), -1)


def _top_share(item: np.ndarray, top: np.ndarray, n_items: int, n_categories: int):
    """Per item: the category chosen by the most judgements alone (-1 when two
    lead or none), and its share of all the item's judgements."""
    m = np.bincount(item, minlength=n_items)
    counts = _tally(item, top, n_items, n_categories)
    most = counts.max(axis=1, initial=0)
    leaders = (counts == most[:, np.newaxis]).sum(axis=1)
    leader = np.where((leaders == 1) & (most > 0), counts.argmax(axis=1), -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(m > 0, most / m, np.nan)
    return leader, share


def item_stats(table: RankTable) -> ItemRankingStats:
    n_items = len(table.items)
    a, _, tau = pairwise_tau_b(table)
    defined = ~np.isnan(tau)
    tau_sum = np.bincount(table.item[a][defined], weights=tau[defined], minlength=n_items)
    tau_pairs = np.bincount(table.item[a][defined], minlength=n_items)
    with np.errstate(divide="ignore", invalid="ignore"):
        tau_mean = np.where(tau_pairs > 0, tau_sum / tau_pairs, np.nan)
    top, share = _top_share(table.item, unique_tops(table.ranks), n_items, table.width)
    return ItemRankingStats(
        items=table.items,
        n_rankings=np.bincount(table.item, minlength=n_items),
        w=kendalls_w(table),
        tau_b=tau_mean,
        tau_sum=tau_sum,
        tau_pairs=tau_pairs,
        top=top,
        top_share=share,
    )


# --- project / domain figures ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RankingReliability:
    pairwise_alpha: Stat  # nominal alpha, unit = item x slot pair
    ordinal_alpha: Stat  # ordinal alpha over mid-ranks, unit = item x slot
    mean_w: Stat  # mean Kendall's W over items where it is defined
    mean_tau_b: Stat  # mean tau-b over every defined pair of rankings of one item
    n_items: int
    n_rankings: int
    n_w_items: int
    n_tau_pairs: int


def _mean(total: float, count: int, reason: str) -> Stat:
    return total / count if count else Undefined(reason)


def ranking_reliability(table: RankTable) -> RankingReliability:
    per_item = item_stats(table)
    w = per_item.w[~np.isnan(per_item.w)]
    n_pairs = int(per_item.tau_pairs.sum())
    return RankingReliability(
        pairwise_alpha=pairwise_alpha(table),
        ordinal_alpha=ordinal_alpha(table),
        mean_w=_mean(float(w.sum()), len(w), "no item has two complete, not all-tied rankings"),
        mean_tau_b=_mean(
            float(per_item.tau_sum.sum()), n_pairs, "no pair of rankings orders two common slots"
        ),
        n_items=len(table.items),
        n_rankings=len(table.item),
        n_w_items=len(w),
        n_tau_pairs=n_pairs,
    )


# --- best-of-N picks ------------------------------------------------------------------


class PickTable(NamedTuple):
    items: list[Hashable]
    annotators: list[Hashable]
    item: np.ndarray
    annotator: np.ndarray
    slot: np.ndarray  # -1 = "none is acceptable"
    n_slots: np.ndarray
    shown: np.ndarray  # (R, width); -1 = unknown/padding

    @classmethod
    def of(cls, picks: Sequence[Pick]) -> PickTable:
        items, item = _index([p.item for p in picks])
        annotators, annotator = _index([p.annotator for p in picks])
        n_slots = np.fromiter((p.n_slots for p in picks), dtype=np.int64)
        slot = np.fromiter((-1 if p.slot is None else p.slot for p in picks), dtype=np.int64)
        width = int(n_slots.max(initial=MIN_SLOTS))
        if width > MAX_SLOTS:
            raise ValueError(f"an item has {MIN_SLOTS} to {MAX_SLOTS} response slots")
        shown = _shown_array([p.shown for p in picks], width)
        _check_common(item, annotator, n_slots, shown, len(items))
        if ((slot < -1) | (slot >= n_slots)).any():
            raise ValueError("a pick names one of the item's slots, or None")
        return cls(items, annotators, item, annotator, slot, n_slots, shown)

    @property
    def width(self) -> int:
        return self.shown.shape[1]

    def counts(self) -> np.ndarray:
        """item x (slots..., none) count matrix, rows sorted (so a bootstrap
        does not depend on the order of the input)."""
        category = np.where(self.slot < 0, self.width, self.slot)
        counts = _tally(self.item, category, len(self.items), self.width + 1)
        return counts[np.lexsort(counts.T[::-1])]


def pick_alpha(picks: PickTable) -> Stat:
    """Nominal alpha over best-of-N picks (unit = item; "none" a category)."""
    return nominal_alpha(picks.counts())


def pick_alpha_interval(
    picks: PickTable, *, n_resamples: int = 1000, seed: int = 0, confidence: float = 0.95
) -> Interval | Undefined:
    """stats.bootstrap_alpha_ci of the pick count matrix (items resampled)."""
    return bootstrap_alpha_ci(picks.counts(), n_resamples=n_resamples, seed=seed, level=confidence)
