"""Position bias over N displayed positions (issue 33), per annotator: the
displayed position of each unique top pick against uniform chance,
scipy.stats.chisquare, Benjamini-Hochberg across annotators (definitions in
curation.agreement.ranking). Pure: no Django import."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

from curation.agreement.ranking import (
    MIN_EXPECTED,
    PickTable,
    RankTable,
    _tally,
    unique_tops,
)
from curation.agreement.stats import Stat, Undefined

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
