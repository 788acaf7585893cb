"""Issue 33: best-of-N picks and rankings answered by displayed position map
to canonical slots in the pure rules (annotate.loop.rules), whatever the
display order: the displayed order never reaches what is stored."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from annotate.loop import rules
from annotate.loop.rules import DisplayedVote, JudgementInvalid

orders = st.integers(2, rules.MAX_SLOTS).flatmap(
    lambda n: st.permutations([str(s) for s in range(1, n + 1)]).map("".join)
)


@st.composite
def rankings(draw, n: int):
    """A canonical competition ranking of n slots with any ties."""
    scores = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    return rules.competition_ranks(tuple(-s for s in scores))


@given(data=st.data(), order=orders)
def test_a_ranking_submitted_in_any_display_order_maps_to_the_same_canonical_ranks(data, order):
    n = len(order)
    truth = data.draw(rankings(n))  # the ranking of the slots the annotator means
    # As displayed: position k shows slot order[k-1], and gets that slot's rank.
    shown = tuple(truth[int(slot) - 1] for slot in order)
    vote = rules.canonical_vote(DisplayedVote(task="ranking", ranks=shown), order=order)
    assert vote.ranks == truth
    assert vote.choice == "" and vote.task == "ranking"
    rules.validate_slot_vote(vote, n_slots=n)
    # And the same ranking through another display order gives the same ranks.
    other = data.draw(st.permutations(list(order)).map("".join))
    again = tuple(truth[int(slot) - 1] for slot in other)
    assert rules.canonical_vote(DisplayedVote(task="ranking", ranks=again), order=other) == vote


def ranks_of_places(places: list[list[int]], n: int) -> tuple[int, ...]:
    """The ranks per position 1..n of places in order, as ranking.js writes
    them into the selects: a place's rank is one more than the number of
    responses placed before it."""
    ranks = [0] * n
    before = 0
    for place in places:
        for position in place:
            ranks[position - 1] = before + 1
        before += len(place)
    return tuple(ranks)


@given(data=st.data(), order=orders)
def test_a_ranking_built_by_places_is_a_competition_ranking(data, order):
    """What the keys build (places in order, ties via `=`) is always valid."""
    n = len(order)
    positions = data.draw(st.permutations(list(range(1, n + 1))))
    places: list[list[int]] = []
    for position in positions:
        if places and data.draw(st.booleans()):  # `=`: tie with the previous place
            places[-1].append(position)
        else:
            places.append([position])
    shown = ranks_of_places(places, n)
    assert rules.is_competition_ranking(shown)
    vote = rules.canonical_vote(DisplayedVote(task="ranking", ranks=shown), order=order)
    rules.validate_slot_vote(vote, n_slots=n)
    # The first place's responses are rank 1, in canonical slot terms.
    assert {slot for slot, rank in enumerate(vote.ranks, 1) if rank == 1} == {
        int(order[p - 1]) for p in places[0]
    }


@given(order=orders, data=st.data())
def test_a_pick_maps_to_the_slot_displayed_there(order, data):
    position = data.draw(st.integers(1, len(order)))
    vote = rules.canonical_vote(DisplayedVote(task="best_of_n", pick=str(position)), order=order)
    assert vote.choice == order[position - 1]
    rules.validate_slot_vote(vote, n_slots=len(order))
    none = rules.canonical_vote(DisplayedVote(task="best_of_n", pick="none"), order=order)
    assert none.choice == "none"


@given(order=orders, data=st.data())
def test_per_response_labels_follow_their_response(order, data):
    n = len(order)
    labels = tuple(data.draw(st.sampled_from(rules.LABELS)) for _ in range(n))
    grades = tuple(data.draw(st.sampled_from(rules.GRADES)) for _ in range(n))
    vote = rules.canonical_vote(
        DisplayedVote(task="best_of_n", pick="1", slot_correct=labels, slot_grades=grades),
        order=order,
    )
    for position, slot in enumerate(order, start=1):
        assert vote.slot_correct[int(slot) - 1] == labels[position - 1]
        assert vote.slot_grades[int(slot) - 1] == grades[position - 1]
    rows = rules.slot_answers(vote)
    assert [row[0] for row in rows] == list(range(1, n + 1))
    assert all(row[3] is None for row in rows)  # a pick ranks nothing


def test_a_ranking_with_its_labels_gives_one_row_per_slot():
    vote = rules.canonical_vote(
        DisplayedVote(task="ranking", ranks=(1, 3, 1), slot_correct=("yes", "no", "unsure")),
        order="312",
    )
    assert vote.ranks == (3, 1, 1)
    assert rules.slot_answers(vote) == [(1, "no", "", 3), (2, "unsure", "", 1), (3, "yes", "", 1)]


def test_dense_ranks_become_competition_ranks_with_the_same_order():
    assert rules.competition_ranks((1, 1, 2)) == (1, 1, 3)
    assert rules.competition_ranks((2, 1, 2, 3)) == (2, 1, 2, 4)
    rng = random.Random(7)
    for _ in range(200):
        given_ranks = tuple(rng.randint(1, 4) for _ in range(rng.randint(2, 8)))
        ranks = rules.competition_ranks(given_ranks)
        assert rules.is_competition_ranking(ranks)
        for a, b in zip(given_ranks, ranks, strict=True):
            for c, d in zip(given_ranks, ranks, strict=True):
                assert (a < c) == (b < d)


@pytest.mark.parametrize(
    ("vote", "errors"),
    [
        (DisplayedVote(task="ranking", ranks=(1, 2)), {"ranks"}),  # three responses
        (DisplayedVote(task="ranking", ranks=(1, 1, 2)), {"ranks"}),  # a tie skips no rank
        (DisplayedVote(task="ranking", ranks=(1, 2, 0)), {"ranks"}),  # one unplaced
        (DisplayedVote(task="best_of_n", pick="4"), {"pick"}),
        (DisplayedVote(task="best_of_n", pick=""), {"pick"}),
        (DisplayedVote(task="best_of_n", pick="1", slot_correct=("yes",)), {"slot_correct"}),
    ],
)
def test_malformed_answers_are_refused_with_displayed_field_names(vote, errors):
    canonical = rules.canonical_vote(vote, order="231")
    with pytest.raises(JudgementInvalid) as refused:
        rules.validate_slot_vote(canonical, n_slots=3)
    assert set(rules.displayed_errors(refused.value.errors, order="231")) == errors


def test_a_missing_label_names_the_response_as_displayed():
    class Asks:
        is_correctness = True
        asks_grade = False

    vote = rules.canonical_vote(
        DisplayedVote(task="best_of_n", pick="1", slot_correct=("yes", "", "no")), order="231"
    )
    with pytest.raises(JudgementInvalid) as refused:
        rules.validate_slot_vote(vote, n_slots=3, domain=Asks())
    # Position 2 (B) shows slot 3, which has no label.
    shown = rules.displayed_errors(refused.value.errors, order="231")
    assert shown == {"slot_correct_2": "Say whether response B is correct."}


def test_a_pick_or_a_ranking_counts_one_vote_and_no_pair_tally():
    ranking = rules.canonical_vote(DisplayedVote(task="ranking", ranks=(1, 2)), order="21")
    pick = rules.canonical_vote(
        DisplayedVote(task="best_of_n", pick="1", slot_correct=("yes", "no")), order="21"
    )
    for vote in (ranking, pick):
        assert rules.tally_columns(vote) == ["votes_ranked"]
        assert rules.tally_delta(new=vote) == {"votes_ranked": 1}
    # A revision moves no count: the vote is still one N-slot vote.
    assert rules.tally_delta(new=pick, old=ranking) == {}
