"""Model probability per item: pure rules (no database)."""

import math

import pytest
from scipy.special import expit

from curation.benchmarks.mrb.scoring_input import Prediction
from curation.quality.probability import (
    ensemble,
    entry_probability,
    judge_share,
    line_pick,
    sigmoid,
    slot_to_canonical,
)


@pytest.mark.parametrize("x", [-800.0, -30.0, -1.5, 0.0, 0.25, 7.0, 800.0])
def test_sigmoid_equals_scipy_expit(x):
    assert sigmoid(x) == pytest.approx(float(expit(x)), abs=1e-12)


def test_slots_map_back_to_canonical_sides():
    # Chosen canonical 2 written as Output1: Output1 holds response 2.
    assert slot_to_canonical("Output1", better="Output1", chosen="2") == "2"
    assert slot_to_canonical("Output2", better="Output1", chosen="2") == "1"
    assert slot_to_canonical("Output2", better="Output2", chosen="1") == "1"


def test_reward_model_probability_is_sigmoid_of_the_canonical_score_difference():
    # Original order: score_1 is Output1's; Output1 holds canonical 2 here.
    line = Prediction(1, "x", "scores", score_1=2.0, score_2=0.5)
    p = entry_probability([line], better="Output1", chosen="2")
    assert p == pytest.approx(1 / (1 + math.exp(-(0.5 - 2.0))), abs=1e-12)
    # Swapped order: score_1 is Output2's (canonical 1 here): mean of both orders.
    swapped = Prediction(2, "x", "scores", order="swapped", score_1=1.0, score_2=0.0)
    both = entry_probability([line, swapped], better="Output1", chosen="2")
    assert both == pytest.approx((float(expit(-1.5)) + float(expit(1.0))) / 2, abs=1e-12)


def test_chosen_rejected_scores_give_the_chosen_sides_probability():
    line = Prediction(1, "x", "pairs", chosen_score=3.0, rejected_score=1.0)
    assert entry_probability([line], better="Output2", chosen="1") == pytest.approx(
        float(expit(2.0)), abs=1e-12
    )
    assert entry_probability([line], better="Output2", chosen="2") == pytest.approx(
        1 - float(expit(2.0)), abs=1e-12
    )


def test_judge_share_is_smoothed_by_half_a_vote_per_side():
    assert judge_share(["1"]) == 0.75
    assert judge_share(["2"]) == 0.25
    assert judge_share(["1", "1"]) == pytest.approx(5 / 6)
    assert judge_share(["1", "2"]) == 0.5
    assert judge_share(["", ""]) is None  # no verdict is no evidence, not 0.5


def test_judge_verdicts_are_read_in_the_order_they_were_shown():
    # Better = Output2 holds canonical 1, so Output1 holds canonical 2.
    a_original = Prediction(1, "x", "judge", verdict="A")  # A = Output1 = canonical 2
    a_swapped = Prediction(2, "x", "judge", order="swapped", verdict="A")  # A = Output2 = 1
    assert line_pick(a_original, better="Output2", chosen="1") == "2"
    assert line_pick(a_swapped, better="Output2", chosen="1") == "1"
    assert entry_probability([a_original, a_swapped], better="Output2", chosen="1") == 0.5
    none = Prediction(3, "x", "judge", verdict=None)
    assert line_pick(none, better="Output2", chosen="1") == ""
    assert entry_probability([none], better="Output2", chosen="1") is None


def test_ensemble_is_the_mean_over_entries_with_a_probability():
    assert ensemble([0.2, None, 0.8, 0.5]) == pytest.approx(0.5)
    assert ensemble([None, None]) is None
