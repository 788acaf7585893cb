"""Agreement of graded votes (issue 24): Krippendorff's alpha at the ordinal
level and, labelled as such, at the interval level, over the canonical
strengths of a graded project (annotate.loop.scales).

Pure Python/numpy, no Django import. Units are items; values are the points
of the project's scale *oriented to response 1* (scale_value: graded6
1..6 as Multimodal RewardBench 2's human_annotations, 6 = response 1 much better; graded7
1..7, 4 = tie), never the displayed left/right. The count matrix has one
column per point of the scale, in scale order, whether used or not; alpha
is krippendorff.alpha(value_counts=..., value_domain=points,
level_of_measurement=...). Ordinal alpha depends only on the order of the
points; interval alpha takes them as equally spaced numbers (a step of the
scale is one unit everywhere, also across the middle of graded6).

The binary collapse (1 / 2 / tie, today's nominal alpha) is
curation.agreement.stats' figure, computed from the same votes' choices.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable
from dataclasses import dataclass

import krippendorff
import numpy as np

from annotate.loop import scales
from curation.agreement.stats import Interval, Stat, Undefined, percentile_interval

LEVELS = ("ordinal", "interval")


@dataclass(frozen=True, slots=True)
class GradedReliability:
    ordinal: Stat  # Krippendorff's alpha, ordinal level
    interval: Stat  # Krippendorff's alpha, interval level
    n_units: int  # items with at least one graded vote
    n_values: int
    n_pairable: int  # items with two or more graded votes
    mean_strength: Stat  # mean |strength| (1 slightly … 3 much better; 0 tie)


def points(scale: str) -> list[int]:
    """The scale's values in order, low (response 2 much better) to high."""
    return list(range(1, len(scales.POINTS[scale]) + 1))


def value_matrix(
    votes: Iterable[tuple[Hashable, int]], scale: str
) -> tuple[list[Hashable], np.ndarray]:
    """Units (first-seen order) and their unit x point count matrix, from
    (item, canonical strength) pairs."""
    position: dict[Hashable, int] = {}
    rows: list[int] = []
    columns: list[int] = []
    for item, strength in votes:
        rows.append(position.setdefault(item, len(position)))
        columns.append(scales.scale_value(strength, scale) - 1)
    counts = np.zeros((len(position), len(scales.POINTS[scale])), dtype=np.int64)
    np.add.at(counts, (np.asarray(rows, dtype=np.int64), np.asarray(columns, dtype=np.int64)), 1)
    return list(position), counts


def graded_alpha(counts: np.ndarray, scale: str, level: str) -> Stat:
    """Krippendorff's alpha of a unit x point count matrix at `level`
    ("ordinal" or "interval"); Undefined, with the reason, for data that
    cannot give one."""
    if level not in LEVELS:
        raise ValueError(f"level is one of {LEVELS}")
    counts = np.asarray(counts)
    n_u = counts.sum(axis=1) if counts.size else np.zeros(0)
    pairable = n_u >= 2
    if not pairable.any():
        return Undefined("no item has two or more graded votes")
    counts = counts[pairable]
    if np.count_nonzero(counts.sum(axis=0)) < 2:
        return Undefined("every paired vote is the same point, so chance disagreement is zero")
    try:
        with np.errstate(divide="ignore", invalid="ignore"):
            value = float(
                krippendorff.alpha(
                    value_counts=counts,
                    value_domain=points(scale),
                    level_of_measurement=level,
                )
            )
    except (ValueError, ZeroDivisionError) as exc:
        return Undefined(str(exc))
    if not math.isfinite(value):
        return Undefined("alpha is not a finite number for this data")
    return value


def graded_reliability(votes: Iterable[tuple[Hashable, int]], scale: str) -> GradedReliability:
    """Ordinal and interval alpha of (item, canonical strength) pairs."""
    votes = list(votes)
    _, counts = value_matrix(votes, scale)
    n_u = counts.sum(axis=1)
    mean: Stat = (
        sum(abs(s) for _, s in votes) / len(votes) if votes else Undefined("no graded votes")
    )
    return GradedReliability(
        ordinal=graded_alpha(counts, scale, "ordinal"),
        interval=graded_alpha(counts, scale, "interval"),
        n_units=int((n_u > 0).sum()),
        n_values=int(n_u.sum()),
        n_pairable=int((n_u >= 2).sum()),
        mean_strength=mean,
    )


# --- bootstrap intervals -----------------------------------------------------------

_BOOTSTRAP_CELLS = 4_000_000  # resample weights held in memory at once


def _distances(n_v: np.ndarray, level: str) -> np.ndarray:
    """krippendorff's distance matrix of points 1..q, for every row of
    pairable value totals `n_v` (b x q): (b x q x q). Interval: (c - k)^2.
    Ordinal: (sum of n_g for g between c and k - (n_c + n_k) / 2)^2."""
    q = n_v.shape[-1]
    i, k = np.meshgrid(np.arange(q), np.arange(q), indexing="ij")
    if level == "interval":
        return np.broadcast_to(((i - k) ** 2).astype(float), (*n_v.shape[:-1], q, q))
    lo, hi = np.minimum(i, k), np.maximum(i, k)
    cum = np.concatenate([np.zeros((*n_v.shape[:-1], 1)), np.cumsum(n_v, axis=-1)], axis=-1)
    between = cum[..., hi + 1] - cum[..., lo]
    return (between - (n_v[..., i] + n_v[..., k]) / 2) ** 2


def bootstrap_graded_alphas(
    counts: np.ndarray, level: str, *, n_resamples: int = 1000, seed: int = 0
) -> np.ndarray:
    """Alpha at `level` of `n_resamples` item-bootstrap resamples of a unit x
    point count matrix; NaN where a resample has none.

    Pairable units (two or more values) only, in sorted row order, so the
    database's row order cannot change a draw; resample b takes P of them
    with replacement, row b of ``Generator(PCG64(seed)).integers(0, P,
    size=(n_resamples, P))`` (the nominal bootstrap's draw, stats.
    bootstrap_alphas). Each resample's alpha is krippendorff.alpha's formula
    1 - (n - 1) * sum(o * d) / sum(n_c n_k d) on the summed per-unit
    coincidence matrices o_u = (n_u n_u^T - diag n_u) / (n_u - 1); the ordinal
    distances depend on the resample's own value totals and are recomputed
    for each. Tests hold resamples equal to krippendorff.alpha on the
    resampled matrix."""
    if level not in LEVELS:
        raise ValueError(f"level is one of {LEVELS}")
    counts = np.asarray(counts, dtype=np.int64)
    counts = counts[counts.sum(axis=1) >= 2] if counts.size else counts.reshape(0, 0)
    n_units = len(counts)
    if n_units == 0 or n_resamples <= 0:
        return np.full(max(n_resamples, 0), np.nan)
    counts = counts[np.lexsort(counts.T[::-1])]
    q = counts.shape[1]
    n_u = counts.sum(axis=1)
    per_unit = (
        counts[:, :, np.newaxis] * counts[:, np.newaxis, :]
        - counts[:, :, np.newaxis] * np.eye(q, dtype=np.int64)
    ) / (n_u - 1)[:, np.newaxis, np.newaxis]
    per_unit = per_unit.reshape(n_units, q * q)
    rng = np.random.Generator(np.random.PCG64(seed))
    block = max(1, _BOOTSTRAP_CELLS // n_units)
    alphas = np.empty(n_resamples)
    for start in range(0, n_resamples, block):
        stop = min(start + block, n_resamples)
        b = stop - start
        rows = rng.integers(0, n_units, size=(b, n_units))
        # How often each unit is drawn in each resample (b x P).
        weights = np.bincount(
            (rows + np.arange(b)[:, np.newaxis] * n_units).ravel(), minlength=b * n_units
        ).reshape(b, n_units)
        o = (weights @ per_unit).reshape(b, q, q)
        n_v = o.sum(axis=1)
        d = _distances(n_v, level)
        n = n_v.sum(axis=1)
        observed = (o * d).sum(axis=(1, 2))
        expected = np.einsum("bi,bij,bj->b", n_v, d, n_v)
        with np.errstate(divide="ignore", invalid="ignore"):
            alphas[start:stop] = np.where(expected > 0, 1 - (n - 1) * observed / expected, np.nan)
    return alphas


def bootstrap_graded_ci(
    counts: np.ndarray,
    scale: str,
    level: str,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Interval | Undefined:
    """Percentile interval of alpha at `level` over item-bootstrap resamples
    (as stats.bootstrap_alpha_ci for nominal alpha): Undefined when alpha
    itself is, or when some resample has no variation."""
    if not 0 < confidence < 1:
        raise ValueError("confidence is a probability strictly between 0 and 1")
    point = graded_alpha(counts, scale, level)
    if isinstance(point, Undefined):
        return point
    alphas = bootstrap_graded_alphas(counts, level, n_resamples=n_resamples, seed=seed)
    return percentile_interval(alphas, confidence)
