"""Scoring uploaded predictions against a ready release, and the release's
leaderboard tables. The rules are the benchmark's (curation.benchmarks): this
module picks the benchmark (given, or seen from the file's shape, among those
the release holds), checks what every entry needs (a name, a ready release,
no second entry of that name), stores the file and the report, and loops
over the release's benchmarks for the leaderboard. It names none of them."""

from __future__ import annotations

import uuid

from django.core.files.base import ContentFile, File
from django.core.files.storage import default_storage
from django.db import transaction

from curation.benchmarks import registry
from curation.benchmarks.base import (
    HEAD_BYTES,
    MAX_PREDICTIONS_BYTES,
    Board,
    EvaluationError,
    Predictions,
    Upload,
    read_head,
    size_of,
)
from curation.models import Evaluation, Release, ReleaseStatus

__all__ = [
    "MAX_PREDICTIONS_BYTES",
    "EvaluationError",
    "Predictions",
    "evaluate",
    "evaluate_upload",
    "formats",
    "leaderboards",
    "resolve_benchmark",
    "size_of",
]


def formats() -> tuple[str, ...]:
    """What an upload's `format` may say: "auto" or a benchmark's key."""
    return ("auto", *registry.known_keys())


def resolve_benchmark(release: Release, predictions: Predictions, fmt: str = "auto"):
    """Which benchmark's rules score this file: `fmt` if given, else the
    file's shape; refused when the release holds no files of that benchmark."""
    if fmt not in formats():
        raise EvaluationError(f"Unknown predictions format {fmt!r}: use one of {formats()}.")
    if fmt == "auto":
        benchmark = registry.detect(read_head(predictions, HEAD_BYTES))
    else:
        benchmark = registry.get(fmt)
    if not benchmark.in_release(release):
        held = ", ".join(f"{b.title} ({b.key})" for b in registry.in_release(release))
        raise EvaluationError(
            f"These are {benchmark.title} predictions ({benchmark.key}). "
            f"{benchmark.missing_message(release)} It holds: {held or 'nothing to score'}."
        )
    return benchmark


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
    """An uploaded predictions file (page, API), scored by the rules of its
    benchmark (given as `fmt`, or seen from its shape). Nothing is stored on
    error. `swapped` (the swapped-order file) and `official_compat` are
    options of the benchmarks that take them."""
    for data, label in ((predictions, filename), (swapped or b"", swapped_filename)):
        if size_of(data) > MAX_PREDICTIONS_BYTES:  # before a byte of it is read
            raise EvaluationError(f"{label}: larger than {MAX_PREDICTIONS_BYTES} bytes")
    benchmark = resolve_benchmark(release, predictions, fmt)
    upload = Upload(
        predictions=predictions,
        filename=filename,
        swapped=swapped or None,
        swapped_filename=swapped_filename,
        official_compat=official_compat,
    )
    return evaluate(release=release, benchmark=benchmark, name=name, upload=upload, user=user)


def evaluate(*, release: Release, benchmark, name: str, upload: Upload, user=None) -> Evaluation:
    """Score `upload` by `benchmark` against a ready release and store the
    entry with its files and per-item results (one transaction)."""
    name = name.strip()
    if not name:
        raise EvaluationError("Name the model or judge being evaluated.")
    if release.status != ReleaseStatus.READY:
        raise EvaluationError("Only ready releases can be evaluated.")
    if Evaluation.objects.filter(release=release, name=name).exists():
        raise EvaluationError(f"{name!r} is already on this release's leaderboard.")
    scored = benchmark.score(release, upload)
    base = f"evaluations/{release.project.slug}/{release.version}/{uuid.uuid4().hex}"
    with transaction.atomic():
        stored = {
            suffix: default_storage.save(f"{base}{suffix}", stored_content(data))
            for suffix, data in scored.files.items()
        }
        names = list(stored.values())
        evaluation = Evaluation.objects.create(
            release=release,
            name=name,
            scoring=benchmark.key,
            predictions=names[0],
            swapped_predictions=names[1] if len(names) > 1 else "",
            report=scored.report,
            accuracy=scored.accuracy,
            created_by=user,
        )
        scored.store_items(evaluation)
        return evaluation


def stored_content(predictions: Predictions) -> File:
    if isinstance(predictions, bytes):
        return ContentFile(predictions)
    predictions.seek(0)
    return predictions


def leaderboards(release: Release, *, sort: str = "") -> list[Board]:
    """One table per benchmark the release holds (and per benchmark an entry
    was scored by), in the registry's order."""
    evaluations = release.evaluations.select_related("created_by")
    scored = set(evaluations.order_by().values_list("scoring", flat=True).distinct())
    boards = []
    for benchmark in registry.all_benchmarks():
        if benchmark.key in scored or benchmark.in_release(release):
            entries = evaluations.filter(scoring=benchmark.key)
            boards.append(benchmark.leaderboard(release, entries, sort=sort))
    return boards
