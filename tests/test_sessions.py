"""Sessions that bring their user along (accounts.Session, config.sessions,
config.auth_middleware): one query per signed-in request, and every rule
Django's sessions and authentication keep still holds."""

import pytest
from django.contrib.auth import SESSION_KEY, get_user_model
from django.contrib.sessions.backends.db import SessionStore as DjangoSessionStore
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from accounts.models import Session
from config.auth_backends import UserBackend, session_in_lookup
from config.sessions import SessionStore
from tests.factories import make_user
from tests.migrations import migrated_to

pytestmark = pytest.mark.django_db

HOME = "/"


def session_of(client) -> Session:
    return Session.objects.get(session_key=client.cookies["sessionid"].value)


def reads_users(sql: str) -> bool:
    """A query of the user table (the home page's "may create projects"
    check reads the user's groups and permissions, which is not that)."""
    return "auth_user" in sql and "auth_permission" not in sql and "auth_group" not in sql


def signed_in_as(client):
    """Who the home page thinks is signed in (None: sent to the login page)."""
    response = client.get(HOME)
    if response.status_code == 302:
        assert response["Location"].startswith(reverse("login"))
        return None
    assert response.status_code == 200
    return response.wsgi_request.user


def test_a_signed_in_request_reads_its_session_and_user_in_one_query(client):
    user = make_user()
    client.force_login(user)
    with CaptureQueriesContext(connection) as queries:
        assert signed_in_as(client) == user
    touching_users = [q["sql"] for q in queries if reads_users(q["sql"])]
    assert len(touching_users) == 1
    assert "accounts_session" in touching_users[0]


def test_the_user_column_follows_the_session_data():
    user = make_user()
    store = SessionStore()
    store["anything"] = 1
    store.save()
    assert Session.objects.get(session_key=store.session_key).user_id is None
    store[SESSION_KEY] = str(user.pk)
    store.save()
    assert Session.objects.get(session_key=store.session_key).user_id == user.pk
    del store[SESSION_KEY]
    store.save()
    assert Session.objects.get(session_key=store.session_key).user_id is None


def test_login_writes_the_column_and_logout_deletes_the_row(client):
    user = make_user()
    response = client.post(reverse("login"), {"username": user.username, "password": "pw"})
    assert response.status_code == 302
    row = session_of(client)
    assert row.user_id == user.pk
    client.post(reverse("logout"))
    assert not Session.objects.filter(session_key=row.session_key).exists()
    assert signed_in_as(client) is None


def test_a_deactivated_user_is_signed_out_on_the_next_request(client):
    user = make_user()
    client.force_login(user)
    assert signed_in_as(client) == user
    get_user_model().objects.filter(pk=user.pk).update(is_active=False)
    assert signed_in_as(client) is None


def test_a_password_changed_elsewhere_ends_the_session(client):
    """Django's session-hash check runs on the user read with the session."""
    user = make_user()
    client.force_login(user)
    assert signed_in_as(client) == user
    user.set_password("another-long-password-1")
    user.save()
    assert signed_in_as(client) is None


def test_the_data_not_the_column_says_who_is_signed_in(client):
    """A row whose user column names someone else (it cannot happen through
    Django, only by writing the table) signs in the user the data names: the
    backend then reads that user itself."""
    alice, mallory = make_user(), make_user()
    client.force_login(alice)
    Session.objects.filter(session_key=session_of(client).session_key).update(user=mallory)
    with CaptureQueriesContext(connection) as queries:
        assert signed_in_as(client) == alice
    assert sum(reads_users(q["sql"]) for q in queries) == 2  # the join, then alice


def test_deleting_a_user_deletes_their_sessions(client):
    user = make_user()
    client.force_login(user)
    key = session_of(client).session_key
    user.delete()
    assert not Session.objects.filter(session_key=key).exists()
    assert signed_in_as(client) is None


def test_expired_and_unknown_sessions_sign_nobody_in(client):
    user = make_user()
    client.force_login(user)
    Session.objects.filter(user=user).update(expire_date=timezone.now())
    assert signed_in_as(client) is None
    client.cookies["sessionid"] = "x" * 32
    assert signed_in_as(client) is None


def test_the_user_read_with_a_session_is_offered_to_no_one_else(client):
    """The backend sees a request's session only while that request's user is
    resolved; afterwards, and in any other call, it reads users itself."""
    alice, bob = make_user(), make_user()
    client.force_login(alice)
    assert signed_in_as(client) == alice
    assert session_in_lookup.get() is None
    with CaptureQueriesContext(connection) as queries:
        assert UserBackend().get_user(alice.pk) == alice
        assert UserBackend().get_user(bob.pk) == bob
    assert len(queries) == 2
    # Even with a loaded store in view, only the user it names is taken from it.
    store = SessionStore(session_key=session_of(client).session_key)
    store.load()
    assert store.session_user == alice
    token = session_in_lookup.set(store)
    try:
        with CaptureQueriesContext(connection) as queries:
            assert UserBackend().get_user(alice.pk) is store.session_user
            assert UserBackend().get_user(bob.pk) == bob
        assert len(queries) == 1
    finally:
        session_in_lookup.reset(token)


@pytest.mark.django_db(transaction=True)
def test_the_migration_copies_live_sessions_with_their_users():
    user = make_user()
    encode = DjangoSessionStore().encode  # as the old table's rows were written
    with migrated_to([("accounts", "0001_initial"), ("sessions", "0001_initial")]) as apps:
        Old = apps.get_model("sessions", "Session")
        later = timezone.now() + timezone.timedelta(days=1)
        Old.objects.create(
            session_key="a" * 32,
            session_data=encode({SESSION_KEY: str(user.pk)}),
            expire_date=later,
        )
        Old.objects.create(session_key="b" * 32, session_data=encode({"x": 1}), expire_date=later)
        Old.objects.create(session_key="c" * 32, session_data="garbage", expire_date=later)
        Old.objects.create(
            session_key="d" * 32, session_data=encode({SESSION_KEY: "999999"}), expire_date=later
        )
        Old.objects.create(
            session_key="e" * 32,
            session_data=encode({SESSION_KEY: str(user.pk)}),
            expire_date=timezone.now() - timezone.timedelta(days=1),
        )
    copied = dict(Session.objects.values_list("session_key", "user_id"))
    assert copied == {"a" * 32: user.pk, "b" * 32: None, "c" * 32: None, "d" * 32: None}
    assert SessionStore(session_key="a" * 32).load() == {SESSION_KEY: str(user.pk)}


def test_clearsessions_clears_expired_rows_of_the_new_table():
    from django.core.management import call_command
    from django.test import Client

    live, gone = make_user(), make_user()
    Client().force_login(live)
    Client().force_login(gone)
    Session.objects.filter(user=gone).update(expire_date=timezone.now())
    call_command("clearsessions")
    assert list(Session.objects.values_list("user_id", flat=True)) == [live.pk]


def test_signing_in_deletes_the_sessions_that_ran_out(client):
    from django.test import Client

    old, other = make_user(), make_user()
    Client().force_login(old)
    Client().force_login(other)
    Session.objects.filter(user=old).update(expire_date=timezone.now())
    user = make_user()
    response = client.post(reverse("login"), {"username": user.username, "password": "pw"})
    assert response.status_code == 302
    assert sorted(Session.objects.values_list("user_id", flat=True)) == sorted([other.pk, user.pk])
