"""The token page: create (shown once), replace, revoke."""

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.factories import make_user

pytestmark = pytest.mark.django_db


def test_a_user_creates_uses_and_revokes_a_token(client):
    user = make_user()
    client.force_login(user)
    assert "You have no token" in client.get("/account/token/").content.decode()
    created = client.post("/account/token/", {"action": "create"})
    key = Token.objects.get(user=user).key
    assert key in created.content.decode()
    assert created["Cache-Control"] == "no-store"
    # Shown once: the page does not show it again.
    assert key not in client.get("/account/token/").content.decode()

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert api.get("/api/v1/projects/").status_code == 200

    client.post("/account/token/", {"action": "revoke"})
    assert not Token.objects.filter(user=user).exists()
    assert api.get("/api/v1/projects/").status_code == 401


def test_replacing_a_token_invalidates_the_old_one(client):
    user = make_user()
    client.force_login(user)
    client.post("/account/token/", {"action": "create"})
    old = Token.objects.get(user=user).key
    client.post("/account/token/", {"action": "create"})
    assert Token.objects.get(user=user).key != old


def test_the_token_page_needs_login_and_csrf(client):
    assert client.get("/account/token/").status_code == 302
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    strict.force_login(make_user())
    assert strict.post("/account/token/", {"action": "create"}).status_code == 403


def test_a_password_change_revokes_the_users_api_tokens(client):
    user = make_user()
    other = make_user()
    token = Token.objects.create(user=user)
    kept = Token.objects.create(user=other)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert api.get("/api/v1/projects/").status_code == 200
    user.last_name = "Renamed"
    user.save()  # not a password change: the token stays
    user.save(update_fields=["last_login"])
    assert Token.objects.filter(user=user).exists()
    user.set_password("a-brand-new-passphrase-42")
    user.save()
    assert not Token.objects.filter(user=user).exists()
    assert api.get("/api/v1/projects/").status_code == 401
    assert Token.objects.filter(pk=kept.pk).exists()  # nobody else's


def test_the_shell_hint_is_for_site_administrators_only(client):
    """Issue 31: an annotator has no shell; the page used to show them
    `manage.py drf_create_token`."""
    client.force_login(make_user())
    page = client.get("/account/token/").content.decode()
    assert "drf_create_token" not in page
    client.force_login(make_user(is_superuser=True, is_staff=True))
    assert "drf_create_token" in client.get("/account/token/").content.decode()


def test_the_new_token_has_a_copy_button_and_styled_actions(client):
    client.force_login(make_user())
    page = client.post("/account/token/", {"action": "create"}).content.decode()
    assert 'data-copy="token-key"' in page and "js/copy.js" in page
    assert 'class="secondary"' in page and 'class="danger"' in page
