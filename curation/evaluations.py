"""Scoring uploaded predictions against a ready release (curation.scoring does
the science) and the leaderboard's rows."""

from __future__ import annotations

import uuid

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction

from annotate.storage import read_stored

from . import release_publishing, scoring
from .models import Evaluation, Release, ReleaseStatus
from .quality.predictions import store_item_predictions

MAX_PREDICTIONS_BYTES = 200 * 1024 * 1024


class EvaluationError(Exception):
    pass


def _lines(data: bytes, filename: str) -> list[str]:
    try:
        return data.decode("utf-8-sig").split("\n")
    except UnicodeDecodeError as exc:
        raise EvaluationError(f"{filename}: not valid UTF-8 (byte {exc.start})") from None


def evaluate_release(
    *,
    release: Release,
    name: str,
    predictions: bytes,
    filename: str,
    swapped: bytes | None = None,
    swapped_filename: str = "",
    user=None,
) -> Evaluation:
    """Score a predictions file (and optionally the swapped-order one) against
    a ready release and store the evaluation. Nothing is stored on error."""
    name = name.strip()
    if not name:
        raise EvaluationError("Name the model or judge being evaluated.")
    if release.status != ReleaseStatus.READY:
        raise EvaluationError("Only ready releases can be evaluated.")
    if Evaluation.objects.filter(release=release, name=name).exists():
        raise EvaluationError(f"{name!r} is already on this release's leaderboard.")
    for data, label in ((predictions, filename), (swapped or b"", swapped_filename)):
        if len(data) > MAX_PREDICTIONS_BYTES:
            raise EvaluationError(f"{label}: larger than {MAX_PREDICTIONS_BYTES} bytes")
    # From the releases storage (local or a bucket) by name, not by path.
    # Not `name`: that is the evaluation's name, stored below.
    data_name = f"{release.folder}/all_data.json"
    records = scoring.parse_release_records(
        read_stored(release_publishing.release_storage(), data_name).decode("utf-8-sig"),
        data_name,
    )
    try:
        parsed = scoring.parse_predictions(_lines(predictions, filename), filename=filename)
        if swapped:
            parsed += scoring.parse_predictions(
                _lines(swapped, swapped_filename), filename=swapped_filename, order="swapped"
            )
        report = scoring.score(records, parsed)
    except scoring.ScoringInputError as exc:
        raise EvaluationError(str(exc)) from None
    result = scoring.report_as_dict(report)
    base = f"evaluations/{release.project.slug}/{release.version}/{uuid.uuid4().hex}"
    with transaction.atomic():
        stored = default_storage.save(f"{base}.jsonl", ContentFile(predictions))
        stored_swapped = (
            default_storage.save(f"{base}-swapped.jsonl", ContentFile(swapped)) if swapped else ""
        )
        evaluation = Evaluation.objects.create(
            release=release,
            name=name,
            predictions=stored,
            swapped_predictions=stored_swapped,
            report=result,
            accuracy=report.group("all").accuracy,
            created_by=user,
        )
        # Per-item results in the project's canonical terms (drill-down, label quality).
        store_item_predictions(
            evaluation=evaluation, records=records, predictions=parsed, report=report
        )
        return evaluation


def leaderboard(release: Release) -> tuple[list[str], list[dict]]:
    """Column names (overall, categories, sub-buckets in release order) and one
    row per evaluation with its accuracy per column and extras."""
    evaluations = list(release.evaluations.select_related("created_by"))
    columns: list[str] = []
    rows = []
    for e in evaluations:
        groups = e.report.get("official", {}).get("groups", [])
        for g in groups:
            if g["name"] not in columns:
                columns.append(g["name"])
        extras = e.report.get("extras", {})
        rows.append(
            {
                "evaluation": e,
                "accuracy": {g["name"]: g["accuracy"] for g in groups},
                "macro": extras.get("macro_average", {}).get("value"),
                "missing": len(extras.get("coverage", {}).get("missing", [])),
                "consistency": (extras.get("consistency") or {}).get("rate"),
            }
        )
    return columns, rows
