"""Inter-annotator agreement for canonical votes (DESIGN §6).

Pure Python/numpy: no Django import, so it is tested without a database and
can run anywhere (a view, a Celery task, a notebook).

Votes are in CANONICAL terms: ``choice`` is "1", "2" or "tie" whatever side
each response was displayed on, and ``correct_1``/``correct_2`` label the
canonical responses. The only display fact a vote carries is
``shown_swapped`` and it feeds exactly one statistic, the left-pick rate.

Definitions (each is also stated where it is computed):

* Count matrix: one row per unit, one column per category, cell = number of
  values. Choice units are items with columns fixed to ``CHOICES`` =
  ("1", "2", "tie"); correctness units are (item, "1") and (item, "2") with
  columns ``LABELS`` = ("yes", "no", "unsure"). "unsure" is a category of its
  own, not missing data: an annotator who says "unsure" while another says
  "yes" disagrees with them. An empty label ("" = not asked) is missing.
* Pairable unit: a unit with at least two values. Only pairable units carry
  information about agreement.
* Krippendorff's alpha: nominal, computed by ``krippendorff.alpha``.
* Gwet's AC1: multi-rater form with missing values (Gwet, Handbook of
  Inter-Rater Reliability; as in the irrCAC package): observed agreement is the
  mean over pairable units of the share of agreeing ordered pairs; category
  prevalence pi_k is the mean over units with at least one value of
  n_uk / n_u; chance agreement is sum pi_k (1 - pi_k) / (q - 1), q = number of
  categories (3, fixed, used or not).
* Pairwise agreement: of all pairs of values on the same unit, pooled over
  units, the fraction that agree (a fraction in [0, 1], not a percentage).
* Majority: the value with the most votes if exactly one value has that many,
  else ``None`` (no votes, or a tie for first place).
* Winner share: votes for the most-voted value / votes, whether or not that
  value is unique (a 1-1 split has winner share 0.5 and majority ``None``).
* Normalised entropy: Shannon entropy of the item's count distribution over
  the three choices divided by log(3): 0 = unanimous, 1 = evenly split.
* Conflict: both "1" and "2" received at least one vote. Ties alone never make
  a conflict (DESIGN §6: "the only dissent is ties" can still be agreed).
* Contradiction (per vote): the annotator preferred a response they labelled
  "no" (incorrect) while labelling the other response "yes" (correct). "tie"
  and "unsure" never contradict. An item contradicts if any vote does.
* Leave-one-out majority of a vote: the majority (as above) of the other
  annotators' votes on the same item (for correctness labels: on the same
  item x response). Votes whose unit has no such majority are not compared.
  Agreement and Cohen's kappa compare the annotator with that majority.
* Change in alpha without an annotator: alpha(without them) - alpha(all);
  positive means the data agree better without them.
* Gold accuracy: among an annotator's votes on gold items (gold "1" or "2"),
  the share equal to gold; a "tie" on a gold item counts as wrong.
* Left pick: the response displayed on the left was chosen, i.e.
  ``choice == "2"`` if ``shown_swapped`` else ``choice == "1"``. Ties are
  excluded from the denominator (a tie picks no side). The interval is
  Wilson's score interval and the p-value the exact two-sided binomial test
  of a 50% left-pick rate (both ``scipy.stats.binomtest``).
* Side bias: the left-pick test runs once per annotator, so the p-values are
  adjusted for the number of tests with Benjamini-Hochberg
  (``scipy.stats.false_discovery_control``) over the project's annotators with
  at least ``MIN_SIDE_VOTES`` non-tie votes (fewer are not tested). An
  annotator is flagged when their adjusted p-value is below ``SIDE_BIAS_FDR``.

Degenerate data never raises and never yields a made-up number: every
statistic is ``float | Undefined`` and ``Undefined.reason`` says why.
Invalid input (a choice that is not one of ``CHOICES``) raises ``ValueError``.
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

CHOICES: tuple[str, ...] = ("1", "2", "tie")
LABELS: tuple[str, ...] = ("yes", "no", "unsure")
RESPONSES: tuple[str, ...] = ("1", "2")
# Side bias: annotators with fewer non-tie votes are not tested, and the
# false discovery rate the Benjamini-Hochberg adjustment controls.
MIN_SIDE_VOTES = 30
SIDE_BIAS_FDR = 0.05

_ONE, _TWO, _TIE = (CHOICES.index(c) for c in ("1", "2", "tie"))
_YES, _NO = LABELS.index("yes"), LABELS.index("no")


@dataclass(frozen=True, slots=True)
class Undefined:
    """A statistic that has no value for this data, and why."""

    reason: str

    def __str__(self) -> str:
        return f"undefined ({self.reason})"


Stat = float | Undefined


class Interval(NamedTuple):
    low: float
    high: float


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
    alpha_delta: Stat  # alpha without the annotator - alpha with everyone


@dataclass(frozen=True, slots=True)
class AnnotatorStats:
    n_votes: int
    choice: Consensus
    correctness: Consensus
    gold_accuracy: Stat
    n_gold: int
    left_pick_rate: Stat
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


def label_counts(votes: Sequence[Vote]) -> np.ndarray:
    """The counts of ``correctness_matrix`` without the unit keys (the same rows,
    possibly in another order), vectorised: a few times faster."""
    return _Table.of(votes).label_counts()


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


def _ac1(counts: np.ndarray, n_u: np.ndarray) -> Stat:
    n_categories = counts.shape[1]
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


def gwet_ac1(counts: np.ndarray) -> Stat:
    """Gwet's AC1 for any number of raters per unit (see module docstring).

    Observed agreement p_a is averaged over units with two or more values;
    prevalence pi_k over units with at least one; chance agreement
    p_e = sum_k pi_k (1 - pi_k) / (q - 1); AC1 = (p_a - p_e) / (1 - p_e).
    Defined whenever some unit has two values (p_e <= 1/q < 1), and 1.0 when
    every value is the same.
    """
    counts = _as_counts(counts)
    return _ac1(counts, counts.sum(axis=1))


def _pairwise(counts: np.ndarray, n_u: np.ndarray) -> Stat:
    pairs = int((n_u * (n_u - 1)).sum())
    if pairs == 0:
        return Undefined("no unit has two or more values")
    return int((counts * (counts - 1)).sum()) / pairs


def pairwise_agreement(counts: np.ndarray) -> Stat:
    """Of all pairs of values on the same unit, pooled over units, the fraction that agree."""
    counts = _as_counts(counts)
    return _pairwise(counts, counts.sum(axis=1))


def reliability(counts: np.ndarray, categories: Sequence[str]) -> Reliability:
    """All point estimates for one count matrix whose columns are ``categories``."""
    counts = _as_counts(counts)
    if counts.shape[1] != len(categories):
        raise ValueError("one column per category")
    n_u = counts.sum(axis=1)
    n_values = int(n_u.sum())
    totals = counts.sum(axis=0).tolist()
    no_values = Undefined("no values")
    return Reliability(
        alpha=_alpha(counts, n_u),
        ac1=_ac1(counts, n_u),
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
    patterns: np.ndarray, units: np.ndarray, categories: Sequence[str]
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
        ac1=_weighted_ac1(patterns, n_u, units),
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


def _weighted_ac1(patterns: np.ndarray, n_u: np.ndarray, units: np.ndarray) -> Stat:
    """``_ac1`` with each pattern standing for ``units`` units."""
    n_categories = patterns.shape[1]
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


def summarise(votes: Sequence[Vote]) -> Summary:
    """Project/domain agreement on canonical choice and on correctness labels."""
    table = _Table.of(votes)
    return Summary(
        choice=reliability(table.choice_counts(), CHOICES),
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
    alphas = bootstrap_alphas(counts, n_resamples=n_resamples, seed=seed)
    undefined = int(np.isnan(alphas).sum())
    if undefined:
        return Undefined(f"{undefined} of {n_resamples} resamples have no variation")
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(alphas, [tail, 100 - tail])
    return Interval(float(low), float(high))


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


def side_bias_p_values(
    counts: Sequence[tuple[int, int]], *, min_votes: int = MIN_SIDE_VOTES
) -> list[tuple[Stat, Stat]]:
    """(p-value, Benjamini-Hochberg adjusted p-value) of each (left picks,
    non-tie votes) pair: the exact two-sided binomial test of a 50% left-pick
    rate, adjusted over the pairs with at least `min_votes` votes; the others
    are Undefined (not tested)."""
    from scipy.stats import binomtest, false_discovery_control  # heavy: loaded where used

    tested = [i for i, (_, n) in enumerate(counts) if n >= min_votes]
    raw = [binomtest(counts[i][0], counts[i][1], 0.5).pvalue for i in tested]
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
    conflict = (counts[:, _ONE] > 0) & (counts[:, _TWO] > 0)
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
    """Leave-one-out comparison of each rater with the others, one entry per rater.

    ``unit``, ``rater`` and ``value`` have one entry per value given.
    """
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
