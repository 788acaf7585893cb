"""Ranked responses in the generic layout of MR²Bench's training data
(arXiv 2604.10966; issue 33) as the studio serves them:
`ranked/rankings.jsonl` in the release (.release_files, .release_part), its
card and manifest sections (.card), a model's scores or ranking per prompt
scored by top-1 accuracy and Kendall's τ-b against the human ranking
(.scoring: the studio's definitions, MR²Bench publishes no scorer), and its
leaderboard table."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from curation.benchmarks.base import (
    MAX_PREDICTIONS_BYTES,
    Board,
    BuildContext,
    EvaluationError,
    FileScore,
    Part,
    Predictions,
    Scored,
    Upload,
    size_of,
)
from curation.benchmarks.ranked import judge, scoring
from curation.benchmarks.ranked.card import FILE, PREDICTIONS_SHAPE

PREFIX = "ranked/"  # of the export Category of a ranked domain


class Ranked:
    key = "ranked"
    title = "Ranked responses (MR²Bench layout)"
    upload_label = "Ranked responses, MR²Bench layout (scores or a ranking per prompt, JSONL)"
    upload_help = f"Ranked responses: {PREDICTIONS_SHAPE}."
    judge_label = "Ranked responses: an N-way ranking per prompt, shown in a seeded order"
    rekey_prefix = ""  # its own rule is in its own manifest section
    detect_last = False
    judge_both_orders = False
    judge_calls_help = (
        "one N-way call per prompt, the responses in an order drawn from the run's seed"
    )
    # Before the benchmark at 20, whose detection takes any JSON object line without
    # "ID": a file of {"id", "ranking"} lines is detected as this one's. Its
    # file and table come after the Multimodal RewardBench records' (10).
    position = 15

    # --- release -------------------------------------------------------------------

    def serves(self, domains: Sequence[Any]) -> bool:
        return any(d.export_category.startswith(PREFIX) for d in domains)

    def prepare(self, ctx: BuildContext) -> Part:
        from curation.benchmarks.ranked import release_part

        return release_part.prepare(ctx)

    def card(self, meta: Any, summary: dict):
        from curation.benchmarks.ranked import card

        return card.CardSection(meta, summary)

    # --- evaluation ----------------------------------------------------------------

    def in_release(self, release) -> bool:
        return FILE in (release.manifest or {}).get("files", {})

    def missing_message(self, release) -> str:
        return f"This release has no ranked file ({FILE})."

    def detects(self, head: str) -> bool:
        return scoring.looks_like_predictions(head)

    def score(self, release, upload: Upload) -> Scored:
        if upload.swapped or upload.official_compat:
            raise EvaluationError(
                "Ranked predictions are one file (scores or a ranking per prompt) and take no "
                "options; leave the swapped file empty."
            )
        report = score_text(
            release_prompts(release), _text(upload.predictions, upload.filename), upload.filename
        )
        return Scored(
            report={"ranked": report},
            accuracy=report["top1"],
            files={".jsonl": upload.predictions},
            # Per-item rows (ItemPrediction) hold a pair's choice: none for rankings.
            store_items=lambda entry: None,
        )

    def leaderboard(self, release, evaluations, *, sort: str = "") -> Board:
        categories: list[str] = []
        rows = []
        for e in evaluations.order_by("-accuracy", "name", "pk"):
            report = e.report.get("ranked", {})
            by = {c["category"]: c for c in report.get("categories", [])}
            categories.extend(c for c in by if c not in categories)
            rows.append({"evaluation": e, "by": by, "report": report})
        for row in rows:
            row["cells"] = [_cell(row["by"].get(name)) for name in categories]
            row["top1"] = _percent(row["report"].get("top1"))
            row["tau_b"] = _tau(row["report"].get("tau_b"))
        return Board(
            key=self.key,
            title=self.title,
            template="curation/leaderboards/ranked.html",
            columns=categories,
            rows=rows,
            context={"definitions": scoring.DEFINITIONS, "file": FILE},
        )

    def ensure_item_predictions(self, entry) -> int:
        return 0

    # --- the evaluate command (optional member) -----------------------------------------

    files_release_help = (
        "ranked: a release folder holding ranked/rankings.jsonl, or such a JSONL file itself"
    )
    files_predictions_help = f"ranked: one predictions file, {PREDICTIONS_SHAPE}"

    def score_files(self, release: str, predictions: list[str], options: Any) -> FileScore:
        from pathlib import Path

        if getattr(options, "swapped", None) or getattr(options, "official_compat", False):
            raise EvaluationError("Ranked predictions take one file and no options.")
        if len(predictions) != 1:
            raise EvaluationError("Ranked: give one predictions file.")
        where = Path(release)
        source = where / FILE if where.is_dir() else where
        try:
            text = source.read_text(encoding="utf-8")
            prompts = prompts_of(text)
            raw = Path(predictions[0]).read_bytes()
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise EvaluationError(f"{source}: not a ranked file ({exc})") from None
        report = score_text(prompts, _text(raw, predictions[0]), predictions[0])
        return FileScore(report={"ranked": report}, text=lambda: text_report(report))

    # --- release IDs (optional member) ---------------------------------------------------

    def id_prefix(self, category: str) -> str | None:
        """A re-keyed ID of a ranked category's item (one ID in every file)."""
        from curation.benchmarks.ranked.release_files import REKEY_PREFIX

        return REKEY_PREFIX if category.startswith(PREFIX) else None

    # --- judge runs: an N-way ranking prompt (.judge; the judge-call seam) -------------

    def judge_item_count(self, release) -> int:
        return len(self.judge_records(release))

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


def score_text(prompts: list[scoring.Prompt], text: str, filename: str) -> dict:
    try:
        parsed, repeated, unknown = scoring.read_predictions(
            text, filename, {p.id: len(p.ranks) for p in prompts}
        )
    except scoring.PredictionsError as exc:
        raise EvaluationError(str(exc)) from None
    return {**scoring.score(prompts, parsed), "repeated_ids": repeated, "unknown_ids": unknown}


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}"


def _tau(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _cell(entry: dict | None) -> dict | None:
    if entry is None:
        return None
    return {**entry, "percent": _percent(entry["top1"]), "tau": _tau(entry["tau_b"])}


def _text(predictions: Predictions, filename: str) -> str:
    if size_of(predictions) > MAX_PREDICTIONS_BYTES:
        raise EvaluationError(f"{filename}: larger than {MAX_PREDICTIONS_BYTES} bytes")
    if isinstance(predictions, bytes):
        raw = predictions
    else:
        predictions.seek(0)
        raw = predictions.read()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise EvaluationError(f"{filename}: not valid UTF-8 (byte {exc.start})") from None


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
    from common.storage import read_stored
    from curation.releases import publishing

    try:
        data = read_stored(publishing.release_storage(), f"{release.folder}/{FILE}")
    except FileNotFoundError:
        raise EvaluationError(f"{FILE} is missing from the release's files.") from None
    return prompts_of(data.decode("utf-8"))


def text_report(report: dict) -> str:
    """The report as the shell prints it: a line per category, then overall."""
    head = f"{'category':<20} {'top-1 %':>8} {'tau-b':>7} {'prompts':>8} {'missing':>8}"
    lines = [head]
    for c in [*report["categories"], {**report, "category": "overall"}]:
        lines.append(
            f"{c['category']:<20} {_percent(c['top1']):>8} {_tau(c['tau_b']):>7} "
            f"{c['prompts']:>8} {c['missing']:>8}"
        )
    lines.append(f"unknown IDs: {report['unknown_ids']}, repeated IDs: {report['repeated_ids']}")
    lines.append(report["definitions"])
    return "\n".join(lines) + "\n"
