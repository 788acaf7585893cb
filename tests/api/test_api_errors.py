"""One error format everywhere under /api/."""

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.factories import make_member, make_project

pytestmark = pytest.mark.django_db


def assert_error(response, status: int, code: str):
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"}
    assert body["error"]["code"] == code
    assert body["error"]["message"]
    assert isinstance(body["error"]["fields"], dict)
    return body["error"]


@pytest.fixture
def client():
    user = make_member(make_project(slug="err"), role="admin")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def test_anonymous_gets_401_with_a_challenge():
    response = APIClient().get("/api/v1/projects/")
    assert_error(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"] == "Token"


def test_a_bad_token_is_401():
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token nope")
    assert_error(client.get("/api/v1/projects/"), 401, "authentication_failed")


def test_unknown_url_under_api_is_a_json_404(client):
    assert_error(client.get("/api/v1/no-such-thing/"), 404, "not_found")


def test_unknown_project_is_404(client):
    assert_error(client.get("/api/v1/projects/nope/domains/"), 404, "not_found")


def test_wrong_method_is_405(client):
    assert_error(client.delete("/api/v1/projects/"), 405, "method_not_allowed")


def test_malformed_json_is_400(client):
    response = client.post(
        "/api/v1/projects/err/releases/", "{not json", content_type="application/json"
    )
    assert_error(response, 400, "parse_error")


def test_validation_errors_name_the_fields(client):
    error = assert_error(
        client.post("/api/v1/projects/err/releases/", {"seed": "x"}, format="json"),
        400,
        "validation_error",
    )
    assert set(error["fields"]) == {"version", "seed"}


def test_a_body_over_the_limit_is_413(client, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100
    response = client.post(
        "/api/v1/projects/err/releases/", {"version": "v" * 30, "notes": "x" * 200}, format="json"
    )
    assert_error(response, 413, "too_large")


def test_an_unknown_page_is_404(client):
    assert_error(client.get("/api/v1/projects/", {"page": 99}), 404, "not_found")


def test_page_size_is_capped(client):
    response = client.get("/api/v1/projects/", {"page_size": 10_000})
    assert response.status_code == 200
    assert response.json()["count"] == 1


def test_the_schema_and_docs_are_served(client):
    schema = APIClient().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert schema.status_code == 200
    page = APIClient().get("/api/docs/")
    html = page.content.decode()
    assert "vendor/swagger-ui/swagger-ui-bundle.js" in html
    assert "js/api_docs.js" in html
    # No inline script: every <script> has a src.
    assert html.count("<script") == html.count("<script src=")
    policy = page["Content-Security-Policy"]
    assert "script-src 'self'" in policy
    assert "unsafe" not in policy


def test_the_schemas_domain_kinds_are_the_models():
    from annotate.models import DomainKind
    from common.api import schema

    assert list(DomainKind.values) == schema.DOMAIN_KINDS
