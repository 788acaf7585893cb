"""The annotator's loop through the API: claim, submit, skip."""

from contextlib import contextmanager

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.models import Assignment, Judgement
from tests.conftest import on_postgres
from tests.factories import make_item, make_member, make_project

pytestmark = pytest.mark.django_db

FORBIDDEN_WORDS = ("model_1", "model_2", "gpt-4o", "claude-3", "gold", "votes", "external_id")


def token_client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


@pytest.fixture
def project():
    project = make_project(votes_per_item=2)
    for _ in range(3):
        make_item(project, model_1="gpt-4o", model_2="claude-3", gold_choice="1")
    return project


def next_url(project):
    return f"/api/v1/projects/{project.slug}/assignments/next/"


def test_next_assignment_shows_displayed_order_and_nothing_that_unblinds(project):
    user = make_member(project)
    response = token_client(user).post(next_url(project))
    assert response.status_code == 200
    body = response.json()
    assignment = Assignment.objects.get(pk=body["id"])
    item = assignment.item
    expected_left = item.response_2 if assignment.shown_swapped else item.response_1
    assert body["left"] == expected_left
    assert body["prompt"] == item.prompt
    assert body["domain"] == {"slug": "vqa", "title": "VQA", "kind": "correctness"}
    assert body["image_url"] == f"/api/v1/assignments/{assignment.pk}/image/"
    text = response.content.decode()
    for word in FORBIDDEN_WORDS:
        assert word not in text
    assert item.external_id not in text


def test_next_assignment_returns_the_open_lease_again(project):
    client = token_client(make_member(project))
    first = client.post(next_url(project)).json()
    assert client.post(next_url(project)).json() == first


def test_nothing_left_is_204(project):
    client = token_client(make_member(project))
    for _ in range(3):
        a = client.post(next_url(project)).json()
        r = client.post(
            f"/api/v1/assignments/{a['id']}/judgement/",
            {"choice": "left", "correct_left": "yes", "correct_right": "no"},
            format="json",
        )
        assert r.status_code == 201, r.content
    assert client.post(next_url(project)).status_code == 204


@pytest.mark.parametrize("swapped", [False, True])
def test_submit_converts_displayed_choice_to_canonical(project, swapped):
    user = make_member(project)
    client = token_client(user)
    a = client.post(next_url(project)).json()
    Assignment.objects.filter(pk=a["id"]).update(display_order="21" if swapped else "12")
    r = client.post(
        f"/api/v1/assignments/{a['id']}/judgement/",
        {"choice": "left", "correct_left": "yes", "correct_right": "no", "rationale": "ok"},
        format="json",
    )
    assert r.status_code == 201
    assert r.json() == {
        "assignment": a["id"],
        "status": "submitted",
        "choice": "left",
        "revision": 1,
        "already_submitted": False,
    }
    j = Judgement.objects.with_pair_answers().get(assignment_id=a["id"])
    assert j.choice == ("2" if swapped else "1")
    assert (j.correct_1, j.correct_2) == (("no", "yes") if swapped else ("yes", "no"))


def test_submit_is_idempotent(project):
    client = token_client(make_member(project))
    a = client.post(next_url(project)).json()
    url = f"/api/v1/assignments/{a['id']}/judgement/"
    vote = {"choice": "right", "correct_left": "no", "correct_right": "yes"}
    assert client.post(url, vote, format="json").status_code == 201
    again = client.post(url, {**vote, "choice": "left"}, format="json")
    assert again.status_code == 200
    assert again.json()["choice"] == "right"
    assert again.json()["already_submitted"] is True
    assert Judgement.objects.filter(assignment_id=a["id"]).count() == 1


def test_submit_with_next_returns_the_next_assignment_as_next_would(project):
    user = make_member(project)
    client = token_client(user)
    vote = {"choice": "left", "correct_left": "yes", "correct_right": "no"}
    a = client.post(next_url(project)).json()
    seen = [a["id"]]
    for _ in range(2):
        r = client.post(f"/api/v1/assignments/{a['id']}/judgement/?next=true", vote, format="json")
        assert r.status_code == 201
        body = r.json()
        assert body["assignment"] == a["id"] and body["already_submitted"] is False
        following = body["next"]
        # The same payload as assignments/next/ gives for the lease now held.
        assert client.post(next_url(project)).json() == following
        assert following["id"] not in seen
        seen.append(following["id"])
        a = following
    # A retried submit: unchanged, and the open lease comes back as `next`.
    retry = client.post(
        f"/api/v1/assignments/{seen[-2]}/judgement/?next=1", vote, format="json"
    ).json()
    assert retry["already_submitted"] is True and retry["next"]["id"] == seen[-1]
    # The last item: nothing left.
    last = client.post(f"/api/v1/assignments/{a['id']}/judgement/?next=yes", vote, format="json")
    assert last.status_code == 201 and last.json()["next"] is None
    assert Judgement.objects.filter(assignment__annotator=user).count() == 3
    # Without the flag there is no `next`; a bad flag is a 400 that stores nothing.
    assert (
        "next"
        not in client.post(f"/api/v1/assignments/{a['id']}/judgement/", vote, format="json").json()
    )
    bad = client.post(f"/api/v1/assignments/{a['id']}/judgement/?next=maybe", vote, format="json")
    assert bad.status_code == 400 and "next" in bad.json()["error"]["fields"]


@pytest.mark.parametrize("swapped", [False, True])
def test_loop_bodies_are_exactly_what_the_documented_serializers_write(project, swapped):
    from annotate.api.assignments import AssignmentSerializer, SubmitJudgementApi

    client = token_client(make_member(project))
    a = client.post(next_url(project)).json()
    assert AssignmentSerializer(a).data == a
    Assignment.objects.filter(pk=a["id"]).update(display_order="21" if swapped else "12")
    vote = {"choice": "right", "correct_left": "no", "correct_right": "yes", "rationale": "r"}
    url = f"/api/v1/assignments/{a['id']}/judgement/"
    for query in ("?next=true", ""):
        body = client.post(url + query, vote, format="json").json()
        serializer = (
            SubmitJudgementApi.OutputWithNextSerializer
            if query
            else SubmitJudgementApi.OutputSerializer
        )
        assert serializer(body).data == body
    assert body["choice"] == "right"


def with_verdicts(project):
    """Every item with its Verdict row, as an import leaves it."""
    from curation.models import Verdict

    Verdict.objects.bulk_create(
        [Verdict(item=item, project=project) for item in project.items.all()],
        ignore_conflicts=True,
    )


def test_submit_with_next_adds_only_the_claim_statement(project):
    for _ in range(5):
        make_item(project)
    with_verdicts(project)
    client = token_client(make_member(project))
    a = client.post(next_url(project)).json()
    vote = {"choice": "left", "correct_left": "yes", "correct_right": "no"}
    # test_submit_query_count_is_constant's statements, then the claim (see
    # test_next_assignment_query_count_is_constant, without token and project).
    with exact_queries(6 if on_postgres() else 12):
        r = client.post(f"/api/v1/assignments/{a['id']}/judgement/?next=true", vote, format="json")
    assert r.status_code == 201 and r.json()["next"]["id"] != a["id"]


def test_submit_errors_name_displayed_fields(project):
    client = token_client(make_member(project))
    a = client.post(next_url(project)).json()
    r = client.post(f"/api/v1/assignments/{a['id']}/judgement/", {"choice": "left"}, format="json")
    assert r.status_code == 400
    error = r.json()["error"]
    assert error["code"] == "validation_error"
    assert set(error["fields"]) == {"correct_left", "correct_right"}
    assert not Judgement.objects.exists()


def test_submit_bad_choice_is_a_field_error(project):
    client = token_client(make_member(project))
    a = client.post(next_url(project)).json()
    r = client.post(f"/api/v1/assignments/{a['id']}/judgement/", {"choice": "1"}, format="json")
    assert r.status_code == 400
    assert "choice" in r.json()["error"]["fields"]


def test_someone_elses_assignment_is_404(project):
    a = token_client(make_member(project)).post(next_url(project)).json()
    other = token_client(make_member(project))
    r = other.post(f"/api/v1/assignments/{a['id']}/judgement/", {"choice": "tie"}, format="json")
    assert r.status_code == 404
    assert r.json()["error"]["code"] == "not_found"
    assert other.get(f"/api/v1/assignments/{a['id']}/image/").status_code == 404


def test_skip_then_submit_is_409(project):
    client = token_client(make_member(project))
    a = client.post(next_url(project)).json()
    assert (
        client.post(
            f"/api/v1/assignments/{a['id']}/skip/", {"reason": ""}, format="json"
        ).status_code
        == 400
    )
    r = client.post(f"/api/v1/assignments/{a['id']}/skip/", {"reason": "unreadable"}, format="json")
    assert r.json() == {"assignment": a["id"], "status": "skipped"}
    r = client.post(
        f"/api/v1/assignments/{a['id']}/judgement/",
        {"choice": "left", "correct_left": "yes", "correct_right": "no"},
        format="json",
    )
    assert r.status_code == 409
    assert r.json()["error"]["code"] == "conflict"
    assert client.post(next_url(project)).json()["id"] != a["id"]


def test_session_auth_needs_csrf(project):
    user = make_member(project)
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    r = client.post(next_url(project))
    assert r.status_code == 403
    assert "CSRF" in r.json()["error"]["message"]


def test_image_is_served_to_the_assignee(project, settings):
    from django.core.files.base import ContentFile
    from django.core.files.storage import default_storage

    client = token_client(make_member(project))
    a = client.post(next_url(project)).json()
    image = Assignment.objects.get(pk=a["id"]).item.image
    default_storage.save(image.file, ContentFile(b"\x89PNG fake"))
    r = client.get(a["image_url"])
    assert r.status_code == 200
    assert r["Content-Type"] == "image/png"
    assert b"".join(r.streaming_content) == b"\x89PNG fake"


# --- Query counts: the bench drives these two endpoints ----------------------------------


@contextmanager
def exact_queries(n: int):
    """Exactly n SQL statements, savepoints aside (they exist only because
    each test runs inside a transaction)."""
    with CaptureQueriesContext(connection) as ctx:
        yield
    sql = [
        q["sql"]
        for q in ctx.captured_queries
        if not q["sql"].startswith(("SAVEPOINT", "RELEASE SAVEPOINT"))
    ]
    assert len(sql) == n, "\n\n".join(sql)


def test_next_assignment_query_count_is_constant(project):
    for _ in range(20):
        make_item(project)
    user = make_member(project)
    client = token_client(user)
    # token+user, project+role, then the claim: on PostgreSQL one statement
    # checks the membership, looks at the leases, picks the item (with its
    # domain), counts it and creates the assignment; SQLite asks the same
    # questions in one SELECT (which brings the item and domain), then
    # counts and inserts the lease (annotate.loop.sqlite); the item's parts
    # (its content, issue 32).
    with exact_queries(4 if on_postgres() else 6):
        a = client.post(next_url(project)).json()
    # The resumed lease: token, project, the claim statement (PostgreSQL: it
    # returns the held lease with its item; SQLite: its questions, the lease,
    # then its item with domain); the item's parts.
    with exact_queries(4 if on_postgres() else 6):
        assert client.post(next_url(project)).json()["id"] == a["id"]


def test_submit_query_count_is_constant(project):
    user = make_member(project)
    with_verdicts(project)
    client = token_client(user)
    a = client.post(next_url(project)).json()
    vote = {"choice": "left", "correct_left": "yes", "correct_right": "no"}
    # token+user (a vote's small body needs no check before it is read:
    # config.request_limits), the locked assignment with item, project
    # and domain (and the membership test); then insert the judgement and
    # its per-slot answers, mark the assignment, count the vote for the item
    # and the annotator (one statement on PostgreSQL; on SQLite five, the
    # tallies' update returning them); curation's receiver locks the item's
    # verdict. The item is below its votes: the rule reads no votes and the
    # verdict stays as it is.
    with exact_queries(4 if on_postgres() else 8):
        r = client.post(f"/api/v1/assignments/{a['id']}/judgement/", vote, format="json")
    assert r.status_code == 201
