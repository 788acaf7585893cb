"""Pairs keep every statistic, verdict, export column and release file
exactly as before the vote moved to slot terms (issue 32): the snapshot of
a seeded project voted through the services equals the one recorded on
main's code before the change (vote_golden.json).

To re-record (only for a deliberate change of an output), run with
VOTE_GOLDEN_WRITE=1 and say why in the commit."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.curation.golden.vote_scenario import mmrb2_project, mrb_project, snapshot

pytestmark = pytest.mark.django_db

GOLDEN = Path(__file__).with_name("vote_golden.json")


def _jsonable(value):
    return json.loads(json.dumps(value, sort_keys=True, default=str))


def _check(name: str, got: dict) -> None:
    got = _jsonable(got)
    recorded = json.loads(GOLDEN.read_text(encoding="utf-8")) if GOLDEN.exists() else {}
    if os.environ.get("VOTE_GOLDEN_WRITE"):
        recorded[name] = got
        GOLDEN.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    expected = recorded[name]
    for key in expected:
        assert got[key] == expected[key], key
    assert set(got) == set(expected)


def test_pairs_give_the_same_agreement_verdicts_export_and_release(tmp_path):
    _check("mrb", snapshot(mrb_project(tmp_path)))


def test_graded_pairs_with_grades_give_the_same_outputs(tmp_path):
    _check("mmrb2", snapshot(mmrb2_project(tmp_path)))
