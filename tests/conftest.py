import os
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.core.cache import cache
from django.db import connection

from config.celery import app as celery_app


@pytest.fixture(autouse=True)
def _media_root(settings, tmp_path):
    """Each test stores images (and staged import uploads) in its own folder."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.DATA_DIR = tmp_path / "data"


@pytest.fixture(autouse=True)
def _empty_cache():
    """Each test starts with an empty cache (the local-memory cache outlives
    tests, and SQLite reuses the primary keys that cached values are keyed by)."""
    cache.clear()


@pytest.fixture(autouse=True)
def _fast_password_hasher(settings):
    """PBKDF2 costs ~0.3 s a user; tests make many users."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _own_redis_database() -> None:
    """Under pytest-xdist (`make test` runs a worker per core) each worker
    gets its own Redis database, so workers never purge or consume each
    other's broker queue: gw0 keeps REDIS_URL's database, gwN the N-th below
    it (modulo 16). Children the tests start read REDIS_URL; the Celery app
    reads its broker from the settings, overridden here (results stay in
    REDIS_URL's database: keyed by task id, they cannot mix)."""
    url, worker = os.environ.get("REDIS_URL"), os.environ.get("PYTEST_XDIST_WORKER", "")
    if not url or not worker.startswith("gw"):
        return
    parts = urlsplit(url)
    base = int(parts.path.strip("/") or 0)
    own = urlunsplit(parts._replace(path=f"/{(base - int(worker[2:])) % 16}"))
    os.environ["REDIS_URL"] = own
    celery_app.conf.update(CELERY_BROKER_URL=own)


_own_redis_database()


def _no_wait_for_commit_flush() -> None:
    """On PostgreSQL, every connection of the run (this process, the live
    server's threads, and the gunicorn/Celery/Django children the tests
    start, which inherit the environment) commits without waiting for its
    WAL to reach the disk (synchronous_commit=off, through libpq's
    PGOPTIONS). A test database is worth nothing after a crash of the
    server, and a commit is otherwise one fsync: ~2-10 ms on CI's disk, paid
    by every migration, flush, live-server request and child process.
    Nothing a test checks depends on it: what a commit makes visible to
    other connections, and when, is unchanged. (.ci/throwaway-postgres sets
    it, and fsync=off, server-wide.) docs/decisions.md, "CI time"."""
    if _postgres_url():
        options = os.environ.get("PGOPTIONS", "")
        if "synchronous_commit" not in options:
            os.environ["PGOPTIONS"] = f"{options} -c synchronous_commit=off".strip()


@pytest.fixture(autouse=True, scope="session")
def _celery_eager():
    """Tasks run inline unless a test asks for a real broker."""
    # The app reads Django settings under the CELERY_ namespace, and those
    # namespaced keys shadow plain ones: `conf.task_always_eager = True` is
    # silently ignored and tasks would go to the real broker in var/celery.
    celery_app.conf.update(CELERY_TASK_ALWAYS_EAGER=True, CELERY_TASK_EAGER_PROPAGATES=True)
    yield


def on_postgres() -> bool:
    return connection.vendor == "postgresql"


def _postgres_url() -> bool:
    return os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://"))


requires_postgres = pytest.mark.skipif(
    not _postgres_url(), reason="needs PostgreSQL (set DATABASE_URL)"
)
requires_redis = pytest.mark.skipif(
    not os.environ.get("REDIS_URL"), reason="needs Redis (set REDIS_URL)"
)

_no_wait_for_commit_flush()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """On CI (CI=true, as .ci/run runs), a skipped `reference` test fails:
    every statistic must be checked against its reference implementation, so
    a missing reference library (scikit-learn, ...) is an error, not a skip.
    On PostgreSQL, a skipped test of the annotation loop fails (LOOP_TESTS)."""
    outcome = yield
    report = outcome.get_result()
    if not report.skipped or hasattr(report, "wasxfail"):
        return
    if item.get_closest_marker("reference") and _on_ci():
        report.outcome = "failed"
        report.longrepr = f"reference test skipped on CI: {report.longrepr}"
    elif must_run_on_postgres(Path(item.path)) and _postgres_url():
        report.outcome = "failed"
        report.longrepr = f"annotation loop test skipped on PostgreSQL: {report.longrepr}"


# The annotation loop's tests: on PostgreSQL (make test-pg, .ci/run) each one
# runs, so both statement paths (annotate.loop.orm and .postgres) are tested
# everywhere; a skip there is a failure. (On SQLite they keep their
# PostgreSQL-only skips.)
LOOP_TESTS = Path(__file__).resolve().parent / "annotate" / "loop"


def must_run_on_postgres(path: Path) -> bool:
    return path.resolve().is_relative_to(LOOP_TESTS)


def _on_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


# --- pytest-xdist: every collected test must report -------------------------------------

# Reports are counted, not node ids: schemathesis's `schema.parametrize()`
# gives its 58 generated tests one node id (tests/api/test_api_schemathesis.py),
# which is also why pytest's progress stops at 98 % of the suite (it counts
# node ids). Session 14's "57 tests lost" is exactly that (58 - 1): counting
# node ids, this guard itself failed green runs (session 15).
_REPORTED: list[int] = [0]


def pytest_runtest_logreport(report):
    if report.when == "call" or (report.when == "setup" and not report.passed):
        _REPORTED[0] += 1


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    """Under pytest-xdist, a run in which fewer tests reported than the
    workers collected fails instead of passing (a worker lost without a
    crash report would otherwise pass silently)."""
    config = session.config
    if hasattr(config, "workerinput") or not config.getoption("numprocesses", None):
        return
    missing = session.testscollected - _REPORTED[0]
    if exitstatus == 0 and missing > 0:
        session.exitstatus = 1
        print(
            f"\npytest-xdist: {missing} of {session.testscollected} collected tests never "
            "reported; failing the run (rerun it, or TEST_WORKERS=0 for one process)."
        )
