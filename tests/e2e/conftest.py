import os
import shutil
import tempfile
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


@pytest.fixture(scope="session")
def browser():
    path = chromium_path()
    if path is None:
        pytest.skip("needs Chromium (apt-get install chromium)")
    # Playwright's sync API runs an event loop in this thread; the test also
    # uses the ORM, which Django would otherwise refuse inside a loop.
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

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
        yield browser
        browser.close()


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
