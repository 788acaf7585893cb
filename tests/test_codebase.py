"""The codebase stays one the next person can change without fear (issue 18):
no private Django or driver API in application code, no module over 600
lines (one template language: tests/test_template_language.py)."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APPLICATION = ("annotate", "curation", "config", "common", "demo", "clients")

# Private Django / psycopg API the hot path once used (issue 18 took it out).
PRIVATE_API = re.compile(
    r"_state\.|ModelState|fields_cache|_cmodule|_get_session|_cached_user"
    r"|\b\w+\.__new__\("
)
MAX_LINES = 600


def application_modules() -> list[Path]:
    return [
        path
        for package in APPLICATION
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.parts
    ]


def test_the_application_packages_exist():
    modules = application_modules()
    assert len(modules) > 50
    assert not (ROOT / "accounts").exists(), "accounts/ existed only for a session trick"


@pytest.mark.parametrize("path", application_modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_private_django_or_driver_api(path):
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if PRIVATE_API.search(line)
    ]
    assert found == []


def test_the_private_api_pattern_finds_what_it_names():
    for line in (
        "instance._state.adding = False",
        "from django.db.models.base import ModelState",
        "instance._state.fields_cache.update(related)",
        "from psycopg._cmodule import _psycopg",
        "self._get_session_from_db()",
        "request._cached_user = user",
        "instance = model.__new__(model)",
    ):
        assert PRIVATE_API.search(line), line
    assert not PRIVATE_API.search("Item.from_db(db, names, values)")


@pytest.mark.parametrize("path", application_modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_over_600_lines(path):
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_LINES, (
        f"{path.relative_to(ROOT)} has {lines} lines: split it by what it does"
    )
