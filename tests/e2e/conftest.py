import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pytest

ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"


def _sqlite_test_database_in_a_file() -> None:
    """The compare page sends requests side by side (the next item is
    leased while a vote or a page load is under way). SQLite's in-memory
    test database is one shared-cache database, where a write makes other
    connections fail at once with "database table is locked" instead of
    waiting; a file in WAL mode waits (busy timeout) as production does.
    Set when this conftest is collected, before any test database exists."""
    from django.conf import settings

    db = settings.DATABASES["default"]
    if db["ENGINE"] == "django.db.backends.sqlite3" and not db.get("TEST", {}).get("NAME"):
        folder = Path(tempfile.mkdtemp(prefix="e2e-db-"))
        db.setdefault("TEST", {})["NAME"] = str(folder / "test.sqlite3")


_sqlite_test_database_in_a_file()


def chromium_path() -> str | None:
    path = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
    return path if path and Path(path).exists() else None


@contextmanager
def running_browser(path: str):
    """Chromium through Playwright's sync API, and what that does to Django.

    Playwright keeps its event loop marked as running in this thread from
    its start until it stops (between calls too). While it is, Django keeps
    the thread's database connections apart from those it made before (its
    connection handler is asgiref's thread-critical Local: a context
    variable while a loop runs, a thread-local otherwise), so
    connections.close_all() reaches only one of the two sets; and Django's
    async-safety check must be off for the test's own ORM calls. The
    connections of each side are closed at the switch (neither side can
    reach the other's afterwards), and the check is back on at the end."""
    from django.db import connections
    from playwright.sync_api import sync_playwright

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        connections.close_all()  # the thread-local ones, hidden from now on
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=path,
                args=[
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--no-first-run",
                ],
            )
            try:
                yield browser
            finally:
                browser.close()
                connections.close_all()  # the loop's ones, hidden once it stops


@pytest.fixture(scope="module")
def browser():
    """Chromium for one test module: the loop Playwright leaves running and
    the async-safety check it turns off (running_browser) end with the
    module instead of staying for every later test of the pytest-xdist
    worker (a forked child then found a connection its parent had not
    closed; docs/decisions.md)."""
    path = chromium_path()
    if path is None:
        pytest.skip("needs Chromium (apt-get install chromium)")
    with running_browser(path) as browser:
        yield browser


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
