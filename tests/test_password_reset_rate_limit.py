"""Password-reset requests are rate limited per address and per client
(issue 29; config.password_reset): past PASSWORD_RESET_PER_ADDRESS requests
for one address, or PASSWORD_RESET_PER_CLIENT from one client, in the window
the page says so with a 429 and nothing is sent. The count is the same for
addresses with and without an account, so the limit tells nothing."""

import logging
import time

import pytest
from django.core import mail
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from tests.factories import make_user

pytestmark = pytest.mark.django_db

PER_ADDRESS, PER_CLIENT = 3, 10  # the defaults
LIMITED = "Too many password-reset requests"


def ask(email, address="10.0.0.1", **extra):
    return Client().post(reverse("password_reset"), {"email": email}, REMOTE_ADDR=address, **extra)


@pytest.fixture
def owner():
    return make_user("owner", email="owner@example.org")


def test_requests_up_to_the_limit_send_mail_and_the_next_is_refused(owner):
    for _ in range(PER_ADDRESS):
        assert ask("owner@example.org").status_code == 302
    assert len(mail.outbox) == PER_ADDRESS
    refused = ask("owner@example.org")
    assert refused.status_code == 429
    text = refused.content.decode()
    assert f"{LIMITED} for this address or from your network: nothing was sent." in text
    assert "Try again in 60 minutes" in text
    assert 'name="email"' in text  # still the form
    assert len(mail.outbox) == PER_ADDRESS


def test_the_address_limit_holds_from_every_client_and_ignores_case(owner):
    for n in range(PER_ADDRESS):
        assert ask("Owner@Example.org", address=f"10.0.1.{n}").status_code == 302
    assert ask("owner@example.org", address="10.0.2.1").status_code == 429
    assert len(mail.outbox) == PER_ADDRESS


def test_an_unknown_address_is_counted_alike(owner):
    """Known or not, the answers are the same: the limit reveals no account."""
    known = [ask("owner@example.org").status_code for _ in range(PER_ADDRESS + 1)]
    unknown = [ask("nobody@example.org").status_code for _ in range(PER_ADDRESS + 1)]
    assert known == unknown == [302] * PER_ADDRESS + [429]


def test_the_client_limit_stops_one_client_spraying_addresses(owner):
    for n in range(PER_CLIENT):
        assert ask(f"someone{n}@example.org").status_code == 302
    assert ask("owner@example.org").status_code == 429
    assert mail.outbox == []
    # Another client still gets the owner a mail.
    assert ask("owner@example.org", address="10.0.0.2").status_code == 302
    assert len(mail.outbox) == 1


def test_behind_the_proxy_the_client_is_the_last_forwarded_hop(owner, settings):
    settings.BEHIND_PROXY = True
    for n in range(PER_CLIENT):
        # A forged first hop does not make each request a new client.
        forwarded = f"203.0.113.{n}, 198.51.100.7"
        assert ask(f"x{n}@example.org", HTTP_X_FORWARDED_FOR=forwarded).status_code == 302
    assert ask("y@example.org", HTTP_X_FORWARDED_FOR="203.0.113.99, 198.51.100.7").status_code == (
        429
    )
    assert ask("y@example.org", HTTP_X_FORWARDED_FOR="198.51.100.8").status_code == 302


def test_the_limits_are_settings(owner, settings):
    settings.PASSWORD_RESET_PER_ADDRESS = 1
    assert ask("owner@example.org").status_code == 302
    assert ask("owner@example.org").status_code == 429


def test_requests_are_allowed_again_after_the_window(owner, monkeypatch):
    for _ in range(PER_ADDRESS):
        ask("owner@example.org")
    assert ask("owner@example.org").status_code == 429
    later = time.time() + 61 * 60
    monkeypatch.setattr("django.core.cache.backends.locmem.time.time", lambda: later)
    assert ask("owner@example.org").status_code == 302


def test_a_cache_outage_lets_owners_reset_and_is_logged(owner, monkeypatch, caplog):
    def broken(*args, **kwargs):
        raise ConnectionError("cache unreachable")

    monkeypatch.setattr(cache, "add", broken)
    with caplog.at_level(logging.ERROR, logger="config.password_reset"):
        assert ask("owner@example.org").status_code == 302
    assert "password-reset rate limit unavailable" in caplog.text
    assert len(mail.outbox) == 1


def test_a_form_error_is_not_counted(owner):
    for _ in range(PER_ADDRESS + 2):
        assert ask("not an address").status_code == 200
    assert ask("owner@example.org").status_code == 302
