"""The suite's own rules (tests/conftest.py): which skips fail."""

import os
from pathlib import Path

import pytest
from django.db import connection

from tests.conftest import must_run_on_postgres, requires_postgres

TESTS = Path(__file__).resolve().parent


def test_every_annotation_loop_test_must_run_on_postgres():
    loop = sorted((TESTS / "annotate" / "loop").glob("test_*.py"))
    assert len(loop) >= 10 and all(must_run_on_postgres(path) for path in loop)
    assert not must_run_on_postgres(TESTS / "annotate" / "test_projects.py")
    assert not must_run_on_postgres(TESTS / "curation" / "test_verdicts.py")


@requires_postgres
@pytest.mark.django_db
def test_on_postgresql_commits_do_not_wait_for_the_disk_and_children_inherit_it():
    """tests/conftest.py (_no_wait_for_commit_flush): this process's
    connections and, through PGOPTIONS, those of the children tests start."""
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone()[0] == "off"
    assert "-c synchronous_commit=off" in os.environ["PGOPTIONS"]
