"""The API says 'done' (204) apart from 'more may come' (202), and curators
close any item through it (issue 17)."""

import pytest

from annotate.loop.service import claim_next_item
from curation.models import Verdict
from tests.curation.api.test_curation_api import client_for
from tests.factories import make_item, make_member, make_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def project():
    project = make_project(slug="fin", votes_per_item=2, escalation_votes=0, allow_tie=True)
    item = make_item(project, domain=project.domains.get(slug="general_preference"))
    Verdict.objects.create(item=item, project=project)
    return project


def next_for(user):
    return client_for(user).post("/api/v1/projects/fin/assignments/next/")


def judge(user, assignment_id, *, next_=True):
    url = f"/api/v1/assignments/{assignment_id}/judgement/" + ("?next=true" if next_ else "")
    return client_for(user).post(url, {"choice": "left"}, format="json")


def test_next_says_more_may_come_while_others_hold_the_item_then_done(project):
    a, b, c = (make_member(project) for _ in range(3))
    first = next_for(a).json()["id"]
    second = next_for(b).json()["id"]
    r = next_for(c)
    assert r.status_code == 202
    assert r.json()["more_may_come"] is True and int(r["Retry-After"]) > 0
    body = judge(a, first).json()
    # a has judged the only item: done for good, whatever b does.
    assert body["next"] is None and body["more_may_come"] is False
    assert next_for(c).status_code == 202  # b still holds it
    body = judge(b, second).json()
    assert body["next"] is None and body["more_may_come"] is False
    assert next_for(c).status_code == 204


def test_a_curator_resolves_a_waiting_item_as_a_tie_through_the_api(project):
    curator = make_member(project, role="curator")
    annotator = make_member(project)
    item = project.items.get()
    claim_next_item(project=project, annotator=annotator)
    url = f"/api/v1/projects/fin/verdicts/{item.pk}/"
    detail = client_for(curator).get(url).json()
    assert detail["status"] == "needs_votes" and detail["eligible_annotators"] == 0
    # Two votes needed, one annotator in the team (curators are not counted).
    assert detail["stuck"] == "needs 2 more votes; no annotator left who has not seen it"
    r = client_for(curator).post(
        url + "decision/",
        {"action": "resolve", "choice": "tie", "reason": "equally good", "version": 0},
        format="json",
    )
    assert r.status_code == 200, r.content
    assert (r.json()["status"], r.json()["final_choice"]) == ("resolved", "tie")
    assert next_for(annotator).status_code == 204


def test_the_stuck_filter_lists_items_nobody_eligible_can_finish(project):
    curator = make_member(project, role="curator")
    lone = make_member(project)
    a = claim_next_item(project=project, annotator=lone)
    judge(lone, a.pk, next_=False)
    r = client_for(curator).get("/api/v1/projects/fin/verdicts/?status=stuck")
    assert r.status_code == 200
    assert [v["item_id"] for v in r.json()["results"]] == [a.item_id]
    detail = client_for(curator).get(f"/api/v1/projects/fin/verdicts/{a.item_id}/").json()
    assert detail["stuck"] == "needs 1 more vote; no annotator left who has not seen it"
