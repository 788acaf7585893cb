"""config/settings.py: bad values stop the process naming the variable; with
nothing set the app runs embedded (SQLite in WAL with IMMEDIATE transactions,
Celery on the filesystem broker). Each case starts a fresh interpreter."""

import json
import sqlite3
from contextlib import closing

import pytest

from tests.fresh_process import SETTINGS_VARIABLES, run_django

POSTGRES_URL = "postgres://triplet@db.example:5432/triplet"

REPORT = """
import json
from django.conf import settings
from config.celery import app
db = settings.DATABASES["default"]
print(json.dumps({
    "engine": db["ENGINE"],
    "name": str(db["NAME"]),
    "options": db.get("OPTIONS", {}),
    "broker_url": app.conf.broker_url,
    "result_backend": app.conf.result_backend,
    "transport_options": app.conf.broker_transport_options,
    "session_engine": settings.SESSION_ENGINE,
}, default=str))
"""

# Opens the embedded database and reports what SQLite says is in effect.
SQLITE_IN_EFFECT = """
import json, sqlite3
from django.db import connection, transaction
with connection.cursor() as cursor:
    pragmas = {}
    for pragma in ("journal_mode", "synchronous", "foreign_keys"):
        cursor.execute(f"PRAGMA {pragma}")
        pragmas[pragma] = cursor.fetchone()[0]
# With IMMEDIATE, entering atomic() already holds the write lock, so another
# connection cannot begin a write transaction even though nothing was written.
with transaction.atomic():
    other = sqlite3.connect(connection.settings_dict["NAME"], timeout=0)
    try:
        other.execute("BEGIN IMMEDIATE")
        write_lock_taken_at_begin = False
    except sqlite3.OperationalError:
        write_lock_taken_at_begin = True
    other.close()
print(json.dumps({**pragmas, "write_lock_taken_at_begin": write_lock_taken_at_begin}))
"""


def report(tmp_path, code=REPORT, **env) -> dict:
    result = run_django(code, data_dir=tmp_path, **env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_every_setting_read_from_the_environment_is_isolated_in_the_child():
    assert {"DEBUG", "DATABASE_URL", "REDIS_URL", "DATA_DIR"} <= SETTINGS_VARIABLES


@pytest.mark.parametrize(
    ("variable", "env"),
    [
        ("DEBUG", {"DEBUG": "maybe"}),
        ("DB_CONN_MAX_AGE", {"DB_CONN_MAX_AGE": "abc", "DATABASE_URL": POSTGRES_URL}),
        ("DB_PREPARED_STATEMENTS", {"DB_PREPARED_STATEMENTS": "often"}),
        ("IMAGE_MAX_PIXELS", {"IMAGE_MAX_PIXELS": "-1"}),
        ("IMAGE_MAX_BYTES", {"IMAGE_MAX_BYTES": "lots"}),
        ("SECURE_COOKIES", {"SECURE_COOKIES": "sure"}),
        ("DATABASE_URL", {"DATABASE_URL": "mysql://x/y"}),
        ("DATABASE_URL", {"DATABASE_URL": "nonsense"}),
        ("SECRET_KEY", {"REQUIRE_SECRET_KEY": "true"}),
        # A heartbeat too rare for the stale time would take live builds for dead.
        (
            "RELEASE_STALE_SECONDS",
            {"RELEASE_STALE_SECONDS": "20", "RELEASE_HEARTBEAT_SECONDS": "10"},
        ),
        ("RELEASE_STALE_SECONDS", {"RELEASE_STALE_SECONDS": "5"}),
    ],
    ids=lambda value: (
        ",".join(f"{k}={v}" for k, v in value.items()) if isinstance(value, dict) else None
    ),
)
def test_bad_value_stops_startup_naming_the_variable(tmp_path, variable, env):
    result = run_django("", data_dir=tmp_path, **env)
    assert result.returncode != 0
    # The message itself, not just a traceback line quoting settings.py.
    message = result.stderr.strip().splitlines()[-1]
    assert message.startswith("django.core.exceptions.ImproperlyConfigured: ")
    assert variable in message


def test_good_values_start(tmp_path):
    settings = report(
        tmp_path,
        DEBUG="yes",
        IMAGE_MAX_PIXELS="1",
        DB_CONN_MAX_AGE="0",
        DATABASE_URL=POSTGRES_URL,
    )
    assert settings["engine"] == "django.db.backends.postgresql"


def test_with_nothing_set_database_is_sqlite_in_data_dir_with_immediate_transactions(tmp_path):
    settings = report(tmp_path)
    assert settings["engine"] == "django.db.backends.sqlite3"
    assert settings["name"] == str(tmp_path / "db.sqlite3")
    assert settings["options"]["transaction_mode"] == "IMMEDIATE"


def test_embedded_sqlite_runs_in_wal_and_takes_the_write_lock_at_begin(tmp_path):
    in_effect = report(tmp_path, SQLITE_IN_EFFECT)
    assert in_effect == {
        "journal_mode": "wal",
        "synchronous": 1,  # NORMAL
        "foreign_keys": 1,
        "write_lock_taken_at_begin": True,
    }
    # WAL is persistent: the database file itself says so afterwards.
    with closing(sqlite3.connect(tmp_path / "db.sqlite3")) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_with_redis_unset_celery_uses_the_filesystem_broker_in_data_dir(tmp_path):
    settings = report(tmp_path)
    assert settings["broker_url"] == "filesystem://localhost//"
    assert settings["transport_options"]["data_folder_in"] == str(tmp_path / "celery" / "out")
    assert settings["result_backend"] == f"file://{tmp_path / 'celery' / 'results'}"
    assert (tmp_path / "celery" / "out").is_dir()


def test_redis_url_selects_redis_as_broker_and_result_backend(tmp_path):
    url = "redis://redis.example:6379/3"
    settings = report(tmp_path, REDIS_URL=url)
    assert (settings["broker_url"], settings["result_backend"]) == (url, url)
    # ...and only as the broker: sessions stay in the database, so a signed-in
    # page does not fail while Redis is down (tests/test_faults.py).
    assert settings["session_engine"] == "django.contrib.sessions.backends.db"


@pytest.mark.parametrize("url", [POSTGRES_URL, POSTGRES_URL.replace("postgres:", "postgresql:")])
def test_database_url_selects_postgresql(tmp_path, url):
    settings = report(tmp_path, DATABASE_URL=url)
    assert settings["engine"] == "django.db.backends.postgresql"
    assert settings["name"] == "triplet"
    assert not (tmp_path / "db.sqlite3").exists()


def test_postgresql_prepares_repeated_statements_unless_switched_off(tmp_path):
    on = report(tmp_path, DATABASE_URL=POSTGRES_URL)["options"]
    assert on == {"server_side_binding": True, "prepare_threshold": 5}
    off = report(tmp_path, DATABASE_URL=POSTGRES_URL, DB_PREPARED_STATEMENTS="false")
    assert "server_side_binding" not in off["options"]


SERVE_STATIC = """
import json
from django.conf import settings
from django.test import Client
response = Client().get("/static/vendor/htmx/htmx.min.js", HTTP_ACCEPT_ENCODING="gzip")
print(json.dumps({
    "finders": settings.WHITENOISE_USE_FINDERS,
    "status": response.status_code,
    "encoding": response.get("Content-Encoding"),
}))
"""


def test_static_files_are_served_from_static_until_collected(tmp_path):
    served = report(tmp_path, SERVE_STATIC, STATIC_ROOT=str(tmp_path / "static"))
    assert served == {"finders": True, "status": 200, "encoding": None}


def test_collected_static_files_are_served_gzipped(tmp_path):
    root = str(tmp_path / "static")
    collect = run_django(
        "from django.core.management import call_command\n"
        "call_command('collectstatic', interactive=False, verbosity=0)",
        data_dir=tmp_path,
        STATIC_ROOT=root,
    )
    assert collect.returncode == 0, collect.stderr
    served = report(tmp_path, SERVE_STATIC, STATIC_ROOT=root)
    assert served == {"finders": False, "status": 200, "encoding": "gzip"}
    # While developing, the sources in static/ win over a stale collection.
    assert report(tmp_path, SERVE_STATIC, STATIC_ROOT=root, DEBUG="true")["finders"] is True
