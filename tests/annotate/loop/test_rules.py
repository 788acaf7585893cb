"""annotate.loop.rules: the vote's rules and the displayed<->canonical mapping,
pure Python (no database)."""

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from annotate.loop import rules
from annotate.loop.rules import JudgementInvalid, Vote
from annotate.models import Choice, Correctness

ROOT = Path(__file__).resolve().parents[3]


def test_rules_import_no_django():
    code = (
        "import sys, annotate.loop.rules; "
        "print(any(m.split('.')[0] == 'django' for m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


def test_the_rules_values_are_the_models_choices():
    assert set(rules.CHOICES) == set(Choice.values)
    assert set(rules.LABELS) == set(Correctness.values) - {""}


def test_unswapped_left_is_response_1_and_swapped_left_is_response_2():
    assert rules.response_on("left", swapped=False) == "1"
    assert rules.response_on("right", swapped=False) == "2"
    assert rules.response_on("left", swapped=True) == "2"
    assert rules.response_on("right", swapped=True) == "1"
    with pytest.raises(ValueError):
        rules.response_on("middle", swapped=False)
    assert rules.displayed_pair("one", "two", swapped=True) == ("two", "one")


@given(swapped=st.booleans(), side=st.sampled_from(rules.SIDES))
def test_side_and_response_map_back_and_forth(swapped, side):
    response = rules.response_on(side, swapped=swapped)
    assert rules.side_of(response, swapped=swapped) == side
    assert (
        rules.displayed_choice(rules.canonical_choice(side, swapped=swapped), swapped=swapped)
        == side
    )
    assert rules.displayed_field("correct_" + response, swapped=swapped) == "correct_" + side


ANSWERS = st.fixed_dictionaries(
    {
        "choice": st.sampled_from(["left", "right", "tie"]),
        "correct_left": st.sampled_from(["", *rules.LABELS]),
        "correct_right": st.sampled_from(["", *rules.LABELS]),
    }
)


@given(swapped=st.booleans(), answer=ANSWERS)
def test_a_displayed_answer_is_stored_canonically_and_shown_back_as_given(swapped, answer):
    vote = rules.canonical_vote(rules.DisplayedVote(**answer), order=rules.PAIR_ORDERS[swapped])
    if answer["choice"] == "tie":
        assert vote.choice == "tie"
    else:
        assert vote.choice == rules.response_on(answer["choice"], swapped=swapped)
    for side in rules.SIDES:
        response = rules.response_on(side, swapped=swapped)
        assert getattr(vote, "correct_" + response) == answer["correct_" + side]
    shown = rules.displayed_answer(vote, swapped=swapped)
    assert {name: shown[name] for name in answer} == answer
    assert shown["strength"] is None and shown["grade_left"] == shown["grade_right"] == ""


def test_other_field_names_are_not_mapped():
    assert rules.displayed_field("rationale", swapped=True) == "rationale"
    assert rules.displayed_choice("tie", swapped=True) == "tie"


def test_tallies_count_the_choice_and_each_label_and_move_on_revision():
    first = Vote(choice="1", correct_1="yes", correct_2="no")
    assert rules.tally_columns(first) == ["votes_1", "correct_1_yes", "correct_2_no"]
    assert rules.tally_delta(new=first) == {"votes_1": 1, "correct_1_yes": 1, "correct_2_no": 1}
    revised = Vote(choice="1", correct_1="yes", correct_2="unsure")
    assert rules.tally_delta(new=revised, old=first) == {"correct_2_no": -1, "correct_2_unsure": 1}
    assert rules.tally_delta(new=first, old=first) == {}


def project(allow_tie=True, require_rationale=False):
    return SimpleNamespace(
        allow_tie=allow_tie, require_rationale=require_rationale, preference_scale="ab"
    )


PROJECT = project()
CORRECTNESS = SimpleNamespace(is_correctness=True, asks_grade=False)
PREFERENCE = SimpleNamespace(is_correctness=False, asks_grade=False)


def refusals(vote, *, project=None, domain=PREFERENCE) -> set[str]:
    try:
        rules.validate_vote(vote, project=project or PROJECT, domain=domain)
    except JudgementInvalid as exc:
        return set(exc.errors)
    return set()


def test_validate_vote_names_every_refused_field():
    assert refusals(Vote(choice="1")) == set()
    assert refusals(Vote(choice="left")) == {"choice"}
    assert refusals(Vote(choice="tie")) == {"rationale"}
    assert refusals(Vote(choice="tie", rationale="x"), project=project(allow_tie=False)) == {
        "choice"
    }
    assert refusals(Vote(choice="1"), project=project(require_rationale=True)) == {"rationale"}
    assert refusals(Vote(choice="1"), domain=CORRECTNESS) == {"correct_1", "correct_2"}
    assert refusals(Vote(choice="1", correct_2="yes")) == {"correct_1"}
    assert refusals(Vote(choice="1", confidence=4)) == {"confidence"}
    assert refusals(Vote(choice="1", flagged_problem=True)) == {"problem_reason"}
    assert refusals(Vote(choice="1", active_seconds=float("nan"))) == {"active_seconds"}


def test_a_vote_can_be_revised_only_below_the_base_votes():
    def item(n_votes, votes_needed=3, votes_per_item=3):
        return SimpleNamespace(
            n_votes=n_votes,
            votes_needed=votes_needed,
            project=SimpleNamespace(votes_per_item=votes_per_item),
        )

    assert rules.can_revise(item(2))
    assert not rules.can_revise(item(3))
    # Escalated for more votes: still not revisable once the base votes are in.
    assert not rules.can_revise(item(3, votes_needed=5))
    # A curator closed it early (votes_needed lowered to the votes it has).
    assert not rules.can_revise(item(1, votes_needed=1))
