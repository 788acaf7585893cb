"""Agreement of graded votes (issue 24): Krippendorff's alpha at the ordinal
level and, labelled as such, at the interval level, over the canonical
strengths of a graded project (annotate.loop.scales).

Pure Python/numpy, no Django import. Units are items; values are the points
of the project's scale *oriented to response 1* (scale_value: graded6
1..6 as MMRB2's human_annotations, 6 = response 1 much better; graded7
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
from curation.agreement.stats import Stat, Undefined

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
