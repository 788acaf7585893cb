"""Refusals before a request body is read: oversized and anonymous uploads,
NUL in query strings; and the 500s of hostile bodies turned into 400/409 in
the usual error shape."""

from __future__ import annotations

import json

import pytest
from django.db.models import QuerySet
from django.http.multipartparser import MultiPartParser
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from curation.models import Release, Verdict
from tests.factories import make_item, make_member, make_project, make_user

pytestmark = pytest.mark.django_db

BOUNDARY = "BoUnDaRy"


def multipart(size: int, csrf: str = "") -> bytes:
    parts = []
    if csrf:
        parts.append(
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="csrfmiddlewaretoken"\r\n\r\n'
            f"{csrf}\r\n"
        )
    parts.append(
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="dataset"; filename="d.json"\r\n'
        "Content-Type: application/json\r\n\r\n"
    )
    return "".join(parts).encode() + b" " * size + f"\r\n--{BOUNDARY}--\r\n".encode()


@pytest.fixture
def unparsed(monkeypatch):
    """Fails the test if any multipart body is parsed (spooled)."""

    def parse(self):
        raise AssertionError("the body was read")

    monkeypatch.setattr(MultiPartParser, "parse", parse)


def test_an_anonymous_upload_with_a_csrf_cookie_is_refused_unread(unparsed):
    project = make_project()
    client = Client(enforce_csrf_checks=True)
    client.get("/accounts/login/")
    token = client.cookies["csrftoken"].value
    response = client.generic(
        "POST",
        f"/p/{project.slug}/import/",
        multipart(200_000, csrf=token),
        content_type=f"multipart/form-data; boundary={BOUNDARY}",
        HTTP_X_CSRFTOKEN=token,
    )
    assert response.status_code == 403
    assert b"Sign in before uploading" in response.content


def test_the_log_in_form_still_works_anonymously(client):
    user = make_user(username="u1")
    user.set_password("pw-Long-enough-123")
    user.save()
    response = client.post("/accounts/login/", {"username": "u1", "password": "pw-Long-enough-123"})
    assert response.status_code == 302


def test_an_anonymous_api_upload_is_401_in_the_error_shape(unparsed):
    project = make_project()
    response = APIClient().generic(
        "POST",
        f"/api/v1/projects/{project.slug}/imports/",
        multipart(200_000),
        content_type=f"multipart/form-data; boundary={BOUNDARY}",
    )
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"
    assert response["WWW-Authenticate"] == "Token"


def test_a_bad_token_does_not_open_the_gate(unparsed):
    project = make_project()
    response = APIClient().generic(
        "POST",
        f"/api/v1/projects/{project.slug}/imports/",
        multipart(200_000),
        content_type=f"multipart/form-data; boundary={BOUNDARY}",
        HTTP_AUTHORIZATION="Token not-a-token",
    )
    assert response.status_code == 401


def test_a_token_holder_gets_through_to_the_view():
    project = make_project()
    admin = make_user()
    make_member(project, admin, role="admin")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=admin).key}")
    response = client.generic(
        "POST",
        f"/api/v1/projects/{project.slug}/imports/",
        multipart(200_000),
        content_type=f"multipart/form-data; boundary={BOUNDARY}",
    )
    assert response.status_code == 400  # the view's own answer: a blank file is no dataset


def test_a_body_over_the_upload_limit_is_413_unread(settings, unparsed):
    settings.UPLOAD_MAX_BYTES = 100_000
    project = make_project()
    admin = make_user()
    make_member(project, admin, role="admin")
    client = Client()
    client.force_login(admin)
    response = client.generic(
        "POST",
        f"/p/{project.slug}/import/",
        multipart(200_000),
        content_type=f"multipart/form-data; boundary={BOUNDARY}",
    )
    assert response.status_code == 413
    api = APIClient()
    api.force_authenticate(admin)
    response = api.generic(
        "POST",
        f"/api/v1/projects/{project.slug}/imports/",
        multipart(200_000),
        content_type=f"multipart/form-data; boundary={BOUNDARY}",
    )
    assert response.status_code == 413 and response.json()["error"]["code"] == "too_large"


@pytest.mark.parametrize("query", ["q=%00", "domain=vqa%00", "%00=1"])
def test_nul_in_a_query_string_is_a_400(client, query):
    project = make_project()
    curator = make_user()
    make_member(project, curator, role="curator")
    client.force_login(curator)
    assert client.get(f"/p/{project.slug}/curation/?{query}").status_code == 400
    api = APIClient()
    api.force_authenticate(curator)
    response = api.get(f"/api/v1/projects/{project.slug}/verdicts/?{query}")
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid"


def test_a_deeply_nested_json_body_is_a_400(client):
    project = make_project()
    admin = make_user()
    make_member(project, admin, role="admin")
    api = APIClient()
    api.force_authenticate(admin)
    body = "[" * 5_000 + "]" * 5_000
    response = api.generic(
        "POST", f"/api/v1/projects/{project.slug}/releases/", body, content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "parse_error"
    assert "nested too deeply" in response.json()["error"]["message"]


def test_two_releases_racing_for_one_version_end_in_a_409(monkeypatch):
    project = make_project()
    item = make_item(project=project)  # a release needs a decided item (issue 22)
    Verdict.objects.update_or_create(
        item=item,
        defaults={
            "project": project,
            "status": "agreed",
            "final_choice": "1",
            "provenance": "unanimous",
        },
    )
    Release.objects.create(project=project, version="v1", domains=["vqa"])
    admin = make_user()
    make_member(project, admin, role="curator")
    exists = QuerySet.exists
    # Both passed the version check (only that one: the project has a decided item).
    monkeypatch.setattr(
        QuerySet, "exists", lambda self: False if self.model is Release else exists(self)
    )
    api = APIClient()
    api.force_authenticate(admin)
    response = api.post(
        f"/api/v1/projects/{project.slug}/releases/", {"version": "v1"}, format="json"
    )
    assert response.status_code == 409 and response.json()["error"]["code"] == "exists", (
        response.json()
    )
    assert Release.objects.filter(project=project, version="v1").count() == 1
    assert json.dumps(response.json())


def test_the_middlewares_error_shape_is_the_apis():
    from common.api.errors import error_body as api_shape
    from config.request_limits import error_body

    assert error_body("x", "y") == api_shape("x", "y")
