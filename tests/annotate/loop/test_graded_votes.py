"""Issue 24, graded preference through the database: the compare page and
the API store a graded vote oriented to response 1 whatever side it was
shown on, keep the collapsed choice (and so the item's tallies) filled, ask
per-response grades where the domain says so, and show a judged item back
in displayed terms. The database refuses a strength that disagrees with
its choice."""

import pytest
from django.db import IntegrityError, transaction
from django.urls import reverse

from annotate.loop import scales
from annotate.loop.service import Vote, claim_next_item, revise_judgement, submit_judgement
from annotate.models import Assignment, Item, Judgement, JudgementSlot
from tests.api.test_annotation_api import next_url, token_client
from tests.factories import make_assignment, make_item, make_member, make_project

pytestmark = pytest.mark.django_db


def graded_item(scale="graded6", *, swapped=False, asks_grade=False, votes_per_item=3):
    project = make_project(preference_scale=scale, votes_per_item=votes_per_item)
    domain = project.domains.get(slug="general_preference")
    if asks_grade:
        domain.asks_grade = True
        domain.save()
    make_item(project, domain=domain)
    user = make_member(project)
    assignment = claim_next_item(project=project, annotator=user)
    Assignment.objects.filter(pk=assignment.pk).update(display_order="21" if swapped else "12")
    return project, user, assignment


@pytest.mark.parametrize("swapped", [False, True])
def test_the_compare_page_stores_a_graded_vote_oriented_to_response_1(client, swapped):
    _, user, assignment = graded_item(swapped=swapped, asks_grade=True)
    client.force_login(user)
    html = client.get(reverse("work_item", args=[assignment.pk])).content.decode()
    for key, strength in enumerate(scales.POINTS["graded6"], start=1):
        label = scales.point_label(strength)
        assert f'id="strength-{key}" value="{strength}"> {label} <kbd class="keyhint">{key}' in html
    assert 'name="choice"' not in html
    assert 'data-actions="point-1 point-2 point-3 point-4 point-5 point-6 point-step' in html
    # "A much better" (key 1): the left response, much better; A grade C, B grade A.
    response = client.post(
        reverse("work_submit", args=[assignment.pk]),
        {"strength": "3", "grade_left": "C", "grade_right": "A", "confidence": "2"},
    )
    assert response.status_code == 302
    j = Judgement.objects.with_pair_answers().get(assignment=assignment)
    assert j.strength == (-3 if swapped else 3)
    assert j.choice == ("2" if swapped else "1")
    assert (j.grade_1, j.grade_2) == (("A", "C") if swapped else ("C", "A"))
    item = Item.objects.get(pk=assignment.item_id)
    assert (item.votes_1, item.votes_2, item.votes_tie) == ((0, 1, 0) if swapped else (1, 0, 0))

    # Shown back as it was given.
    html = client.get(reverse("work_item", args=[assignment.pk])).content.decode()
    assert 'id="strength-1" value="3" checked' in html
    assert 'id="grade_left-C" value="C" checked' in html
    assert 'id="grade_right-A" value="A" checked' in html
    history = client.get(reverse("history", args=[assignment.item.project.slug]))
    assert "A much better" in history.content.decode()


def test_a_graded_submit_without_a_point_or_grades_is_refused_beside_the_fields(client):
    _, user, assignment = graded_item(asks_grade=True)
    client.force_login(user)
    response = client.post(
        reverse("work_submit", args=[assignment.pk]), {"confidence": "2"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 422
    html = response.content.decode()
    assert '<span class="error" id="err-strength">Choose a point on the scale.</span>' in html
    assert "Answer “Grade of response A” (A, B or C)" in html
    assert 'href="#strength-1"' in html and 'href="#grade_left-A"' in html
    assert not Judgement.objects.exists()


def test_the_seven_point_scale_has_a_tie_that_needs_a_rationale(client):
    _, user, assignment = graded_item("graded7")
    client.force_login(user)
    url = reverse("work_submit", args=[assignment.pk])
    assert client.post(url, {"strength": "0"}).status_code == 400
    assert client.post(url, {"strength": "0", "rationale": "equal"}).status_code == 302
    j = Judgement.objects.get(assignment=assignment)
    assert (j.strength, j.choice) == (0, "tie")
    assert Item.objects.get(pk=assignment.item_id).votes_tie == 1


def test_an_ab_project_still_takes_a_choice_and_refuses_a_strength(client):
    project = make_project()
    make_item(project, domain=project.domains.get(slug="general_preference"))
    user = make_member(project)
    assignment = claim_next_item(project=project, annotator=user)
    client.force_login(user)
    url = reverse("work_submit", args=[assignment.pk])
    assert client.post(url, {"choice": "left", "strength": "2"}).status_code == 400
    assert client.post(url, {"choice": "left"}).status_code == 302
    assert Judgement.objects.get(assignment=assignment).strength is None


@pytest.mark.parametrize("swapped", [False, True])
def test_the_api_takes_a_graded_vote_in_displayed_terms(swapped):
    project, _, _ = graded_item(swapped=False, votes_per_item=1)
    user = make_member(project)
    api = token_client(user)
    make_item(project, domain=project.domains.get(slug="general_preference"))
    a = api.post(next_url(project)).json()
    assert a["preference_scale"] == "graded6" and a["asks_grade"] is False
    assert a["scale"][0]["label"] == "A much better"
    assert [p["strength"] for p in a["scale"]] == [3, 2, 1, -1, -2, -3]
    Assignment.objects.filter(pk=a["id"]).update(display_order="21" if swapped else "12")
    url = f"/api/v1/assignments/{a['id']}/judgement/"
    refused = api.post(url, {"choice": "left"}, format="json")
    assert refused.status_code == 400
    assert "strength" in refused.json()["error"]["fields"]
    r = api.post(url, {"strength": -2}, format="json")  # right better
    assert r.status_code == 201
    assert r.json()["choice"] == "right" and r.json()["strength"] == -2
    j = Judgement.objects.get(assignment_id=a["id"])
    assert (j.strength, j.choice) == ((2, "1") if swapped else (-2, "2"))


def test_a_revision_keeps_the_canonical_strength():
    _, user, assignment = graded_item(swapped=True)
    submit_judgement(assignment_id=assignment.pk, annotator=user, vote=Vote(choice="1", strength=1))
    revise_judgement(
        assignment_id=assignment.pk, annotator=user, vote=Vote(choice="2", strength=-3)
    )
    current = Judgement.objects.get(assignment=assignment, is_current=True)
    assert (current.strength, current.choice, current.revision) == (-3, "2", 2)
    item = Item.objects.get(pk=assignment.item_id)
    assert (item.votes_1, item.votes_2) == (0, 1)


@pytest.mark.parametrize(
    "choice,strength", [("1", -1), ("2", 2), ("tie", 1), ("1", 0), ("1", 4), ("2", -4)]
)
def test_the_database_refuses_a_strength_that_is_not_its_choices_side(choice, strength):
    project = make_project(preference_scale="graded7")
    assignment = make_assignment(make_item(project))
    with pytest.raises(IntegrityError), transaction.atomic():
        Judgement.objects.create(assignment=assignment, choice=choice, strength=strength)
    with pytest.raises(IntegrityError), transaction.atomic():
        JudgementSlot.objects.create(
            judgement=Judgement.objects.create(assignment=assignment, choice="1"), slot=1, grade="D"
        )


@pytest.mark.parametrize(
    ("scale", "allow_tie", "words"),
    [
        ("graded6", True, "(optional)"),  # no tie on MMRB2's scale
        ("graded7", True, "(required for ties)"),
        ("ab", True, "(required for ties)"),
        ("ab", False, "(optional)"),
    ],
)
def test_the_rationale_label_mentions_ties_only_where_a_tie_can_be_given(
    client, scale, allow_tie, words
):
    project, user, assignment = graded_item(scale)
    project.allow_tie = allow_tie
    project.save(update_fields=["allow_tie"])
    client.force_login(user)
    html = client.get(reverse("work_item", args=[assignment.pk])).content.decode()
    assert f'<label for="rationale">Rationale {words} <kbd' in html


@pytest.mark.parametrize("swapped", [False, True])
def test_a_choice_that_contradicts_the_strength_is_a_form_error_on_choice(client, swapped):
    """Issue 29: refused, not silently corrected to the strength's side."""
    _, user, assignment = graded_item(swapped=swapped)
    client.force_login(user)
    url = reverse("work_submit", args=[assignment.pk])
    response = client.post(url, {"choice": "left", "strength": "-2"})  # right better
    assert response.status_code == 400
    message = response.context["errors"]["choice"][0]
    assert "'left' contradicts the strength -2" in message
    assert message in response.content.decode().replace("&#x27;", "'")
    assert not Judgement.objects.filter(assignment=assignment).exists()
    # The choice the strength implies, or none, is taken.
    assert client.post(url, {"choice": "right", "strength": "-2"}).status_code == 302
    assert Judgement.objects.get(assignment=assignment).strength == (2 if swapped else -2)


@pytest.mark.parametrize(("choice", "strength"), [("left", -2), ("right", 3), ("tie", 1)])
def test_the_api_refuses_a_choice_that_contradicts_the_strength_naming_choice(choice, strength):
    project, _, _ = graded_item(scale="graded7", votes_per_item=1)
    user = make_member(project)
    api = token_client(user)
    make_item(project, domain=project.domains.get(slug="general_preference"))
    a = api.post(next_url(project)).json()
    url = f"/api/v1/assignments/{a['id']}/judgement/"
    refused = api.post(url, {"choice": choice, "strength": strength}, format="json")
    assert refused.status_code == 400
    fields = refused.json()["error"]["fields"]
    assert list(fields) == ["choice"] and "contradicts the strength" in fields["choice"][0]
    assert not Judgement.objects.filter(assignment_id=a["id"]).exists()
    side = "left" if strength > 0 else "right"
    agreeing = api.post(url, {"choice": side, "strength": strength}, format="json")
    assert agreeing.status_code == 201 and agreeing.json()["choice"] == side
