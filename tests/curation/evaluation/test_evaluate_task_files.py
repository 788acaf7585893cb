"""Issue 30: `manage.py evaluate --format mmrb2 <folder>` reads only the task
files the official compute_accuracy.py reads (t2i.json, edit.json,
interleaved.json, reasoning.json) and names every other .json it skipped:
a predictions or results file kept beside the task files no longer stops it."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from curation.benchmarks.mmrb2 import scoring as mmrb2_scoring
from tests.annotate.importing.test_mmrb2 import published_fixture
from tests.curation.evaluation.test_mmrb2_evaluation import PREDICTIONS


def evaluate(*args) -> tuple[dict, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("evaluate", *args, "--format", "mmrb2", "--json", stdout=out, stderr=err)
    return json.loads(out.getvalue()), err.getvalue()


def test_other_json_files_beside_the_task_files_are_skipped_and_named(tmp_path):
    bench = tmp_path / "benchmark"
    tasks = published_fixture(bench)
    preds = bench / "gpt-judge-predictions.json"  # kept beside the task files, as people do
    preds.write_text(json.dumps(PREDICTIONS))
    (bench / "results.json").write_text('{"overall": 0.5}')
    (bench / "README.md").write_text("not JSON, not listed")
    report, notice = evaluate(str(bench), str(preds))
    # The numbers of the pure scorer on the four task files alone.
    expected = mmrb2_scoring.score_tasks(
        [(task, tasks[task], PREDICTIONS) for task in ("t2i", "edit", "interleaved", "reasoning")]
    )
    assert [t["task"] for t in report["tasks"]] == ["t2i", "edit", "interleaved", "reasoning"]
    assert report["overall"]["correct"] == expected.overall.correct
    assert report["overall"]["judged"] == expected.overall.judged
    assert report["skipped_files"] == [str(preds), str(bench / "results.json")]
    assert "Skipped 2 file(s)" in notice
    assert "gpt-judge-predictions.json, results.json" in notice and "README" not in notice


def test_a_folder_without_task_files_says_which_files_it_found(tmp_path):
    (tmp_path / "preds.json").write_text(json.dumps(PREDICTIONS))
    with pytest.raises(CommandError, match=r"no MMRB2 task file .*not read: preds\.json"):
        evaluate(str(tmp_path), str(tmp_path / "preds.json"))


def test_a_folder_of_task_files_only_skips_nothing(tmp_path):
    bench = tmp_path / "benchmark"
    published_fixture(bench)
    preds = tmp_path / "preds.json"
    preds.write_text(json.dumps(PREDICTIONS))
    report, notice = evaluate(str(bench), str(preds))
    assert report["skipped_files"] == [] and notice == ""
    assert len(report["tasks"]) == 4
