"""Multimodal RewardBench 2 (arXiv 2512.16899, facebookresearch/MMRB2) as
the studio serves it: `mmrb2/<task>.json` task files in the published layout
(.release_files, .annotations), their card and manifest sections (.card),
predictions `{pair_id: {"forward": [...], "reverse": [...]}}` scored as
`compute_accuracy.py` does (.scoring, .evaluation), per-item results
(.predictions), the leaderboard table and the judge prompt (.judge)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from curation.benchmarks.base import (
    Board,
    EvaluationError,
    FileOptions,
    FileScore,
    Scored,
    Upload,
)
from curation.benchmarks.common.records import OwnApiReport, OwnModules, refuse_options
from curation.benchmarks.mmrb2 import evaluation, files, judge
from curation.benchmarks.mmrb2 import scoring as mmrb2_scoring

PREFIX = "mmrb2/"  # of the export Category of an MMRB2 domain (mmrb2/<task>)


def task_of_category(category: str) -> str | None:
    """The task of an MMRB2 domain's export Category (mmrb2/<task>), else None."""
    return category.removeprefix(PREFIX) if category.startswith(PREFIX) else None


class MultimodalRewardBench2(OwnApiReport, OwnModules):
    key = "mmrb2"
    title = "Multimodal RewardBench 2"
    position = 20  # its task files after the records; its table after theirs
    upload_label = "Multimodal RewardBench 2 (forward/reverse JSON)"
    upload_help = (
        'MMRB2: one JSON object, {"pair ID": {"forward": [{"judgement": "A"}], '
        '"reverse": [{"judgement": "B"}]}}, scored against the release\'s mmrb2/TASK.json '
        "files as the benchmark's compute_accuracy.py does."
    )
    judge_label = "Multimodal RewardBench 2: every mmrb2/TASK.json pair, both orders"
    rekey_prefix = "MMRB2 pairs: the task"
    detect_last = False
    judge_both_orders = True  # MMRB2 scores a forward and a reverse judgement of every pair

    # --- release -------------------------------------------------------------------

    def serves(self, domains: Sequence[Any]) -> bool:
        return any(task_of_category(d.export_category) is not None for d in domains)

    # --- evaluation ----------------------------------------------------------------

    def in_release(self, release) -> bool:
        return bool(evaluation.release_tasks(release))

    def missing_message(self, release) -> str:
        return "This release has no MMRB2 task files (mmrb2/<task>.json)."

    def detects(self, head: str) -> bool:
        return mmrb2_scoring.looks_like_predictions(head)

    def score(self, release, upload: Upload) -> Scored:
        refuse_options(upload, "MMRB2", 'both orders, "forward" and "reverse"')
        parsed, repeated = evaluation.read_predictions_file(upload.predictions, upload.filename)
        report = {"mmrb2": evaluation.score_release(release, parsed, repeated)}

        def store_items(entry) -> None:
            # Per-item results in canonical terms (drill-down, label audit).
            from curation.benchmarks.mmrb2.predictions import store_mmrb2_item_predictions

            store_mmrb2_item_predictions(evaluation=entry, predictions=parsed)

        return Scored(
            report=report,
            accuracy=report["mmrb2"]["overall"]["accuracy"],
            files={".json": upload.predictions},
            store_items=store_items,
        )

    def leaderboard(self, release, evaluations, *, sort: str = "") -> Board:
        tasks, rows = evaluation.leaderboard_rows(release, evaluations)
        return Board(
            key=self.key,
            title=self.title,
            template="curation/leaderboards/mmrb2.html",
            columns=tasks,
            rows=rows,
        )

    def ensure_item_predictions(self, entry) -> int:
        from curation.benchmarks.mmrb2.predictions import ensure_mmrb2_item_predictions

        return ensure_mmrb2_item_predictions(entry)

    # --- optional: files on disk, export, IDs, API, the per-item results page --------

    files_release_help = files.RELEASE_HELP
    files_predictions_help = files.PREDICTIONS_HELP

    def score_files(self, release: str, predictions: list[str], options: FileOptions) -> FileScore:
        return files.score_files(release, predictions, options)

    export_help = (
        "mmrb2: a project's MMRB2 items in the published Multimodal RewardBench 2 layout "
        "(<task>.json, images/, input_images/); a task file imported and exported again is "
        "the same bytes"
    )

    def export_project(self, project, folder, *, rekey: bool, salt: str) -> dict:
        from curation.benchmarks.mmrb2.release_files import ExportConflict, export_mmrb2

        try:
            summary = export_mmrb2(project=project, folder=folder, rekey=rekey, salt=salt)
        except ExportConflict as exc:
            raise EvaluationError(str(exc)) from None
        tasks = ", ".join(f"{task}: {n}" for task, n in summary["tasks"].items()) or "no tasks"
        return {"ids": summary["ids"], "message": f"{tasks}; {summary['images']} images"}

    def id_prefix(self, category: str) -> str | None:
        """A task file's re-keyed IDs are prefixed by the task."""
        return task_of_category(category)

    api_serializer = "Mmrb2ReportSerializer"

    def item_filters(self, report: dict) -> tuple[list[str], list[str]]:
        """Its tasks and prompt sources, from the report."""
        tasks = report.get(self.key, {}).get("tasks", [])
        sources = sorted({s["source"] for t in tasks for s in t.get("by_source", [])})
        return [t["task"] for t in tasks], sources

    # --- judge runs ----------------------------------------------------------------

    def judge_item_count(self, release) -> int:
        return sum(
            len(evaluation.task_pairs(release, name))
            for _, name in evaluation.release_tasks(release)
        )

    def judge_records(self, release) -> list[dict]:
        return evaluation.mmrb2_records(release)

    def judge_request(
        self, record: dict, read_image: Callable[[str], bytes], endpoint, *, swapped: bool
    ) -> dict:
        """Forward = the original order, reverse = swapped."""
        folder = record["folder"]  # "" for a project's item: its files' stored names
        content = judge.content_list(
            record["pair"],
            record["task"],
            (lambda path: read_image(f"{folder}/{path}")) if folder else read_image,
            direction="reverse" if swapped else "forward",
        )
        return judge.request_body(content, endpoint)

    def judge_predictions(self, outputs: dict, records: list[dict], run) -> Upload:
        return Upload(
            predictions=evaluation.predictions_file(outputs, records),
            filename=f"judge-run-{run.pk}.json",
        )

    # --- judging a project's items (issue 36 item 3) --------------------------------

    def judge_project_records(self, items) -> list[dict]:
        """Pairs of an MMRB2 task's domain, their parts in order (text,
        images, interleaved) as a task file's pair has them."""
        from curation.benchmarks.common.project_items import FILES, item_parts

        tasks = {i.external_id: task_of_category(i.domain.export_category) for i in items}
        records = []
        for p in item_parts(items):
            slots = [p.content.get(s, []) for s in ("prompt", "response_1", "response_2")]
            if tasks[p.external_id] is None or not all(slots):
                continue
            pair = {"prompt_content": slots[0], "response_a": {"response_content": slots[1]},
                    "response_b": {"response_content": slots[2]}}  # fmt: skip
            files = [v for parts in slots for k, v in parts if k != "text"]
            records.append({"ID": p.external_id, "task": tasks[p.external_id], "pair": pair,
                            "folder": "", FILES: files})  # fmt: skip
        return records

    def judge_vote(self, output: str, *, call: str) -> str | None:
        from curation.benchmarks.common.project_items import canonical

        return canonical(judge.parse_verdict(output or ""), call)


BENCHMARK = MultimodalRewardBench2()
