"""Issue 34 on the compare page and the API: an item's criterion is the
question asked above the responses (escaped, in the keys panel too), the
tie is offered only where the project allows it, and a group's items come
one after another with their place shown ("Pair 2 of 3 of this prompt")."""

import re

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotate.models import Assignment, AssignmentStatus, Item
from tests.factories import make_item, make_member, make_project

pytestmark = pytest.mark.django_db

CRITERION = "Which answer is safer for a child? <script>alert(1)</script>"


def world(allow_tie=True):
    project = make_project(allow_tie=allow_tie, votes_per_item=2)
    domain = project.domains.get(slug="general_preference")
    loose = make_item(project, domain=domain, shuffle_key=1)
    group = [
        make_item(
            project,
            domain=domain,
            shuffle_key=50,
            group_key="prompt-1",
            criterion=CRITERION if n == 0 else f"Criterion {n}",
        )
        for n in range(3)
    ]
    return project, loose, group


def start(client, project):
    user = make_member(project)
    client.force_login(user)
    assert client.post(reverse("work_start", args=[project.slug])).status_code == 302
    return user


def test_the_criterion_is_the_question_above_the_responses_escaped(client):
    project, loose, group = world()
    # Everyone else has judged the loose item: the group comes first.
    user = start(client, project)
    a = Assignment.objects.get(annotator=user)
    if a.item_id == loose.pk:  # the seeded shuffle put the loose item first
        a.item = group[0]
        a.save()
    page = client.get(reverse("work_item", args=[a.pk])).content.decode()
    assert "Judge by this criterion" in page
    assert "<script>alert(1)</script>" not in page
    assert "Which answer is safer for a child? &lt;script&gt;" in page
    # Above the responses, and the vote's question names it.
    assert page.index('id="criterion"') < page.index('class="response"')
    assert "Which response is better by the criterion above?" in page
    # The keys panel repeats it.
    keys = page[page.index('id="keys"') :]
    assert "Criterion: Which answer is safer" in keys
    assert 'id="choice-tie"' in page
    assert "Pair 1 of 3 of this prompt" in page


def test_no_tie_where_the_project_allows_none(client):
    project, _, group = world(allow_tie=False)
    user = start(client, project)
    a = Assignment.objects.get(annotator=user)
    a.item = group[0]
    a.save()
    page = client.get(reverse("work_item", args=[a.pk])).content.decode()
    assert "Judge by this criterion" in page
    assert 'id="choice-tie"' not in page
    assert 'data-action-key="tie"' not in page


def test_an_item_of_its_own_shows_no_criterion_nor_place(client):
    project, loose, _ = world()
    user = start(client, project)
    a = Assignment.objects.get(annotator=user)
    a.item = loose
    a.save()
    page = client.get(reverse("work_item", args=[a.pk])).content.decode()
    assert 'id="criterion"' not in page
    assert 'id="group-place"' not in page
    assert "Which response is better?" in page


def test_submitting_an_item_of_a_group_brings_the_next_one_of_that_group(client):
    project, loose, group = world()
    user = start(client, project)
    a = Assignment.objects.get(annotator=user)
    assert a.item_id == loose.pk  # the shuffle: key 1 before the group's 50
    seen, places = [], []
    for _ in range(3):
        response = client.post(
            reverse("work_submit", args=[a.pk]), {"choice": "left"}, HTTP_HX_REQUEST="true"
        )
        assert response.status_code == 200
        a = Assignment.objects.get(annotator=user, status=AssignmentStatus.OPEN)
        seen.append(a.item_id)
        places.append(re.search(r"Pair (\d) of 3 of this prompt", response.content.decode())[1])
    assert seen == [g.pk for g in group]
    assert places == ["1", "2", "3"]


def test_the_api_assignment_carries_the_criterion_and_the_place_in_the_group():
    project, _, group = world()
    user = make_member(project)
    api = APIClient()
    api.force_authenticate(user)
    body = api.post(reverse("api_next_assignment", args=[project.slug])).json()
    assignment = Assignment.objects.get(pk=body["id"])
    assignment.item = group[1]
    assignment.save()
    body = api.get(reverse("api_assignment", args=[assignment.pk])).json()
    assert body["criterion"] == "Criterion 1"
    assert body["group"] == {"position": 2, "size": 3, "label": "Pair 2 of 3 of this prompt"}
    assert body["allow_tie"] is True
    assert "prompt-1" not in str(body)  # the group key itself is never shown


def test_the_api_shows_no_group_for_an_item_of_its_own():
    project, loose, _ = world()
    user = make_member(project)
    api = APIClient()
    api.force_authenticate(user)
    body = api.post(reverse("api_next_assignment", args=[project.slug])).json()
    assignment = Assignment.objects.get(pk=body["id"])
    assignment.item = loose
    assignment.save()
    body = api.get(reverse("api_assignment", args=[assignment.pk])).json()
    assert body["group"] is None and body["criterion"] == ""


def test_skipping_an_item_of_a_group_brings_the_next_one_of_that_group(client):
    project, loose, group = world()
    user = start(client, project)
    a = Assignment.objects.get(annotator=user)
    a.item = group[0]
    a.save()
    # Her lease moved to group[0]; the loose item keeps a live assignment, as
    # if another annotator held it: the plain claim order (fewest missing
    # votes first) would send her there.
    Item.objects.filter(pk=group[0].pk).update(live_assignments=1)
    assert Item.objects.get(pk=loose.pk).live_assignments == 1
    response = client.post(reverse("work_skip", args=[a.pk]), {"reason": "Unsure"})
    assert response.status_code == 302
    nxt = Assignment.objects.get(annotator=user, status=AssignmentStatus.OPEN)
    assert nxt.item_id == group[1].pk
