"""Issue 32: the services take a vote as displayed (left/right) and map it to
canonical slot terms themselves, with the display order of the assignment
they locked: no callback, no reading of the assignment by the caller. Their
refusals name the fields the annotator saw."""

import pytest

from annotate.loop import rules
from annotate.loop.service import (
    DisplayedVote,
    JudgementInvalid,
    claim_next_item,
    revise_judgement,
    submit_and_claim_next,
    submit_judgement,
)
from annotate.models import Assignment, Judgement
from tests.factories import make_item, make_member, make_project

pytestmark = pytest.mark.django_db


def claimed(order: str, domain="vqa", **project_kwargs):
    project = make_project(**project_kwargs)
    item = make_item(project, domain=project.domains.get(slug=domain))
    make_item(project, domain=project.domains.get(slug=domain))
    user = make_member(project)
    a = claim_next_item(project=project, annotator=user)
    Assignment.objects.filter(pk=a.pk).update(display_order=order)
    return a, user, item


@pytest.mark.parametrize("order", rules.PAIR_ORDERS)
def test_a_displayed_vote_is_stored_in_canonical_slot_terms(order):
    a, user, _ = claimed(order)
    left = order[0]  # the slot displayed on the left
    right = order[1]
    vote = DisplayedVote(choice="left", correct_left="yes", correct_right="no", rationale="r")
    j = submit_judgement(assignment_id=a.pk, annotator=user, vote=vote)
    assert j.choice == left
    stored = Judgement.objects.with_pair_answers().get(pk=j.pk)
    assert getattr(stored, f"correct_{left}") == "yes"
    assert getattr(stored, f"correct_{right}") == "no"
    assert stored.shown_swapped == (order == "21")


@pytest.mark.parametrize("order", rules.PAIR_ORDERS)
def test_a_graded_displayed_vote_is_oriented_to_response_1(order):
    a, user, _ = claimed(order, domain="general_preference", preference_scale="graded6")
    j, following = submit_and_claim_next(
        assignment_id=a.pk, annotator=user, vote=DisplayedVote(strength=2)
    )
    assert j.strength == (-2 if order == "21" else 2)
    assert j.choice == order[0]
    assert following is not None and following.display_order in rules.PAIR_ORDERS


@pytest.mark.parametrize("order", rules.PAIR_ORDERS)
def test_refusals_name_the_displayed_fields(order):
    a, user, _ = claimed(order)
    with pytest.raises(JudgementInvalid) as refused:
        submit_judgement(
            assignment_id=a.pk,
            annotator=user,
            vote=DisplayedVote(choice="right", correct_left="yes"),
        )
    assert set(refused.value.errors) == {"correct_right"}
    assert not Judgement.objects.exists()


def test_a_revision_as_displayed_is_mapped_with_the_locked_display_order():
    a, user, _ = claimed("21", domain="general_preference")
    submit_judgement(assignment_id=a.pk, annotator=user, vote=DisplayedVote(choice="left"))
    revised = revise_judgement(
        assignment_id=a.pk, annotator=user, vote=DisplayedVote(choice="right")
    )
    assert revised.choice == "1" and revised.revision == 2


@pytest.mark.parametrize("n", range(2, 10))
def test_a_drawn_display_order_is_a_permutation_of_the_slots(n):
    import random

    rng = random.Random(n)
    orders = {rules.draw_order(n, rng) for _ in range(200)}
    assert all(rules.is_order(o, n) for o in orders)
    assert len(orders) > 1
    assert not rules.is_order("11") and not rules.is_order("13") and rules.is_order("312")


def test_the_services_take_a_vote_not_a_callback():
    a, user, _ = claimed("12", domain="general_preference")
    with pytest.raises(TypeError, match="DisplayedVote or a Vote"):
        submit_judgement(
            assignment_id=a.pk, annotator=user, vote=lambda assignment: DisplayedVote("left")
        )
    assert not Judgement.objects.exists()
