"""Signing in and out with Django's own database sessions and ModelBackend:
the rules the site relies on, and the migration that retired the accounts
app's session table."""

from datetime import timedelta
from importlib import import_module

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from tests.factories import make_user
from tests.migrations import migrate, migrated_to

pytestmark = pytest.mark.django_db

HOME = "/"
PASSWORD = "pw"  # tests.factories.make_user's


def store(key=None):
    return import_module(settings.SESSION_ENGINE).SessionStore(session_key=key)


def session_key(client) -> str:
    return client.cookies[settings.SESSION_COOKIE_NAME].value


def signed_in_as(client):
    """Who the home page thinks is signed in (None: sent to the login page)."""
    response = client.get(HOME)
    if response.status_code == 302:
        assert response["Location"].startswith(reverse("login"))
        return None
    assert response.status_code == 200
    return response.wsgi_request.user


def sign_in(client, user):
    response = client.post(reverse("login"), {"username": user.username, "password": PASSWORD})
    assert response.status_code == 302
    return response


def test_signing_in_takes_a_fresh_key_and_signing_out_ends_the_session(client):
    user = make_user()
    client.get(reverse("login"))  # an anonymous session may exist before
    client.session.save()
    before = session_key(client)
    sign_in(client, user)
    key = session_key(client)
    assert key != before  # no session fixation
    assert signed_in_as(client) == user
    assert store(key).exists(key)
    client.post(reverse("logout"))
    assert not store(key).exists(key)
    assert signed_in_as(client) is None


def test_a_session_ends_session_cookie_age_after_sign_in(client):
    user = make_user()
    signed_at = timezone.now()
    sign_in(client, user)
    row = Session.objects.get(session_key=session_key(client))
    ends = signed_at + timedelta(seconds=settings.SESSION_COOKIE_AGE)
    assert abs(row.expire_date - ends) < timedelta(seconds=30)
    assert signed_in_as(client) == user  # a request does not extend it (no write)
    assert Session.objects.get(session_key=row.session_key).expire_date == row.expire_date


def test_expired_and_unknown_sessions_sign_nobody_in(client):
    user = make_user()
    client.force_login(user)
    session = store(session_key(client))
    session.load()
    session.set_expiry(-1)  # ran out a second ago
    session.save()
    assert signed_in_as(client) is None
    client.cookies[settings.SESSION_COOKIE_NAME] = "x" * 32
    assert signed_in_as(client) is None


def test_a_deactivated_user_is_signed_out_on_the_next_request(client):
    user = make_user()
    client.force_login(user)
    assert signed_in_as(client) == user
    get_user_model().objects.filter(pk=user.pk).update(is_active=False)
    assert signed_in_as(client) is None


def test_a_deleted_user_signs_nobody_in(client):
    user = make_user()
    client.force_login(user)
    user.delete()
    assert signed_in_as(client) is None


def test_a_password_changed_elsewhere_ends_the_session(client):
    """Django's session-hash check."""
    user = make_user()
    client.force_login(user)
    assert signed_in_as(client) == user
    user.set_password("another-long-password-1")
    user.save()
    assert signed_in_as(client) is None


def test_changing_the_password_keeps_this_session_and_ends_the_others(client):
    """PasswordChangeView calls update_session_auth_hash for its own session."""
    user = make_user()
    elsewhere = Client()
    sign_in(elsewhere, user)
    sign_in(client, user)
    new = "n3w-Secret-x"
    response = client.post(
        reverse("password_change"),
        {"old_password": PASSWORD, "new_password1": new, "new_password2": new},
    )
    assert response.status_code == 302
    assert signed_in_as(client) == user
    assert signed_in_as(elsewhere) is None


def test_signing_in_deletes_the_sessions_that_ran_out(client):
    live = Client()
    live.force_login(make_user())
    past = timezone.now() - timedelta(seconds=1)
    Session.objects.create(session_key="e" * 32, session_data="", expire_date=past)
    sign_in(client, make_user())
    keys = set(Session.objects.values_list("session_key", flat=True))
    assert keys == {session_key(live), session_key(client)}


# --- The accounts app's session table, retired (annotate 0013) ------------------------------

BEFORE = [("annotate", "0012_domain_correctness_wording")]
AFTER = [("annotate", "0013_drop_accounts_sessions")]


@pytest.mark.django_db(transaction=True)
def test_the_migration_drops_the_old_table_and_signs_everybody_out():
    """A database migrated by the old code: the accounts app's table and
    migrations recorded, stale rows in django_session."""
    recorder = MigrationRecorder(connection)
    with migrated_to(BEFORE):
        with connection.cursor() as cursor:
            cursor.execute(
                "CREATE TABLE accounts_session (session_key varchar(40) PRIMARY KEY, "
                "session_data text NOT NULL, expire_date timestamp NOT NULL, user_id bigint NULL)"
            )
        recorder.record_applied("accounts", "0001_initial")
        recorder.record_applied("accounts", "0002_copy_sessions")
        Session.objects.create(
            session_key="s" * 32, session_data="", expire_date=timezone.now() + timedelta(days=1)
        )
        migrate(AFTER)
        assert "accounts_session" not in connection.introspection.table_names()
        assert not Session.objects.exists()
        applied = recorder.applied_migrations()
        assert not [key for key in applied if key[0] == "accounts"]
        assert ("annotate", "0013_drop_accounts_sessions") in applied
