"""curation.agreement.stats and .diagnostics: pure statistics, no database.

Reference values are either worked by hand in the comments, published, or
computed by a second implementation written here from the formula (never by
calling the code under test twice).
"""

import importlib.util
import math
import statistics
import warnings
from collections import Counter
from contextlib import contextmanager
from dataclasses import replace

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curation.agreement.diagnostics import (
    SIDE_BIAS_FDR,
    annotator_stats,
    cohen_kappa,
    item_stats,
    majority,
    normalised_entropy,
    side_bias_p_values,
    wilson_interval,
)
from curation.agreement.stats import (
    CHOICES,
    LABELS,
    Interval,
    Undefined,
    Vote,
    bootstrap_alpha_ci,
    bootstrap_alphas,
    choice_matrix,
    correctness_matrix,
    count_matrix,
    gwet_ac1,
    nominal_alpha,
    pairwise_agreement,
    reliability,
    reliability_of_patterns,
    summarise,
)

# --- helpers ----------------------------------------------------------------


def make_votes(table: dict[str, list[str]], **fields) -> list[Vote]:
    """{item: [choice of rater 0, choice of rater 1, ...]}; "" = rater did not vote."""
    return [
        Vote(item=item, annotator=f"r{r}", choice=choice, **fields)
        for item, choices in table.items()
        for r, choice in enumerate(choices)
        if choice
    ]


def package_alpha_from_ratings(ratings: list[list[str | None]], domain: list[str]) -> float:
    """krippendorff.alpha on reliability_data (raters x units, NaN = missing)."""
    codes = {value: float(i) for i, value in enumerate(domain)}
    data = np.array(
        [[np.nan if r is None else codes[r] for r in rater] for rater in ratings], dtype=float
    )
    values = list(range(len(domain)))
    return krippendorff.alpha(data, value_domain=values, level_of_measurement="nominal")


def ac1_reference(units: list[list[str]], categories: tuple[str, ...]) -> float:
    """Gwet's AC1 for multiple raters with missing ratings, straight from the formula.

    p_a = mean over units with r_i >= 2 of sum_k r_ik (r_ik - 1) / (r_i (r_i - 1))
    pi_k = mean over units with r_i >= 1 of r_ik / r_i
    p_e = sum_k pi_k (1 - pi_k) / (q - 1);  AC1 = (p_a - p_e) / (1 - p_e)
    """
    rated = [u for u in units if len(u) >= 1]
    pairable = [u for u in units if len(u) >= 2]
    p_a = 0.0
    for u in pairable:
        tally = Counter(u)
        p_a += sum(tally[k] * (tally[k] - 1) for k in categories) / (len(u) * (len(u) - 1))
    p_a /= len(pairable)
    p_e = 0.0
    for k in categories:
        pi_k = sum(Counter(u)[k] / len(u) for u in rated) / len(rated)
        p_e += pi_k * (1 - pi_k)
    p_e /= len(categories) - 1
    return (p_a - p_e) / (1 - p_e)


def random_ratings(rng: np.random.Generator, n_raters: int, n_units: int, domain, missing=0.3):
    """raters x units, values from domain, None with probability ``missing``."""
    values = rng.choice(len(domain), size=(n_raters, n_units), p=None)
    # Correlate raters a little so alpha is not always near zero.
    truth = rng.choice(len(domain), size=n_units)
    values = np.where(rng.random((n_raters, n_units)) < 0.6, truth, values)
    gone = rng.random((n_raters, n_units)) < missing
    return [
        [None if gone[r, u] else domain[values[r, u]] for u in range(n_units)]
        for r in range(n_raters)
    ]


def units_of(ratings: list[list[str | None]]) -> list[list[str]]:
    """Per unit, the values given (raters x units -> units x values)."""
    return [[row[u] for row in ratings if row[u] is not None] for u in range(len(ratings[0]))]


def pairs_of(ratings: list[list[str | None]]) -> list[tuple[int, str]]:
    return [(u, value) for row in ratings for u, value in enumerate(row) if value is not None]


@contextmanager
def no_warnings():
    """Degenerate data must not even warn (a NaN warning means a NaN was computed)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# --- hand-worked example ----------------------------------------------------------

# Three items, three raters:
#   A: 1, 1, 1     counts [3, 0, 0]
#   B: 1, 1, 2     counts [2, 1, 0]
#   C: 2, tie, 2   counts [0, 2, 1]
HAND = {"A": ["1", "1", "1"], "B": ["1", "1", "2"], "C": ["2", "tie", "2"]}
HAND_COUNTS = np.array([[3, 0, 0], [2, 1, 0], [0, 2, 1]])


def test_count_matrix_has_fixed_columns_and_first_seen_rows():
    items, counts = choice_matrix(make_votes(HAND))
    assert items == ["A", "B", "C"]
    np.testing.assert_array_equal(counts, HAND_COUNTS)
    # A choice never used still has its column.
    items, counts = choice_matrix(make_votes({"X": ["2", "2"]}))
    np.testing.assert_array_equal(counts, [[0, 2, 0]])


def test_hand_example_alpha():
    # Coincidences o_ck = sum_u n_uc (n_uk - [c == k]) / (n_u - 1):
    #   A: o11 += 3*2/2 = 3
    #   B: o11 += 2*1/2 = 1, o12 = o21 += 2*1/2 = 1
    #   C: o22 += 2*1/2 = 1, o23 = o32 += 2*1/2 = 1
    #   o = [[4, 1, 0], [1, 1, 1], [0, 1, 0]], n = 9, n_c = [5, 3, 1]
    # Observed disagreement = off-diagonal of o = 4.
    # Expected disagreement = (n^2 - sum n_c^2) / (n - 1) = (81 - 35) / 8 = 46 / 8.
    # alpha = 1 - 4 / (46 / 8) = 1 - 32 / 46 = 7 / 23 = 0.304348
    assert nominal_alpha(HAND_COUNTS) == pytest.approx(7 / 23, abs=1e-12)


def test_hand_example_ac1():
    # p_a per item: A 3*2/6 = 1, B 2*1/6 = 1/3, C 2*1/6 = 1/3 -> mean 5/9.
    # pi per item: A [1, 0, 0], B [2/3, 1/3, 0], C [0, 2/3, 1/3] -> mean [5/9, 1/3, 1/9].
    # p_e = (5/9*4/9 + 1/3*2/3 + 1/9*8/9) / (3 - 1) = (20 + 18 + 8) / 81 / 2 = 23/81.
    # AC1 = (5/9 - 23/81) / (1 - 23/81) = (45 - 23) / (81 - 23) = 22/58 = 11/29 = 0.379310
    assert gwet_ac1(HAND_COUNTS) == pytest.approx(11 / 29, abs=1e-12)


def test_hand_example_pairwise_agreement_and_tie_rate():
    # Ordered pairs per item: 3*2 = 6, 18 in all. Agreeing: A 3*2 = 6, B 2*1 = 2,
    # C 2*1 = 2 -> 10/18 = 5/9. One tie among nine votes.
    assert pairwise_agreement(HAND_COUNTS) == pytest.approx(5 / 9, abs=1e-12)
    summary = summarise(make_votes(HAND))
    assert summary.tie_rate == pytest.approx(1 / 9)
    assert summary.choice.pairwise_agreement == pytest.approx(5 / 9)
    assert summary.choice.alpha == pytest.approx(7 / 23)
    assert summary.choice.ac1 == pytest.approx(11 / 29)
    assert (summary.choice.n_units, summary.choice.n_values, summary.choice.n_pairable) == (3, 9, 3)


def test_pairwise_agreement_pools_pairs_across_items():
    # Item with 4 votes [3, 1, 0]: 12 pairs, 6 agree. Item with 2 votes [0, 1, 1]: 2 pairs,
    # 0 agree. Pooled: 6/14 (a mean of per-item rates would be 0.25).
    assert pairwise_agreement(np.array([[3, 1, 0], [0, 1, 1]])) == pytest.approx(6 / 14)


# --- Krippendorff's published example and the package ---------------------------

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C:
# four coders, twelve units, values 1-5, "." = missing. Nominal alpha = 0.743.
K2011 = [
    ["1", "2", "3", "3", "2", "1", "4", "1", "2", None, None, None],
    ["1", "2", "3", "3", "2", "2", "4", "1", "2", "5", None, "3"],
    [None, "3", "3", "3", "2", "3", "4", "2", "2", "5", "1", None],
    ["1", "2", "3", "3", "2", "4", "4", "1", "2", "5", "1", None],
]
K2011_DOMAIN = ["1", "2", "3", "4", "5"]


def test_krippendorff_2011_worked_example():
    _, counts = count_matrix(pairs_of(K2011), categories=K2011_DOMAIN)
    value = nominal_alpha(counts)
    assert round(value, 3) == 0.743
    assert value == pytest.approx(package_alpha_from_ratings(K2011, K2011_DOMAIN), abs=1e-9)
    # Unit 12 has a single value: not pairable.
    assert reliability(counts, K2011_DOMAIN).n_pairable == 11


@pytest.mark.parametrize("seed", range(25))
@pytest.mark.reference
def test_alpha_equals_package_on_reliability_data(seed):
    rng = np.random.default_rng(seed)
    ratings = random_ratings(rng, n_raters=int(rng.integers(2, 7)), n_units=40, domain=CHOICES)
    _, counts = count_matrix(pairs_of(ratings), categories=CHOICES)
    ours = nominal_alpha(counts)
    assert not isinstance(ours, Undefined)
    assert ours == pytest.approx(package_alpha_from_ratings(ratings, list(CHOICES)), abs=1e-9)


@pytest.mark.parametrize("seed", range(25))
@pytest.mark.reference
def test_ac1_equals_reference_implementation(seed):
    rng = np.random.default_rng(100 + seed)
    ratings = random_ratings(rng, n_raters=int(rng.integers(2, 7)), n_units=30, domain=LABELS)
    _, counts = count_matrix(pairs_of(ratings), categories=LABELS)
    expected = ac1_reference(units_of(ratings), LABELS)
    assert gwet_ac1(counts) == pytest.approx(expected, abs=1e-9)


@pytest.mark.reference
def test_ac1_two_raters_two_categories_matches_gwet_2008_formula():
    # Gwet (2008), two raters, two categories: p_a = (a + d) / n,
    # pi = (A + B) / 2 with A, B the raters' "yes" shares, p_e = 2 pi (1 - pi).
    # a = 40 yes/yes, b = 5 yes/no, c = 10 no/yes, d = 45 no/no (n = 100):
    # p_a = 0.85, A = 0.45, B = 0.50, pi = 0.475, p_e = 0.49875,
    # AC1 = (0.85 - 0.49875) / (1 - 0.49875) = 0.700748
    rows = [[2, 0]] * 40 + [[1, 1]] * 15 + [[0, 2]] * 45
    assert gwet_ac1(np.array(rows)) == pytest.approx(0.35125 / 0.50125, abs=1e-12)


# --- item level ---------------------------------------------------------------------


def test_item_majority_share_entropy_and_conflict():
    stats = item_stats(
        make_votes({"A": ["1", "1", "2"], "B": ["1", "2"], "C": ["tie", "tie", "1"]})
    )
    a, b, c = stats["A"], stats["B"], stats["C"]
    assert a.counts == {"1": 2, "2": 1, "tie": 0} and a.n_votes == 3
    assert (a.majority, a.winner_share, a.conflict) == ("1", pytest.approx(2 / 3), True)
    # H([2/3, 1/3]) / ln 3 = (2/3 ln 1.5 + 1/3 ln 3) / ln 3 = 0.579380
    assert a.entropy == pytest.approx((2 / 3 * math.log(1.5) + 1 / 3 * math.log(3)) / math.log(3))
    # A 1-1 split has no majority; its winner share is still the top share.
    assert (b.majority, b.winner_share, b.conflict) == (None, 0.5, True)
    # Dissent by ties alone is no conflict.
    assert (c.majority, c.conflict) == ("tie", False)


def test_entropy_bounds():
    assert normalised_entropy([5, 0, 0]) == 0.0
    assert normalised_entropy([2, 2, 2]) == pytest.approx(1.0)
    assert isinstance(normalised_entropy([0, 0, 0]), Undefined)


def test_majority_needs_a_unique_top():
    assert majority([2, 1, 0]) == "1"
    assert majority([0, 0, 3]) == "tie"
    assert majority([2, 2, 1]) is None
    assert majority([0, 0, 0]) is None


def test_contradiction_is_preferring_the_response_labelled_incorrect():
    votes = [
        Vote("A", "r0", "1", correct_1="no", correct_2="yes"),  # contradicts
        Vote("A", "r1", "1", correct_1="yes", correct_2="no"),
        Vote("B", "r0", "2", correct_1="unsure", correct_2="no"),  # unsure: no contradiction
        Vote("B", "r1", "tie", correct_1="no", correct_2="yes"),  # tie: no contradiction
        Vote("C", "r0", "2", correct_1="yes", correct_2="no"),  # contradicts
        Vote("C", "r1", "2", correct_1="no", correct_2="no"),
    ]
    assert [v.contradicts for v in votes] == [True, False, False, False, True, False]
    stats = item_stats(votes)
    assert [(s.contradictions, s.contradiction) for s in stats.values()] == [
        (1, True),
        (0, False),
        (1, True),
    ]
    assert stats["A"].correctness_counts == {
        "1": {"yes": 1, "no": 1, "unsure": 0},
        "2": {"yes": 1, "no": 1, "unsure": 0},
    }


@settings(max_examples=50, deadline=None)
@given(st.lists(st.lists(st.sampled_from(CHOICES), min_size=1, max_size=6), max_size=12))
def test_item_stats_agree_with_scalar_definitions(table):
    votes = make_votes({f"i{i}": choices for i, choices in enumerate(table)})
    for item, stats in item_stats(votes).items():
        row = [stats.counts[c] for c in CHOICES]
        assert row == [table[int(item[1:])].count(c) for c in CHOICES]
        assert stats.majority == majority(row)
        assert stats.entropy == pytest.approx(normalised_entropy(row), abs=1e-12)
        assert stats.winner_share == max(row) / sum(row)
        assert stats.conflict == (row[0] > 0 and row[1] > 0)


# --- correctness labels ---------------------------------------------------------------


def test_correctness_unit_is_item_times_response_and_unsure_is_a_category():
    votes = [
        Vote("A", "r0", "1", correct_1="yes", correct_2="no"),
        Vote("A", "r1", "1", correct_1="yes", correct_2="unsure"),
        Vote("B", "r0", "2", correct_1="", correct_2="yes"),  # "" = not asked: missing
        Vote("B", "r1", "2"),
    ]
    units, counts = correctness_matrix(votes)
    assert units == [("A", "1"), ("A", "2"), ("B", "2")]
    np.testing.assert_array_equal(counts, [[2, 0, 0], [0, 1, 1], [1, 0, 0]])
    summary = summarise(votes).correctness
    # Pairable units: (A,1) agrees, (A,2) "no" vs "unsure" disagrees -> 2 of 4 ordered pairs.
    assert summary.pairwise_agreement == 0.5
    assert (summary.n_units, summary.n_values, summary.n_pairable) == (3, 5, 2)
    assert summary.rates == {"yes": 0.6, "no": 0.2, "unsure": 0.2}
    # n_c = [2, 1, 1], n = 4: observed 2/1 (unit (A,2)); expected (16 - 6)/3 -> 1 - 3*2/10
    assert summary.alpha == pytest.approx(0.4)


def test_summarise_matches_count_matrices():
    rng = np.random.default_rng(7)
    votes = random_votes(rng, n_items=60, n_annotators=6)
    summary = summarise(votes)
    assert summary.choice == reliability(choice_matrix(votes)[1], CHOICES)
    assert summary.correctness == reliability(correctness_matrix(votes)[1], LABELS)


def test_invalid_values_raise():
    with pytest.raises(ValueError, match="'3'"):
        summarise([Vote("A", "r0", "3")])
    with pytest.raises(ValueError):
        choice_matrix([Vote("A", "r0", "left")])
    with pytest.raises(ValueError):
        summarise([Vote("A", "r0", "1", correct_1="maybe")])
    with pytest.raises(ValueError):
        annotator_stats([Vote("A", "r0", "1", gold="tie")])


# --- degenerate data ---------------------------------------------------------------------


def assert_undefined(value, reason_part: str):
    assert isinstance(value, Undefined), value
    assert reason_part in value.reason
    assert reason_part in str(value)


def test_no_votes_is_undefined_everywhere():
    with no_warnings():
        summary = summarise([])
        assert_undefined(summary.choice.alpha, "no unit has two or more values")
        assert_undefined(summary.choice.ac1, "no unit has two or more values")
        assert_undefined(summary.choice.pairwise_agreement, "no unit")
        assert_undefined(summary.tie_rate, "no values")
        assert_undefined(summary.correctness.alpha, "no unit")
        assert summary.choice.n_values == 0
        assert item_stats([]) == {} and annotator_stats([]) == {}
        assert_undefined(bootstrap_alpha_ci(np.zeros((0, 3), dtype=int)), "no unit")


def test_one_vote_and_single_vote_items_are_undefined():
    with no_warnings():
        for votes in (
            [Vote("A", "r0", "1")],
            [Vote("A", "r0", "1"), Vote("B", "r1", "2"), Vote("C", "r0", "tie")],
        ):
            summary = summarise(votes)
            assert_undefined(summary.choice.alpha, "no unit has two or more values")
            assert_undefined(summary.choice.ac1, "no unit")
            assert summary.choice.n_pairable == 0
            stats = annotator_stats(votes)["r0"]
            assert_undefined(stats.choice.agreement, "leave-one-out majority")
            assert_undefined(stats.choice.kappa, "nothing to compare")
            assert_undefined(stats.choice.alpha_delta, "no unit")
            assert_undefined(stats.gold_accuracy, "no gold")
            assert item_stats(votes)["A"].majority == "1"


def test_identical_votes_give_undefined_alpha_not_nan():
    votes = make_votes({"A": ["1", "1", "1"], "B": ["1", "1"], "C": ["1"]})
    with no_warnings():
        summary = summarise(votes)
        assert_undefined(summary.choice.alpha, "every paired value is the same")
        # AC1 and raw agreement are defined: everyone agrees.
        assert summary.choice.ac1 == 1.0
        assert summary.choice.pairwise_agreement == 1.0
        _, counts = choice_matrix(votes)
        assert_undefined(bootstrap_alpha_ci(counts), "every paired value is the same")
        stats = annotator_stats(votes)["r0"]
        assert stats.choice.agreement == 1.0
        assert_undefined(stats.choice.kappa, "one and the same category")
        assert_undefined(stats.choice.alpha_delta, "every paired value is the same")


def test_only_ties_gives_undefined_left_pick_rate():
    stats = annotator_stats([Vote("A", "r0", "tie"), Vote("B", "r0", "tie")])["r0"]
    assert stats.n_sided == 0 and stats.tie_rate == 1.0
    assert_undefined(stats.left_pick_rate, "only ties")
    assert_undefined(stats.left_pick_ci, "no trials")


def test_alpha_without_an_annotator_can_become_undefined():
    # Without r2 every paired value is "1".
    votes = make_votes({"A": ["1", "1", "2"], "B": ["1", "1", ""]})
    stats = annotator_stats(votes)
    assert isinstance(stats["r0"].choice.alpha_delta, float)
    assert_undefined(stats["r2"].choice.alpha_delta, "undefined without this annotator")


def test_one_category_matrix_is_undefined():
    assert_undefined(nominal_alpha(np.array([[2], [3]])), "fewer than two categories")
    assert_undefined(gwet_ac1(np.array([[2], [3]])), "fewer than two categories")


# --- annotator level --------------------------------------------------------------------


def random_votes(rng: np.random.Generator, n_items: int, n_annotators: int) -> list[Vote]:
    """Each item gets votes from a random subset of annotators; truth-correlated choices."""
    votes = []
    for item in range(n_items):
        truth = rng.choice(3, p=[0.45, 0.45, 0.1])
        gold = ["", "1", "2"][rng.choice(3, p=[0.8, 0.1, 0.1])]
        for annotator in rng.choice(n_annotators, size=rng.integers(1, 6), replace=False):
            choice = truth if rng.random() < 0.7 else rng.choice(3)
            labels = rng.choice(4, size=2, p=[0.5, 0.25, 0.1, 0.15])
            votes.append(
                Vote(
                    item=f"item{item}",
                    annotator=f"ann{annotator}",
                    choice=CHOICES[choice],
                    correct_1=(*LABELS, "")[labels[0]],
                    correct_2=(*LABELS, "")[labels[1]],
                    shown_swapped=bool(rng.random() < 0.5),
                    seconds=float(rng.integers(1, 120)),
                    gold=gold,
                )
            )
    return votes


def loo_reference(votes: list[Vote], annotator) -> tuple[list[str], list[str]]:
    """The annotator's choices and the leave-one-out majorities they are compared with."""
    theirs, majorities = [], []
    for v in votes:
        if v.annotator != annotator:
            continue
        others = Counter(w.choice for w in votes if w.item == v.item and w.annotator != annotator)
        ranked = others.most_common()
        if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
            continue  # no unique majority among the others
        theirs.append(v.choice)
        majorities.append(ranked[0][0])
    return theirs, majorities


def test_annotator_stats_match_direct_computation():
    rng = np.random.default_rng(11)
    votes = random_votes(rng, n_items=80, n_annotators=7)
    _, all_counts = choice_matrix(votes)
    alpha_all = nominal_alpha(all_counts)
    stats = annotator_stats(votes)
    assert len(stats) == 7
    for annotator, s in stats.items():
        mine = [v for v in votes if v.annotator == annotator]
        assert s.n_votes == len(mine)
        theirs, majorities = loo_reference(votes, annotator)
        assert s.choice.n_compared == len(theirs)
        agree = sum(a == b for a, b in zip(theirs, majorities, strict=True))
        assert s.choice.agreement == pytest.approx(agree / len(theirs))
        assert s.choice.kappa == pytest.approx(cohen_kappa(theirs, majorities, CHOICES))
        # Alpha without them, recomputed from scratch by the package.
        others = [v for v in votes if v.annotator != annotator]
        _, counts = choice_matrix(others)
        without = krippendorff.alpha(value_counts=counts, level_of_measurement="nominal")
        assert s.choice.alpha_delta == pytest.approx(without - alpha_all, abs=1e-9)
        gold = [v for v in mine if v.gold]
        assert s.n_gold == len(gold)
        if gold:
            assert s.gold_accuracy == pytest.approx(
                sum(v.choice == v.gold for v in gold) / len(gold)
            )
        assert s.tie_rate == pytest.approx(sum(v.choice == "tie" for v in mine) / len(mine))
        assert s.median_seconds == statistics.median(v.seconds for v in mine)
        sided = [v.picked_left for v in mine if v.picked_left is not None]
        assert s.n_sided == len(sided)
        assert s.left_pick_rate == pytest.approx(sum(sided) / len(sided))


def test_annotator_correctness_consensus_uses_item_times_response_units():
    rng = np.random.default_rng(12)
    votes = random_votes(rng, n_items=60, n_annotators=5)
    _, all_counts = correctness_matrix(votes)
    alpha_all = nominal_alpha(all_counts)
    for annotator, s in annotator_stats(votes).items():
        labelled = sum(
            bool(v.correct_1) + bool(v.correct_2) for v in votes if v.annotator == annotator
        )
        assert s.correctness.n_values == labelled
        _, counts = correctness_matrix([v for v in votes if v.annotator != annotator])
        without = krippendorff.alpha(value_counts=counts, level_of_measurement="nominal")
        assert s.correctness.alpha_delta == pytest.approx(without - alpha_all, abs=1e-9)


def test_gold_accuracy_counts_a_tie_as_wrong():
    votes = [
        Vote("A", "r0", "1", gold="1"),
        Vote("B", "r0", "tie", gold="2"),
        Vote("C", "r0", "2", gold="2"),
        Vote("D", "r0", "1", gold=""),
    ]
    stats = annotator_stats(votes)["r0"]
    assert (stats.n_gold, stats.gold_accuracy) == (3, pytest.approx(2 / 3))


def test_median_seconds_of_even_count():
    votes = [Vote(i, "r0", "1", seconds=s) for i, s in enumerate([30.0, 10.0, 20.0, 90.0])]
    assert annotator_stats(votes)["r0"].median_seconds == 25.0


def test_left_pick_is_a_display_fact_and_ties_are_not_counted():
    votes = [
        Vote("A", "r0", "1", shown_swapped=False),  # canonical 1 shown left: left pick
        Vote("B", "r0", "1", shown_swapped=True),  # canonical 1 shown right: right pick
        Vote("C", "r0", "2", shown_swapped=True),  # left pick
        Vote("D", "r0", "tie", shown_swapped=True),  # no side
    ]
    assert [v.picked_left for v in votes] == [True, False, True, None]
    stats = annotator_stats(votes)["r0"]
    assert (stats.n_sided, stats.left_pick_rate) == (3, pytest.approx(2 / 3))
    assert stats.left_pick_ci == wilson_interval(2, 3)


def biased_annotator_votes(rng, annotator: str, n: int, left_rate: float, prefer_1: float):
    """Picks the left side with ``left_rate`` when biased, else canonical 1 with ``prefer_1``."""
    votes = []
    for i in range(n):
        swapped = bool(rng.random() < 0.5)
        if left_rate:
            left = rng.random() < left_rate
            choice = ("2" if swapped else "1") if left else ("1" if swapped else "2")
        else:
            choice = "1" if rng.random() < prefer_1 else "2"
        votes.append(Vote(f"item{i}", annotator, choice, shown_swapped=swapped))
    return votes


def test_left_bias_is_detected_and_quality_preference_is_not():
    rng = np.random.default_rng(3)
    votes = biased_annotator_votes(rng, "biased", 200, left_rate=0.8, prefer_1=0)
    # Prefers canonical 1 (the better response) 80% of the time: no side bias, as
    # the display order is random.
    votes += biased_annotator_votes(rng, "fair", 200, left_rate=0, prefer_1=0.8)
    stats = annotator_stats(votes)
    biased, fair = stats["biased"], stats["fair"]
    assert biased.left_pick_rate == pytest.approx(0.8, abs=0.07)
    assert biased.left_pick_ci.low > 0.5
    assert fair.left_pick_ci.low < 0.5 < fair.left_pick_ci.high
    assert biased.side_bias and not fair.side_bias


@pytest.mark.reference
def test_side_bias_p_values_equal_their_definitions():
    """The raw p-value is the exact two-sided binomial test and the adjustment
    Benjamini-Hochberg's step-up, both written out here from their definitions
    and compared to 1e-9; below the minimum a count is not tested."""
    from math import comb

    counts = [(31, 40), (22, 40), (19, 40), (60, 100), (5, 10), (45, 80)]

    def exact_two_sided(k, n):
        pmf = [comb(n, i) / 2**n for i in range(n + 1)]
        return min(1.0, sum(p for p in pmf if p <= pmf[k] * (1 + 1e-7)))

    tested = [(k, n) for k, n in counts if n >= 30]
    raw = [exact_two_sided(k, n) for k, n in tested]
    m = len(raw)
    order = sorted(range(m), key=lambda i: raw[i])
    adjusted = [0.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, raw[i] * m / rank)
        adjusted[i] = running
    got = side_bias_p_values(counts, min_votes=30)
    expected = iter(zip(raw, adjusted, strict=True))
    for (_k, n), (p, q) in zip(counts, got, strict=True):
        if n < 30:
            assert isinstance(p, Undefined) and isinstance(q, Undefined)
            continue
        want_p, want_q = next(expected)
        assert p == pytest.approx(want_p, abs=1e-9) and q == pytest.approx(want_q, abs=1e-9)


def test_honest_teams_are_rarely_flagged_and_a_70_percent_left_picker_nearly_always():
    """Many seeded projects of 20 honest annotators x 200 non-tie votes (left
    picks ~ Binomial(200, 0.5)): a false flag in at most 5% of projects (the
    rate holds for the whole team, where an unadjusted test per annotator
    would flag about 64% of projects). One more annotator picking the left
    70% of the time is flagged in at least 95% of projects."""
    rng = np.random.default_rng(2026)
    projects = 2000
    false_flags = caught = 0
    for _ in range(projects):
        honest = [(int(k), 200) for k in rng.binomial(200, 0.5, size=20)]
        false_flags += any(
            q < SIDE_BIAS_FDR for _, q in side_bias_p_values(honest) if isinstance(q, float)
        )
        _, q = side_bias_p_values([*honest, (int(rng.binomial(200, 0.7)), 200)])[-1]
        caught += q < SIDE_BIAS_FDR
    assert false_flags / projects <= 0.05
    assert caught / projects >= 0.95
    # Unadjusted, the same projects would be flagged far more often.
    raw = sum(
        any(p < 0.05 for p, _ in side_bias_p_values([(int(k), 200) for k in ks]))
        for ks in rng.binomial(200, 0.5, size=(200, 20))
    )
    assert raw / 200 > 0.4


def test_project_flags_come_from_the_adjusted_test():
    """annotator_stats flags exactly the annotators side_bias_p_values flags
    on their (left picks, non-tie votes)."""
    rng = np.random.default_rng(7)
    votes = []
    for r in range(8):
        votes += biased_annotator_votes(rng, f"h{r}", 60, left_rate=0, prefer_1=0.7)
    votes += biased_annotator_votes(rng, "left", 60, left_rate=0.75, prefer_1=0)
    stats = annotator_stats(votes)
    counts = [(round(s.left_pick_rate * s.n_sided), s.n_sided) for s in stats.values()]
    expected = [isinstance(q, float) and q < SIDE_BIAS_FDR for _, q in side_bias_p_values(counts)]
    assert [s.side_bias for s in stats.values()] == expected
    assert stats["left"].side_bias


def test_too_few_votes_are_not_tested():
    votes = biased_annotator_votes(np.random.default_rng(1), "new", 20, left_rate=1.0, prefer_1=0)
    stats = annotator_stats(votes)["new"]
    assert stats.left_pick_rate == 1.0 and not stats.side_bias
    assert isinstance(stats.left_pick_p_adjusted, Undefined)


# --- Cohen's kappa and Wilson -------------------------------------------------------------


def test_cohen_kappa_hand_example():
    # 50 pairs: yes/yes 20, yes/no 5, no/yes 10, no/no 15.
    # p_o = 35/50 = 0.7; rater a yes 25/50, rater b yes 30/50;
    # p_e = 0.5*0.6 + 0.5*0.4 = 0.5; kappa = (0.7 - 0.5) / 0.5 = 0.4
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(a, b, ("yes", "no")) == pytest.approx(0.4)
    assert cohen_kappa(a, a, ("yes", "no")) == 1.0


def test_cohen_kappa_degenerate():
    assert_undefined(cohen_kappa([], [], CHOICES), "nothing to compare")
    assert_undefined(cohen_kappa(["1", "1"], ["1", "1"], CHOICES), "one and the same")
    with pytest.raises(ValueError):
        cohen_kappa(["1"], [], CHOICES)


@pytest.mark.reference
@pytest.mark.skipif(importlib.util.find_spec("sklearn") is None, reason="no scikit-learn")
def test_cohen_kappa_matches_sklearn():
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(5)
    a = list(rng.choice(CHOICES, size=100))
    b = [x if rng.random() < 0.6 else rng.choice(CHOICES) for x in a]
    assert cohen_kappa(a, b, CHOICES) == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        # Newcombe (1998), "Two-sided confidence intervals for the single proportion",
        # Table I, method 3 (Wilson score, no continuity correction).
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0000, 0.1611),
        (1, 29, 0.0061, 0.1718),
        # 0/10: upper = z^2 / (n + z^2) = 3.8415 / 13.8415
        (0, 10, 0.0000, 0.2775),
        (10, 10, 0.7225, 1.0000),
    ],
)
def test_wilson_interval_known_values(k, n, low, high):
    interval = wilson_interval(k, n)
    assert isinstance(interval, Interval)
    assert (round(interval.low, 4), round(interval.high, 4)) == (low, high)


def test_wilson_interval_degenerate():
    assert_undefined(wilson_interval(0, 0), "no trials")
    with pytest.raises(ValueError):
        wilson_interval(3, 2)


# --- bootstrap ----------------------------------------------------------------------------


def bootstrap_counts(seed: int, n_items: int = 300) -> np.ndarray:
    rng = np.random.default_rng(seed)
    _, counts = choice_matrix(random_votes(rng, n_items=n_items, n_annotators=8))
    return counts


def test_bootstrap_alphas_equal_package_on_each_resample():
    counts = bootstrap_counts(1, n_items=120)
    pairable = counts[counts.sum(axis=1) >= 2]
    alphas = bootstrap_alphas(counts, n_resamples=40, seed=9)
    # The documented resampling: row b of integers(0, P, size=(B, P)) on pairable rows.
    rng = np.random.Generator(np.random.PCG64(9))
    rows = rng.integers(0, len(pairable), size=(40, len(pairable)))
    for b in range(40):
        resample = pairable[rows[b]]
        expected = krippendorff.alpha(value_counts=resample, level_of_measurement="nominal")
        assert alphas[b] == pytest.approx(expected, abs=1e-9)


@pytest.mark.reference
def test_bootstrap_closed_form_equals_package_on_varied_shapes():
    # Items with one to nine votes, including single-vote items that resampling drops.
    rng = np.random.default_rng(21)
    for _ in range(20):
        n = rng.integers(1, 10, size=50)
        counts = np.stack([rng.multinomial(k, [0.5, 0.35, 0.15]) for k in n])
        pairable = counts[n >= 2]
        alphas = bootstrap_alphas(counts, n_resamples=5, seed=4)
        rows = np.random.Generator(np.random.PCG64(4)).integers(
            0, len(pairable), (5, len(pairable))
        )
        for b in range(5):
            resample = pairable[rows[b]]
            expected = krippendorff.alpha(value_counts=resample, level_of_measurement="nominal")
            assert alphas[b] == pytest.approx(expected, abs=1e-9)


def test_bootstrap_is_deterministic_for_a_seed_and_contains_the_estimate():
    counts = bootstrap_counts(2)
    first = bootstrap_alpha_ci(counts, n_resamples=500, seed=123)
    assert first == bootstrap_alpha_ci(counts, n_resamples=500, seed=123)
    assert first != bootstrap_alpha_ci(counts, n_resamples=500, seed=124)
    point = nominal_alpha(counts)
    assert isinstance(first, Interval)
    assert first.low < point < first.high
    wider = bootstrap_alpha_ci(counts, n_resamples=500, seed=123, level=0.99)
    assert wider.low <= first.low and wider.high >= first.high


def test_bootstrap_blocks_draw_the_same_stream(monkeypatch):
    import curation.agreement.stats as agreement

    counts = bootstrap_counts(3, n_items=100)
    whole = bootstrap_alphas(counts, n_resamples=50, seed=5)
    monkeypatch.setattr(agreement, "_BOOTSTRAP_CELLS", 7 * len(counts))  # 7 resamples a block
    np.testing.assert_array_equal(bootstrap_alphas(counts, n_resamples=50, seed=5), whole)


def test_bootstrap_with_undefined_resamples_is_undefined():
    # One disagreeing item among many unanimous ones: some resamples miss it.
    counts = np.array([[1, 1, 0]] + [[2, 0, 0]] * 5)
    assert isinstance(nominal_alpha(counts), float)
    with no_warnings():
        assert_undefined(bootstrap_alpha_ci(counts, n_resamples=200), "have no variation")


# --- invariance to display ----------------------------------------------------------------

vote_strategy = st.builds(
    Vote,
    item=st.integers(0, 5),
    annotator=st.sampled_from(["a", "b", "c", "d"]),
    choice=st.sampled_from(CHOICES),
    correct_1=st.sampled_from(("", *LABELS)),
    correct_2=st.sampled_from(("", *LABELS)),
    shown_swapped=st.booleans(),
    seconds=st.floats(0, 600),
    gold=st.sampled_from(("", "1", "2")),
)


def without_left(stats):
    return {a: replace(s, left_pick_rate=None, left_pick_ci=None) for a, s in stats.items()}


@settings(max_examples=150, deadline=None)
@given(
    votes=st.lists(vote_strategy, max_size=30, unique_by=lambda v: (v.item, v.annotator)),
    flips=st.lists(st.booleans(), min_size=30, max_size=30),
)
def test_statistics_do_not_depend_on_display_order(votes, flips):
    flipped = [
        replace(v, shown_swapped=not v.shown_swapped) if flip else v
        for v, flip in zip(votes, flips, strict=False)
    ]
    with no_warnings():
        assert summarise(flipped) == summarise(votes)
        assert item_stats(flipped) == item_stats(votes)
        before, after = annotator_stats(votes), annotator_stats(flipped)
    assert without_left(after) == without_left(before)
    for annotator, stats in after.items():
        assert stats.n_sided == before[annotator].n_sided
        mine = [v for v in flipped if v.annotator == annotator and v.picked_left is not None]
        if mine:
            assert stats.left_pick_rate == sum(v.picked_left for v in mine) / len(mine)


@settings(max_examples=100, deadline=None)
@given(st.lists(vote_strategy, max_size=40, unique_by=lambda v: (v.item, v.annotator)))
def test_any_votes_give_numbers_or_reasons_never_errors(votes):
    with no_warnings():
        summary = summarise(votes)
        stats = annotator_stats(votes)
        items = item_stats(votes)
    for value in (summary.choice.alpha, summary.choice.ac1, summary.correctness.alpha):
        assert isinstance(value, Undefined) or math.isfinite(value)
    for s in stats.values():
        for value in (s.choice.agreement, s.choice.kappa, s.choice.alpha_delta):
            assert isinstance(value, Undefined) or math.isfinite(value)
    assert sum(i.n_votes for i in items.values()) == len(votes)


# --- weighted patterns (the dashboard's point estimates at scale) -----------------


def distinct_patterns(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a count matrix and how many times each occurs."""
    rows = Counter(map(tuple, np.asarray(counts).tolist()))
    patterns = np.array(list(rows), dtype=np.int64).reshape(len(rows), counts.shape[1])
    return patterns, np.array(list(rows.values()), dtype=np.int64)


def assert_same_reliability(got, expected):
    """Equal to 1e-9 where numbers, the same reason where undefined."""
    for name in ("alpha", "ac1", "pairwise_agreement"):
        a, b = getattr(got, name), getattr(expected, name)
        if isinstance(b, Undefined):
            assert a == b, name
        else:
            assert a == pytest.approx(b, abs=1e-9), name
    assert (got.n_units, got.n_values, got.n_pairable) == (
        expected.n_units,
        expected.n_values,
        expected.n_pairable,
    )
    for c, rate in expected.rates.items():
        assert got.rates[c] == (rate if isinstance(rate, Undefined) else pytest.approx(rate))


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.reference
def test_patterns_alpha_equals_krippendorff_on_the_expanded_matrix(seed):
    rng = np.random.default_rng(300 + seed)
    # Up to 9 values a unit (single-value and empty units included), many repeats.
    n = rng.integers(0, 10, size=int(rng.integers(50, 3000)))
    counts = np.stack([rng.multinomial(k, rng.dirichlet([2, 2, 0.5])) for k in n])
    patterns, units = distinct_patterns(counts)
    got = reliability_of_patterns(patterns, units, CHOICES)
    pairable = counts[n >= 2]
    expected = krippendorff.alpha(value_counts=pairable, level_of_measurement="nominal")
    assert got.alpha == pytest.approx(expected, abs=1e-9)
    # Each unit's row repeated back: np.repeat of the patterns is that matrix.
    expanded = np.repeat(patterns, units, axis=0)
    assert sorted(map(tuple, expanded.tolist())) == sorted(map(tuple, counts.tolist()))
    assert_same_reliability(got, reliability(counts, CHOICES))


@pytest.mark.reference
def test_patterns_give_krippendorff_2011_and_gwet_reference():
    _, counts = count_matrix(pairs_of(K2011), categories=K2011_DOMAIN)
    got = reliability_of_patterns(*distinct_patterns(counts), K2011_DOMAIN)
    assert round(got.alpha, 3) == 0.743
    assert got.alpha == pytest.approx(package_alpha_from_ratings(K2011, K2011_DOMAIN), abs=1e-9)
    rng = np.random.default_rng(7)
    ratings = random_ratings(rng, n_raters=5, n_units=200, domain=LABELS)
    _, counts = count_matrix(pairs_of(ratings), categories=LABELS)
    got = reliability_of_patterns(*distinct_patterns(counts), LABELS)
    assert got.ac1 == pytest.approx(ac1_reference(units_of(ratings), LABELS), abs=1e-9)
    assert got.alpha == pytest.approx(package_alpha_from_ratings(ratings, list(LABELS)), abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.lists(st.integers(0, 4), min_size=3, max_size=3), st.integers(0, 5)),
        max_size=8,
    )
)
def test_patterns_equal_reliability_of_the_expanded_matrix_on_any_data(rows):
    """Degenerate data included: no values, one value, one category, zero weights."""
    patterns = np.array([p for p, _ in rows], dtype=np.int64).reshape(len(rows), 3)
    units = np.array([w for _, w in rows], dtype=np.int64)
    with no_warnings():
        got = reliability_of_patterns(patterns, units, CHOICES)
        expected = reliability(np.repeat(patterns, units, axis=0), CHOICES)
    assert_same_reliability(got, expected)


def test_patterns_refuse_mismatched_input():
    with pytest.raises(ValueError):
        reliability_of_patterns(np.ones((2, 3), dtype=int), np.ones(3, dtype=int), CHOICES)
    with pytest.raises(ValueError):
        reliability_of_patterns(np.ones((1, 3), dtype=int), np.array([-1]), CHOICES)
    with pytest.raises(ValueError):
        reliability_of_patterns(np.ones((1, 2), dtype=int), np.array([1]), CHOICES)
