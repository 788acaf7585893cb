"""The base of a benchmark whose release file is one JSONL file of records
(see the package), and what reading its predictions and files takes."""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from curation.benchmarks.base import (
    MAX_PREDICTIONS_BYTES,
    ApiReport,
    Board,
    BuildContext,
    EvaluationError,
    Part,
    Predictions,
    Scored,
    Upload,
    size_of,
)


def predictions_text(
    predictions: Predictions, filename: str, limit: int = MAX_PREDICTIONS_BYTES
) -> str:
    """An uploaded predictions file as text, size-checked before a byte is read."""
    if size_of(predictions) > limit:
        raise EvaluationError(f"{filename}: larger than {limit} bytes")
    if isinstance(predictions, bytes):
        raw = predictions
    else:
        predictions.seek(0)
        raw = predictions.read()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise EvaluationError(f"{filename}: not valid UTF-8 (byte {exc.start})") from None


def read_release_file(release: Any, name: str) -> bytes:
    """A file of a built release (its folder's `name`), as stored."""
    from common.storage import read_stored
    from curation.releases import publishing

    try:
        return read_stored(publishing.release_storage(), f"{release.folder}/{name}")
    except FileNotFoundError:
        raise EvaluationError(f"{name} is missing from the release's files.") from None


def refuse_options(upload: Upload, label: str, one_file: str) -> None:
    """Refuse the options of the pair layout's predictions: a swapped file
    (`one_file` says why the benchmark's are one) and scoring by Label."""
    if upload.swapped:
        raise EvaluationError(
            f"{upload.swapped_filename}: {label} predictions are one file ({one_file}); leave "
            "the swapped file empty."
        )
    if upload.official_compat:
        from curation.benchmarks import registry

        # The option is the catch-all benchmark's (the records of the pair layout).
        owner = next((b for b in registry.all_benchmarks() if b.detect_last), None)
        raise EvaluationError(
            f"Scoring unknown IDs by their own Label is an {getattr(owner, 'short', '')} "
            f"option; {label} predictions carry no Label."
        )


def jsonl_records(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}"


def pick_of_scores(chosen: str, got: Sequence[float]) -> str:
    """A pair's pick ("1" or "2", "" for none) from its two scores, the
    chosen response's first: the chosen slot when it scored higher, the
    other when lower, no pick when they are equal."""
    other = "2" if chosen == "1" else "1"
    return "" if got[0] == got[1] else chosen if got[0] > got[1] else other


class OwnModules:
    """A benchmark whose release part and card section are its package's
    ``release_part.prepare`` and ``card.CardSection`` (imported when a build
    asks: the release part needs models and storage)."""

    def _own(self, module: str):
        return importlib.import_module(f"{type(self).__module__.rpartition('.')[0]}.{module}")

    def prepare(self, ctx: BuildContext) -> Part:
        return self._own("release_part").prepare(ctx)

    def card(self, meta: Any, summary: dict):
        return self._own("card").CardSection(meta, summary)


class OwnApiReport:
    """The API's report section of a benchmark whose package's ``api`` module
    holds its `api_serializer` (a Serializer class's name) and HELP_TEXT."""

    api_serializer: str

    @property
    def api_report(self) -> ApiReport:
        api = self._own("api")  # type: ignore[attr-defined]  # (OwnModules)
        return ApiReport(serializer=getattr(api, self.api_serializer), help_text=api.HELP_TEXT)


class PairJudgeBothOrders:
    """The judge members of a records benchmark asking each pair in both
    orders through its package's ``judge`` module (``request_body(record,
    read_file, endpoint, swapped=)``, ``predictions_lines(outputs,
    records)``), whose answers are ``[[A]]`` or ``[[B]]``."""

    judge_both_orders = True

    def judge_request(
        self, record: dict, read_image: Callable[[str], bytes], endpoint, *, swapped: bool
    ) -> dict:
        judge = self._own("judge")  # type: ignore[attr-defined]  # (OwnModules)
        return judge.request_body(record, read_image, endpoint, swapped=swapped)

    def judge_predictions(self, outputs: dict, records: list[dict], run) -> Upload:
        judge = self._own("judge")  # type: ignore[attr-defined]  # (OwnModules)
        return Upload(
            predictions=judge.predictions_lines(outputs, records),
            filename=f"judge-run-{run.pk}.jsonl",
        )

    def judge_vote(self, output: str, *, call: str) -> str | None:
        from curation.benchmarks.common.judge import pick
        from curation.benchmarks.common.project_items import canonical

        return canonical(pick(output), call)


class RecordsBenchmark(OwnModules):
    """A benchmark whose release holds `file`, JSONL records of the domains
    whose export Category starts with `prefix` (curation.benchmarks.base.Benchmark)."""

    key: str
    title: str
    prefix: str  # of the export Category of its domains ("<key>/")
    file: str  # its records in the release folder
    label: str  # its name in messages
    position: int
    detect_last = False
    judge_both_orders = False
    # The build lists every registered benchmark's prefix in each re-keyed
    # release's manifest (golden bytes): its own rule is in its own section.
    rekey_prefix = ""

    # --- release -------------------------------------------------------------------

    def serves(self, domains: Sequence[Any]) -> bool:
        return any(d.export_category.startswith(self.prefix) for d in domains)

    # --- evaluation ----------------------------------------------------------------

    def detects(self, head: str) -> bool:
        """Whether an upload starting with `head` is its predictions: its
        package's ``scoring.looks_like_predictions``."""
        return self._own("scoring").looks_like_predictions(head)

    def in_release(self, release) -> bool:
        return self.file in (release.manifest or {}).get("files", {})

    def missing_message(self, release) -> str:
        return f"This release has no {self.label} file ({self.file})."

    def ensure_item_predictions(self, entry) -> int:
        # Per-item rows (ItemPrediction) hold a pair's choice: none for records of N responses.
        return 0

    def board(
        self,
        evaluations: Any,
        group: str,
        name: str,
        shown: Callable,
        context: dict | None = None,
        **totals: Callable,
    ) -> Board:
        """Its leaderboard table (template curation/leaderboards/<key>.html,
        given `context` too): a row per evaluation, best first, with its
        report's `group` entries by their `name` (`by`), a cell per column
        (the entry and its `shown(entry)` fields, or None; the names in the
        order first met) and `totals` made from the report."""
        columns: list[str] = []
        rows = []
        for e in evaluations.order_by("-accuracy", "name", "pk"):
            report = e.report.get(self.key, {})
            by = {entry[name]: entry for entry in report.get(group, [])}
            columns.extend(c for c in by if c not in columns)
            rows.append({"evaluation": e, "by": by, "report": report})
            rows[-1].update({total: make(report) for total, make in totals.items()})
        for row in rows:
            entries = [row["by"].get(column) for column in columns]
            row["cells"] = [e and {**e, **shown(e)} for e in entries]
        template = f"curation/leaderboards/{self.key}.html"
        return Board(
            key=self.key,
            title=self.title,
            template=template,
            columns=columns,
            rows=rows,
            context=context or {},
        )

    def score_one_file(
        self,
        upload: Upload,
        *,
        refusal: str,
        score_text: Callable[[Any, str, str], dict],
        records: Callable[[], Any],
        accuracy: str,
        store: Callable[[Any, Any], Any],
        items: str | None = "items",
    ) -> Scored:
        """An upload of one predictions file (the swapped file and the
        options refused with `refusal`) scored by `score_text(records(),
        text, filename)` into the report's own section, `accuracy` naming
        its overall; the per-item results stored by `store(evaluation,
        report[items])` (popped from the report), or `store(evaluation,
        report)` when `items` is None."""
        if upload.swapped or upload.official_compat:
            raise EvaluationError(refusal)
        report = score_text(
            records(), predictions_text(upload.predictions, upload.filename), upload.filename
        )
        rows = report if items is None else report.pop(items)
        return Scored(
            report={self.key: report},
            accuracy=report[accuracy],
            files={".jsonl": upload.predictions},
            store_items=lambda evaluation: store(evaluation, rows),
        )

    def release_records(self, release) -> list[dict]:
        """The records of the release's file, in file order."""
        return jsonl_records(read_release_file(release, self.file).decode("utf-8"))

    def one_file(
        self, release: str, predictions: list[str], options: Any, read: Callable[[str], Any]
    ) -> tuple[Any, str]:
        """The evaluate command's release (a folder holding `file`, or the file
        itself) read by `read(text)`, and its one predictions file's text."""
        if getattr(options, "swapped", None) or getattr(options, "official_compat", False):
            raise EvaluationError(
                f"The {self.label} benchmark takes one predictions file and no options."
            )
        if len(predictions) != 1:
            raise EvaluationError(f"Give one {self.label} predictions file.")
        where = Path(release)
        source = where / self.file if where.is_dir() else where
        try:
            records = read(source.read_text(encoding="utf-8"))
            raw = Path(predictions[0]).read_bytes()
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise EvaluationError(f"{source}: not a {self.label} file ({exc})") from None
        return records, predictions_text(raw, predictions[0])

    # --- judge runs (its own judge_records, judge_request, judge_predictions) ------

    def judge_item_count(self, release) -> int:
        return len(self.judge_records(release))
