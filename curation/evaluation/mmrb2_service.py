"""Scoring Multimodal RewardBench 2 predictions against a ready release
(issue 24): the release's `mmrb2/<task>.json` files hold the pairs and their
`chosen`; curation.evaluation.mmrb2_scoring does the counting, exactly as
the benchmark's compute_accuracy.py. The evaluation is stored like an MRB
one (Evaluation, scoring="mmrb2", the predictions file kept) and shown in its
own leaderboard table.

One predictions file covers every task of the release (pair IDs are unique
across a project); a task with no prediction at all is scored too, every
pair missing. Per-item results (the drill-down and label quality) are
written as for MRB entries, in canonical terms (curation.quality.mmrb2_predictions).
"""

from __future__ import annotations

import codecs
import json
import uuid
from typing import Any

from django.core.files.storage import default_storage
from django.db import transaction

from annotate.importing.formats.mmrb2.taskfile import TASKS
from common.storage import read_stored
from curation.evaluation import mmrb2_judge, mmrb2_scoring
from curation.evaluation.service import (
    MAX_PREDICTIONS_BYTES,
    EvaluationError,
    Predictions,
    evaluate_release,
    size_of,
    stored_content,
)
from curation.models import (
    Evaluation,
    JudgeOrder,
    JudgeOutput,
    Release,
    ReleaseStatus,
    ScoringFormat,
)
from curation.releases import publishing

FORMATS = ("auto", "mrb", "mmrb2")
# Enough of a file's start to see its first line (an MRB line is at most 1 MiB).
_HEAD_BYTES = 1024 * 1024 + 1


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


def is_mmrb2_release(release: Release) -> bool:
    return bool(release_tasks(release))


def has_mrb_records(release: Release) -> bool:
    return bool(release.manifest.get("total"))


def task_pairs(release: Release, name: str) -> list[dict[str, Any]]:
    """The pairs of one of the release's task files, as published."""
    stored = f"{release.folder}/{name}"
    try:
        data = json.loads(read_stored(publishing.release_storage(), stored).decode("utf-8"))
    except FileNotFoundError:
        raise EvaluationError(f"{name} is missing from the release's files.") from None
    return data["pairs"]


def _head(predictions: Predictions) -> str:
    if isinstance(predictions, bytes):
        raw = predictions[:_HEAD_BYTES]
    else:
        predictions.seek(0)
        raw = predictions.read(_HEAD_BYTES)
        predictions.seek(0)
    return raw.removeprefix(codecs.BOM_UTF8).decode("utf-8", errors="replace")


def resolve_format(release: Release, predictions: Predictions, fmt: str = "auto") -> str:
    """Which rules score this file: `fmt` if given, else the file's shape
    (a JSON object of pair IDs is MMRB2's, JSONL lines with ``ID`` are MRB's),
    checked against what the release holds."""
    if fmt not in FORMATS:
        raise EvaluationError(f"Unknown predictions format {fmt!r}: use one of {FORMATS}.")
    if fmt == "auto":
        fmt = "mmrb2" if mmrb2_scoring.looks_like_predictions(_head(predictions)) else "mrb"
    if fmt == "mmrb2" and not is_mmrb2_release(release):
        raise EvaluationError(
            "These are MMRB2 predictions (a JSON object of pair IDs with forward/reverse "
            "judgements), but this release has no mmrb2/<task>.json file to score them against."
        )
    if fmt == "mrb" and not has_mrb_records(release):
        raise EvaluationError(
            "This release holds only MMRB2 pairs: upload predictions in the MMRB2 format "
            '({"<pair id>": {"forward": [{"judgement": "A"}], "reverse": [...]}}).'
        )
    return fmt


def read_predictions_file(predictions: Predictions, filename: str) -> tuple[dict, int]:
    """The file's predictions (mmrb2_scoring.read_predictions), size-checked
    before a byte is read."""
    if size_of(predictions) > MAX_PREDICTIONS_BYTES:
        raise EvaluationError(f"{filename}: larger than {MAX_PREDICTIONS_BYTES} bytes")
    if isinstance(predictions, bytes):
        raw = predictions
    else:
        predictions.seek(0)
        raw = predictions.read()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise EvaluationError(f"{filename}: not valid UTF-8 (byte {exc.start})") from None
    del raw
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


def evaluate_mmrb2(
    *, release: Release, name: str, predictions: Predictions, filename: str, user=None
) -> Evaluation:
    """Score an MMRB2 predictions file against a ready release and store the
    evaluation. Nothing is stored on error."""
    name = name.strip()
    if not name:
        raise EvaluationError("Name the model or judge being evaluated.")
    if release.status != ReleaseStatus.READY:
        raise EvaluationError("Only ready releases can be evaluated.")
    if not is_mmrb2_release(release):
        raise EvaluationError("This release has no MMRB2 task files (mmrb2/<task>.json).")
    if Evaluation.objects.filter(release=release, name=name).exists():
        raise EvaluationError(f"{name!r} is already on this release's leaderboard.")
    parsed, repeated = read_predictions_file(predictions, filename)
    report = {"mmrb2": score_release(release, parsed, repeated)}
    base = f"evaluations/{release.project.slug}/{release.version}/{uuid.uuid4().hex}"
    with transaction.atomic():
        stored = default_storage.save(f"{base}.json", stored_content(predictions))
        evaluation = Evaluation.objects.create(
            release=release,
            name=name,
            scoring=ScoringFormat.MMRB2,
            predictions=stored,
            report=report,
            accuracy=report["mmrb2"]["overall"]["accuracy"],
            created_by=user,
        )
        # Per-item results in canonical terms (drill-down, label audit).
        from curation.quality.mmrb2_predictions import store_mmrb2_item_predictions

        store_mmrb2_item_predictions(evaluation=evaluation, predictions=parsed)
        return evaluation


def mmrb2_leaderboard(release: Release) -> tuple[list[str], list[dict]]:
    """Task names (release order) and one row per MMRB2 evaluation, best
    overall first: per task and overall the tallies of the report."""
    evaluations = release.evaluations.filter(scoring=ScoringFormat.MMRB2).select_related(
        "created_by"
    )
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


def evaluate_upload(
    *,
    release: Release,
    name: str,
    predictions: Predictions,
    filename: str,
    fmt: str = "auto",
    swapped: Predictions | None = None,
    swapped_filename: str = "",
    official_compat: bool = False,
    user=None,
) -> Evaluation:
    """An uploaded predictions file (page, API), scored by the rules its
    format (given, or seen from its shape) calls for."""
    if size_of(predictions) > MAX_PREDICTIONS_BYTES:  # before a byte of it is read
        raise EvaluationError(f"{filename}: larger than {MAX_PREDICTIONS_BYTES} bytes")
    if resolve_format(release, predictions, fmt) == "mrb":
        return evaluate_release(
            release=release,
            name=name,
            predictions=predictions,
            filename=filename,
            swapped=swapped,
            swapped_filename=swapped_filename,
            user=user,
            official_compat=official_compat,
        )
    if swapped:
        raise EvaluationError(
            f"{swapped_filename}: MMRB2 predictions carry both orders in one file "
            '("forward" and "reverse"); leave the swapped file empty.'
        )
    if official_compat:
        raise EvaluationError(
            "Scoring unknown IDs by their own Label is an MRB option; MMRB2 predictions "
            "carry no Label."
        )
    return evaluate_mmrb2(
        release=release, name=name, predictions=predictions, filename=filename, user=user
    )


# --- The judge runner's MMRB2 side (curation.evaluation.judge_runs) ---------------------


def mmrb2_records(release: Release) -> list[dict]:
    """The release's MMRB2 pairs in release order, as records the runner
    sends: {"ID", "task", "pair"}; image paths become release-relative."""
    return [
        {"ID": pair["id"], "task": task, "pair": pair, "folder": name.rsplit("/", 1)[0]}
        for task, name in release_tasks(release)
        for pair in task_pairs(release, name)
    ]


def predictions_mmrb2(run, records: list[dict]) -> bytes:
    """An MMRB2 run's answers as an MMRB2 predictions file, release order:
    {ID: {"forward": [{"judgement", "output"}], "reverse": [...]}}. A request
    that failed for good has the "None" text and so a null judgement, which
    the scorer skips."""
    outputs = {
        (external_id, order): text
        for external_id, order, text in JudgeOutput.objects.filter(run=run).values_list(
            "external_id", "order", "output"
        )
    }
    predictions = {
        r["ID"]: mmrb2_judge.predictions_entry(
            outputs.get((r["ID"], JudgeOrder.ORIGINAL)), outputs.get((r["ID"], JudgeOrder.SWAPPED))
        )
        for r in records
    }
    return json.dumps(predictions, indent=2, ensure_ascii=False).encode()
