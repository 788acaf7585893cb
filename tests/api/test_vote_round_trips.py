"""The statements of one API vote with ?next=true, in its own transaction
as production runs it (not inside a test's): what PostgreSQL and SQLite are
sent, so that a SAVEPOINT pair, a second read of the assignment or any
other round trip cannot creep back (issue 32: each costs both the web
process and the database CPU on every vote)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.loop import postgres
from curation.models import Verdict
from tests.conftest import on_postgres
from tests.factories import make_item, make_member, make_project

VOTE = {"choice": "left", "correct_left": "yes", "correct_right": "no"}


def kind(sql: str) -> str:
    """A statement's role in the vote, by its text."""
    text = " ".join(sql.split())
    if text.startswith(("BEGIN", "COMMIT", "SAVEPOINT", "RELEASE", "ROLLBACK")):
        return text.split()[0]
    own = " ".join(postgres.PAGE_SQL.split("WHERE")[0].split())
    for needle, name in (
        ("authtoken_token", "token"),
        ("FOR UPDATE OF a", "locked assignment"),
        (own, "own assignment"),
        ("INSERT INTO annotate_judgement", "vote"),
        ("curation_verdict", "verdict"),
        ("WITH own AS", "claim"),
        ("annotate_itempart", "parts"),
        ("UPDATE annotate_assignment", "assignment submitted"),
        ("UPDATE annotate_item SET live_assignments", "lease counted"),
        ("UPDATE annotate_item", "tallies"),
        ("UPDATE annotate_membership", "judged"),
        ("INSERT INTO annotate_assignment", "lease"),
    ):
        if needle in text:
            return name
    return text[:80]


@pytest.mark.django_db(transaction=True)
def test_an_api_vote_with_next_sends_these_statements_and_no_more():
    project = make_project(votes_per_item=3)
    items = [make_item(project) for _ in range(6)]
    Verdict.objects.bulk_create([Verdict(item=i, project=project) for i in items])
    user = make_member(project)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    a = client.post(f"/api/v1/projects/{project.slug}/assignments/next/").json()
    for _ in range(2):  # the second vote is measured (prepared statements warm)
        with CaptureQueriesContext(connection) as ctx:
            response = client.post(
                f"/api/v1/assignments/{a['id']}/judgement/?next=true", VOTE, format="json"
            )
        assert response.status_code == 201, response.content
        a = response.json()["next"]
    sent = [kind(q["sql"]) for q in ctx.captured_queries]
    if on_postgres():
        # (Django's connection health check, a SELECT 1 when a request first
        # uses a kept connection, is not logged: one more round trip.)
        assert sent == [
            "token",
            "BEGIN",
            "locked assignment",
            "vote",  # judgement, assignment, tallies, Membership.judged: one statement
            "verdict",  # curation's lock of the item's verdict
            "claim",  # no SAVEPOINT/RELEASE around it (ON CONFLICT DO NOTHING)
            "COMMIT",
            "parts",
        ], sent
    else:
        # SQLite: the same reads; the vote and the claim's writes as short
        # statements (annotate.loop.sqlite), its savepoint local to the process.
        assert sent == [
            "token",
            "BEGIN",
            "own assignment",
            "vote",  # the judgement
            "vote",  # its per-slot answers
            "assignment submitted",
            "tallies",
            "judged",
            "verdict",
            "SAVEPOINT",
            "claim",
            "lease counted",
            "lease",
            "RELEASE",
            "COMMIT",
            "parts",
        ], sent
