"""Membership and role are checked before a request body is read (issue 29):
a signed-in stranger's upload or judgement to someone else's project or
assignment is a 404 (a member without the role: 403), and not a byte of its
body is read, whether it comes with a session and the CSRF check Django
runs in production or with an API token. Every route of the site is tried."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.authtoken.models import Token

from common.body_guard import guard_of, signed_in
from tests.factories import make_assignment, make_item, make_member, make_project, make_user

pytestmark = pytest.mark.django_db

GIB = 1024**3
MIB = 1024**2
MULTIPART = "multipart/form-data; boundary=BoUnDaRy"


class RecordingBody:
    """A request body that says whether anything read it (and never holds
    the bytes its Content-Length claims)."""

    def __init__(self):
        self.reads = 0

    def read(self, *args):
        self.reads += 1
        return b""

    def readline(self, *args):
        self.reads += 1
        return b""


def send(client, path: str, length: int, *, method="POST", content_type=MULTIPART, **extra):
    """`path` with a body of `length` bytes that nothing may read: (response, reads)."""
    body = RecordingBody()
    environ = {"wsgi.input": body, "CONTENT_LENGTH": str(length), "CONTENT_TYPE": content_type}
    response = client.generic(method, path, **environ, **extra)
    return response, body.reads


def session_client(user) -> Client:
    """A browser: its session, and the CSRF check production runs (it reads
    a POST's form to find the token)."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


def token_headers(user) -> dict:
    token, _ = Token.objects.get_or_create(user=user)
    return {"HTTP_AUTHORIZATION": f"Token {token.key}"}


@pytest.fixture
def scene():
    """A project with an annotator's open assignment, and a stranger."""
    project = make_project(slug="victim")
    owner = make_member(project, role="annotator")
    assignment = make_assignment(make_item(project), owner)
    return project, assignment, make_user(username="stranger")


def test_a_strangers_judgement_body_to_someone_elses_assignment_is_refused_unread(scene):
    _, assignment, stranger = scene
    response, reads = send(session_client(stranger), f"/a/{assignment.pk}/submit/", GIB)
    assert (response.status_code, reads) == (404, 0)
    response, reads = send(
        Client(), f"/api/v1/assignments/{assignment.pk}/judgement/", GIB, **token_headers(stranger)
    )
    assert (response.status_code, reads) == (404, 0)
    assert response.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize(
    "path",
    [
        "/p/victim/import/",
        "/api/v1/projects/victim/imports/",
        "/p/victim/releases/new/",
        "/api/v1/projects/victim/releases/",
        "/p/victim/releases/1/leaderboard/",  # the predictions upload
        "/api/v1/projects/victim/releases/1/evaluations/",
        "/p/victim/curation/1/decide/",
        "/api/v1/projects/victim/verdicts/1/decision/",
    ],
)
def test_a_strangers_upload_to_a_project_is_404_unread_by_session_and_by_token(scene, path):
    _, _, stranger = scene
    client, extra = (
        (Client(), token_headers(stranger))
        if path.startswith("/api/")
        else (session_client(stranger), {})
    )
    response, reads = send(client, path, GIB - 1, **extra)
    assert (response.status_code, reads) == (404, 0)


def test_a_member_without_the_role_is_403_unread(scene):
    project, assignment, _ = scene
    annotator = make_member(project, role="annotator")
    curator = make_member(project, role="curator")
    for path in ("/p/victim/import/", "/p/victim/releases/1/leaderboard/"):
        response, reads = send(session_client(annotator), path, GIB)
        assert (response.status_code, reads) == (403, 0), path
    response, reads = send(
        Client(), "/api/v1/projects/victim/imports/", GIB, **token_headers(curator)
    )
    assert (response.status_code, reads) == (403, 0)
    assert response.json()["error"]["code"] == "permission_denied"
    # A curator of the project is still a stranger to an annotator's assignment.
    response, reads = send(session_client(curator), f"/a/{assignment.pk}/submit/", GIB)
    assert (response.status_code, reads) == (404, 0)


def test_the_checked_member_still_gets_through_to_the_view(scene):
    project, assignment, _ = scene
    admin = make_member(project, role="admin")
    # Past the gate, the view reads the body: here a blank one is no dataset.
    client = Client()
    client.force_login(admin)
    response = client.post("/p/victim/import/", {})
    assert response.status_code == 400 and "dataset" in response.context["form"].errors
    owner_client = Client()
    owner_client.force_login(assignment.annotator)
    vote = {"choice": "left", "correct_left": "yes", "correct_right": "no", "rationale": "r"}
    response = owner_client.post(f"/a/{assignment.pk}/submit/", vote)
    assert response.status_code == 302


def test_a_small_body_goes_to_the_view_unchecked_and_the_view_still_refuses_a_stranger(
    scene, settings
):
    """Up to UNCHECKED_BODY_MAX_BYTES, which any view takes unchecked, the
    guard asks nothing (a vote's small JSON costs no statement there); the
    view's own check answers the stranger as the guard would, and stores
    nothing."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from annotate.models import Judgement

    _, assignment, stranger = scene
    url = f"/api/v1/assignments/{assignment.pk}/judgement/"
    vote = b'{"choice": "left", "correct_left": "yes", "correct_right": "no"}'
    client, headers = Client(), token_headers(stranger)
    with CaptureQueriesContext(connection) as ctx:
        response = client.post(url, vote, content_type="application/json", **headers)
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"
    assert not Judgement.objects.exists()
    # The owner's vote: their assignment is read once (the vote's locked
    # read), not first by the guard too.
    from annotate.loop.postgres import PAGE_SQL

    own_read = PAGE_SQL.split("WHERE")[0].strip()
    with CaptureQueriesContext(connection) as ctx:
        response = Client().post(
            url, vote, content_type="application/json", **token_headers(assignment.annotator)
        )
    assert response.status_code == 201, response.content
    assert sum(own_read in q["sql"] for q in ctx.captured_queries) == 1
    # Just over the bound, the guard refuses it unread, as before.
    response, reads = send(
        client, url, settings.UNCHECKED_BODY_MAX_BYTES + 1, **token_headers(stranger)
    )
    assert (response.status_code, reads) == (404, 0)
    response, reads = send(
        session_client(stranger),
        f"/a/{assignment.pk}/submit/",
        settings.UNCHECKED_BODY_MAX_BYTES + 1,
    )
    assert (response.status_code, reads) == (404, 0)


def _routes(patterns, prefix=""):
    for p in patterns:
        if isinstance(p, URLResolver):
            yield from _routes(p.url_patterns, prefix + str(p.pattern))
        elif isinstance(p, URLPattern):
            yield prefix + str(p.pattern), p.callback


# The first pattern of a route is the one Django resolves (config.urls puts
# its rate-limited password reset ahead of django.contrib.auth's own).
ROUTES = sorted(
    {
        route: callback
        for route, callback in reversed(list(_routes(get_resolver().url_patterns)))
        if not route.startswith("admin/")
    }.items()
)
SAMPLE = {
    "slug": "victim",
    "domain_slug": "vqa",
    "path": "images/x.png",
    "token": "not-a-token",
    "uidb64": "MQ",
}


def _path(route: str, assignment_id: int) -> str:
    import re

    def value(match):
        converter, name = match.group(1) or "str", match.group(2)
        if name == "assignment_id":
            return str(assignment_id)
        return SAMPLE.get(name, "1" if converter == "int" else "x")

    return "/" + re.sub(r"<(?:(\w+):)?(\w+)>", value, route)


@pytest.mark.parametrize("route", [r for r, _ in ROUTES])
def test_no_route_reads_a_strangers_huge_body(scene, route):
    """Every route: a signed-in stranger's 1 GiB body is refused (404/403
    by a view's check, 413 by its size bound) before a byte is read."""
    _, assignment, stranger = scene
    path = _path(route, assignment.pk)
    response, reads = send(session_client(stranger), path, GIB)
    assert reads == 0 and response.status_code in (403, 404, 413), path
    if path.startswith("/api/"):
        for method in ("POST", "PUT", "PATCH", "DELETE"):
            response, reads = send(Client(), path, GIB, method=method, **token_headers(stranger))
            assert reads == 0 and response.status_code in (403, 404, 413), (method, path)


GUARDED = [(r, c) for r, c in ROUTES if guard_of(c)[0] not in (None, signed_in)]


def test_every_route_with_a_project_or_an_assignment_that_takes_a_body_is_guarded():
    """The routes that change a project or an assignment all declare their
    check (a forgotten one would only take bodies under 1 MiB, unchecked)."""
    names = {r for r, _ in GUARDED}
    assert len(names) >= 40
    for needed in (
        "p/<slug:slug>/import/",
        "a/<int:assignment_id>/submit/",
        "api/v1/assignments/<int:assignment_id>/judgement/",
        "api/v1/projects/<slug:slug>/imports/",
        "api/v1/projects/<slug:slug>/releases/<int:release_id>/evaluations/",
        "p/<slug:slug>/releases/<int:release_id>/leaderboard/",
    ):
        assert needed in names


@pytest.mark.parametrize("route", [r for r, _ in GUARDED])
def test_a_guarded_route_refuses_a_strangers_body_below_every_size_bound(scene, route):
    """2 MiB: over the unchecked bound, under the checked one: only the
    view's check can refuse it, and it does, unread."""
    _, assignment, stranger = scene
    path = _path(route, assignment.pk)
    client, extra = (
        (Client(), token_headers(stranger))
        if route.startswith("api/")
        else (session_client(stranger), {})
    )
    response, reads = send(client, path, 2 * MIB, **extra)
    assert reads == 0 and response.status_code in (403, 404), path


def test_a_body_nobody_checks_stays_small(scene, settings):
    _, _, stranger = scene
    client = session_client(stranger)
    # The password form: any signed-in user's, checked by nobody before CSRF reads it.
    response, reads = send(
        client, "/accounts/password_change/", settings.UNCHECKED_BODY_MAX_BYTES + 1
    )
    assert (response.status_code, reads) == (413, 0)
    # Their own account's pages take a form-sized body, not an upload.
    response, reads = send(client, "/account/token/", settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)
    assert (response.status_code, reads) == (413, 0)
