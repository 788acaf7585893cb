"""Issue 32: the schema and the vote rules admit best-of-N picks and
rankings with ties over N response slots, stored by the same writer as a
pair's vote, with no other migration of votes. (No page or endpoint asks
them yet: these are the rules and the storage they will use.)"""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from annotate.loop import orm, rules
from annotate.loop.rules import JudgementInvalid, Vote
from annotate.models import Judgement, Task
from tests.factories import make_assignment, make_item

RANKING = Vote(choice="", task="ranking", ranks=(2, 1, 2, 4))


@pytest.mark.parametrize("ranks", [(1, 1), (1, 2, 3), (2, 1, 2, 4), (1, 1, 1, 4), (3, 1, 1)])
def test_rankings_with_ties_are_competition_rankings(ranks):
    assert rules.is_competition_ranking(ranks)
    rules.validate_slot_vote(Vote(choice="", task="ranking", ranks=ranks), n_slots=len(ranks))


@pytest.mark.parametrize("ranks", [(1, 3), (2, 2), (1, 2, 2, 3), (0, 1), (1, 1, 2)])
def test_ranks_that_skip_or_repeat_wrongly_are_refused(ranks):
    with pytest.raises(JudgementInvalid) as refused:
        rules.validate_slot_vote(Vote(choice="", task="ranking", ranks=ranks), n_slots=len(ranks))
    assert set(refused.value.errors) == {"ranks"}


def test_a_ranking_ranks_every_slot_and_has_no_choice():
    with pytest.raises(JudgementInvalid) as refused:
        rules.validate_slot_vote(Vote(choice="1", task="ranking", ranks=(1, 2)), n_slots=3)
    assert set(refused.value.errors) == {"choice", "ranks"}


@pytest.mark.parametrize("choice", ["1", "4", "none"])
def test_best_of_n_picks_one_slot_or_none(choice):
    rules.validate_slot_vote(Vote(choice=choice, task="best_of_n"), n_slots=4)


@pytest.mark.parametrize("choice", ["5", "0", "tie", ""])
def test_best_of_n_refuses_a_slot_the_item_does_not_have(choice):
    with pytest.raises(JudgementInvalid) as refused:
        rules.validate_slot_vote(Vote(choice=choice, task="best_of_n"), n_slots=4)
    assert set(refused.value.errors) == {"choice"}


def test_a_strength_or_pair_labels_are_a_pairs_only():
    with pytest.raises(JudgementInvalid) as refused:
        rules.validate_slot_vote(
            Vote(choice="2", task="best_of_n", strength=1, correct_1="yes"), n_slots=3
        )
    assert set(refused.value.errors) == {"strength", "correct_1"}


@given(
    order=st.permutations("1234").map("".join),
    displayed=st.sampled_from([(1, 2, 2, 4), (1, 1, 1, 1), (4, 3, 2, 1), (2, 1, 3, 3)]),
    position=st.sampled_from([None, 0, 1, 2, 3]),
)
def test_displayed_ranks_and_picks_map_to_the_slots_shown_there(order, displayed, position):
    ranked = rules.canonical_slot_vote(
        rules.DisplayedVote(task="ranking", ranks=displayed), order=order
    )
    for shown_at, slot in enumerate(order):
        assert ranked.ranks[int(slot) - 1] == displayed[shown_at]
    pick = "none" if position is None else str(position + 1)
    picked = rules.canonical_slot_vote(
        rules.DisplayedVote(task="best_of_n", pick=pick), order=order
    )
    assert picked.choice == ("none" if position is None else order[position])


@pytest.mark.django_db
def test_a_ranking_is_stored_as_a_rank_per_slot_by_the_votes_writer():
    assignment = make_assignment(make_item(), display_order="3142")
    judgement = orm.create_judgement(
        {"assignment": assignment, **rules.vote_fields(RANKING)}, RANKING
    )
    stored = Judgement.objects.get(pk=judgement.pk)
    assert (stored.task, stored.choice, stored.strength) == (Task.RANKING, "", None)
    assert list(stored.slots.order_by("slot").values_list("slot", "rank")) == [
        (1, 2),
        (2, 1),
        (3, 2),
        (4, 4),
    ]
    # A pair's reader sees no labels on it.
    read = Judgement.objects.with_pair_answers().get(pk=judgement.pk)
    assert (read.correct_1, read.correct_2, read.grade_1, read.grade_2) == ("", "", "", "")


@pytest.mark.django_db
@pytest.mark.parametrize("choice", ["3", "none"])
def test_a_best_of_n_pick_is_stored_as_its_choice(choice):
    vote = Vote(choice=choice, task="best_of_n")
    judgement = orm.create_judgement(
        {
            "assignment": make_assignment(make_item(), display_order="231"),
            **rules.vote_fields(vote),
        },
        vote,
    )
    stored = Judgement.objects.get(pk=judgement.pk)
    assert (stored.task, stored.choice) == (Task.BEST_OF_N, choice)
    assert not stored.slots.exists()
