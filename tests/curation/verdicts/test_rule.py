"""Every branch of the contested-item rule (pure; no database)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from curation.verdicts.rule import AGREED, CONTESTED, NEEDS_VOTES, RuleVote, Thresholds, decide

T = Thresholds(votes_per_item=3, agree_share=0.8, escalation_votes=2)


def votes(*choices, **kwargs):
    return [RuleVote(c, **kwargs) for c in choices]


def run(vs, needed=3, escalations=0, gold="", thresholds=T):
    return decide(
        vs, votes_needed=needed, escalations=escalations, thresholds=thresholds, gold=gold
    )


def test_fewer_votes_than_needed_needs_votes():
    assert run(votes("1", "1")).status == NEEDS_VOTES


def test_unanimous_is_agreed_unanimous():
    out = run(votes("2", "2", "2"))
    assert (out.status, out.final_choice, out.provenance) == (AGREED, "2", "unanimous")


def test_only_dissent_is_a_tie_is_agreed_by_majority():
    out = run(votes("1", "1", "tie"))
    assert (out.status, out.final_choice, out.provenance) == (AGREED, "1", "majority")


def test_winner_share_at_threshold_is_agreed():
    out = run(votes("1", "1", "1", "1", "2"), needed=5, escalations=1)
    assert (out.status, out.final_choice, out.provenance) == (AGREED, "1", "majority")


def test_split_at_base_count_escalates_once():
    out = run(votes("1", "1", "2"))
    assert out.status == NEEDS_VOTES and out.escalate_by == 2
    assert "escalated" in out.reason


def test_split_after_escalation_is_contested():
    out = run(votes("1", "1", "2", "2", "1"), needed=5, escalations=1)
    assert out.status == CONTESTED and "still split" in out.reason


def test_escalation_resolved_by_extra_votes_is_agreed():
    out = run(votes("1", "1", "2", "1", "1"), needed=5, escalations=1)
    assert out.status == AGREED and out.final_choice == "1"


def test_tie_majority_goes_straight_to_contested():
    out = run(votes("1", "tie", "tie"))
    assert out.status == CONTESTED and "tie majority" in out.reason and not out.escalate_by


def test_no_strict_majority_goes_straight_to_contested():
    out = run(votes("1", "2", "tie"))
    assert out.status == CONTESTED and "no strict majority" in out.reason
    assert run(votes("1", "2"), needed=2).status == CONTESTED


def test_problem_flag_goes_to_contested_even_when_unanimous():
    vs = [*votes("1", "1"), RuleVote("1", flagged_problem=True)]
    out = run(vs)
    assert out.status == CONTESTED and "problem" in out.reason


def test_contradiction_goes_to_contested():
    vs = [
        *votes("1", "1", correct_1="yes", correct_2="no"),
        RuleVote("1", correct_1="no", correct_2="yes"),
    ]
    out = run(vs)
    assert out.status == CONTESTED and "incorrect" in out.reason


def test_preferring_a_response_both_called_incorrect_is_not_a_contradiction():
    vs = votes("1", "1", "1", correct_1="no", correct_2="no")
    assert run(vs).status == AGREED


def test_majority_disagreeing_with_gold_is_contested():
    out = run(votes("1", "1", "1"), gold="2")
    assert out.status == CONTESTED and "gold" in out.reason
    assert run(votes("2", "2", "2"), gold="2").status == AGREED


def test_no_escalation_when_project_disables_it():
    out = run(votes("1", "1", "2"), thresholds=Thresholds(3, 0.8, 0))
    assert out.status == CONTESTED


def test_lower_agree_share_accepts_a_two_to_one_split():
    out = run(votes("1", "1", "2"), thresholds=Thresholds(3, 0.6, 2))
    assert (out.status, out.provenance) == (AGREED, "majority")


@given(
    st.lists(st.sampled_from(["1", "2", "tie"]), max_size=8),
    st.integers(min_value=1, max_value=8),
    st.integers(min_value=0, max_value=1),
)
def test_never_leaves_needs_votes_before_enough_votes(choices, needed, escalations):
    out = run(votes(*choices), needed=needed, escalations=escalations)
    if len(choices) < needed:
        assert out.status == NEEDS_VOTES and out.escalate_by == 0
    else:
        assert out.status in (AGREED, CONTESTED, NEEDS_VOTES)
        if out.status == NEEDS_VOTES:
            assert out.escalate_by > 0 and escalations == 0
        if out.status == AGREED:
            assert out.final_choice in ("1", "2") and out.provenance


@given(st.lists(st.sampled_from(["1", "2", "tie"]), min_size=3, max_size=7))
def test_outcome_does_not_depend_on_vote_order(choices):
    a = run(votes(*choices), needed=3)
    b = run(votes(*reversed(choices)), needed=3)
    assert a == b


@pytest.mark.parametrize("share", [0.8, 0.9, 1.0])
def test_relabelling_responses_mirrors_the_outcome(share):
    t = Thresholds(3, share, 2)
    a = run(votes("1", "1", "tie"), thresholds=t)
    b = run(votes("2", "2", "tie"), thresholds=t)
    assert a.status == b.status and {a.final_choice, b.final_choice} == {"1", "2"}
