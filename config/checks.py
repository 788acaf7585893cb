"""The app's own deploy checks: what a production SECRET_KEY and
ALLOWED_HOSTS must not be. settings.py refuses to start on them when
DJANGO_ENV=production; `manage.py check --deploy` reports them too (as
errors, so the command fails), whatever DJANGO_ENV says.

Django's own check (security.W009) accepts any 50 characters with 5
different ones: "abcde" * 10 passes it. These functions have no Django
import, so settings.py can call them before Django is set up."""

from __future__ import annotations

from collections.abc import Sequence

SECRET_KEY_MIN_LENGTH = 50
SECRET_KEY_MIN_UNIQUE = 16  # token_urlsafe(64) has about 55
PLACEHOLDERS = ("django-insecure", "insecure", "change-me", "changeme", "change_me", "secret-key",
                "secretkey", "example", "password", "default")  # fmt: skip


def secret_key_weakness(key: str) -> str | None:
    """Why `key` is not a random production secret, or None."""
    if len(key) < SECRET_KEY_MIN_LENGTH:
        return f"it is shorter than {SECRET_KEY_MIN_LENGTH} characters"
    if len(set(key)) < SECRET_KEY_MIN_UNIQUE:
        return f"it has fewer than {SECRET_KEY_MIN_UNIQUE} different characters"
    lowered = key.lower()
    for word in PLACEHOLDERS:
        if word in lowered:
            return f"it contains {word!r}, a placeholder rather than a random value"
    for period in range(1, len(key) // 3 + 1):
        if key == (key[:period] * (len(key) // period + 1))[: len(key)]:
            return "it repeats a short pattern"
    return None


def allowed_hosts_problem(hosts: Sequence[str]) -> str | None:
    """Why ALLOWED_HOSTS does not protect a production site, or None."""
    if not hosts:
        return "it is empty"
    if "*" in hosts:
        return "'*' accepts any Host header (host-header poisoning of links and e-mails)"
    return None


def deploy_checks(app_configs=None, **kwargs):
    from django.conf import settings
    from django.core.checks import Error

    errors = []
    weakness = secret_key_weakness(settings.SECRET_KEY)
    if weakness:
        errors.append(
            Error(
                f"SECRET_KEY is weak: {weakness}.",
                hint="python -c 'import secrets; print(secrets.token_urlsafe(64))'",
                id="triplet.E001",
            )
        )
    problem = allowed_hosts_problem(settings.ALLOWED_HOSTS)
    if problem:
        errors.append(
            Error(
                f"ALLOWED_HOSTS is unsafe: {problem}.",
                hint="Name the site's host(s), e.g. ALLOWED_HOSTS=studio.example.org",
                id="triplet.E002",
            )
        )
    return errors
