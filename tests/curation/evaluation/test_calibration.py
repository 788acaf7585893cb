"""The calibration statistics (curation.evaluation.calibration, pure): each
equal to a reference computation (scikit-learn, numpy) to 1e-9."""

from __future__ import annotations

import random
import statistics
from collections import Counter

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, cohen_kappa_score

from curation.evaluation import calibration
from curation.evaluation.calibration import (
    cohen_kappa,
    expected_calibration_error,
    figures,
    majority,
    report,
)


def reference_ece(conf, correct, bins=10):
    """ECE with numpy masks per bin [k/bins, (k+1)/bins), the last closed."""
    conf = np.asarray(conf, dtype=float)
    correct = np.asarray(correct, dtype=float)
    total = 0.0
    for k in range(bins):
        lo, hi = k / bins, (k + 1) / bins
        mask = (conf >= lo) & ((conf < hi) if k < bins - 1 else (conf <= hi))
        if mask.any():
            total += mask.mean() * abs(correct[mask].mean() - conf[mask].mean())
    return total


@pytest.mark.parametrize(
    ("votes", "expected"),
    [
        (["1", "1", "2"], "1"),
        (["2", "2", "2"], "2"),
        (["1", "2", "tie"], None),  # split three ways
        (["tie", "tie", "1"], None),  # a tie is the majority
        (["1", "2"], None),  # shared top
        (["1"], None),  # too few votes
        (["1", "1"], "1"),
        (["1", "1", "2", "2", "tie"], None),
    ],
)
def test_the_human_majority_is_a_strict_one_for_a_side(votes, expected):
    assert majority(votes) == expected


@pytest.mark.parametrize("seed", range(6))
def test_kappa_equals_scikit_learn(seed):
    rng = random.Random(seed)
    n = rng.randint(5, 400)
    bias = rng.random()
    a = [rng.choice("12") for _ in range(n)]
    b = [x if rng.random() < bias else rng.choice("12") for x in a]
    assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b), abs=1e-9)


def test_kappa_is_undefined_without_pairs_or_with_one_label_on_both_sides():
    assert cohen_kappa([], []) is None
    assert cohen_kappa(["1", "1"], ["1", "1"]) is None


@pytest.mark.parametrize("seed", range(6))
def test_expected_calibration_error_equals_a_reference(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 500))
    conf = rng.uniform(0.0, 1.0, n)
    correct = rng.random(n) < conf ** float(rng.uniform(0.5, 2))
    got = expected_calibration_error(list(conf), list(correct))
    assert got == pytest.approx(reference_ece(conf, correct), abs=1e-9)
    assert expected_calibration_error([], []) is None
    # A confidence of exactly 1 is in the last bin.
    assert expected_calibration_error([1.0, 0.95], [True, False]) == pytest.approx(0.475)


def random_world(seed, n_items=300, annotators=(11, 12, 13, 14)):
    """Items with 1 to 4 human votes, truth per item, a judge answering both
    orders (some unanswered, some position-biased, most with a confidence)."""
    rng = random.Random(seed)
    humans, judge, domain_of = {}, {}, {}
    for item in range(n_items):
        truth = rng.choice("12")
        k = rng.randint(1, 4)
        voters = rng.sample(annotators, k)
        humans[item] = [
            (a, truth if rng.random() < 0.75 else rng.choice(["1", "2", "tie"])) for a in voters
        ]
        domain_of[item] = rng.choice(["vqa", "chart"])
        answers = {}
        for order in ("original", "swapped"):
            r = rng.random()
            if r < 0.1:
                continue  # not asked / lost
            if r < 0.15:
                answers[order] = (None, None)  # no verdict
                continue
            choice = truth if rng.random() < 0.7 else rng.choice("12")
            conf = rng.uniform(0.5, 1.0) if rng.random() < 0.8 else None
            answers[order] = (choice, conf)
        judge[item] = answers
    return humans, judge, domain_of


@pytest.mark.parametrize("seed", range(4))
def test_figures_equal_a_reference_computation(seed):
    humans, judge, _ = random_world(seed)
    f = figures(humans, judge)
    judge_labels, majority_labels, conf, correct = [], [], [], []
    both = agree = 0
    for item, votes in humans.items():
        given = [(c, p) for c, p in judge[item].values() if c is not None]
        if len(given) == 2:
            both += 1
            agree += given[0][0] == given[1][0]
        counts = Counter(c for _, c in votes).most_common()
        if (
            len(votes) < 2
            or counts[0][0] == "tie"
            or (len(counts) > 1 and counts[1][1] == counts[0][1])
        ):
            continue
        for c, p in given:
            judge_labels.append(c)
            majority_labels.append(counts[0][0])
            if p is not None:
                conf.append(p)
                correct.append(c == counts[0][0])
    assert f.n_votes == len(judge_labels)
    assert f.accuracy == pytest.approx(accuracy_score(majority_labels, judge_labels), abs=1e-9)
    assert f.kappa == pytest.approx(cohen_kappa_score(majority_labels, judge_labels), abs=1e-9)
    assert f.position_consistency == pytest.approx(agree / both, abs=1e-9)
    assert f.n_both_orders == both
    assert f.ece == pytest.approx(reference_ece(conf, correct), abs=1e-9)
    assert f.n_majority + f.n_tie_or_split + f.n_too_few_votes == f.n_items == len(humans)


def test_stand_in_compares_the_judge_with_the_median_annotators_leave_one_out_agreement():
    # Three annotators on 30 items whose truth is "1": A and B always right, C
    # wrong on every third item. A judge right everywhere stands in; one
    # wrong on half the items does not.
    humans = {}
    for item in range(30):
        humans[item] = [(1, "1"), (2, "1"), (3, "2" if item % 3 == 0 else "1")]
    good = {i: {"original": ("1", None), "swapped": ("1", None)} for i in humans}
    f = figures(humans, good)
    # Leave-one-out: leaving A out on a C-wrong item leaves a split (no
    # majority), so A and B have 20 cases each, all agreeing; C has 30 cases,
    # agreeing on 20.
    assert f.n_humans_measured == 3
    assert f.human_loo_median == pytest.approx(statistics.median([1.0, 1.0, 20 / 30]))
    assert f.n_cases == 20 + 20 + 30
    assert f.judge_standin_agreement == 1.0
    assert f.can_stand_in is True and f.verdict.startswith("Yes")
    half = {i: {"original": ("1" if i % 2 else "2", None)} for i in humans}
    g = figures(humans, half)
    assert g.can_stand_in is False and g.verdict.startswith("No")
    assert g.position_consistency is None  # one order only
    # Too few cases: no answer either way.
    few = figures({i: humans[i] for i in range(3)}, good)
    assert few.can_stand_in is None and few.verdict.startswith("Not enough data")


def test_a_position_biased_judge_is_named_so_in_the_verdict():
    humans = {i: [(1, "1"), (2, "1"), (3, "1")] for i in range(30)}
    biased = {i: {"original": ("1", None), "swapped": ("2", None)} for i in humans}
    f = figures(humans, biased)
    assert f.position_consistency == 0.0
    assert "changes with the order" in f.verdict


def test_report_has_all_domains_first_then_each_domain():
    humans, judge, domain_of = random_world(7)
    rows = report(humans, judge, domain_of)
    assert [d for d, _ in rows] == [None, "chart", "vqa"]
    assert rows[0][1].n_items == sum(f.n_items for _, f in rows[1:])
    assert calibration.MIN_HUMAN_VOTES == 2
