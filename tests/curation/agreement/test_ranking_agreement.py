"""Issue 33, deliverable 3: agreement for rankings and best-of-N picks
(curation.agreement.ranking), each statistic equal to an independent
reference to 1e-9. The references are built here another way: reliability
data (annotators x units, NaN = missing) from Python loops for
krippendorff.alpha, Kendall's W from the textbook sum-of-squared-rank-sums
formula with tie groups counted by Counter, tau-b from scipy.stats.kendalltau
on each pair, chi-squared from scipy.stats.chisquare and BH from statsmodels.
Pure: no database."""

import math
import random
from collections import Counter
from itertools import combinations, permutations
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats
from statsmodels.stats.multitest import multipletests

from curation.agreement import ranking as rk
from curation.agreement import ranking_aggregate as rka
from curation.agreement import ranking_bootstrap as rkb
from curation.agreement import ranking_diagnostics as rkd
from curation.agreement.stats import Interval, Undefined

ROOT = Path(__file__).resolve().parents[3]


# --- data ------------------------------------------------------------------------------


def random_rankings(seed, n_items=40, n_annotators=6, slots=(2, 3, 4, 5), missing=0.08):
    """Rankings with ties, missing ranks, 1-5 raters per item and N varying by item,
    loosely following a per-item latent order so agreement is neither 0 nor 1."""
    rng = random.Random(seed)
    out = []
    for item in range(n_items):
        n = rng.choice(slots)
        latent = list(range(n))
        rng.shuffle(latent)
        raters = rng.sample(range(n_annotators), rng.randint(1, min(5, n_annotators)))
        for who in raters:
            noisy = [latent[s] + rng.gauss(0, 1.2) for s in range(n)]
            ranks = [float(round(v)) + 10 for v in noisy]  # any positive numbers; ties
            ranks = [None if rng.random() < missing else r for r in ranks]
            if all(r is None for r in ranks):
                ranks[0] = 1.0
            shown = list(range(n))
            rng.shuffle(shown)
            out.append(rk.Ranking(f"item{item}", f"ann{who}", ranks, shown))
    return out


def textbook_mid_ranks(ranks):
    ranked = [r for r in ranks if r is not None]
    return [
        None
        if r is None
        else 1 + sum(v < r for v in ranked) + (sum(v == r for v in ranked) - 1) / 2
        for r in ranks
    ]


def reliability_data(rankings, value_of_unit):
    """annotators x units matrix: value_of_unit(ranking) -> {unit: value}."""
    annotators = sorted({r.annotator for r in rankings})
    cells = {}
    for r in rankings:
        for unit, value in value_of_unit(r).items():
            cells[(r.annotator, unit)] = value
    units = sorted({unit for _, unit in cells})
    data = np.full((len(annotators), len(units)), np.nan)
    for (who, unit), value in cells.items():
        data[annotators.index(who), units.index(unit)] = value
    return data


def pair_values(r, key=None):
    key = r.item if key is None else key
    out = {}
    for i, j in combinations(range(len(r.ranks)), 2):
        a, b = r.ranks[i], r.ranks[j]
        if a is not None and b is not None:
            out[(key, i, j)] = 0 if a < b else 1 if a > b else 2
    return out


def rank_values(r, key=None):
    key = r.item if key is None else key
    return {(key, s): m for s, m in enumerate(textbook_mid_ranks(r.ranks)) if m is not None}


def textbook_w(rankings):
    """Kendall's W with tie correction from complete rankings, or None."""
    complete = [textbook_mid_ranks(r.ranks) for r in rankings if None not in r.ranks]
    m = len(complete)
    if m < 2:
        return None
    n = len(complete[0])
    sums = [sum(row[i] for row in complete) for i in range(n)]
    ties = sum(t**3 - t for r in rankings if None not in r.ranks for t in Counter(r.ranks).values())
    denominator = m**2 * (n**3 - n) - m * ties
    if denominator == 0:
        return None
    return (12 * sum(s * s for s in sums) - 3 * m**2 * n * (n + 1) ** 2) / denominator


def scipy_tau(a, b):
    common = [i for i in range(len(a)) if a[i] is not None and b[i] is not None]
    if len(common) < 2:
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = scipy_stats.kendalltau([a[i] for i in common], [b[i] for i in common]).statistic
    return None if math.isnan(tau) else tau


def by_item(rankings):
    groups = {}
    for r in rankings:
        groups.setdefault(r.item, []).append(r)
    return groups


# --- alpha -------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_pairwise_alpha_is_krippendorffs_nominal_alpha_over_implied_preferences(seed):
    rankings = random_rankings(seed)
    expected = krippendorff.alpha(
        reliability_data=reliability_data(rankings, pair_values), level_of_measurement="nominal"
    )
    assert rk.pairwise_alpha(rk.RankTable.of(rankings)) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_ordinal_alpha_is_krippendorffs_ordinal_alpha_over_mid_ranks(seed):
    rankings = random_rankings(seed)
    expected = krippendorff.alpha(
        reliability_data=reliability_data(rankings, rank_values), level_of_measurement="ordinal"
    )
    assert rk.ordinal_alpha(rk.RankTable.of(rankings)) == pytest.approx(expected, abs=1e-9)


def test_mid_ranks_are_scipys_average_ranks_over_the_ranked_slots():
    rankings = random_rankings(11)
    mids = rk.mid_ranks(rk.RankTable.of(rankings).ranks)
    for row, r in zip(mids, rankings, strict=True):
        ranked = [v for v in r.ranks if v is not None]
        expected = iter(scipy_stats.rankdata(ranked, method="average"))
        for got, v in zip(row, r.ranks, strict=False):
            assert math.isnan(got) if v is None else got == next(expected)


@pytest.mark.parametrize("seed", range(4))
def test_pick_alpha_is_krippendorffs_nominal_alpha_with_none_a_category(seed):
    rng = random.Random(seed)
    picks = []
    for item in range(60):
        n = rng.choice((2, 4, 8))
        favourite = rng.randrange(n)
        for who in rng.sample(range(7), rng.randint(1, 5)):
            roll = rng.random()
            slot = favourite if roll < 0.6 else None if roll < 0.7 else rng.randrange(n)
            picks.append(rk.Pick(item, who, slot, n))
    data = np.full((7, 60), np.nan)
    for p in picks:
        data[p.annotator, p.item] = -1 if p.slot is None else p.slot
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    table = rk.PickTable.of(picks)
    assert rk.pick_alpha(table) == pytest.approx(expected, abs=1e-9)
    interval = rk.pick_alpha_interval(table, n_resamples=200, seed=3)
    assert isinstance(interval, Interval) and interval.low <= expected <= interval.high
    shuffled = picks[:]
    random.Random(1).shuffle(shuffled)
    assert rk.pick_alpha_interval(rk.PickTable.of(shuffled), n_resamples=200, seed=3) == interval


# --- W, tau-b, the top --------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_kendalls_w_is_the_textbook_formula_with_tie_correction(seed):
    rankings = random_rankings(seed, missing=0.03)
    table = rk.RankTable.of(rankings)
    w = rk.kendalls_w(table)
    checked = 0
    for item, group in by_item(rankings).items():
        expected = textbook_w(group)
        got = w[table.items.index(item)]
        if expected is None:
            assert math.isnan(got)
        else:
            assert got == pytest.approx(expected, abs=1e-9)
            checked += 1
    assert checked > 10


@pytest.mark.parametrize("seed", range(6))
def test_tau_b_is_scipys_for_every_pair_of_rankings_of_an_item(seed):
    rankings = random_rankings(seed)
    table = rk.RankTable.of(rankings)
    per_item = rk.item_stats(table)
    all_taus = []
    for item, group in by_item(rankings).items():
        taus = [scipy_tau(a.ranks, b.ranks) for a, b in combinations(group, 2)]
        taus = [t for t in taus if t is not None]
        all_taus += taus
        got = per_item.tau_b[table.items.index(item)]
        if taus:
            assert got == pytest.approx(np.mean(taus), abs=1e-9)
        else:
            assert math.isnan(got)
    summary = rk.ranking_reliability(table)
    assert summary.n_tau_pairs == len(all_taus)
    assert summary.mean_tau_b == pytest.approx(np.mean(all_taus), abs=1e-9)


def test_the_summary_gathers_the_statistics():
    rankings = random_rankings(5)
    table = rk.RankTable.of(rankings)
    summary = rk.ranking_reliability(table)
    w = [textbook_w(g) for g in by_item(rankings).values()]
    w = [v for v in w if v is not None]
    assert summary.mean_w == pytest.approx(np.mean(w), abs=1e-9)
    assert summary.n_w_items == len(w)
    assert summary.pairwise_alpha == rk.pairwise_alpha(table)
    assert summary.ordinal_alpha == rk.ordinal_alpha(table)
    assert (summary.n_items, summary.n_rankings) == (len(table.items), len(rankings))


def test_top_share_counts_only_a_single_first_place():
    rankings = [
        rk.Ranking("x", "a", [1, 2, 3]),
        rk.Ranking("x", "b", [1, 3, 2]),
        rk.Ranking("x", "c", [1, 1, 2]),  # tied first place: names no slot
        rk.Ranking("y", "a", [2, 1, 3]),
        rk.Ranking("y", "b", [1, 2, 3]),
    ]
    per_item = rk.item_stats(rk.RankTable.of(rankings))
    assert per_item.top.tolist() == [0, -1]
    assert per_item.top_share.tolist() == pytest.approx([2 / 3, 1 / 2])


# --- bootstrap ------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1])
def test_every_resample_equals_the_references_on_the_resampled_items(seed):
    rankings = random_rankings(seed, n_items=25)
    table = rk.RankTable.of(rankings)
    boot = rkb.bootstrap_ranking(table, n_resamples=15, seed=seed)
    groups = by_item(rankings)
    assert set(boot.items) == {i for i, g in groups.items() if len(g) >= 2}
    draws = np.random.Generator(np.random.PCG64(seed)).integers(
        0, len(boot.items), size=(15, len(boot.items))
    )
    for values, rows in zip(boot.values, draws, strict=True):
        # Each drawn copy of an item is a unit of its own.
        copies = [(k, r) for k, row in enumerate(rows) for r in groups[boot.items[row]]]
        pair_cells, rank_cells = {}, {}
        for k, r in copies:
            pair_cells.update({(r.annotator, u): v for u, v in pair_values(r, k).items()})
            rank_cells.update({(r.annotator, u): v for u, v in rank_values(r, k).items()})
        expected = []
        for cells, level in ((pair_cells, "nominal"), (rank_cells, "ordinal")):
            who = sorted({a for a, _ in cells})
            units = sorted({u for _, u in cells})
            data = np.full((len(who), len(units)), np.nan)
            for (a, u), v in cells.items():
                data[who.index(a), units.index(u)] = v
            expected.append(krippendorff.alpha(reliability_data=data, level_of_measurement=level))
        w = [textbook_w(groups[boot.items[row]]) for row in rows]
        w = [v for v in w if v is not None]
        taus = [
            scipy_tau(a.ranks, b.ranks)
            for row in rows
            for a, b in combinations(groups[boot.items[row]], 2)
        ]
        taus = [t for t in taus if t is not None]
        expected += [np.mean(w), np.mean(taus)]
        assert values == pytest.approx(expected, abs=1e-9)


def test_intervals_are_reproducible_from_the_seed_and_ignore_input_order():
    rankings = random_rankings(4, n_items=80)
    first = rkb.ranking_intervals(rk.RankTable.of(rankings), n_resamples=300, seed=7)
    point = rk.ranking_reliability(rk.RankTable.of(rankings))
    for name in rkb.STATISTICS:
        interval = first[name]
        assert isinstance(interval, Interval) and interval.low < interval.high
        assert interval.low <= getattr(point, name) <= interval.high
    assert rkb.ranking_intervals(rk.RankTable.of(rankings), n_resamples=300, seed=7) == first
    shuffled = rankings[:]
    random.Random(0).shuffle(shuffled)
    again = rkb.ranking_intervals(rk.RankTable.of(shuffled), n_resamples=300, seed=7)
    for name in rkb.STATISTICS:
        assert again[name] == pytest.approx(first[name], abs=1e-12)
    assert rkb.ranking_intervals(rk.RankTable.of(rankings), n_resamples=300, seed=8) != first


def test_intervals_of_undefined_statistics_say_why():
    one_each = [rk.Ranking(i, "a", [1, 2, 3]) for i in range(5)]
    intervals = rkb.ranking_intervals(rk.RankTable.of(one_each), n_resamples=10)
    assert all(isinstance(v, Undefined) for v in intervals.values())
    # One informative item: most resamples are that item again, W is defined
    # but alpha has resamples without variation only if the item has none.
    tied = [rk.Ranking(0, "a", [1, 1, 1]), rk.Ranking(0, "b", [1, 1, 1])]
    intervals = rkb.ranking_intervals(rk.RankTable.of(tied), n_resamples=10)
    assert "chance disagreement is zero" in intervals["pairwise_alpha"].reason
    assert "complete, not all-tied" in intervals["mean_w"].reason
    with pytest.raises(ValueError, match="confidence"):
        rkb.ranking_intervals(rk.RankTable.of(tied), confidence=1.0)


# --- position bias ----------------------------------------------------------------------------


def test_position_bias_is_scipys_chisquare_with_bh_from_statsmodels():
    rng = random.Random(3)
    rankings = []
    for item in range(400):
        n = rng.choice((3, 4))
        for who in range(5):
            shown = list(range(n))
            rng.shuffle(shown)
            ranks = list(range(1, n + 1))
            rng.shuffle(ranks)
            if who == 0 and rng.random() < 0.5:  # annotator 0 favours the left-most
                ranks = [1 if s == shown[0] else 2 for s in range(n)]
                ranks[(shown[0] + 1) % n] = 3
            if who == 4 and rng.random() < 0.3:
                ranks = [1] * n  # a tied first place: left out of the test
            rankings.append(rk.Ranking(item, who, ranks, shown))
    rankings.append(rk.Ranking(999, 5, [1, 2, 3]))  # no recorded order: no test
    result = rkd.ranking_position_bias(rk.RankTable.of(rankings))
    expected_p = []
    for who in range(5):
        observed, expected = [0] * 4, [0.0] * 4
        for r in rankings:
            if r.annotator != who or r.ranks.count(1) != 1:
                continue
            observed[list(r.shown).index(r.ranks.index(1))] += 1
            for p in range(len(r.ranks)):
                expected[p] += 1 / len(r.ranks)
        reference = scipy_stats.chisquare(observed, expected)
        assert result[who].observed == tuple(observed)
        assert result[who].expected == pytest.approx(expected, abs=1e-9)
        assert result[who].chi2 == pytest.approx(reference.statistic, abs=1e-9)
        assert result[who].p_value == pytest.approx(reference.pvalue, abs=1e-9)
        expected_p.append(reference.pvalue)
    reject, adjusted, _, _ = multipletests(expected_p, alpha=0.05, method="fdr_bh")
    assert [b.p_adjusted for b in result[:5]] == pytest.approx(adjusted.tolist(), abs=1e-9)
    assert [b.flagged for b in result[:5]] == reject.tolist()
    assert result[0].flagged and result[0].n == 400
    assert "no unique top pick" in result[5].p_value.reason and not result[5].flagged


def test_position_bias_of_picks_and_too_few_picks():
    picks = [rk.Pick(i, "a", 0, 4, (0, 1, 2, 3)) for i in range(30)]
    picks += [rk.Pick(i, "b", i % 4, 4, (0, 1, 2, 3)) for i in range(8)]
    picks += [rk.Pick(100, "b", None, 4, (3, 2, 1, 0))]
    result = rkd.pick_position_bias(rk.PickTable.of(picks))
    reference = scipy_stats.chisquare([30, 0, 0, 0], [7.5] * 4)
    assert result[0].chi2 == pytest.approx(reference.statistic, abs=1e-9)
    assert result[0].p_adjusted == pytest.approx(reference.pvalue, abs=1e-9)  # one test
    assert result[0].flagged
    assert result[1].n == 8 and "expects 2.0 < 5 picks" in result[1].chi2.reason


# --- aggregates ----------------------------------------------------------------------------------


def brute_force_kemeny(rankings):
    n = len(rankings[0])
    best = -1
    for order in permutations(range(n)):
        score = sum(
            1
            for earlier, later in combinations(order, 2)
            for r in rankings
            if r[earlier] is not None and r[later] is not None and r[earlier] < r[later]
        )
        best = max(best, score)
    return best


rank_lists = st.integers(2, 6).flatmap(
    lambda n: st.lists(
        st.lists(st.one_of(st.none(), st.integers(1, n)), min_size=n, max_size=n).filter(
            lambda r: any(v is not None for v in r)
        ),
        min_size=1,
        max_size=5,
    )
)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(rank_lists)
def test_kemeny_is_optimal_and_at_least_as_good_as_borda(rankings):
    ranks = np.array([[np.nan if v is None else v for v in r] for r in rankings], dtype=float)
    result = rka.kemeny(ranks)
    assert result.agreements == brute_force_kemeny(rankings)
    assert sorted(result.ranks) == list(range(1, len(rankings[0]) + 1))
    borda_ranks = np.array(rka.borda(ranks).ranks, dtype=float)
    order = np.argsort(borda_ranks, kind="stable")
    borda_agreements = sum(
        1
        for e, later in combinations(order, 2)
        for r in rankings
        if r[e] is not None and r[later] is not None and r[e] < r[later]
    )
    assert result.agreements >= borda_agreements


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.permutations(range(1, 7)).flatmap(lambda p: st.tuples(st.just(p), st.integers(1, 5))))
def test_borda_and_kemeny_return_a_unanimous_strict_ranking(case):
    ranking, m = case
    ranks = np.array([ranking] * m, dtype=float)
    assert rka.kemeny(ranks).ranks == tuple(ranking)
    assert rka.borda(ranks).ranks == tuple(ranking)
    assert rka.kemeny(ranks).n_optimal == 1


def test_borda_scores_are_n_minus_mid_rank_for_complete_rankings():
    ranks = np.array([[1, 2, 2, 4], [2, 1, 3, 4], [1, 1, 1, 2]], dtype=float)
    expected = sum(4 - np.array(textbook_mid_ranks(list(r))) for r in ranks)
    assert rka.borda(ranks).scores == pytest.approx(expected.tolist())
    assert rka.borda(ranks).ranks == (1, 2, 3, 4)
    # A unanimous tie: Borda keeps it, Kemeny breaks it and says so.
    tied = np.array([[1, 1, 3]] * 3, dtype=float)
    assert rka.borda(tied).ranks == (1, 1, 3)
    assert rka.kemeny(tied).ranks == (1, 2, 3) and rka.kemeny(tied).n_optimal == 2


def test_kemeny_is_bounded_to_eight_slots():
    assert rka.kemeny(np.array([list(range(1, 9))], dtype=float)).ranks == tuple(range(1, 9))
    with pytest.raises(ValueError, match="limited to 8 slots"):
        rka.kemeny(np.array([list(range(1, 10))], dtype=float))


# --- properties and edge cases ----------------------------------------------------------------


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    st.integers(3, 8).flatmap(
        lambda n: st.lists(st.permutations(range(1, n + 1)), min_size=2, max_size=6)
    ),
    st.integers(2, 5),
)
def test_identical_rankings_agree_perfectly(per_item, m):
    rankings = [
        rk.Ranking(item, who, list(order))
        for item, order in enumerate(per_item)
        for who in range(m)
    ]
    summary = rk.ranking_reliability(rk.RankTable.of(rankings))
    assert summary.ordinal_alpha == pytest.approx(1.0)
    assert isinstance(summary.pairwise_alpha, Undefined) or summary.pairwise_alpha == 1.0
    assert summary.mean_w == pytest.approx(1.0) and summary.mean_tau_b == pytest.approx(1.0)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.integers(0, 10_000))
def test_rank_conventions_do_not_change_any_statistic(seed):
    rankings = random_rankings(seed, n_items=8, missing=0)

    def dense(ranks):
        values = sorted(set(ranks))
        return [values.index(r) + 1 for r in ranks]

    def competition(ranks):
        return [1 + sum(v < r for v in ranks) for r in ranks]

    baseline = rk.ranking_reliability(rk.RankTable.of(rankings))
    for convert in (dense, competition, textbook_mid_ranks):
        other = [rk.Ranking(r.item, r.annotator, convert(r.ranks)) for r in rankings]
        assert rk.ranking_reliability(rk.RankTable.of(other)) == baseline


def test_one_annotator_gives_no_agreement_and_says_why():
    table = rk.RankTable.of([rk.Ranking(i, "solo", [1, 2, 3, 4]) for i in range(3)])
    summary = rk.ranking_reliability(table)
    assert "two or more" in summary.pairwise_alpha.reason
    assert "two or more annotators" in summary.ordinal_alpha.reason
    assert isinstance(summary.mean_w, Undefined) and isinstance(summary.mean_tau_b, Undefined)


def test_all_ties_give_undefined_w_and_tau():
    table = rk.RankTable.of([rk.Ranking(0, w, [2, 2, 2, 2]) for w in "abc"])
    per_item = rk.item_stats(table)
    assert math.isnan(per_item.w[0]) and math.isnan(per_item.tau_b[0])
    assert per_item.top[0] == -1 and per_item.top_share[0] == 0
    summary = rk.ranking_reliability(table)
    assert "chance disagreement is zero" in summary.pairwise_alpha.reason


def test_missing_ranks_are_missing_data():
    rankings = [
        rk.Ranking(0, "a", [1, 2, 3, None]),
        rk.Ranking(0, "b", [1, 2, 3, 4]),
        rk.Ranking(0, "c", [1, 2, 3, 4]),
    ]
    table = rk.RankTable.of(rankings)
    per_item = rk.item_stats(table)
    assert per_item.w[0] == pytest.approx(1.0)  # from the two complete rankings
    assert per_item.tau_b[0] == pytest.approx(1.0)  # over the common slots
    assert rk.pair_counts(table).sum() == 3 + 6 + 6


@pytest.mark.parametrize(
    "rankings,message",
    [
        ([rk.Ranking(0, "a", [1, 2]), rk.Ranking(0, "b", [1, 2, 3])], "number of slots"),
        ([rk.Ranking(0, "a", [1, 2]), rk.Ranking(0, "a", [2, 1])], "one judgement per"),
        ([rk.Ranking(0, "a", [1])], "2 to 8 response slots"),
        ([rk.Ranking(0, "a", list(range(1, 10)))], "2 to 8 response slots"),
        ([rk.Ranking(0, "a", [0, 1])], "positive number"),
        ([rk.Ranking(0, "a", [float("inf"), 1])], "positive number"),
        ([rk.Ranking(0, "a", [None, None])], "at least one slot"),
        ([rk.Ranking(0, "a", [1, 2, 3], (0, 0, 1))], "permutation"),
        ([rk.Ranking(0, "a", [1, 2, 3], (0, 1, 3))], "permutation"),
    ],
)
def test_invalid_rankings_are_refused_clearly(rankings, message):
    with pytest.raises(ValueError, match=message):
        rk.RankTable.of(rankings)


def test_invalid_picks_are_refused_clearly():
    with pytest.raises(ValueError, match="one of the item's slots"):
        rk.PickTable.of([rk.Pick(0, "a", 4, 4)])


def test_no_judgements_at_all_give_reasons_not_numbers():
    table = rk.RankTable.of([])
    summary = rk.ranking_reliability(table)
    assert all(isinstance(getattr(summary, name), Undefined) for name in rkb.STATISTICS)
    assert all(isinstance(v, Undefined) for v in rkb.ranking_intervals(table).values())
    assert rkd.ranking_position_bias(table) == []
    picks = rk.PickTable.of([])
    assert isinstance(rk.pick_alpha(picks), Undefined)
    assert isinstance(rk.pick_alpha_interval(picks), Undefined)
