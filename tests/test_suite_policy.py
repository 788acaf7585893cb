"""The suite's own rules (tests/conftest.py): which skips fail."""

from pathlib import Path

from tests.conftest import must_run_on_postgres

TESTS = Path(__file__).resolve().parent


def test_every_annotation_loop_test_must_run_on_postgres():
    loop = sorted((TESTS / "annotate" / "loop").glob("test_*.py"))
    assert len(loop) >= 10 and all(must_run_on_postgres(path) for path in loop)
    assert not must_run_on_postgres(TESTS / "annotate" / "test_projects.py")
    assert not must_run_on_postgres(TESTS / "curation" / "test_verdicts.py")
