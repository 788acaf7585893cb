"""Multimodal RewardBench (arXiv 2502.14191, facebookresearch/
multimodal_rewardbench) as the studio serves it: the release's records
(`all_data.json`, `<domain>.json`: `ID, Text, Image, Output1, Output2,
Better, Category`), their card and manifest sections, predictions as JSONL
lines scored exactly as `scripts/2_get_accuracy.py` does (.scoring), the
leaderboard table (.leaderboard) and the judge prompt of
`scripts/1_run_model_as_judge_gpt4o.py` (.judge)."""

from __future__ import annotations

import codecs
import io
import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from curation.benchmarks.base import (
    Board,
    EvaluationError,
    FileOptions,
    FileScore,
    Predictions,
    Scored,
    Upload,
)
from curation.benchmarks.common.records import OwnModules, read_release_file
from curation.benchmarks.mrb import (
    files,
    judge,
    leaderboard,
    scoring,
    scoring_input,
    scoring_output,
)
from curation.releases.groups import acc_plus, release_groups

# One prediction line: an ID and a judge's answer of a few kB.
MAX_LINE_BYTES = 1024 * 1024


def lines_of(predictions: Predictions, filename: str) -> Iterator[str]:
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


def release_records(release) -> list[dict]:
    """The release's records (all_data.json), from the releases storage
    (local or a bucket) by name."""
    text = read_release_file(release, "all_data.json").decode("utf-8-sig")
    return scoring_input.parse_release_records(text, f"{release.folder}/all_data.json")


class MultimodalRewardBench(OwnModules):
    key = "mrb"
    title = "Multimodal RewardBench"
    short = "MRB"  # in messages
    position = 10  # its records come first in a release, its table first on a page
    upload_label = "Multimodal RewardBench (JSONL)"
    upload_help = (
        "MRB: JSONL, ID with judge text (output), Label (A/B), score_1/score_2, or "
        "chosen_score/rejected_score."
    )
    judge_label = "Multimodal RewardBench: all_data.json records"
    rekey_prefix = (
        "MRB records: math/pairs where the official sub-bucket needs it, else the category's name"
    )
    detect_last = True  # JSONL lines: what is not another benchmark's shape
    judge_both_orders = False

    # --- release -------------------------------------------------------------------

    def serves(self, domains: Sequence[Any]) -> bool:
        return True  # every release holds the records (empty when none has their shape)

    # --- evaluation ----------------------------------------------------------------

    def in_release(self, release) -> bool:
        return bool(release.manifest.get("total"))

    def missing_message(self, release) -> str:
        return "This release has no Multimodal RewardBench records (all_data.json is empty)."

    def detects(self, head: str) -> bool:
        return True

    def score(self, release, upload: Upload) -> Scored:
        records = release_records(release)
        try:
            parsed = scoring_input.parse_predictions(
                lines_of(upload.predictions, upload.filename), filename=upload.filename
            )
            if upload.swapped:
                parsed += scoring_input.parse_predictions(
                    lines_of(upload.swapped, upload.swapped_filename),
                    filename=upload.swapped_filename,
                    order="swapped",
                )
            report = scoring.score(records, parsed, official_compat=upload.official_compat)
        except scoring_input.ScoringInputError as exc:
            raise EvaluationError(str(exc)) from None

        def store_items(evaluation) -> None:
            # Per-item results in the project's canonical terms (drill-down, label quality).
            from curation.benchmarks.mrb.predictions import store_item_predictions

            store_item_predictions(
                evaluation=evaluation, records=records, predictions=parsed, report=report
            )

        files: dict[str, Predictions] = {".jsonl": upload.predictions}
        if upload.swapped:
            files["-swapped.jsonl"] = upload.swapped
        as_dict = scoring_output.report_as_dict(report)
        # Issue 34: Acc+ where the release has groups (curation.releases.groups).
        groups = release_groups(release)
        if groups:
            right = report.first_picks.get("original", {})
            ids = [r["ID"] for r in records]
            as_dict["extras"]["acc_plus"] = acc_plus(ids, groups, right).as_dict()
        return Scored(
            report=as_dict,
            accuracy=report.group("all").accuracy,
            files=files,
            store_items=store_items,
        )

    def leaderboard(self, release, evaluations, *, sort: str = "") -> Board:
        columns, rows = leaderboard.rows_of(evaluations)
        leaderboard.sort_rows(rows, columns, sort)
        leaderboard.with_cells(rows, columns)
        return Board(
            key=self.key,
            title=self.title,
            template="curation/leaderboards/mrb.html",
            columns=columns,
            rows=rows,
            context={
                "sort": sort,
                "chart": leaderboard.chart(columns, rows),
                "acc_plus": leaderboard.has_acc_plus(rows),
            },
            csv=lambda: leaderboard.csv_rows(columns, rows),
        )

    def ensure_item_predictions(self, evaluation) -> int:
        return 0  # kept since the leaderboard had per-item results

    # --- optional: files on disk, the per-item results page --------------------------

    files_release_help = files.RELEASE_HELP
    files_predictions_help = files.PREDICTIONS_HELP

    def score_files(self, release: str, predictions: list[str], options: FileOptions) -> FileScore:
        return files.score_files(release, predictions, options)

    def api_fields(self) -> dict:
        from curation.benchmarks.mrb import api

        return api.api_fields()

    def item_filters(self, report: dict) -> tuple[list[str], list[str]]:
        """Its categories and the official sub-buckets, from the report."""
        groups = report.get("official", {}).get("groups", [])
        categories = [g["name"] for g in groups if g["level"] == "category"]
        buckets = [g["name"] for g in groups if g["level"] == "sub_bucket"]
        return categories, buckets

    # --- judge runs ----------------------------------------------------------------

    def judge_item_count(self, release) -> int:
        return int(release.manifest.get("total", 0))

    def judge_records(self, release) -> list[dict]:
        return release_records(release)

    def judge_request(
        self, record: dict, read_image: Callable[[str], bytes], endpoint, *, swapped: bool
    ) -> dict:
        return judge.request_body(record, read_image(record["Image"]), endpoint, swapped=swapped)

    def judge_predictions(self, outputs: dict, records: list[dict], run) -> Upload:
        """The run's answers as predictions files ({ID, output} per line,
        release order): the original order, and the swapped one if it ran."""
        files = []
        for order in run.passes:
            lines = [
                scoring_line(r["ID"], outputs[(r["ID"], order)])
                for r in records
                if (r["ID"], order) in outputs
            ]
            files.append(("\n".join(lines) + "\n").encode())
        return Upload(
            predictions=files[0],
            filename=f"judge-run-{run.pk}.jsonl",
            swapped=files[1] if run.swapped else None,
            swapped_filename=f"judge-run-{run.pk}-swapped.jsonl",
        )

    # --- judging a project's items (issue 36: calibrated judges) --------------------

    def judge_project_records(self, items) -> list[dict]:
        """Records of a project's benchmark items in this benchmark's shape,
        for the judge prompt: the pairs with one prompt image (the others
        are not this benchmark's to judge). `items` carry their image."""
        return [
            {
                "ID": item.external_id,
                "Text": item.prompt,
                "Image": item.image.file,
                "Output1": item.response_1,
                "Output2": item.response_2,
            }
            for item in items
            if item.image_id is not None
        ]

    def judge_vote(self, output: str, *, call: str) -> str | None:
        """The canonical response ("1"/"2") an answer picks in a pass
        ("original": assistant A is Output1; "swapped": Output2), by the
        official verdict rule; None without a verdict (no random draw)."""
        verdict = scoring_input.extract_verdict(output)
        if verdict is None:
            return None
        first = verdict == "A"
        if call == "swapped":
            first = not first
        return "1" if first else "2"


def scoring_line(external_id: str, output: str) -> str:
    return json.dumps({"ID": external_id, "output": output}, ensure_ascii=False)


BENCHMARK = MultimodalRewardBench()
