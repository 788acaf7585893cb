"""Log-in attempts are rate limited per username and address (django-axes):
after LOGIN_FAILURE_LIMIT failures the log-in page says so and refuses even
the right password until the cool-off has passed. Sessions from force_login,
the API's token and session authentication are not affected."""

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotate.management.commands.seed_demo import DEMO_PASSWORD
from tests.factories import make_user

pytestmark = pytest.mark.django_db

LIMIT = 5  # LOGIN_FAILURE_LIMIT's default
LOCKED = "Too many failed attempts"


def attempt(client, username, password, address="10.0.0.1", **extra):
    return client.post(
        "/accounts/login/",
        {"username": username, "password": password},
        REMOTE_ADDR=address,
        **extra,
    )


@pytest.fixture
def alice():
    return make_user("alice")


def fail(client, n, username="alice", address="10.0.0.1", **extra):
    for _ in range(n):
        response = attempt(client, username, "wrong", address, **extra)
    return response


def test_wrong_passwords_below_the_limit_get_the_usual_message(client, alice):
    response = fail(client, LIMIT - 1)
    assert response.status_code == 200
    assert b"didn't match" in response.content
    assert LOCKED.encode() not in response.content


def test_the_limit_th_failure_locks_out_with_a_clear_message(client, alice):
    response = fail(client, LIMIT)
    assert response.status_code == 429
    text = response.content.decode()
    assert "Too many failed attempts: logging in with this username from your address is" in text
    assert "blocked for 15 minutes after 5 failures" in text
    assert 'name="password"' in text  # still the log-in page
    # Even the right password is refused while locked out.
    locked = attempt(client, "alice", "pw")
    assert locked.status_code == 429 and LOCKED in locked.content.decode()
    assert "_auth_user_id" not in client.session


def test_the_lockout_is_per_username_and_address(client, alice):
    make_user("bob")
    fail(client, LIMIT)
    # The same account from elsewhere, and another account from here, still log in.
    assert attempt(Client(), "alice", "pw", address="10.0.0.2").status_code == 302
    assert attempt(Client(), "bob", "pw", address="10.0.0.1").status_code == 302


def test_logging_in_works_again_after_the_cool_off(client, alice):
    fail(client, LIMIT)
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))
    assert attempt(client, "alice", "pw").status_code == 302


def test_a_successful_log_in_resets_the_count(client, alice):
    fail(client, LIMIT - 1)
    assert attempt(client, "alice", "pw").status_code == 302
    response = fail(Client(), LIMIT - 1)
    assert response.status_code == 200


def test_limit_and_cool_off_come_from_the_environment(client, alice, settings):
    settings.AXES_FAILURE_LIMIT = 2
    settings.AXES_COOLOFF_TIME = timedelta(minutes=1)
    response = fail(client, 2)
    assert response.status_code == 429
    assert "blocked for 1 minute after 2 failures" in response.content.decode()


def test_behind_the_proxy_the_address_is_the_hop_the_proxy_appended(settings, alice):
    settings.BEHIND_PROXY = True
    # A client forging X-Forwarded-For cannot pick a fresh address per try:
    # the proxy appends the real one last.
    for n in range(LIMIT):
        response = attempt(
            Client(),
            "alice",
            "wrong",
            address="172.16.0.9",
            HTTP_X_FORWARDED_FOR=f"1.2.3.{n}, 203.0.113.7",
        )
    assert response.status_code == 429
    assert AccessAttempt.objects.get().ip_address == "203.0.113.7"


def test_force_login_and_the_api_are_not_affected_by_a_lockout(client, alice):
    fail(client, LIMIT)
    session = Client()
    session.force_login(alice)
    assert session.get(reverse("home")).status_code == 200
    assert session.get("/api/v1/projects/").status_code == 200
    from rest_framework.authtoken.models import Token

    token = Token.objects.create(user=alice)
    api = Client().get("/api/v1/projects/", HTTP_AUTHORIZATION=f"Token {token.key}")
    assert api.status_code == 200


# --- Passwords ----------------------------------------------------------------------


@pytest.mark.parametrize("weak", ["short1", "password123", "12345678901", "alice2026"])
def test_password_validators_refuse_weak_passwords(weak):
    user = make_user("alice")
    with pytest.raises(ValidationError):
        validate_password(weak, user)


def test_every_password_setting_form_runs_the_validators():
    from django.contrib.auth.forms import (
        AdminPasswordChangeForm,
        PasswordChangeForm,
        SetPasswordForm,
        UserCreationForm,
    )

    user = make_user("alice")
    weak = {"password1": "password", "password2": "password"}
    assert "password2" in AdminPasswordChangeForm(user, weak).errors
    assert (
        "new_password2"
        in SetPasswordForm(user, {"new_password1": "password", "new_password2": "password"}).errors
    )
    assert (
        "new_password2"
        in PasswordChangeForm(
            user, {"old_password": "pw", "new_password1": "password", "new_password2": "password"}
        ).errors
    )
    assert "password2" in UserCreationForm({"username": "carol", **weak}).errors


def test_the_demo_password_passes_the_validators():
    validate_password(DEMO_PASSWORD, make_user("annotator1"))


def test_demo_accounts_are_never_created_in_production(settings):
    from django.contrib.auth import get_user_model
    from django.core.management import CommandError, call_command

    settings.PRODUCTION = True
    with pytest.raises(CommandError, match="published password"):
        call_command("seed_demo")
    assert not get_user_model().objects.exists()
