"""Ranked responses in the generic layout of MR²Bench's training data
(arXiv 2604.10966; issue 33) as the studio serves them:
`ranked/rankings.jsonl` in the release (.release_files, .release_part), its
card and manifest sections (.card), a model's scores or ranking per prompt
scored by top-1 accuracy and Kendall's τ-b against the human ranking
(.scoring: the studio's definitions, MR²Bench publishes no scorer), and its
leaderboard table."""

from __future__ import annotations

import json
from typing import Any

from curation.benchmarks.base import Board, EvaluationError, FileScore, Scored, Upload
from curation.benchmarks.common.records import (
    RecordsBenchmark,
    percent,
    predictions_text,
    read_release_file,
    refuse_options,
)
from curation.benchmarks.ranked import judge, scoring
from curation.benchmarks.ranked.card import FILE, PREDICTIONS_SHAPE


class Ranked(RecordsBenchmark):
    key = "ranked"
    title = "Ranked responses (MR²Bench layout)"
    prefix = "ranked/"  # of the export Category of a ranked domain
    file = FILE
    label = "ranked"
    upload_label = "Ranked responses, MR²Bench layout (scores or a ranking per prompt, JSONL)"
    upload_help = f"Ranked responses: {PREDICTIONS_SHAPE}."
    judge_label = "Ranked responses: an N-way ranking per prompt, shown in a seeded order"
    judge_calls_help = (
        "one N-way call per prompt, the responses in an order drawn from the run's seed"
    )
    # Before the benchmark at 20, whose detection takes any JSON object line without
    # "ID": a file of {"id", "ranking"} lines is detected as this one's. Its
    # file and table come after the Multimodal RewardBench records' (10).
    position = 15

    # --- evaluation ----------------------------------------------------------------

    def score(self, release, upload: Upload) -> Scored:
        refuse_options(upload, "Ranked", "scores or a ranking per prompt")
        from curation.releases.groups import release_groups

        report = score_text(
            release_prompts(release),
            predictions_text(upload.predictions, upload.filename),
            upload.filename,
            release_groups(release),
        )
        return Scored(
            report={"ranked": report},
            accuracy=report["top1"],
            files={".jsonl": upload.predictions},
            store_items=lambda entry: None,  # no per-item rows (ensure_item_predictions)
        )

    def leaderboard(self, release, evaluations, *, sort: str = "") -> Board:
        board = self.board(
            evaluations, "categories", "category", _cell,
            top1=lambda report: percent(report.get("top1")),
            tau_b=lambda report: _tau(report.get("tau_b")),
            acc_plus=lambda report: percent((report.get("acc_plus") or {}).get("value")),
        )  # fmt: skip
        board.context = {"definitions": scoring.DEFINITIONS, "file": FILE}
        return board

    # --- the evaluate command (optional member) -----------------------------------------

    files_release_help = (
        "ranked: a release folder holding ranked/rankings.jsonl, or such a JSONL file itself"
    )
    files_predictions_help = f"ranked: one predictions file, {PREDICTIONS_SHAPE}"

    def score_files(self, release: str, predictions: list[str], options: Any) -> FileScore:
        prompts, text = self.one_file(release, predictions, options, prompts_of)
        report = score_text(prompts, text, predictions[0])
        return FileScore(report={"ranked": report}, text=lambda: text_report(report))

    # --- release IDs (optional member) ---------------------------------------------------

    def id_prefix(self, category: str) -> str | None:
        """A re-keyed ID of a ranked category's item (one ID in every file)."""
        from curation.benchmarks.ranked.release_files import REKEY_PREFIX

        return REKEY_PREFIX if category.startswith(self.prefix) else None

    # --- judge runs: an N-way ranking prompt (.judge; the judge-call seam) -------------

    def judge_records(self, release) -> list[dict]:
        return judge.release_judge_records(release)

    def judge_calls(self, record: dict, seed: int, *, both_orders: bool) -> list[str]:
        return judge.judge_calls(record, seed, both_orders=both_orders)

    def judge_call_request(self, record, read_image, endpoint, *, call: str, seed: int) -> dict:
        return judge.request_body(record, read_image, endpoint, call=call, seed=seed)

    def judge_request(self, record, read_image, endpoint, *, swapped: bool) -> dict:
        raise EvaluationError("Ranked records are judged by call (judge_call_request).")

    def judge_predictions(self, outputs: dict, records: list[dict], run) -> Upload:
        return judge.predictions(outputs, records, run)


BENCHMARK = Ranked()


def score_text(
    prompts: list[scoring.Prompt], text: str, filename: str, groups: dict | None = None
) -> dict:
    try:
        parsed, repeated, unknown = scoring.read_predictions(
            text, filename, {p.id: len(p.ranks) for p in prompts}
        )
    except scoring.PredictionsError as exc:
        raise EvaluationError(str(exc)) from None
    report = scoring.score(prompts, parsed, groups)
    return {**report, "repeated_ids": repeated, "unknown_ids": unknown}


def _tau(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _cell(entry: dict) -> dict:
    return {"percent": percent(entry["top1"]), "tau": _tau(entry["tau_b"])}


def prompts_of(text: str) -> list[scoring.Prompt]:
    """The prompts of a ranked file's text (category as the file names it)."""
    out = []
    for line in text.splitlines():
        if line.strip():
            record = json.loads(line)
            category = record.get("category") or "default"
            out.append(scoring.Prompt(record["id"], category, tuple(record["rankings"])))
    return out


def release_prompts(release) -> list[scoring.Prompt]:
    """The prompts of the release's ranked file, in file order."""
    return prompts_of(read_release_file(release, FILE).decode("utf-8"))


def text_report(report: dict) -> str:
    """The report as the shell prints it: a line per category, then overall."""
    head = f"{'category':<20} {'top-1 %':>8} {'tau-b':>7} {'prompts':>8} {'missing':>8}"
    lines = [head]
    for c in [*report["categories"], {**report, "category": "overall"}]:
        lines.append(
            f"{c['category']:<20} {percent(c['top1']):>8} {_tau(c['tau_b']):>7} "
            f"{c['prompts']:>8} {c['missing']:>8}"
        )
    plus = report.get("acc_plus") or {}
    if plus:
        lines.append(f"Acc+ {percent(plus['value'])} ({plus['correct_groups']}/{plus['groups']})")
    lines.append(f"unknown IDs: {report['unknown_ids']}, repeated IDs: {report['repeated_ids']}")
    lines.append(report["definitions"])
    return "\n".join(lines) + "\n"
