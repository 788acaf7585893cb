"""The verdict API for best-of-N and ranking items (issue 33): the final
ranking goes in (decision) and comes out (list, detail) in canonical slot
terms, each annotator's ranking with it."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotate.models import Task
from curation.models import AuditEvent, Verdict
from tests.curation.api.test_curation_api import client_for
from tests.curation.verdicts.ranked_factories import (
    pick_vote,
    rank_vote,
    ranked_item,
    ranked_project,
)
from tests.factories import make_member

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup():
    project = ranked_project(team=6, slug="ranked")
    agreed = ranked_item(project)
    for ranks in [(2, 1, 3, 4)] * 3:
        rank_vote(agreed, ranks)
    contested = ranked_item(project)
    for ranks in [(1, 2, 3, 4), (2, 1, 3, 4), (1, 2, 4, 3)]:
        rank_vote(contested, ranks)
    curator = make_member(project, role="curator")
    return project, agreed, contested, client_for(curator)


def test_the_list_and_detail_give_the_final_ranking(setup):
    _, agreed, contested, client = setup
    with CaptureQueriesContext(connection) as queries:
        listed = client.get("/api/v1/projects/ranked/verdicts/").json()["results"]
    # token, membership, count, page, the final ranks (one prefetch)
    assert len(queries) <= 5
    by_item = {row["item_id"]: row for row in listed}
    assert by_item[agreed.pk]["final_ranks"] == [2, 1, 3, 4]
    assert by_item[agreed.pk]["final_choice"] == "2"
    assert by_item[contested.pk]["final_ranks"] == []
    detail = client.get(f"/api/v1/projects/ranked/verdicts/{contested.pk}/").json()
    assert sorted(v["ranks"] for v in detail["current_votes"]) == [
        [1, 2, 3, 4],
        [1, 2, 4, 3],
        [2, 1, 3, 4],
    ]
    assert {v["choice"] for v in detail["current_votes"]} == {""}


def test_a_curator_resolves_a_ranking_through_the_api(setup):
    _, _, contested, client = setup
    version = Verdict.objects.get(item=contested).version
    url = f"/api/v1/projects/ranked/verdicts/{contested.pk}/decision/"
    bad = client.post(
        url,
        {"action": "resolve", "ranks": [1, 1, 2, 4], "reason": "r", "version": version},
        format="json",
    )
    assert bad.status_code in (400, 422) and "ties sharing one" in bad.content.decode()
    ok = client.post(
        url,
        {"action": "resolve", "ranks": [1, 1, 3, 4], "reason": "both fine", "version": version},
        format="json",
    )
    assert ok.status_code == 200, ok.content
    body = ok.json()
    assert (body["status"], body["final_choice"], body["final_ranks"]) == (
        "resolved",
        "tie",
        [1, 1, 3, 4],
    )
    event = AuditEvent.objects.get(item=contested, action="resolve")
    assert event.after["final_ranks"] == [1, 1, 3, 4] and event.reason == "both fine"


def test_a_best_of_n_pick_is_resolved_with_its_slot(setup):
    project = ranked_project(task=Task.BEST_OF_N, team=3, slug="picks")
    item = ranked_item(project)
    for choice in ("1", "3", "4"):
        pick_vote(item, choice)
    client = client_for(make_member(project, role="curator"))
    version = Verdict.objects.get(item=item).version
    response = client.post(
        f"/api/v1/projects/picks/verdicts/{item.pk}/decision/",
        {"action": "resolve", "choice": "3", "reason": "r", "version": version},
        format="json",
    )
    assert response.status_code == 200, response.content
    assert (response.json()["final_choice"], response.json()["final_ranks"]) == ("3", [])
    detail = client.get(f"/api/v1/projects/picks/verdicts/{item.pk}/").json()
    assert sorted(v["choice"] for v in detail["current_votes"]) == ["1", "3", "4"]
