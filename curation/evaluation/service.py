"""Scoring uploaded predictions against a ready release (curation.evaluation.scoring does
the science) and the leaderboard's rows."""

from __future__ import annotations

import codecs
import io
import uuid
from collections.abc import Iterator

from django.core.files.base import ContentFile, File
from django.core.files.storage import default_storage
from django.db import transaction

from common.storage import read_stored
from curation.evaluation import scoring, scoring_input, scoring_output
from curation.models import Evaluation, Release, ReleaseStatus, ScoringFormat
from curation.quality.predictions import store_item_predictions
from curation.releases import publishing

MAX_PREDICTIONS_BYTES = 200 * 1024 * 1024
# One prediction line: an ID and a judge's answer of a few kB.
MAX_LINE_BYTES = 1024 * 1024


class EvaluationError(Exception):
    pass


Predictions = bytes | File


def size_of(predictions: Predictions) -> int:
    return len(predictions) if isinstance(predictions, bytes) else predictions.size


def _lines(predictions: Predictions, filename: str) -> Iterator[str]:
    """The file's lines (split at "\\n" only), read and decoded one at a
    time: an upload is never read whole."""
    fh = io.BytesIO(predictions) if isinstance(predictions, bytes) else predictions.file
    fh.seek(0)
    offset = 0  # in bytes after a byte-order mark, as utf-8-sig counts
    for number, raw in enumerate(iter(lambda: fh.readline(MAX_LINE_BYTES + 1), b""), start=1):
        if len(raw) > MAX_LINE_BYTES:
            raise EvaluationError(f"{filename}: line {number}: longer than {MAX_LINE_BYTES} bytes")
        if number == 1 and raw.startswith(codecs.BOM_UTF8):
            raw = raw[len(codecs.BOM_UTF8) :]
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise EvaluationError(
                f"{filename}: not valid UTF-8 (byte {offset + exc.start})"
            ) from None
        offset += len(raw)
        yield line.removesuffix("\n")


def evaluate_release(
    *,
    release: Release,
    name: str,
    predictions: Predictions,
    filename: str,
    swapped: Predictions | None = None,
    swapped_filename: str = "",
    user=None,
    official_compat: bool = False,
) -> Evaluation:
    """Score a predictions file (and optionally the swapped-order one) against
    a ready release and store the evaluation. Nothing is stored on error.
    `official_compat`: lines whose ID is not in the release are scored against
    the Label they carry, as the official script does (scoring.score)."""
    name = name.strip()
    if not name:
        raise EvaluationError("Name the model or judge being evaluated.")
    if release.status != ReleaseStatus.READY:
        raise EvaluationError("Only ready releases can be evaluated.")
    if Evaluation.objects.filter(release=release, name=name).exists():
        raise EvaluationError(f"{name!r} is already on this release's leaderboard.")
    for data, label in ((predictions, filename), (swapped or b"", swapped_filename)):
        if size_of(data) > MAX_PREDICTIONS_BYTES:  # before a byte of it is read
            raise EvaluationError(f"{label}: larger than {MAX_PREDICTIONS_BYTES} bytes")
    # From the releases storage (local or a bucket) by name, not by path.
    # Not `name`: that is the evaluation's name, stored below.
    data_name = f"{release.folder}/all_data.json"
    records = scoring_input.parse_release_records(
        read_stored(publishing.release_storage(), data_name).decode("utf-8-sig"),
        data_name,
    )
    try:
        parsed = scoring_input.parse_predictions(_lines(predictions, filename), filename=filename)
        if swapped:
            parsed += scoring_input.parse_predictions(
                _lines(swapped, swapped_filename), filename=swapped_filename, order="swapped"
            )
        report = scoring.score(records, parsed, official_compat=official_compat)
    except scoring_input.ScoringInputError as exc:
        raise EvaluationError(str(exc)) from None
    result = scoring_output.report_as_dict(report)
    base = f"evaluations/{release.project.slug}/{release.version}/{uuid.uuid4().hex}"
    with transaction.atomic():
        stored = default_storage.save(f"{base}.jsonl", stored_content(predictions))
        stored_swapped = (
            default_storage.save(f"{base}-swapped.jsonl", stored_content(swapped))
            if swapped
            else ""
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


def stored_content(predictions: Predictions) -> File:
    if isinstance(predictions, bytes):
        return ContentFile(predictions)
    predictions.seek(0)
    return predictions


def leaderboard(release: Release) -> tuple[list[str], list[dict]]:
    """Column names (overall, categories, sub-buckets in release order) and one
    row per evaluation with its accuracy per column and extras."""
    # MMRB2 evaluations have their own table (mmrb2_service.mmrb2_leaderboard).
    evaluations = list(
        release.evaluations.filter(scoring=ScoringFormat.MRB).select_related("created_by")
    )
    columns: list[str] = []
    rows = []
    for e in evaluations:
        groups = e.report.get("official", {}).get("groups", [])
        for g in groups:
            if g["name"] not in columns:
                columns.append(g["name"])
        extras = e.report.get("extras", {})
        intervals = extras.get("ci95", {})
        coverage = extras.get("coverage", {})
        rows.append(
            {
                "evaluation": e,
                "accuracy": {g["name"]: g["accuracy"] for g in groups},
                # Per column: correct, total and the Wilson 95% interval (extras).
                "counts": {g["name"]: (g["correct"], g["total"]) for g in groups},
                "ci": {g["name"]: _pair(intervals.get(g["name"])) for g in groups},
                "macro": extras.get("macro_average", {}).get("value"),
                "macro_ci": _pair(extras.get("macro_average", {}).get("ci95")),
                "missing": len(coverage.get("missing", [])),
                "unknown": len(coverage.get("unknown", [])),
                "consistency": (extras.get("consistency") or {}).get("rate"),
                # Scored with official_compat: unknown IDs by their own Label.
                "official_compat": e.report.get("official", {}).get("official_compat", False),
                "scored_by_label": extras.get("coverage", {}).get("scored_by_label", 0),
            }
        )
    return columns, rows


def _pair(interval) -> tuple[float, float] | None:
    """A stored interval ([low, high], scoring_output) as a pair, or None."""
    return (interval[0], interval[1]) if interval else None
