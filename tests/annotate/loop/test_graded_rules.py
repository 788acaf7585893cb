"""Issue 24, graded preference: the scales and the vote rules of a graded
vote, pure Python. A vote is stored oriented to response 1 (a signed
strength) whatever side the annotator saw it on, and its choice is the
strength's collapsed side."""

from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from annotate.loop import rules, scales
from annotate.loop.rules import JudgementInvalid
from annotate.models import Grade, PreferenceScale
from common.api import schema


def project(scale="graded6", allow_tie=True):
    return SimpleNamespace(allow_tie=allow_tie, require_rationale=False, preference_scale=scale)


PREFERENCE = SimpleNamespace(is_correctness=False, asks_grade=False)
GRADED_DOMAIN = SimpleNamespace(is_correctness=False, asks_grade=True)


def test_the_scales_are_the_models_choices():
    assert set(scales.SCALES) == set(PreferenceScale.values)
    assert set(rules.GRADES) == set(Grade.values) - {""}
    assert list(scales.SCALES) == schema.PREFERENCE_SCALES
    assert list(rules.GRADES) == schema.GRADES


def test_graded6_is_mmrb2s_scale_and_graded7_has_a_tie_in_the_middle():
    labels = [scales.point_label(s) for s in scales.POINTS["graded6"]]
    assert labels == [
        "A much better", "A better", "A slightly better",
        "B slightly better", "B better", "B much better",
    ]  # fmt: skip
    assert [scales.point_label(s) for s in scales.POINTS["graded7"]][3] == "Tie"
    # MMRB2's human_annotations: 6 = A (response 1) much better, 1 = B much better.
    assert [scales.scale_value(s, "graded6") for s in (3, 2, 1, -1, -2, -3)] == [6, 5, 4, 3, 2, 1]
    assert scales.scale_value(0, "graded7") == 4
    for scale, points in scales.POINTS.items():
        for s in points:
            assert scales.strength_of_value(scales.scale_value(s, scale), scale) == s
    with pytest.raises(ValueError):
        scales.strength_of_value(7, "graded6")


@given(
    swapped=st.booleans(),
    strength=st.sampled_from(scales.POINTS["graded7"]),
    grades=st.tuples(st.sampled_from(rules.GRADES), st.sampled_from(rules.GRADES)),
)
def test_a_displayed_graded_answer_is_stored_oriented_to_response_1(swapped, strength, grades):
    vote = rules.canonical_vote(
        rules.DisplayedVote(
            choice="left",  # (the form and the API refuse one that contradicts the strength)
            strength=strength,
            grade_left=grades[0],
            grade_right=grades[1],
        ),
        order=rules.PAIR_ORDERS[swapped],
    )
    # Positive displayed strength favours the left response: response 2 when swapped.
    assert vote.strength == (-strength if swapped else strength)
    favoured = (
        "tie"
        if strength == 0
        else rules.response_on("left" if strength > 0 else "right", swapped=swapped)
    )
    assert vote.choice == favoured == scales.choice_of(vote.strength)
    left_response = rules.response_on("left", swapped=swapped)
    assert getattr(vote, f"grade_{left_response}") == grades[0]
    shown = rules.displayed_answer(vote, swapped=swapped)
    assert (shown["strength"], shown["grade_left"], shown["grade_right"]) == (strength, *grades)
    assert rules.displayed_field(f"grade_{left_response}", swapped=swapped) == "grade_left"


def test_a_graded_project_asks_for_a_point_of_its_scale():
    with pytest.raises(JudgementInvalid) as exc:
        rules.validate_vote(rules.Vote(choice=""), project=project(), domain=PREFERENCE)
    assert exc.value.errors == {"strength": "Choose a point on the scale."}
    # No tie on six points; a strength whose side is not the choice is refused.
    for vote in (rules.Vote(choice="tie", strength=0, rationale="r"), rules.Vote("2", strength=2)):
        with pytest.raises(JudgementInvalid) as exc:
            rules.validate_vote(vote, project=project(), domain=PREFERENCE)
        assert set(exc.value.errors) == {"strength"}
    rules.validate_vote(
        rules.Vote(choice="tie", strength=0, rationale="same"),
        project=project("graded7"),
        domain=PREFERENCE,
    )
    rules.validate_vote(rules.Vote(choice="2", strength=-3), project=project(), domain=PREFERENCE)


def test_an_ab_project_refuses_a_strength_and_graded_tie_needs_a_rationale():
    with pytest.raises(JudgementInvalid) as exc:
        rules.validate_vote(
            rules.Vote(choice="1", strength=1), project=project("ab"), domain=PREFERENCE
        )
    assert set(exc.value.errors) == {"strength"}
    with pytest.raises(JudgementInvalid) as exc:
        rules.validate_vote(
            rules.Vote(choice="tie", strength=0), project=project("graded7"), domain=PREFERENCE
        )
    assert set(exc.value.errors) == {"rationale"}


def test_grades_are_asked_only_where_the_domain_asks_them():
    vote = rules.Vote(choice="1", strength=2)
    with pytest.raises(JudgementInvalid) as exc:
        rules.validate_vote(vote, project=project(), domain=GRADED_DOMAIN)
    assert set(exc.value.errors) == {"grade_1", "grade_2"}
    graded = rules.Vote(choice="1", strength=2, grade_1="A", grade_2="C")
    rules.validate_vote(graded, project=project(), domain=GRADED_DOMAIN)
    with pytest.raises(JudgementInvalid) as exc:
        rules.validate_vote(graded, project=project(), domain=PREFERENCE)
    assert set(exc.value.errors) == {"grade_1"}
    assert rules.vote_fields(graded)["strength"] == 2
    # Grades are per-slot answers (issue 32): (slot, correctness, grade, rank) rows.
    assert rules.slot_answers(graded) == [(1, "", "A", None), (2, "", "C", None)]
