"""Password-reset requests, rate limited per address and per client.

Django's reset view sends a mail for every valid request, so without a limit
anyone can flood an owner's inbox, or probe the site at will. Each request
counts against the address asked for (the same count whether or not an
account has it, so the limit reveals nothing) and against the client's
address (config.security.client_ip, the one log-in failures count against);
past either limit the page says so with a 429 and sends nothing. Counts live
in Django's cache, for a fixed window from the first request
(PASSWORD_RESET_WINDOW_MINUTES)."""

from __future__ import annotations

import hashlib
import logging

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.core.cache import cache

from config.security import client_ip

log = logging.getLogger(__name__)


def _count(key: str, window: int) -> int:
    """One more request on `key`'s counter; the count so far."""
    cache.add(key, 0, timeout=window)  # starts the window; a no-op if running
    try:
        return cache.incr(key)
    except ValueError:  # the window ended between add() and incr()
        cache.set(key, 1, timeout=window)
        return 1


def reset_allowed(*, email: str, client: str | None) -> bool:
    """Count a reset request for `email` from `client`; False once either is
    over its limit. Both counters advance, so a client spraying addresses and
    many clients aiming at one address are each stopped."""
    window = settings.PASSWORD_RESET_WINDOW_MINUTES * 60
    address = hashlib.sha256(email.strip().lower().encode()).hexdigest()
    try:
        per_address = _count(f"password-reset:address:{address}", window)
        per_client = _count(f"password-reset:client:{client or 'unknown'}", window)
    except Exception:
        # A cache outage must not lock owners out of their accounts; the mail
        # still goes only to the owner's address. Said loudly in the log.
        log.exception("password-reset rate limit unavailable: the cache failed")
        return True
    return (
        per_address <= settings.PASSWORD_RESET_PER_ADDRESS
        and per_client <= settings.PASSWORD_RESET_PER_CLIENT
    )


class RateLimitedPasswordResetView(auth_views.PasswordResetView):
    def form_valid(self, form):
        if reset_allowed(email=form.cleaned_data["email"], client=client_ip(self.request)):
            return super().form_valid(form)
        context = self.get_context_data(
            form=form,
            rate_limited=True,
            window_minutes=settings.PASSWORD_RESET_WINDOW_MINUTES,
        )
        return self.render_to_response(context, status=429)
