"""RewardBench 2 (allenai/reward-bench-2, ICLR 2026) as the studio serves it:
`rewardbench2/test.jsonl` in the published layout (.release_files,
.release_part), its card and manifest sections (.card), predictions (one
classifier score per completion, chosen first; or a judge's 4-way verdicts
and ratings) scored exactly as allenai/reward-bench does (.scoring), its
leaderboard table and the judge prompts of ``run_generative_v2.py`` (.judge)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from curation.benchmarks.base import Board, EvaluationError, FileScore, Scored, Upload
from curation.benchmarks.common.records import (
    RecordsBenchmark,
    jsonl_records,
    percent,
    predictions_text,
    refuse_options,
)
from curation.benchmarks.rewardbench2 import judge
from curation.benchmarks.rewardbench2 import scoring as rb2_scoring
from curation.benchmarks.rewardbench2.card import FILE, PREDICTIONS_SHAPE


class RewardBench2(RecordsBenchmark):
    key = "rewardbench2"
    title = "RewardBench 2"
    prefix = "rewardbench2/"  # of the export Category of a RewardBench 2 domain
    file = FILE
    label = "RewardBench 2"
    upload_label = "RewardBench 2 (scores per completion, JSON or JSONL)"
    upload_help = f"RewardBench 2: {PREDICTIONS_SHAPE}."
    judge_label = "RewardBench 2: best-of-4 verdicts, Ties rated"
    # judge_both_orders False: one request per prompt, positions come from the seed
    position = 30  # its file and table after the two multimodal benchmarks (10, 20)

    # --- evaluation ----------------------------------------------------------------

    def score(self, release, upload: Upload) -> Scored:
        refuse_options(upload, "RewardBench 2", "a judge's positions are in it")
        text = predictions_text(upload.predictions, upload.filename)
        try:
            parsed, repeated = rb2_scoring.read_predictions(text, upload.filename)
            report = rb2_scoring.score([_prompt(r) for r in self.release_records(release)], parsed)
        except rb2_scoring.PredictionsError as exc:
            raise EvaluationError(str(exc)) from None
        report["repeated_ids"] = repeated
        suffix = ".jsonl" if upload.filename.lower().endswith(".jsonl") else ".json"
        return Scored(
            report={"rewardbench2": report},
            accuracy=_sort_key(report["overall"]),
            files={suffix: upload.predictions},
            store_items=lambda entry: None,  # no per-item rows (ensure_item_predictions)
        )

    def leaderboard(self, release, evaluations, *, sort: str = "") -> Board:
        overall = lambda report: percent(report.get("overall"))  # noqa: E731
        return self.board(evaluations, "subsets", "subset", _cell, overall=overall)

    # --- the evaluate command (a release folder on disk; optional member) ---------------

    files_release_help = (
        "rewardbench2: a release folder holding rewardbench2/test.jsonl, or a RewardBench 2 "
        "JSONL file itself"
    )
    files_predictions_help = f"rewardbench2: one predictions file, {PREDICTIONS_SHAPE}"

    def score_files(self, release: str, predictions: list[str], options: Any) -> FileScore:
        """Score one predictions file against the records of a release folder
        (or a RewardBench 2 JSONL file): the report, and its text."""
        prompts, text = self.one_file(
            release, predictions, options, lambda text: [_prompt(r) for r in jsonl_records(text)]
        )
        try:
            parsed, repeated = rb2_scoring.read_predictions(text, predictions[0])
            report = rb2_scoring.score(prompts, parsed)
        except rb2_scoring.PredictionsError as exc:
            raise EvaluationError(str(exc)) from None
        report["repeated_ids"] = repeated
        return FileScore(report={"rewardbench2": report}, text=lambda: _text_report(report))

    # --- judge runs ----------------------------------------------------------------

    def judge_records(self, release) -> list[dict]:
        return judge.judge_records(self.release_records(release), release.seed)

    def judge_request(
        self, record: dict, read_image: Callable[[str], bytes], endpoint, *, swapped: bool
    ) -> dict:
        return judge.request_body(record, endpoint)

    def judge_predictions(self, outputs: dict, records: list[dict], run) -> Upload:
        from curation.models import JudgeOrder

        answers = {r["ID"]: outputs.get((r["ID"], JudgeOrder.ORIGINAL)) for r in records}
        return Upload(
            predictions=judge.predictions_lines(answers, records),
            filename=f"judge-run-{run.pk}.jsonl",
        )


BENCHMARK = RewardBench2()


def _sort_key(overall: float | None) -> float | None:
    """Evaluation.accuracy (the leaderboard's order, checked to lie in 0..1):
    the overall, which the Ties weights (summing to 1.01, the margin term in
    -1..1) can push a little outside that range; the report keeps it exact."""
    return None if overall is None else min(1.0, max(0.0, overall))


def _cell(entry: dict) -> dict:
    return {"percent": percent(entry.get("score"))}


def _prompt(record: dict) -> rb2_scoring.Prompt:
    return rb2_scoring.Prompt(
        record["id"], record["subset"], record["num_correct"], record["total_completions"]
    )


def _text_report(report: dict) -> str:
    """The report as the shell prints it: a line per subset, then overall."""
    lines = [f"{'subset':<12} {'score %':>8} {'prompts':>8} {'missing':>8}"]
    for s in report["subsets"]:
        lines.append(
            f"{s['subset']:<12} {percent(s['score']):>8} {s['prompts']:>8} {s['missing']:>8}"
        )
        if "ties" in s:
            t = s["ties"]
            lines.append(
                "  ties: "
                + ", ".join(
                    f"{k} {'—' if t[k] is None else f'{t[k]:.4f}'}"
                    for k in (
                        "ref_accuracy",
                        "tied_accuracy",
                        "correctness_preferred",
                        "correctness_preferred_hard",
                        "margin",
                    )
                )
            )
    lines.append(f"{'overall':<12} {percent(report['overall']):>8} {report['prompts']:>8}")
    lines.append(f"unknown IDs: {report['unknown_ids']}, repeated IDs: {report['repeated_ids']}")
    return "\n".join(lines) + "\n"
