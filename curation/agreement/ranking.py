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
from itertools import combinations, permutations
from typing import NamedTuple

import krippendorff
import numpy as np
from scipy import stats as scipy_stats

from curation.agreement.graded import _distances
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


# --- item bootstrap -------------------------------------------------------------------

_BOOTSTRAP_CELLS = 4_000_000  # resample weights held in memory at once
STATISTICS = ("pairwise_alpha", "ordinal_alpha", "mean_w", "mean_tau_b")


class Bootstrap(NamedTuple):
    items: list[Hashable]  # the resampled items, in the order the draws index
    values: np.ndarray  # (n_resamples, len(STATISTICS)); NaN = undefined in that resample


def _coincidences(counts: np.ndarray, n_items: int) -> np.ndarray:
    """Per item, the sum of its units' coincidence matrices
    (n_u n_u^T - diag n_u) / (n_u - 1) (krippendorff.alpha's; units with one
    value add none), flattened: (n_items, q * q). ``counts`` holds each
    item's units in consecutive rows (unit row = item * units per item + k)."""
    q = counts.shape[1]
    c = counts.reshape(n_items, -1, q).astype(float)
    n_u = c.sum(axis=2)
    with np.errstate(divide="ignore"):
        scale = np.where(n_u >= 2, 1 / np.maximum(n_u - 1, 1), 0.0)[:, :, np.newaxis]
    scaled = c * scale
    o = np.matmul(scaled.transpose(0, 2, 1), c)
    o[:, np.arange(q), np.arange(q)] -= scaled.sum(axis=1)
    return o.reshape(n_items, q * q)


def _alpha_of_coincidences(o: np.ndarray, level: str) -> np.ndarray:
    """krippendorff.alpha's 1 - (n - 1) sum(o d) / sum(n_c n_k d) for a stack
    of coincidence matrices (b x q x q); NaN where chance disagreement is 0."""
    n_v = o.sum(axis=1)
    n = n_v.sum(axis=1)
    if level == "nominal":
        d = 1.0 - np.eye(o.shape[-1])
        expected = n**2 - (n_v**2).sum(axis=1)
        observed = (o * d).sum(axis=(1, 2))
    else:
        d = _distances(n_v, level)
        expected = np.einsum("bi,bij,bj->b", n_v, d, n_v)
        observed = (o * d).sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected > 1e-12, 1 - (n - 1) * observed / expected, np.nan)


def bootstrap_ranking(table: RankTable, *, n_resamples: int = 1000, seed: int = 0) -> Bootstrap:
    """The four STATISTICS over ``n_resamples`` item-bootstrap resamples.

    Items with two or more rankings are resampled (one ranking adds nothing
    to any of the four), sorted by their own figures (so the order of the
    input cannot change an interval; items that sort equal are
    interchangeable).
    Resample b takes K of them with replacement: row b of
    ``Generator(PCG64(seed)).integers(0, K, size=(n_resamples, K))`` (drawn
    in blocks of rows, the same stream), indexing ``Bootstrap.items``. The
    alphas are krippendorff.alpha's coincidence-matrix formula on the
    resample's summed per-item coincidences (ordinal distances from the
    resample's own totals); mean W and mean tau-b are the means over the
    resample's items and pairs where defined. Tests hold each resample equal
    to krippendorff.alpha and the textbook W on the resampled data."""
    if n_resamples < 1:
        raise ValueError("n_resamples must be positive")
    n_items = len(table.items)
    pairs = _coincidences(pair_counts(table), n_items) if n_items else np.zeros((0, 9))
    ranks = _coincidences(rank_counts(table), n_items) if n_items else np.zeros((0, 9))
    per_item = item_stats(table)
    w_defined = ~np.isnan(per_item.w)
    features = np.column_stack(
        [
            pairs,
            ranks,
            np.nan_to_num(per_item.w),
            w_defined,
            per_item.tau_sum,
            per_item.tau_pairs,
        ]
    )
    keep = np.flatnonzero(per_item.n_rankings >= 2)
    k = len(keep)
    values = np.full((n_resamples, len(STATISTICS)), np.nan)
    if k == 0:
        return Bootstrap([], values)
    # Items with the same figures are interchangeable: each distinct row of
    # figures (a pattern; 10^5 items have ~2 x 10^4) is summed once per
    # resample, weighted by how often its items were drawn.
    patterns, pattern = np.unique(features[keep], axis=0, return_inverse=True)
    pattern = pattern.reshape(-1)
    order = np.argsort(pattern, kind="stable")
    keep, pattern = keep[order], pattern[order]
    n_patterns = len(patterns)
    rng = np.random.Generator(np.random.PCG64(seed))
    block = max(1, _BOOTSTRAP_CELLS // k)
    n_pair, n_rank = pairs.shape[1], ranks.shape[1]
    q_pair, q_rank = 3, math.isqrt(n_rank)
    for start in range(0, n_resamples, block):
        stop = min(start + block, n_resamples)
        b = stop - start
        rows = rng.integers(0, k, size=(b, k))
        drawn = pattern[rows] + np.arange(b)[:, np.newaxis] * n_patterns
        weights = np.bincount(drawn.ravel(), minlength=b * n_patterns)
        sums = weights.reshape(b, n_patterns).astype(float) @ patterns
        o_pair = sums[:, :n_pair].reshape(b, q_pair, q_pair)
        o_rank = sums[:, n_pair : n_pair + n_rank].reshape(b, q_rank, q_rank)
        w_sum, w_n, tau_sum, tau_n = sums[:, n_pair + n_rank :].T
        with np.errstate(divide="ignore", invalid="ignore"):
            values[start:stop] = np.column_stack(
                [
                    _alpha_of_coincidences(o_pair, "nominal"),
                    _alpha_of_coincidences(o_rank, "ordinal"),
                    np.where(w_n > 0, w_sum / np.maximum(w_n, 1), np.nan),
                    np.where(tau_n > 0, tau_sum / np.maximum(tau_n, 1), np.nan),
                ]
            )
    return Bootstrap([table.items[i] for i in keep], values)


def percentile_interval(values: np.ndarray, confidence: float) -> Interval | Undefined:
    """Percentile interval of bootstrap values; Undefined if any is NaN."""
    undefined = int(np.isnan(values).sum())
    if undefined:
        return Undefined(f"{undefined} of {len(values)} resamples have no value")
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return Interval(float(low), float(high))


def ranking_intervals(
    table: RankTable,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    point: RankingReliability | None = None,
) -> dict[str, Interval | Undefined]:
    """Percentile item-bootstrap intervals of the four STATISTICS: Undefined
    when the point estimate is, or when some resample has none."""
    if not 0 < confidence < 1:
        raise ValueError("confidence is a probability strictly between 0 and 1")
    point = point or ranking_reliability(table)
    boot = bootstrap_ranking(table, n_resamples=n_resamples, seed=seed)
    out: dict[str, Interval | Undefined] = {}
    for column, name in enumerate(STATISTICS):
        estimate = getattr(point, name)
        if isinstance(estimate, Undefined):
            out[name] = estimate
        else:
            out[name] = percentile_interval(boot.values[:, column], confidence)
    return out


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


def pick_top_share(picks: PickTable) -> tuple[np.ndarray, np.ndarray]:
    """Per item: the slot picked most (-1 when two lead, or "none" leads) and
    the share of the item's picks naming it."""
    category = np.where(picks.slot < 0, picks.width, picks.slot)
    leader, share = _top_share(picks.item, category, len(picks.items), picks.width + 1)
    return np.where(leader == picks.width, -1, leader), share


# --- position bias ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PositionBias:
    annotator: Hashable
    n: int  # unique top picks with a recorded display order
    observed: tuple[int, ...]  # top picks at displayed position 1..width
    expected: tuple[float, ...]  # under uniform chance over each item's N positions
    chi2: Stat
    p_value: Stat
    p_adjusted: Stat  # Benjamini-Hochberg over the annotators with a p-value
    flagged: bool  # p_adjusted <= fdr


def position_bias(
    annotators: Sequence[Hashable],
    annotator: np.ndarray,
    top: np.ndarray,
    shown: np.ndarray,
    n_slots: np.ndarray,
    *,
    fdr: float = 0.05,
    min_expected: float = MIN_EXPECTED,
) -> list[PositionBias]:
    """Per annotator, chi-squared of the displayed position of the top pick
    (``top``: a slot, -1 = none) against uniform chance, BH across annotators.

    Judgements without a top or without a recorded order are left out. The
    test has one cell per position some of the annotator's items have
    (expected = sum over their items of 1/N); Undefined when a cell expects
    fewer than ``min_expected`` picks (the chi-squared approximation's rule
    of thumb)."""
    if not 0 < fdr < 1:
        raise ValueError("fdr is a probability strictly between 0 and 1")
    annotator, top = np.asarray(annotator), np.asarray(top)
    shown, n_slots = np.asarray(shown), np.asarray(n_slots)
    width = shown.shape[1]
    use = (top >= 0) & (shown[:, 0] >= 0)
    position = (shown[use] == top[use][:, np.newaxis]).argmax(axis=1)
    who = annotator[use]
    n_people = len(annotators)
    observed = _tally(who, position, n_people, width)
    possible = np.arange(width) < n_slots[use][:, np.newaxis]
    expected = np.zeros((n_people, width))
    np.add.at(expected, who, possible / n_slots[use][:, np.newaxis])
    chi2: list[Stat] = []
    p_values: list[Stat] = []
    for person in range(n_people):
        cells = expected[person] > 0
        f_exp, f_obs = expected[person][cells], observed[person][cells]
        if f_obs.sum() == 0:
            reason = Undefined("no unique top pick with a recorded display order")
            chi2.append(reason)
            p_values.append(reason)
        elif f_exp.min() < min_expected:
            reason = Undefined(f"a position expects {f_exp.min():.1f} < {min_expected:g} picks")
            chi2.append(reason)
            p_values.append(reason)
        else:
            result = scipy_stats.chisquare(f_obs, f_exp)
            chi2.append(float(result.statistic))
            p_values.append(float(result.pvalue))
    tested = [i for i, p in enumerate(p_values) if not isinstance(p, Undefined)]
    adjusted: list[Stat] = [
        Undefined("no test") if isinstance(p, Undefined) else p for p in p_values
    ]
    if tested:
        bh = scipy_stats.false_discovery_control([p_values[i] for i in tested], method="bh")
        for i, value in zip(tested, bh, strict=True):
            adjusted[i] = float(value)
    return [
        PositionBias(
            annotator=annotators[i],
            n=int(observed[i].sum()),
            observed=tuple(int(v) for v in observed[i]),
            expected=tuple(float(v) for v in expected[i]),
            chi2=chi2[i],
            p_value=p_values[i],
            p_adjusted=adjusted[i],
            flagged=not isinstance(adjusted[i], Undefined) and adjusted[i] <= fdr,
        )
        for i in range(n_people)
    ]


def ranking_position_bias(table: RankTable, **kwargs) -> list[PositionBias]:
    return position_bias(
        table.annotators,
        table.annotator,
        unique_tops(table.ranks),
        table.shown,
        table.n_slots,
        **kwargs,
    )


def pick_position_bias(picks: PickTable, **kwargs) -> list[PositionBias]:
    return position_bias(
        picks.annotators, picks.annotator, picks.slot, picks.shown, picks.n_slots, **kwargs
    )


# --- aggregates (deliverable 4) ------------------------------------------------------


class Aggregate(NamedTuple):
    ranks: tuple[int, ...]  # per slot, 1 = best; ties share the better rank (1, 2, 2, 4)
    scores: tuple[float, ...]  # Borda: points per slot. Kemeny: () (see agreements)
    agreements: float  # Kemeny: pairwise preferences the order agrees with
    n_optimal: int  # Kemeny: how many strict orders reach that (1 = unique)


def preference_matrix(ranks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(better, tied): better[i, j] = rankings with slot i strictly before j,
    tied[i, j] = rankings that rank both equally (i != j), over rankings
    that rank both."""
    ranks = np.atleast_2d(np.asarray(ranks, dtype=float))
    a, b = ranks[:, :, np.newaxis], ranks[:, np.newaxis, :]
    better = (a < b).sum(axis=0)
    tied = (a == b).sum(axis=0)
    np.fill_diagonal(tied, 0)
    return better, tied


def _competition_ranks(scores: np.ndarray) -> tuple[int, ...]:
    return tuple(int(r) for r in scipy_stats.rankdata(-scores, method="min"))


def borda(ranks: np.ndarray) -> Aggregate:
    """Borda count over an item's rankings (rows; NaN = not ranked)."""
    better, tied = preference_matrix(ranks)
    scores = better.sum(axis=1) + tied.sum(axis=1) / 2
    return Aggregate(_competition_ranks(scores), tuple(float(s) for s in scores), 0.0, 0)


@lru_cache(maxsize=MAX_KEMENY_SLOTS)
def _orders(n: int) -> np.ndarray:
    return np.array(list(permutations(range(n))), dtype=np.int64)


def kemeny(ranks: np.ndarray) -> Aggregate:
    """Exact Kemeny-Young: the strict order of the slots that agrees with
    the most pairwise preferences of the rankings (a tie in a ranking costs
    every order the same, so it does not count), by enumerating all n!
    orders; n <= MAX_KEMENY_SLOTS. Several optimal orders: the first when
    orders are listed with the slots in Borda order (best first, then slot
    index), and ``n_optimal`` says how many there are."""
    ranks = np.atleast_2d(np.asarray(ranks, dtype=float))
    n = ranks.shape[1]
    if n > MAX_KEMENY_SLOTS:
        raise ValueError(
            f"exact Kemeny-Young enumerates all n! orders, limited to {MAX_KEMENY_SLOTS} slots"
        )
    better, _ = preference_matrix(ranks)
    borda_scores = np.array(borda(ranks).scores)
    base = np.lexsort((np.arange(n), -borda_scores))  # Borda order, best first
    orders = base[_orders(n)]
    earlier, later = slot_pairs(n)
    agreements = better[orders[:, earlier], orders[:, later]].sum(axis=1)
    best = agreements.max()
    winner = orders[int(np.argmax(agreements == best))]
    result = np.empty(n, dtype=np.int64)
    result[winner] = np.arange(1, n + 1)
    return Aggregate(
        tuple(int(r) for r in result), (), float(best), int((agreements == best).sum())
    )
