"""docker-compose.yml runs the production configuration: db, redis, a one-shot
migration, gunicorn web and a Celery worker, each long-running service with a
health check; the Dockerfile installs the project and runs as a non-root user.
Docker is not available to the tests, so the files are parsed and checked."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.fresh_process import SETTINGS_VARIABLES

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((REPO / "docker-compose.yml").read_text())


@pytest.fixture(scope="module")
def services(compose) -> dict:
    return compose["services"]


def test_the_stack_has_its_services(services):
    assert set(services) == {"db", "redis", "migrate", "web", "worker"}
    assert services["db"]["image"].startswith("postgres:")
    assert services["redis"]["image"].startswith("redis:")


@pytest.mark.parametrize("name", ["migrate", "web", "worker"])
def test_app_services_run_in_production_mode_with_postgres_and_redis(services, name):
    env = services[name]["environment"]
    assert env["DJANGO_ENV"] == "production"
    assert env["DATABASE_URL"].startswith("postgres://") and "@db:5432/" in env["DATABASE_URL"]
    assert env["REDIS_URL"] == "redis://redis:6379/0"
    # No default secret: compose refuses to start without one.
    assert env["SECRET_KEY"].startswith("${SECRET_KEY:?")
    assert "localhost" in env["ALLOWED_HOSTS"].split(",")  # the health check's host
    assert services[name]["build"] == "."


def test_every_long_running_service_has_a_health_check(services):
    for name in ("db", "redis", "web", "worker"):
        check = services[name]["healthcheck"]
        assert check["test"][0] in {"CMD", "CMD-SHELL"}, name
        assert check["interval"] and check["retries"] >= 3, name


def test_web_is_gunicorn_checked_through_healthz(services):
    web = services["web"]
    assert web["command"].startswith("gunicorn config.wsgi --bind 0.0.0.0:8000")
    assert "http://localhost:8000/healthz" in " ".join(web["healthcheck"]["test"])


def test_worker_is_celery_checked_by_inspect_ping(services):
    worker = services["worker"]
    assert worker["command"][:4] == ["celery", "-A", "config", "worker"]
    test = " ".join(worker["healthcheck"]["test"])
    # $$ is compose's escape: the container's shell expands $HOSTNAME.
    assert "celery -A config inspect ping --destination celery@$$HOSTNAME" in test


def test_migrations_run_once_before_web_and_worker(services):
    assert services["migrate"]["command"] == ["python", "manage.py", "migrate", "--noinput"]
    assert services["migrate"]["restart"] == "no"
    for name in ("web", "worker"):
        depends = services[name]["depends_on"]
        assert depends["migrate"] == {"condition": "service_completed_successfully"}
        assert depends["db"] == {"condition": "service_healthy"}
        assert depends["redis"] == {"condition": "service_healthy"}


def test_the_web_health_check_command_is_valid_python(services):
    test = services["web"]["healthcheck"]["test"]
    assert test[:3] == ["CMD", "python", "-c"]
    compile(test[3], "healthcheck", "exec")


def test_the_health_check_host_passes_production_settings(services, tmp_path):
    # The compose defaults, as the container would see them, start the app and
    # let /healthz answer over plain HTTP on localhost.
    env = services["web"]["environment"]
    allowed = env["ALLOWED_HOSTS"].replace("${ALLOWED_HOSTS:-localhost}", "studio.example")
    code = (
        "import django; django.setup()\n"
        "from django.test import Client\n"
        "print(Client().get('/healthz', HTTP_HOST='localhost').status_code)"
    )
    environ = {k: v for k, v in os.environ.items() if k not in SETTINGS_VARIABLES}
    environ.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DJANGO_ENV="production",
        SECRET_KEY="k" * 20 + "0123456789abcdefghijklmnopqrstuvwxyz",
        ALLOWED_HOSTS=allowed,
        SECURE_SSL_REDIRECT="true",
        DATA_DIR=str(tmp_path),
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=environ, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "200"


def test_the_image_installs_the_project_and_runs_as_a_non_root_user():
    dockerfile = (REPO / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.11", dockerfile, re.MULTILINE)
    # The project with the Parquet copies of releases and the label-quality extra.
    assert 'pip install ".[parquet,quality]"' in dockerfile
    assert "collectstatic --noinput" in dockerfile
    users = re.findall(r"^USER (\S+)", dockerfile, re.MULTILINE)
    assert users and users[-1] not in {"root", "0"}
    assert re.search(r"^ENV .*DJANGO_ENV=production", dockerfile, re.MULTILINE)
    ignored = (REPO / ".dockerignore").read_text().split()
    assert {".git", ".venv", "var"} <= set(ignored)
