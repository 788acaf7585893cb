"""Multimodal RewardBench predictions scored against a release on disk (the
evaluate command): one JSONL file, and its swapped-order twin if given,
against the release's all_data.json, by the official scorer's rules."""

from __future__ import annotations

from pathlib import Path

from curation.benchmarks.base import EvaluationError, FileOptions, FileScore
from curation.benchmarks.mrb import scoring, scoring_input, scoring_output

RELEASE_HELP = "a release folder or its all_data.json"
PREDICTIONS_HELP = (
    "MRB: one JSONL file, one line per prediction: ID and output (judge text) or "
    'Label ("A"/"B"), or score_1 and score_2, or chosen_score and rejected_score'
)


def read_predictions(path: str, order: str | None = None) -> list[scoring_input.Prediction]:
    try:
        with Path(path).open(encoding="utf-8-sig") as fh:
            return scoring_input.parse_predictions(fh, filename=path, order=order)
    except OSError as exc:
        raise EvaluationError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise EvaluationError(f"{path}: not UTF-8 text ({exc.reason})") from None


def score_files(release: str, predictions: list[str], options: FileOptions) -> FileScore:
    if len(predictions) > 1:
        raise EvaluationError("MRB predictions are one JSONL file (and --swapped).")
    try:
        records = scoring_input.load_release_records(release)
        parsed = read_predictions(predictions[0])
        if options.swapped:
            parsed += read_predictions(options.swapped, order="swapped")
    except scoring_input.ScoringInputError as exc:
        raise EvaluationError(str(exc)) from None
    report = scoring.score(records, parsed, official_compat=options.official_compat)
    return FileScore(
        report=scoring_output.report_as_dict(report),
        text=lambda: scoring_output.format_report(report, id_limit=options.show_ids),
        lines_scored=len(parsed),
    )
