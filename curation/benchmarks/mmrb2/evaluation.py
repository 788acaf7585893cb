"""Scoring Multimodal RewardBench 2 predictions against a ready release
(issue 24): the release's `mmrb2/<task>.json` files hold the pairs and their
`chosen`; curation.benchmarks.mmrb2.scoring does the counting, exactly as
the benchmark's compute_accuracy.py. The evaluation is stored like any other
(Evaluation, scoring="mmrb2", the predictions file kept) and shown in its
own leaderboard table (curation.benchmarks.mmrb2.benchmark).

One predictions file covers every task of the release (pair IDs are unique
across a project); a task with no prediction at all is scored too, every
pair missing. Per-item results (the drill-down and label quality) are
written in canonical terms (curation.benchmarks.mmrb2.predictions).
"""

from __future__ import annotations

import json
from typing import Any

from annotate.importing.formats.mmrb2.taskfile import TASKS
from curation.benchmarks.base import MAX_PREDICTIONS_BYTES, EvaluationError, Predictions
from curation.benchmarks.common.records import predictions_text, read_release_file
from curation.benchmarks.mmrb2 import judge as mmrb2_judge
from curation.benchmarks.mmrb2 import scoring as mmrb2_scoring
from curation.models import JudgeOrder, Release


def release_tasks(release: Release) -> list[tuple[str, str]]:
    """(task, file name in the release folder) of the release's MMRB2 task
    files: the published four in their order, then any other domain's."""
    names = [
        name
        for name in release.manifest.get("files", {})
        if name.startswith("mmrb2/") and name.endswith(".json") and name.count("/") == 1
    ]
    order = list(TASKS)

    def key(name: str) -> tuple[int, str]:
        task = name[len("mmrb2/") : -len(".json")]
        return (order.index(task) if task in order else len(order), task)

    return [(name[len("mmrb2/") : -len(".json")], name) for name in sorted(names, key=key)]


def task_pairs(release: Release, name: str) -> list[dict[str, Any]]:
    """The pairs of one of the release's task files, as published."""
    return json.loads(read_release_file(release, name).decode("utf-8"))["pairs"]


def read_predictions_file(predictions: Predictions, filename: str) -> tuple[dict, int]:
    """The file's predictions (mmrb2_scoring.read_predictions), size-checked
    before a byte is read."""
    text = predictions_text(predictions, filename, MAX_PREDICTIONS_BYTES)
    try:
        return mmrb2_scoring.read_predictions(text, filename)
    except mmrb2_scoring.PredictionsError as exc:
        raise EvaluationError(str(exc)) from None


def score_release(release: Release, predictions: dict, repeated: int = 0) -> dict:
    """The report of `predictions` against every task of the release."""
    tasks = []
    known: set[str] = set()
    for task, name in release_tasks(release):
        pairs = task_pairs(release, name)
        known.update(pair["id"] for pair in pairs)
        tasks.append((task, pairs, predictions))
    scores = mmrb2_scoring.score_tasks(tasks)
    unknown = sum(1 for pair_id in predictions if pair_id not in known)
    return mmrb2_scoring.report_as_dict(scores, unknown_ids=unknown, repeated_ids=repeated)


def leaderboard_rows(release: Release, evaluations) -> tuple[list[str], list[dict]]:
    """Task names (release order) and one row per MMRB2 evaluation, best
    overall first: per task and overall the tallies of the report."""
    tasks = [task for task, _ in release_tasks(release)]
    rows = []
    for e in evaluations.order_by("-accuracy", "name", "pk"):
        report = e.report.get("mmrb2", {})
        by_task = {t["task"]: t for t in report.get("tasks", [])}
        rows.append(
            {
                "evaluation": e,
                "tasks": [by_task.get(task) for task in tasks],
                "overall": report.get("overall", {}),
                "unknown_ids": report.get("unknown_ids", 0),
                "sources": [
                    {"task": t["task"], **s}
                    for t in report.get("tasks", [])
                    for s in t["by_source"]
                ],
            }
        )
    return tasks, rows


# --- The judge runner's MMRB2 side (curation.evaluation.judge_runs) ---------------------


def mmrb2_records(release: Release) -> list[dict]:
    """The release's MMRB2 pairs in release order, as records the runner
    sends: {"ID", "task", "pair"}; image paths become release-relative."""
    return [
        {"ID": pair["id"], "task": task, "pair": pair, "folder": name.rsplit("/", 1)[0]}
        for task, name in release_tasks(release)
        for pair in task_pairs(release, name)
    ]


def predictions_file(outputs: dict[tuple[str, str], str], records: list[dict]) -> bytes:
    """An MMRB2 run's answers ({(ID, order): text}) as an MMRB2 predictions
    file, release order: {ID: {"forward": [{"judgement", "output"}],
    "reverse": [...]}}. A request that failed for good has the "None" text and
    so a null judgement, which the scorer skips."""
    predictions = {
        r["ID"]: mmrb2_judge.predictions_entry(
            outputs.get((r["ID"], JudgeOrder.ORIGINAL)), outputs.get((r["ID"], JudgeOrder.SWAPPED))
        )
        for r in records
    }
    return json.dumps(predictions, indent=2, ensure_ascii=False).encode()
