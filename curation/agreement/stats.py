"""Inter-annotator agreement for canonical votes (DESIGN §6): alpha, AC1,
pairwise agreement and the bootstrap interval over unit x category count
matrices. Pure Python/numpy (no Django), tested without a database.

Votes are in CANONICAL terms: ``choice`` is "1", "2" or "tie" whatever side
each response was displayed on; ``shown_swapped`` is the one display fact a
vote carries and feeds only the left-pick rate (curation.agreement.diagnostics,
which also holds the per-item and per-annotator figures).

Choice units are items (columns ``CHOICES``); correctness units are
(item, response) (columns ``LABELS``). "unsure" is a category, not missing
data (it disagrees with "yes"); an empty label (not asked) is missing. Each
statistic states its definition where it is computed. Degenerate data never
raises and never yields a made-up number: every statistic is
``float | Undefined`` and ``Undefined.reason`` says why; invalid input raises
``ValueError``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from itertools import product
from operator import attrgetter
from typing import NamedTuple

import krippendorff
import numpy as np

# The value types, defined without numpy for the pages that only show them.
from curation.agreement.values import Interval, Stat, Undefined

CHOICES: tuple[str, ...] = ("1", "2", "tie")
LABELS: tuple[str, ...] = ("yes", "no", "unsure")
RESPONSES: tuple[str, ...] = ("1", "2")

_ONE, _TWO, _TIE = (CHOICES.index(c) for c in ("1", "2", "tie"))
_YES, _NO = LABELS.index("yes"), LABELS.index("no")


@dataclass(frozen=True, slots=True)
class Vote:
    """One annotator's judgement of one item, in canonical terms."""

    item: Hashable
    annotator: Hashable
    choice: str  # "1" | "2" | "tie"
    correct_1: str = ""  # "yes" | "no" | "unsure" | "" (not asked)
    correct_2: str = ""
    shown_swapped: bool = False  # canonical 2 was displayed on the left
    seconds: float = 0.0
    gold: str = ""  # the item's gold answer: "" | "1" | "2"

    @property
    def picked_left(self) -> bool | None:
        """Whether the displayed left response won; ``None`` for a tie."""
        if self.choice == "tie":
            return None
        return self.choice == ("2" if self.shown_swapped else "1")

    @property
    def contradicts(self) -> bool:
        """Preferred a response labelled incorrect over one labelled correct."""
        if self.choice == "1":
            return self.correct_1 == "no" and self.correct_2 == "yes"
        if self.choice == "2":
            return self.correct_2 == "no" and self.correct_1 == "yes"
        return False


@dataclass(frozen=True, slots=True)
class Reliability:
    """Agreement over one count matrix (choice or correctness)."""

    alpha: Stat
    ac1: Stat
    pairwise_agreement: Stat
    n_units: int  # units with at least one value
    n_values: int
    n_pairable: int  # units with at least two values
    rates: dict[str, Stat]  # share of all values in each category


@dataclass(frozen=True, slots=True)
class Summary:
    """Project- or domain-level agreement: canonical choice and correctness labels."""

    choice: Reliability  # unit = item, categories CHOICES
    correctness: Reliability  # unit = item x response, categories LABELS

    @property
    def tie_rate(self) -> Stat:
        return self.choice.rates["tie"]


# --- count matrices ---------------------------------------------------------


def _index(keys: Iterable[Hashable]) -> tuple[list[Hashable], np.ndarray]:
    """Distinct keys in first-seen order, and each key's position among them."""
    position: dict[Hashable, int] = {}
    setdefault = position.setdefault  # bound once: this loop runs once per vote
    # len(position) is evaluated before setdefault inserts, so a new key gets the next index.
    rows = [setdefault(key, len(position)) for key in keys]
    return list(position), np.asarray(rows, dtype=np.int64)


def _codes(values: Sequence[str], categories: Sequence[str], missing: str | None) -> np.ndarray:
    """Category index of each value; -1 for ``missing``."""
    lookup = {c: i for i, c in enumerate(categories)}
    if missing is not None:
        lookup[missing] = -1
    try:
        return np.fromiter(map(lookup.__getitem__, values), dtype=np.int64, count=len(values))
    except KeyError as exc:
        raise ValueError(f"{exc.args[0]!r} is not one of {tuple(categories)}") from None


def _tally(rows: np.ndarray, codes: np.ndarray, n_rows: int, n_categories: int) -> np.ndarray:
    flat = rows * n_categories + codes
    return np.bincount(flat, minlength=n_rows * n_categories).reshape(n_rows, n_categories)


def count_matrix(
    values: Iterable[tuple[Hashable, str]], categories: Sequence[str]
) -> tuple[list[Hashable], np.ndarray]:
    """Units (first-seen order) and their unit x category count matrix.

    ``values`` are (unit, value) pairs; a value outside ``categories`` raises
    ``ValueError``.
    """
    pairs = list(values)
    units, rows = _index([unit for unit, _ in pairs])
    codes = _codes([value for _, value in pairs], categories, missing=None)
    return units, _tally(rows, codes, len(units), len(categories))


def choice_matrix(votes: Sequence[Vote]) -> tuple[list[Hashable], np.ndarray]:
    """Items and their item x ``CHOICES`` count matrix."""
    return count_matrix(((v.item, v.choice) for v in votes), CHOICES)


def correctness_matrix(votes: Sequence[Vote]) -> tuple[list[Hashable], np.ndarray]:
    """(item, response) units that have labels, and their unit x ``LABELS`` counts."""
    return count_matrix(
        (
            ((v.item, response), label)
            for v in votes
            for response, label in zip(RESPONSES, (v.correct_1, v.correct_2), strict=True)
            if label
        ),
        LABELS,
    )


# --- project / domain statistics ---------------------------------------------


def _as_counts(counts: np.ndarray) -> np.ndarray:
    counts = np.asarray(counts)
    if counts.ndim != 2:
        raise ValueError("a count matrix is two-dimensional (units x categories)")
    if counts.size and counts.min() < 0:
        raise ValueError("counts cannot be negative")
    return counts


# Each statistic has a private form taking the row totals n_u, so ``reliability``
# computes them once; the public form checks its input and computes them itself.


def _alpha(counts: np.ndarray, n_u: np.ndarray) -> Stat:
    if counts.shape[1] < 2:
        return Undefined("fewer than two categories")
    pairable = n_u >= 2
    if not pairable.any():
        return Undefined("no unit has two or more values")
    if not pairable.all():
        counts = counts[pairable]  # units with one value add nothing; drop them for speed
    if np.count_nonzero(counts.sum(axis=0)) < 2:
        return Undefined("every paired value is the same, so chance disagreement is zero")
    try:
        with np.errstate(divide="ignore", invalid="ignore"):
            value = float(krippendorff.alpha(value_counts=counts, level_of_measurement="nominal"))
    except ValueError as exc:  # guarded above; kept in case the package adds checks
        return Undefined(str(exc))
    if not math.isfinite(value):
        return Undefined("alpha is not a finite number for this data")
    return value


def nominal_alpha(counts: np.ndarray) -> Stat:
    """Nominal Krippendorff alpha of a unit x category count matrix.

    The number is krippendorff.alpha's (value_counts=counts, nominal level).

    Undefined with fewer than two categories, no unit with two values, or when
    every paired value falls in one category (chance disagreement is zero).
    """
    counts = _as_counts(counts)
    return _alpha(counts, counts.sum(axis=1))


def _alpha_parts(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-unit observed disagreement d_u and pairable counts n_uc.

    Nominal alpha in closed form, with n_c = sum of pairable n_uc and n = sum n_c:
        alpha = 1 - (n - 1) * sum_u d_u / (n^2 - sum_c n_c^2)
        d_u   = (n_u^2 - sum_c n_uc^2) / (n_u - 1)   for n_u >= 2, else 0.
    This is krippendorff.alpha's coincidence-matrix formula summed out: the
    off-diagonal of the coincidence matrix sums to sum_u d_u and that of the
    expected matrix to (n^2 - sum n_c^2) / (n - 1). Tests prove equality.
    """
    n_u = counts.sum(axis=-1)
    pairable = n_u >= 2
    with np.errstate(divide="ignore", invalid="ignore"):
        d_u = np.where(pairable, (n_u**2 - (counts**2).sum(axis=-1)) / (n_u - 1), 0.0)
    return d_u, counts * pairable[..., np.newaxis]


def _alpha_from_sums(disagreement: np.ndarray, n_c: np.ndarray) -> np.ndarray:
    """Alpha from sum_u d_u and the pairable category totals; NaN where undefined."""
    n = n_c.sum(axis=-1)
    expected = n**2 - (n_c**2).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected > 0, 1.0 - (n - 1) * disagreement / expected, np.nan)


def choice_categories(*, offers_tie: bool) -> tuple[str, ...]:
    """The choices a project's scale can produce (``Project.offers_tie``:
    A/B allowing ties and graded7 have a tie, A/B without ties and graded6
    have none): the categories AC1's chance agreement counts."""
    return CHOICES if offers_tie else ("1", "2")


def _n_categories(
    counts: np.ndarray, categories: Sequence[str], producible: Sequence[str] | None
) -> int:
    """AC1's q: the categories the scale can produce, and any other column of
    the matrix that holds a value (a tie voted before the project stopped
    allowing ties was possible then); every column when ``producible`` is None.
    (Alpha and kappa do not depend on categories nobody used; AC1 does.)"""
    if producible is None:
        return counts.shape[1]
    unknown = set(producible) - set(categories)
    if unknown:
        raise ValueError(f"{sorted(unknown)!r} are not among the columns {tuple(categories)}")
    used = counts.sum(axis=0) > 0
    return sum(1 for c, u in zip(categories, used, strict=True) if c in producible or u)


def _ac1(counts: np.ndarray, n_u: np.ndarray, n_categories: int | None = None) -> Stat:
    n_categories = counts.shape[1] if n_categories is None else n_categories
    if n_categories < 2:
        return Undefined("fewer than two categories")
    pairable = n_u >= 2
    if not pairable.any():
        return Undefined("no unit has two or more values")
    c, m = (counts, n_u) if pairable.all() else (counts[pairable], n_u[pairable])
    observed = float(((c * (c - 1)).sum(axis=1) / (m * (m - 1))).mean())
    rated = n_u >= 1
    if not rated.all():
        counts, n_u = counts[rated], n_u[rated]
    prevalence = (counts / n_u[:, np.newaxis]).mean(axis=0)
    chance = float((prevalence * (1 - prevalence)).sum()) / (n_categories - 1)
    return (observed - chance) / (1 - chance)  # chance <= 1/q < 1


def gwet_ac1(
    counts: np.ndarray,
    categories: Sequence[str] | None = None,
    *,
    producible: Sequence[str] | None = None,
) -> Stat:
    """Gwet's AC1 for any number of raters per unit, with missing values
    (Gwet, Handbook of Inter-Rater Reliability; as in the irrCAC package).

    Observed agreement p_a is averaged over units with two or more values;
    prevalence pi_k over units with at least one; chance agreement
    p_e = sum_k pi_k (1 - pi_k) / (q - 1); AC1 = (p_a - p_e) / (1 - p_e).
    q is every column, or with ``producible`` (names among ``categories``,
    the matrix's column names) the categories the scale can produce plus
    any other column that holds a value. Defined whenever some unit has two
    values (p_e <= 1/q < 1), and 1.0 when every value is the same.
    """
    counts = _as_counts(counts)
    if producible is not None and categories is None:
        raise ValueError("name the columns (categories) to say which are producible")
    q = _n_categories(counts, categories or (), producible) if producible is not None else None
    return _ac1(counts, counts.sum(axis=1), q)


def _pairwise(counts: np.ndarray, n_u: np.ndarray) -> Stat:
    pairs = int((n_u * (n_u - 1)).sum())
    if pairs == 0:
        return Undefined("no unit has two or more values")
    return int((counts * (counts - 1)).sum()) / pairs


def pairwise_agreement(counts: np.ndarray) -> Stat:
    """Of all pairs of values on the same unit, pooled over units, the
    fraction (not a percentage) that agree."""
    counts = _as_counts(counts)
    return _pairwise(counts, counts.sum(axis=1))


def reliability(
    counts: np.ndarray, categories: Sequence[str], *, producible: Sequence[str] | None = None
) -> Reliability:
    """All point estimates for one count matrix whose columns are
    ``categories``; ``producible``: the categories the scale can produce
    (AC1's q, see gwet_ac1), all of them when None."""
    counts = _as_counts(counts)
    if counts.shape[1] != len(categories):
        raise ValueError("one column per category")
    n_u = counts.sum(axis=1)
    n_values = int(n_u.sum())
    totals = counts.sum(axis=0).tolist()
    no_values = Undefined("no values")
    return Reliability(
        alpha=_alpha(counts, n_u),
        ac1=_ac1(counts, n_u, _n_categories(counts, categories, producible)),
        pairwise_agreement=_pairwise(counts, n_u),
        n_units=int(np.count_nonzero(n_u)),
        n_values=n_values,
        n_pairable=int(np.count_nonzero(n_u >= 2)),
        rates={
            c: t / n_values if n_values else no_values
            for c, t in zip(categories, totals, strict=True)
        },
    )


def reliability_of_patterns(
    patterns: np.ndarray,
    units: np.ndarray,
    categories: Sequence[str],
    *,
    producible: Sequence[str] | None = None,
) -> Reliability:
    """``reliability`` of the count matrix holding ``units[i]`` copies of row
    ``patterns[i]``, without building it.

    For large data (10^5 items have only a few hundred distinct count rows):
    every statistic here is a sum or mean over units, so each distinct row is
    computed once and weighted by how many units share it. Alpha uses the
    closed form of ``_alpha_parts`` (krippendorff.alpha's coincidence-matrix
    formula summed out) because krippendorff.alpha has no unit weights; the
    tests check it equals krippendorff.alpha on the expanded matrix to 1e-9.
    Same Undefined cases and reasons as ``reliability``.
    """
    patterns = _as_counts(patterns)
    units = np.asarray(units, dtype=np.int64).reshape(-1)
    if patterns.shape[1] != len(categories):
        raise ValueError("one column per category")
    if len(units) != len(patterns):
        raise ValueError("one unit count per pattern")
    if units.size and units.min() < 0:
        raise ValueError("unit counts cannot be negative")
    n_u = patterns.sum(axis=1)
    n_values = int((units * n_u).sum())
    totals = (units[:, np.newaxis] * patterns).sum(axis=0).tolist()
    no_values = Undefined("no values")
    pairable = (n_u >= 2) & (units > 0)
    return Reliability(
        alpha=_weighted_alpha(patterns[pairable], units[pairable]),
        ac1=_weighted_ac1(
            patterns, n_u, units, _n_categories(patterns[units > 0], categories, producible)
        ),
        pairwise_agreement=_weighted_pairwise(patterns, n_u, units),
        n_units=int(units[n_u > 0].sum()),
        n_values=n_values,
        n_pairable=int(units[pairable].sum()),
        rates={
            c: t / n_values if n_values else no_values
            for c, t in zip(categories, totals, strict=True)
        },
    )


def _weighted_alpha(patterns: np.ndarray, units: np.ndarray) -> Stat:
    """``_alpha`` of pairable patterns, each standing for ``units`` units."""
    if patterns.shape[1] < 2:
        return Undefined("fewer than two categories")
    if not len(patterns):
        return Undefined("no unit has two or more values")
    d_u, n_uc = _alpha_parts(patterns)
    n_c = (units[:, np.newaxis] * n_uc).sum(axis=0)
    if np.count_nonzero(n_c) < 2:
        return Undefined("every paired value is the same, so chance disagreement is zero")
    value = float(_alpha_from_sums(np.asarray(float((units * d_u).sum())), n_c))
    if not math.isfinite(value):
        return Undefined("alpha is not a finite number for this data")
    return value


def _weighted_ac1(
    patterns: np.ndarray, n_u: np.ndarray, units: np.ndarray, n_categories: int
) -> Stat:
    """``_ac1`` with each pattern standing for ``units`` units."""
    if n_categories < 2:
        return Undefined("fewer than two categories")
    pairable = (n_u >= 2) & (units > 0)
    if not pairable.any():
        return Undefined("no unit has two or more values")
    c, m, w = patterns[pairable], n_u[pairable], units[pairable]
    observed = float((w * (c * (c - 1)).sum(axis=1) / (m * (m - 1))).sum() / w.sum())
    rated = (n_u >= 1) & (units > 0)
    shares = patterns[rated] / n_u[rated][:, np.newaxis]
    prevalence = (units[rated][:, np.newaxis] * shares).sum(axis=0) / units[rated].sum()
    chance = float((prevalence * (1 - prevalence)).sum()) / (n_categories - 1)
    return (observed - chance) / (1 - chance)  # chance <= 1/q < 1


def _weighted_pairwise(patterns: np.ndarray, n_u: np.ndarray, units: np.ndarray) -> Stat:
    """``_pairwise`` with each pattern standing for ``units`` units."""
    pairs = int((units * n_u * (n_u - 1)).sum())
    if pairs == 0:
        return Undefined("no unit has two or more values")
    return int((units * (patterns * (patterns - 1)).sum(axis=1)).sum()) / pairs


def summarise(votes: Sequence[Vote], *, offers_tie: bool = True) -> Summary:
    """Project/domain agreement on canonical choice and on correctness labels;
    ``offers_tie``: whether the project's scale has a tie (choice_categories)."""
    table = _Table.of(votes)
    return Summary(
        choice=reliability(
            table.choice_counts(), CHOICES, producible=choice_categories(offers_tie=offers_tie)
        ),
        correctness=reliability(table.label_counts(), LABELS),
    )


# --- bootstrap -----------------------------------------------------------------

_BOOTSTRAP_CELLS = 4_000_000  # resample indices held in memory at once


def bootstrap_alphas(counts: np.ndarray, *, n_resamples: int = 1000, seed: int = 0) -> np.ndarray:
    """Nominal alpha of ``n_resamples`` item-bootstrap resamples; NaN where undefined.

    Only pairable units are resampled: a unit with fewer than two values adds
    nothing to alpha, so dropping it first changes no resample's alpha and
    keeps the number of informative units fixed. Resample b takes P pairable
    rows with replacement, drawn as row b of
    ``Generator(PCG64(seed)).integers(0, P, size=(n_resamples, P))``
    (drawn in blocks of rows, which yields the same stream). Alpha for all
    resamples is computed at once from the closed form in ``_alpha_parts``.
    """
    counts = _as_counts(counts)
    d_u, n_uc = _alpha_parts(counts)
    keep = counts.sum(axis=1) >= 2
    d_u, n_uc = d_u[keep], n_uc[keep]
    n_units = len(d_u)
    if n_units == 0 or n_resamples <= 0:
        return np.full(max(n_resamples, 0), np.nan)
    rng = np.random.Generator(np.random.PCG64(seed))
    block = max(1, _BOOTSTRAP_CELLS // n_units)
    alphas = np.empty(n_resamples)
    for start in range(0, n_resamples, block):
        stop = min(start + block, n_resamples)
        rows = rng.integers(0, n_units, size=(stop - start, n_units))
        disagreement = d_u[rows].sum(axis=1)
        n_c = np.stack([n_uc[:, c][rows].sum(axis=1) for c in range(n_uc.shape[1])], axis=-1)
        alphas[start:stop] = _alpha_from_sums(disagreement, n_c)
    return alphas


def bootstrap_alpha_ci(
    counts: np.ndarray, *, n_resamples: int = 1000, seed: int = 0, level: float = 0.95
) -> Interval | Undefined:
    """Percentile interval of nominal alpha over item-bootstrap resamples.

    Undefined when alpha itself is, or when some resample has no variation
    (too few informative items for a bootstrap to mean anything).
    """
    if not 0 < level < 1:
        raise ValueError("level is a probability strictly between 0 and 1")
    if n_resamples < 1:
        raise ValueError("n_resamples must be positive")
    counts = _as_counts(counts)
    point = nominal_alpha(counts)
    if isinstance(point, Undefined):
        return point
    return percentile_interval(bootstrap_alphas(counts, n_resamples=n_resamples, seed=seed), level)


def percentile_interval(alphas: np.ndarray, level: float) -> Interval | Undefined:
    """The central `level` percentile interval of bootstrap alphas; Undefined
    if any is NaN (a resample with no variation)."""
    undefined = int(np.isnan(alphas).sum())
    if undefined:
        return Undefined(f"{undefined} of {len(alphas)} resamples have no variation")
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(alphas, [tail, 100 - tail])
    return Interval(float(low), float(high))


# --- votes as columns (the vectorised form every statistic reads) ---------------


_canonical_fields = attrgetter("choice", "correct_1", "correct_2")
# (choice, correct_1, correct_2) -> choice * 16 + (label_1 + 1) * 4 + (label_2 + 1), "" = -1.
_VOTE_CODES = {
    fields: code for code, fields in enumerate(product(CHOICES, ("", *LABELS), ("", *LABELS)))
}


class _Table(NamedTuple):
    """Votes as columns: one entry per vote."""

    items: list[Hashable]
    item: np.ndarray  # row in items
    choice: np.ndarray  # index in CHOICES
    labels: np.ndarray  # (votes, 2): index in LABELS of correct_1, correct_2; -1 = not asked

    @classmethod
    def of(cls, votes: Sequence[Vote]) -> _Table:
        items, item = _index([v.item for v in votes])
        # One dict lookup per vote for all three canonical fields (the hot path at 10^5 votes).
        try:
            code = np.fromiter(
                map(_VOTE_CODES.__getitem__, map(_canonical_fields, votes)),
                dtype=np.int64,
                count=len(votes),
            )
        except KeyError as exc:
            raise ValueError(f"invalid (choice, correct_1, correct_2): {exc.args[0]!r}") from None
        n_labels = len(LABELS) + 1
        labels = np.stack([code // n_labels % n_labels, code % n_labels], axis=-1) - 1
        return cls(items=items, item=item, choice=code // n_labels**2, labels=labels)

    def choice_counts(self) -> np.ndarray:
        return _tally(self.item, self.choice, len(self.items), len(CHOICES))

    def label_values(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(vote, unit row, label) for every given label; unit row = 2 * item + response."""
        vote, response = np.nonzero(self.labels >= 0)
        return vote, 2 * self.item[vote] + response, self.labels[vote, response]

    def label_counts(self, *, keep_empty: bool = False) -> np.ndarray:
        """(item, response) x LABELS counts; rows without labels dropped unless kept."""
        _, unit, label = self.label_values()
        counts = _tally(unit, label, 2 * len(self.items), len(LABELS))
        return counts if keep_empty else counts[counts.sum(axis=1) > 0]

    def contradicts(self) -> np.ndarray:
        """Vote.contradicts for every vote at once."""
        first, second = self.labels[:, 0], self.labels[:, 1]
        return ((self.choice == _ONE) & (first == _NO) & (second == _YES)) | (
            (self.choice == _TWO) & (second == _NO) & (first == _YES)
        )
