"""The aggregates a curator adjudicates a ranking with (issue 33,
deliverable 4): Borda and exact Kemeny-Young (definitions in
curation.agreement.ranking). Pure: no Django import."""

from __future__ import annotations

from functools import lru_cache
from itertools import permutations
from typing import NamedTuple

import numpy as np
from scipy import stats as scipy_stats

from curation.agreement.ranking import MAX_KEMENY_SLOTS, slot_pairs

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


def borda(ranks: np.ndarray) -> Aggregate:
    """Borda count over an item's rankings (rows; NaN = not ranked)."""
    better, tied = preference_matrix(ranks)
    scores = better.sum(axis=1) + tied.sum(axis=1) / 2
    ranks = tuple(int(r) for r in scipy_stats.rankdata(-scores, method="min"))  # competition
    return Aggregate(ranks, tuple(float(s) for s in scores), 0.0, 0)


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
