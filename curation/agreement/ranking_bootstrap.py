"""Item-bootstrap intervals for the ranking statistics of
curation.agreement.ranking (issue 33): items with two or more rankings,
resampled with replacement. Pure: no Django import."""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import NamedTuple

import numpy as np

from curation.agreement.graded import _distances
from curation.agreement.ranking import (
    RankingReliability,
    RankTable,
    item_stats,
    pair_counts,
    rank_counts,
    ranking_reliability,
)
from curation.agreement.stats import Interval, Undefined, percentile_interval

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
