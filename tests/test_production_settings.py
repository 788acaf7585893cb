"""DJANGO_ENV=production: unsafe values stop the process naming the variable,
the hardening is on by default, and `manage.py check --deploy --fail-level
WARNING` reports nothing. Each case runs in a fresh interpreter."""

import json
import os
import subprocess
import sys

import pytest

from tests.fresh_process import REPO, SETTINGS_VARIABLES, run_django

# Fixed (not drawn at import): pytest-xdist's workers must collect the same test ids.
KEY = "liNecABDSHPTnb_9ep2CVJmRI6Ne-G-uwZ1z6P0H_Wgz4Y_BcrivKgtzJN-FNL6aoa5H0uwH5YNrQNVfghFKbQ"
PRODUCTION = {"DJANGO_ENV": "production", "SECRET_KEY": KEY, "ALLOWED_HOSTS": "studio.example"}


def manage(tmp_path, *args, **env) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in SETTINGS_VARIABLES}
    # Set by the browser tests' fixture in this process; a deployment never has it.
    environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    environ.update(DJANGO_SETTINGS_MODULE="config.settings", DATA_DIR=str(tmp_path), **env)
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )


def deploy_check(tmp_path, **env):
    return manage(tmp_path, "check", "--deploy", "--fail-level", "WARNING", **env)


def test_the_deploy_check_reports_nothing_in_production(tmp_path):
    result = deploy_check(tmp_path, **PRODUCTION)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "System check identified no issues (0 silenced)."
    assert "WARNING" not in result.stderr and "?:" not in result.stderr


def test_the_deploy_check_would_catch_development_settings(tmp_path):
    # The test above is not vacuous: the development defaults fail it.
    result = deploy_check(tmp_path)
    assert result.returncode != 0
    for warning in ("security.W004", "security.W008", "security.W009", "security.W012"):
        assert warning in result.stderr


def test_behind_a_tls_proxy_the_redirect_can_be_left_to_the_proxy(tmp_path):
    env = {**PRODUCTION, "BEHIND_PROXY": "true", "SECURE_SSL_REDIRECT": "false"}
    result = deploy_check(tmp_path, **env)
    assert result.returncode == 0, result.stderr
    assert "(1 silenced)" in result.stdout


REPORT = """
import json
from django.conf import settings
from django.test import Client
response = Client().get("/accounts/login/", secure=True, HTTP_HOST="studio.example")
insecure = Client().get("/accounts/login/", HTTP_HOST="studio.example")
health = Client().get("/healthz", HTTP_HOST="studio.example")
csrf = response.cookies["csrftoken"]
print(json.dumps({
    "debug": settings.DEBUG,
    "ssl_redirect": settings.SECURE_SSL_REDIRECT,
    "session_cookie_secure": settings.SESSION_COOKIE_SECURE,
    "csrf_cookie_secure": settings.CSRF_COOKIE_SECURE,
    "hsts": response.get("Strict-Transport-Security"),
    "csrf_cookie": {k: csrf[k] for k in ("httponly", "samesite", "secure")},
    "http_redirects_to": insecure.get("Location"),
    "healthz_over_http": health.status_code,
    "proxy_header": getattr(settings, "SECURE_PROXY_SSL_HEADER", None),
}))
"""


def report(tmp_path, **env) -> dict:
    result = run_django(REPORT, data_dir=tmp_path, **env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_production_turns_the_hardening_on(tmp_path):
    settings = report(tmp_path, **PRODUCTION)
    assert settings == {
        "debug": False,
        "ssl_redirect": True,
        "session_cookie_secure": True,
        "csrf_cookie_secure": True,
        "hsts": "max-age=31536000; includeSubDomains; preload",
        "csrf_cookie": {"httponly": True, "samesite": "Lax", "secure": True},
        "http_redirects_to": "https://studio.example/accounts/login/",
        # The container health check calls it over plain HTTP.
        "healthz_over_http": 200,
        "proxy_header": None,
    }


def test_hsts_subdomains_and_preload_can_be_switched_off(tmp_path):
    env = {**PRODUCTION, "SECURE_HSTS_INCLUDE_SUBDOMAINS": "no", "SECURE_HSTS_PRELOAD": "no"}
    assert report(tmp_path, **env)["hsts"] == "max-age=31536000"
    # A deliberate choice: the deploy check stays quiet about it.
    assert deploy_check(tmp_path, **env).returncode == 0


def test_behind_proxy_trusts_x_forwarded_proto(tmp_path):
    proxy = report(tmp_path, **PRODUCTION, BEHIND_PROXY="true")["proxy_header"]
    assert proxy == ["HTTP_X_FORWARDED_PROTO", "https"]


def test_development_keeps_plain_http_working(tmp_path):
    settings = report(tmp_path, ALLOWED_HOSTS="studio.example")
    assert settings["ssl_redirect"] is False and settings["session_cookie_secure"] is False
    assert settings["hsts"] is None and settings["http_redirects_to"] is None


@pytest.mark.parametrize(
    ("variable", "env"),
    [
        ("DJANGO_ENV", {"DJANGO_ENV": "prod"}),
        ("SECRET_KEY", {**PRODUCTION, "SECRET_KEY": ""}),
        ("SECRET_KEY", {**PRODUCTION, "SECRET_KEY": "too-short"}),
        ("SECRET_KEY", {**PRODUCTION, "SECRET_KEY": "insecure-embedded-default-change-me" * 2}),
        ("SECRET_KEY", {**PRODUCTION, "SECRET_KEY": "django-insecure-" + KEY}),
        ("SECRET_KEY", {**PRODUCTION, "SECRET_KEY": "ab" * 40}),
        # Past Django's own bar (50 characters, 5 different) but not random:
        ("SECRET_KEY", {**PRODUCTION, "SECRET_KEY": "abcdef" * 10}),
        ("SECRET_KEY", {**PRODUCTION, "SECRET_KEY": "0123456789abcdefghij" * 3}),
        ("SECRET_KEY", {**PRODUCTION, "SECRET_KEY": "please-change-me-" + KEY}),
        ("ALLOWED_HOSTS", {**PRODUCTION, "ALLOWED_HOSTS": "*"}),
        ("ALLOWED_HOSTS", {**PRODUCTION, "ALLOWED_HOSTS": "studio.example,*"}),
        ("DEBUG", {**PRODUCTION, "DEBUG": "true"}),
        ("ALLOWED_HOSTS", {**PRODUCTION, "ALLOWED_HOSTS": ""}),
        ("SESSION_COOKIE_AGE", {"SESSION_COOKIE_AGE": "soon"}),
        ("LOGIN_FAILURE_LIMIT", {"LOGIN_FAILURE_LIMIT": "0"}),
        ("LOGIN_LOCKOUT_MINUTES", {"LOGIN_LOCKOUT_MINUTES": "x"}),
        ("SECURE_HSTS_PRELOAD", {"SECURE_HSTS_PRELOAD": "perhaps"}),
    ],
    ids=lambda v: ",".join(f"{k}={v[k][:12]}" for k in v) if isinstance(v, dict) else None,
)
def test_unsafe_or_bad_values_stop_startup_naming_the_variable(tmp_path, variable, env):
    result = run_django("", data_dir=tmp_path, **env)
    assert result.returncode != 0
    message = result.stderr.strip().splitlines()[-1]
    assert message.startswith("django.core.exceptions.ImproperlyConfigured: ")
    assert variable in message


def test_session_lifetime_is_configurable(tmp_path):
    code = (
        "from django.conf import settings\n"
        "print(settings.SESSION_COOKIE_AGE, settings.SESSION_EXPIRE_AT_BROWSER_CLOSE)"
    )
    result = run_django(
        code, data_dir=tmp_path, SESSION_COOKIE_AGE="3600", SESSION_EXPIRE_AT_BROWSER_CLOSE="yes"
    )
    assert result.stdout.strip().splitlines()[-1] == "3600 True"


@pytest.mark.parametrize(
    ("env", "error"),
    [
        ({"SECRET_KEY": "abcdefghijklmnopq" * 3, "ALLOWED_HOSTS": "studio.example"}, "E001"),
        ({"SECRET_KEY": KEY, "ALLOWED_HOSTS": "*"}, "E002"),
    ],
)
def test_the_deploy_check_refuses_a_weak_key_or_any_host_outside_production(tmp_path, env, error):
    """`check --deploy` catches them even where settings.py does not stop
    (DJANGO_ENV unset): Django alone passes both."""
    result = deploy_check(tmp_path, **env)
    assert result.returncode != 0
    assert f"triplet.{error}" in result.stderr
