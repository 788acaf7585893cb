"""Adjudicating a contested ranking or best-of-N item (issue 33,
deliverable 4): the page shows every annotator's ranking under a
pseudonym, the Borda and Kemeny-Young aggregates (Kemeny proposed), and the
form sets the final ranking in canonical slot terms, audited."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotate.models import Membership, Task
from curation.agreement import ranking
from curation.agreement import ranking_aggregate as rka
from curation.models import AuditEvent, Verdict, VerdictRank
from tests.curation.verdicts.ranked_factories import (
    pick_vote,
    rank_vote,
    ranked_item,
    ranked_project,
)
from tests.factories import make_member

pytestmark = pytest.mark.django_db

RANKINGS = [(1, 2, 3, 4), (2, 1, 3, 4), (1, 2, 4, 3)]


@pytest.fixture
def contested():
    project = ranked_project(team=3)
    item = ranked_item(project)
    for user, ranks in zip(list(project.team), RANKINGS, strict=True):
        Membership.objects.filter(project=project, user=user).update(
            pseudonym=f"ann-{ranks[0]}{ranks[1]}{ranks[2]}"
        )
        rank_vote(item, ranks)
    assert Verdict.objects.get(item=item).status == "contested"
    curator = make_member(project, role="curator")
    project.voters = [m.user for m in Membership.objects.filter(project=project, role="annotator")]
    return project, item, curator


def test_the_page_shows_every_ranking_and_both_aggregates(client, contested):
    project, item, curator = contested
    client.force_login(curator)
    url = reverse("adjudicate", args=[project.slug, item.pk])
    client.get(url)  # warm the session and the parts' HTML
    with CaptureQueriesContext(connection) as queries:
        page = client.get(url)
    assert page.status_code == 200
    # Session, user, membership, verdict, parts, votes (2), voters,
    # pseudonyms, final ranks, audit, next contested, voted?, eligible:
    # fifteen, whatever the number of votes.
    assert len(queries) == 15, [q["sql"] for q in queries]
    html = page.content.decode()
    assert "ann-123" in html and "ann-213" in html and "ann-124" in html
    table = html.split('id="rankings"')[1].split("</table>")[0]
    for voter in project.voters:  # pseudonymous: no username on the page
        assert voter.username not in html
    cells = re.findall(r'<td class="num">(\d)</td>', table)
    assert cells == [str(r) for ranks in RANKINGS for r in ranks]
    matrix = ranking.RankTable.of([ranking.Ranking(0, i, r) for i, r in enumerate(RANKINGS)])
    kemeny, borda = rka.kemeny(matrix.ranks), rka.borda(matrix.ranks)
    aggregates = html.split('id="aggregates"')[1].split("</table>")[0]
    rows = re.findall(
        r'<td class="num">(\d+)</td><td class="num">(\d+)</td><td class="num">([\d.]+)</td>',
        aggregates,
    )
    assert [(int(k), int(b), float(s)) for k, b, s in rows] == list(
        zip(kemeny.ranks, borda.ranks, borda.scores, strict=True)
    )
    assert "Proposed: <strong>Kemeny\u2013Young</strong>" in html
    inputs = re.findall(r'name="rank_(\d)" value="(\d)"', html)
    assert inputs == [(str(s), str(r)) for s, r in enumerate(kemeny.ranks, start=1)]


def test_the_curator_sets_the_final_ranking_and_the_audit_holds_it(client, contested):
    project, item, curator = contested
    client.force_login(curator)
    verdict = Verdict.objects.get(item=item)
    response = client.post(
        reverse("decide_ranked", args=[project.slug, item.pk]),
        {
            "action": "resolve",
            "rank_1": "2",
            "rank_2": "1",
            "rank_3": "3",
            "rank_4": "3",
            "reason": "Response 2 answers the question.",
            "version": verdict.version,
        },
    )
    assert response.status_code == 302
    verdict.refresh_from_db()
    assert (verdict.status, verdict.final_choice, verdict.provenance) == (
        "resolved",
        "2",
        "adjudicated",
    )
    stored = list(VerdictRank.objects.filter(verdict=verdict).values_list("slot", "rank"))
    assert stored == [(1, 2), (2, 1), (3, 3), (4, 3)]
    event = AuditEvent.objects.get(item=item, action="resolve")
    assert event.actor == curator and event.reason == "Response 2 answers the question."
    assert event.before["status"] == "contested" and event.before["final_ranks"] == []
    assert event.after["final_ranks"] == [2, 1, 3, 3]
    page = client.get(reverse("adjudicate", args=[project.slug, item.pk])).content.decode()
    assert "ranks 2, 1, 3, 3" in page
    # Reopened: the final ranking goes with it.
    client.post(
        reverse("decide_ranked", args=[project.slug, item.pk]),
        {"action": "reopen", "reason": "second look", "version": verdict.version},
    )
    assert not VerdictRank.objects.filter(verdict=verdict).exists()
    assert Verdict.objects.get(item=item).status == "contested"
    reopened = AuditEvent.objects.get(item=item, action="reopen")
    assert (reopened.before["final_ranks"], reopened.after["final_ranks"]) == ([2, 1, 3, 3], [])


@pytest.mark.parametrize(
    ("ranks", "message"),
    [
        (("1", "2", "2", "3"), "ties sharing one"),
        (("1", "2", "3"), "Give each of the 4 responses a rank"),
        (("1", "x", "3", "4"), "whole numbers"),
    ],
)
def test_an_invalid_ranking_is_refused_with_what_to_fix(client, contested, ranks, message):
    project, item, curator = contested
    client.force_login(curator)
    data = {f"rank_{slot}": r for slot, r in enumerate(ranks, start=1)}
    verdict = Verdict.objects.get(item=item)
    response = client.post(
        reverse("decide_ranked", args=[project.slug, item.pk]),
        {"action": "resolve", "reason": "r", "version": verdict.version, **data},
    )
    assert response.status_code == 400
    assert message in response.content.decode()
    assert Verdict.objects.get(item=item).status == "contested"
    assert not AuditEvent.objects.filter(item=item, action="resolve").exists()


def test_a_stale_page_is_refused(client, contested):
    project, item, curator = contested
    client.force_login(curator)
    data = {"action": "resolve", "reason": "r", "version": 0}
    data.update({f"rank_{s}": str(s) for s in range(1, 5)})
    response = client.post(reverse("decide_ranked", args=[project.slug, item.pk]), data)
    assert response.status_code == 409


def test_annotators_and_outsiders_cannot_decide(client, contested):
    project, item, _ = contested
    client.force_login(make_member(project))
    data = {"action": "resolve", "reason": "r", "version": 3, "rank_1": "1"}
    url = reverse("decide_ranked", args=[project.slug, item.pk])
    assert client.post(url, data).status_code in (403, 404)
    assert client.get(reverse("adjudicate", args=[project.slug, item.pk])).status_code in (
        403,
        404,
    )


def test_a_best_of_n_item_takes_a_best_response(client):
    project = ranked_project(task=Task.BEST_OF_N, team=3)
    item = ranked_item(project)
    for choice in ("1", "2", "4"):
        pick_vote(item, choice)
    verdict = Verdict.objects.get(item=item)
    assert verdict.status == "contested"
    curator = make_member(project, role="curator")
    client.force_login(curator)
    page = client.get(reverse("adjudicate", args=[project.slug, item.pk])).content.decode()
    assert "Picks per response" in page and 'name="pick" value="4"' in page
    response = client.post(
        reverse("decide_ranked", args=[project.slug, item.pk]),
        {"action": "resolve", "pick": "4", "reason": "4 is right", "version": verdict.version},
    )
    assert response.status_code == 302
    verdict.refresh_from_db()
    assert (verdict.status, verdict.final_choice) == ("resolved", "4")
    assert AuditEvent.objects.get(item=item, action="resolve").after["final_choice"] == "4"
