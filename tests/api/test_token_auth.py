"""Token authentication: DRF's TokenAuthentication, which reads the token
and its user in one query (select_related)."""

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.factories import make_member, make_project

pytestmark = pytest.mark.django_db


def client_with(header: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    return client


def test_a_valid_token_authenticates_its_user_with_one_query(django_assert_num_queries):
    user = make_member(make_project())
    token = Token.objects.create(user=user)
    client = client_with(f"Token {token.key}")
    # The token with its user, then the page of projects and its count.
    with django_assert_num_queries(3):
        response = client.get("/api/v1/projects/")
    assert response.status_code == 200
    assert [p["role"] for p in response.json()["results"]] == ["annotator"]
    assert response.wsgi_request.user == user


@pytest.mark.parametrize("header", ["Token nonsense", "Token", "Token a b"])
def test_bad_tokens_are_401(header):
    make_member(make_project())
    response = client_with(header).get("/api/v1/projects/")
    assert response.status_code == 401
    assert response.json()["error"]["code"] in ("authentication_failed", "not_authenticated")


def test_an_inactive_users_token_is_401():
    user = make_member(make_project())
    token = Token.objects.create(user=user)
    user.is_active = False
    user.save()
    response = client_with(f"Token {token.key}").get("/api/v1/projects/")
    assert response.status_code == 401
    assert "inactive" in response.json()["error"]["message"].lower()
