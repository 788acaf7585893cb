"""Every branch of the contested rule for best-of-N picks and rankings
(issue 33; pure, no database): the top-share and Kendall's W thresholds,
one escalation bounded by who is eligible, nothing waiting silently."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curation.verdicts.ranking_rule import (
    PickVote,
    RankingThresholds,
    RankingVote,
    decide_pick,
    decide_ranking,
)
from curation.verdicts.rule import AGREED, CONTESTED, NEEDS_VOTES, NO_ONE_LEFT

T = RankingThresholds(votes_per_item=3, agree_share=0.8, least_w=0.5, escalation_votes=2)


def picks(*slots, **kwargs):
    return [PickVote(s, **kwargs) for s in slots]


def pick(vs, needed=3, escalations=0, gold=None, eligible=None, n_slots=4, thresholds=T):
    return decide_pick(
        vs,
        n_slots=n_slots,
        votes_needed=needed,
        escalations=escalations,
        thresholds=thresholds,
        gold=gold,
        eligible=eligible,
    )


def ranks(*rankings):
    return [RankingVote(r) for r in rankings]


def rank(vs, needed=3, escalations=0, gold=None, eligible=None, thresholds=T):
    return decide_ranking(
        vs,
        votes_needed=needed,
        escalations=escalations,
        thresholds=thresholds,
        gold=gold,
        eligible=eligible,
    )


# --- picks ----------------------------------------------------------------------------------


def test_fewer_picks_than_needed_wait_for_votes():
    assert pick(picks(1, 1)).status == NEEDS_VOTES


def test_unanimous_pick_is_agreed():
    out = pick(picks(2, 2, 2))
    assert (out.status, out.final_slot, out.provenance) == (AGREED, 2, "unanimous")


def test_a_split_pick_escalates_once_then_is_contested():
    out = pick(picks(1, 1, 3))
    assert out.status == NEEDS_VOTES and out.escalate_by == 2 and "2/3" in out.reason
    agreed = pick(picks(1, 1, 3, 1, 1), needed=5, escalations=1)
    assert (agreed.status, agreed.final_slot, agreed.provenance) == (AGREED, 1, "majority")
    still = pick(picks(1, 1, 3, 3, 1), needed=5, escalations=1)
    assert (still.status, still.kind) == (CONTESTED, "split")
    assert "still short after escalation" in still.reason


def test_no_single_leader_is_no_majority_after_escalation():
    assert pick(picks(0, 1, 2)).escalate_by == 2
    out = pick(picks(0, 1, 2, 0, 1), needed=5, escalations=1)
    assert (out.status, out.kind) == (CONTESTED, "no_majority")


def test_nobody_left_to_ask_is_contested_at_once():
    out = pick(picks(1, 1, 3), eligible=0)
    assert (out.status, out.kind) == (CONTESTED, "split") and NO_ONE_LEFT in out.reason
    assert pick(picks(1, 1, 3), eligible=1).escalate_by == 1


def test_none_acceptable_majority_goes_to_the_curators():
    out = pick(picks(None, None, None))
    assert (out.status, out.kind) == (CONTESTED, "problem")
    assert "no response acceptable" in out.reason
    # "None" outnumbering the leading slot names no top.
    assert pick(picks(None, None, 1), eligible=0).kind == "tie_majority"


def test_flags_and_gold():
    assert pick(picks(1, 1, 1, flagged_problem=True)).kind == "problem"
    assert pick(picks(1, 1, 1), gold=2).kind == "gold"
    assert pick(picks(1, 1, 1), gold=1).status == AGREED
    with pytest.raises(ValueError, match="one of the 4 slots"):
        pick(picks(1, 1, 4))


def test_without_escalation_votes_a_split_is_contested():
    out = pick(
        picks(1, 1, 3),
        thresholds=RankingThresholds(agree_share=0.8, escalation_votes=0),
    )
    assert (out.status, out.kind) == (CONTESTED, "split")


# --- rankings -------------------------------------------------------------------------------


def test_identical_rankings_are_agreed_with_their_order():
    out = rank(ranks([2, 1, 4, 3], [2, 1, 4, 3], [2, 1, 4, 3]))
    assert (out.status, out.final_slot, out.provenance) == (AGREED, 1, "unanimous")
    assert out.final_ranks == (2, 1, 4, 3) and "W 1.00" in out.reason


def test_same_top_and_concordant_rest_is_agreed_by_majority_with_the_kemeny_order():
    out = rank(ranks([1, 2, 3, 4], [1, 3, 2, 4], [1, 2, 3, 4]))
    assert (out.status, out.final_slot, out.provenance) == (AGREED, 0, "majority")
    assert out.final_ranks == (1, 2, 3, 4)


def test_same_top_but_discordant_rest_escalates_on_w():
    vs = ranks([1, 2, 3, 4, 5, 6], [1, 6, 5, 4, 3, 2], [1, 4, 6, 2, 3, 5])
    out = rank(vs)
    assert out.status == NEEDS_VOTES and "Kendall's W 0.49 < 0.5" in out.reason
    assert rank(vs, escalations=1).kind == "split"
    lenient = RankingThresholds(agree_share=0.8, least_w=None)
    assert rank(vs, thresholds=lenient).status == AGREED


def test_w_undefined_for_partial_rankings_does_not_meet_the_threshold():
    vs = ranks([1, 2, None, None], [1, 2, 3, None], [1, 2, 4, 3])
    out = rank(vs, eligible=0)
    assert out.status == CONTESTED and "W undefined" in out.reason


def test_tied_first_places_outnumbering_the_leader():
    out = rank(ranks([1, 1, 2], [1, 1, 3], [1, 2, 3]), needed=3, escalations=1)
    assert (out.status, out.kind) == (CONTESTED, "tie_majority")


def test_split_top_escalates_then_contested():
    vs = ranks([1, 2, 3], [1, 2, 3], [2, 1, 3])
    assert rank(vs).escalate_by == 2
    out = rank([*vs, *ranks([2, 1, 3], [1, 2, 3])], needed=5, escalations=1)
    assert (out.status, out.kind) == (CONTESTED, "split")


def test_ranking_flags_gold_and_needs():
    assert rank(ranks([1, 2], [1, 2])).status == NEEDS_VOTES
    assert rank(ranks([1, 2], [1, 2], [1, 2]), gold=1).kind == "gold"
    vote = RankingVote([1, 2], flagged_problem=True)
    assert rank([vote, *ranks([1, 2], [1, 2])]).kind == "problem"
    with pytest.raises(ValueError, match="number of slots"):
        rank(ranks([1, 2], [1, 2], [1, 2, 3]))


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    st.integers(2, 6).flatmap(
        lambda n: st.lists(st.permutations(range(1, n + 1)), min_size=3, max_size=7)
    ),
    st.integers(0, 1),
    st.one_of(st.none(), st.integers(0, 3)),
)
def test_nothing_waits_silently(rankings, escalations, eligible):
    """With the votes it asked for, an item is agreed or contested, or it asks
    for a bounded number of extra votes once, with a reason."""
    out = rank(ranks(*rankings), needed=3, escalations=escalations, eligible=eligible)
    assert out.status in (AGREED, CONTESTED, NEEDS_VOTES)
    if out.status == NEEDS_VOTES:
        assert escalations == 0 and 0 < out.escalate_by <= 2 and out.reason
        assert eligible is None or out.escalate_by <= eligible
    if out.status == CONTESTED:
        assert out.kind and out.reason
    if out.status == AGREED:
        assert sorted(out.final_ranks) == list(range(1, len(rankings[0]) + 1))
        assert out.final_ranks[out.final_slot] == 1
