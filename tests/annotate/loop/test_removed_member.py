"""A member removed from a project loses the annotator's loop at once, even
for an item they still hold: no compare page, no submit, skip or revision, no
new item after a submit, in the browser and through the API. Nothing is
stored, and the lease they held goes back to the pool at once."""

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.loop.service import Vote, claim_next_item, submit_judgement
from annotate.models import Assignment, AssignmentStatus, Judgement, Membership
from tests.factories import make_item, make_member, make_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def held():
    """A member who judged one item and holds a lease on another, then was removed."""
    project = make_project(votes_per_item=1)
    domain = project.domains.get(slug="general_preference")
    for _ in range(4):
        make_item(project, domain=domain)
    user = make_member(project)
    judged = claim_next_item(project=project, annotator=user)
    submit_judgement(assignment_id=judged.pk, annotator=user, vote=Vote(choice="1"))
    open_one = claim_next_item(project=project, annotator=user)
    Membership.objects.filter(project=project, user=user).delete()
    return project, user, judged, open_one


def unchanged(user, judged, open_one):
    open_one.refresh_from_db()
    assert open_one.status == AssignmentStatus.EXPIRED  # returned when they left
    assert Assignment.objects.filter(annotator=user).count() == 2
    assert Judgement.objects.filter(assignment__annotator=user).count() == 1


def test_browser_loop_is_closed_to_a_removed_member(client, held):
    project, user, judged, open_one = held
    client.force_login(user)
    assert client.get(reverse("work_item", args=[open_one.pk])).status_code == 404
    assert client.get(reverse("work_item", args=[judged.pk])).status_code == 404
    for headers in ({}, {"HTTP_HX_REQUEST": "true"}):
        submit = client.post(
            reverse("work_submit", args=[open_one.pk]), {"choice": "left"}, **headers
        )
        assert submit.status_code == 404
    revise = client.post(
        reverse("work_submit", args=[judged.pk]), {"choice": "right", "revise": "1"}
    )
    assert revise.status_code == 404
    skip = client.post(reverse("work_skip", args=[open_one.pk]), {"reason": "no"})
    assert skip.status_code == 404
    assert client.post(reverse("work_start", args=[project.slug])).status_code == 404
    unchanged(user, judged, open_one)


def test_api_loop_is_closed_to_a_removed_member(held):
    project, user, judged, open_one = held
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    assert api.get(f"/api/v1/assignments/{open_one.pk}/").status_code == 404
    assert api.get(f"/api/v1/assignments/{open_one.pk}/image/").status_code == 404
    submit = api.post(
        f"/api/v1/assignments/{open_one.pk}/judgement/", {"choice": "left"}, format="json"
    )
    assert submit.status_code == 404
    skip = api.post(f"/api/v1/assignments/{open_one.pk}/skip/", {"reason": "no"}, format="json")
    assert skip.status_code == 404
    assert api.post(f"/api/v1/projects/{project.slug}/assignments/next/").status_code == 404
    unchanged(user, judged, open_one)


def test_services_refuse_a_removed_member(held):
    project, user, judged, open_one = held
    assert claim_next_item(project=project, annotator=user) is None
    with pytest.raises(Assignment.DoesNotExist):
        submit_judgement(assignment_id=open_one.pk, annotator=user, vote=Vote(choice="1"))
    unchanged(user, judged, open_one)


def test_a_member_added_back_gets_a_new_item_and_theirs_went_to_the_pool(held):
    project, user, _judged, open_one = held
    open_one.refresh_from_db()
    assert open_one.status == AssignmentStatus.EXPIRED
    assert open_one.item.live_assignments == 0
    Membership.objects.create(project=project, user=user)
    again = claim_next_item(project=project, annotator=user)
    assert again.item_id not in (open_one.item_id, _judged.item_id)
    newcomer = make_member(project)
    assert claim_next_item(project=project, annotator=newcomer).item_id == open_one.item_id
