"""Omni-RewardBench (arXiv 2510.23451; issue 34) as the studio serves it:
per task ``omni/<task>_preferences.json`` in the release (.release_files),
its card and manifest sections (.card), generative judges' answers and
scalar reward models' scores scored per task by the published rules
(.scoring, quoted there), its leaderboard table and its judge prompt
(.judge: criterion stated, response1 as A except text_to_audio, whose
published judge swaps).

Judge runs: the runner has no per-run options, so the ties mode is this
module's constant ``JUDGE_WITH_TIES`` (False, the published default:
tie-labelled items are not sent, the prompt offers [[A]]/[[B]]). While an
answer is unparsed the runner asks again up to ``judge_retries`` = 4 more
times: five attempts in all, as the published loop (``for retry in
range(5)``) makes; where the issue's summary and the code differ, the code wins.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from curation.benchmarks.base import Board, EvaluationError, Scored, Upload
from curation.benchmarks.common.records import (
    OwnApiReport,
    RecordsBenchmark,
    percent,
    predictions_text,
    read_release_file,
)
from curation.benchmarks.omni import scoring

PREFIX = "omni/"
JUDGE_WITH_TIES = False


class Omni(OwnApiReport, RecordsBenchmark):
    """A records benchmark whose records are JSON task files, not one JSONL
    file: its in_release, missing_message and release_records are its own."""

    key = "omni"
    title = "Omni-RewardBench (free-form criteria)"
    prefix = PREFIX
    label = "Omni-RewardBench"
    upload_label = "Omni-RewardBench (judge answers or reward-model scores per item, JSONL)"
    upload_help = "Omni-RewardBench predictions: see the release card."
    judge_label = "Omni-RewardBench: criterion prompt, response1 as A, [[A]]/[[B]]"
    position = 14  # before the generic shapes, whose keys ("id", "scores") overlap
    judge_retries = 4  # re-asks after the first: 5 attempts, as published
    carries_media = True  # the video and audio tasks' files go under media_data

    def judge_unparsed(self, output: str) -> bool:
        """Whether the published parse finds no verdict (the runner asks again)."""
        return scoring.parse_judgement(output or "") is None

    # --- release ------------------------------------------------------------------

    def id_prefix(self, category: str) -> str | None:
        return "om" if category.startswith(PREFIX) else None

    # --- evaluation -----------------------------------------------------------------

    def in_release(self, release) -> bool:
        return any(f.startswith(PREFIX) for f in (release.manifest or {}).get("files", {}))

    def missing_message(self, release) -> str:
        return "This release has no Omni-RewardBench files (omni/<task>_preferences.json)."

    def score(self, release, upload: Upload) -> Scored:
        if upload.swapped or upload.official_compat:
            raise EvaluationError(
                "Omni-RewardBench predictions are one file (response1 is always A); leave the "
                "swapped file empty."
            )
        items = release_items(release)
        read = read_text(
            items, predictions_text(upload.predictions, upload.filename), upload.filename
        )
        report = scoring.score(items, read)
        return Scored(
            report={"omni": report},
            accuracy=report["overall"],
            files={".jsonl": upload.predictions},
            store_items=lambda entry: store_item_predictions(entry, items, read),
        )

    def leaderboard(self, release, evaluations, *, sort: str = "") -> Board:
        return self.board(
            evaluations,
            "tasks",
            "task",
            lambda entry: {"percent": percent(entry["accuracy"])},
            context={"definitions": scoring.DEFINITIONS},
            kind=lambda report: (
                ("judge" if report.get("kind") == "judge" else "reward model")
                + (", with ties" if report.get("with_ties") else ", without ties")
            ),
            overall=lambda report: percent(report.get("overall")),
        )

    api_serializer = "OmniReportSerializer"

    def item_filters(self, report: dict) -> tuple[list[str], list[str]]:
        """The per-item results page's filters: the tasks (no sub-buckets)."""
        return [t["task"] for t in (report.get("omni") or {}).get("tasks", [])], []

    # --- judge runs -----------------------------------------------------------------

    def release_records(self, release) -> list[dict]:
        return release_records(release)

    def judge_records(self, release) -> list[dict]:
        return [r for r in release_records(release)
                if JUDGE_WITH_TIES or r["criteria_preference"] != "tie"]  # fmt: skip

    def judge_request(self, record: dict, read_image: Callable[[str], bytes], endpoint, *,
                      swapped: bool) -> dict:  # fmt: skip
        from curation.benchmarks.omni import judge

        return judge.request_body(record, read_image, endpoint, with_ties=JUDGE_WITH_TIES)

    def judge_predictions(self, outputs: dict, records: list[dict], run) -> Upload:
        from curation.benchmarks.omni.judge import media_sent, swapped
        from curation.models import JudgeOrder

        lines = [json.dumps({"id": r["ID"], "output": outputs.get((r["ID"], JudgeOrder.ORIGINAL))
                             or "", "with_ties": JUDGE_WITH_TIES,
                             **({"swapped": True} if swapped(r) else {}), **media_sent(r, run)})
                 for r in records]  # fmt: skip
        return Upload(predictions="\n".join(lines).encode() + b"\n",
                      filename=f"judge-run-{run.pk}.jsonl")  # fmt: skip

    # --- judging a project's items (issue 36 item 3) --------------------------------

    def judge_project_records(self, items) -> list[dict]:
        """Pairs with a criterion, in a task's shape: at most one prompt file,
        responses of text or of one file each (of one kind)."""
        from curation.benchmarks.common.project_items import item_parts

        return [r for r in map(project_record, item_parts(items)) if r is not None]

    def judge_project_request(self, record: dict, read_image: Callable[[str], bytes], endpoint,
                              *, swapped: bool) -> dict:  # fmt: skip
        """The published request, response2 shown as A in the swapped order."""
        from curation.benchmarks.omni import judge

        if swapped:
            record = {**record, "response1": record["response2"], "response2": record["response1"]}
        return judge.request_body(record, read_image, endpoint, with_ties=JUDGE_WITH_TIES)

    def judge_vote(self, output: str, *, call: str) -> str | None:
        """A tie ([[C]]) or no verdict: None."""
        from curation.benchmarks.common.project_items import canonical

        side = scoring.parse_judgement(output or "")
        return canonical({"response1": "A", "response2": "B"}.get(side or ""), call)


def project_record(p) -> dict | None:
    from curation.benchmarks.common.project_items import FILES

    answers = [p.response_media.get(s, []) for s in ("response_1", "response_2")]
    kinds = {k for files in answers for _, k in files}
    if not p.criterion or len(p.media) > 1 or len(kinds) > 1:
        return None
    if kinds and not all(len(files) == 1 for files in answers):
        return None
    prompt_key, prompt_kind = (p.media[0][1], p.media[0][1]) if p.media else ("", "text")
    response_kind = kinds.pop() if kinds else "text"
    responses = [files[0][0] for files in answers] if answers[0] else [p.response_1, p.response_2]
    return {"ID": p.external_id, "prompt": p.prompt, "criteria": p.criterion,
            "response1": responses[0], "response2": responses[1], "image_responses": False,
            "shape": [prompt_key, prompt_kind, response_kind], "folder": "",
            **({prompt_key: p.media[0][0]} if prompt_key else {}),
            FILES: [n for n, _ in p.media + answers[0] + answers[1]]}  # fmt: skip


BENCHMARK = Omni()


def records_of(task: str, text: str) -> list[dict]:
    """The judge records of one task file's text, each with its item ID
    ("ID", the import's rule)."""
    from collections import Counter

    from annotate.importing.formats.omni import SHAPES, TASKS, external_id

    values = json.loads(text)
    counts = Counter(str(v["id"]) for v in values)
    return [{**v, "ID": external_id(v, task, counts[str(v["id"])] > 1), "task": task,
             "image_responses": TASKS[task][1], "shape": list(SHAPES[task])}
            for v in values]  # fmt: skip


def release_records(release) -> list[dict]:
    section = (release.manifest or {}).get("omni") or {}
    out = []
    for task, path in section.get("files", {}).items():
        out.extend(records_of(task, read_release_file(release, path).decode("utf-8")))
    return out


def release_items(release) -> list[scoring.Item]:
    return [scoring.Item(r["ID"], r["task"], r["criteria_preference"], str(r["id"]),
                         r["criteria"]) for r in release_records(release)]  # fmt: skip


def read_text(items: list[scoring.Item], text: str, filename: str) -> dict:
    try:
        return scoring.read_predictions(text, filename, items)
    except scoring.PredictionsError as exc:
        raise EvaluationError(str(exc)) from None


def score_text(items: list[scoring.Item], text: str, filename: str) -> dict:
    return scoring.score(items, read_text(items, text, filename))


def store_item_predictions(evaluation, items: list[scoring.Item], read: dict) -> int:
    """The entry's per-item rows (ItemPrediction, in the caller's transaction):
    one per release member (a side-labelled item; ItemPrediction's sides hold
    no tie), category = the task, choice = the parsed side or the sign of m
    ("" for a tie, a miss or no prediction), correct by the task's rule."""
    from curation.models import ItemPrediction

    members = dict(evaluation.release.release_items.values_list("external_id", "item_id"))
    side = {"response1": "1", "response2": "2"}
    rows = []
    for row in scoring.item_rows(items, read):
        if row["id"] not in members or row["gold"] == "tie":
            continue
        if read["kind"] == "judge":
            choice = side.get(row["predicted"] or "", "")
        else:
            margin = row["margin"]
            choice = "" if margin is None or margin == 0 else ("1" if margin > 0 else "2")
        rows.append(ItemPrediction(
            evaluation=evaluation, item_id=members[row["id"]], external_id=row["id"],
            category=row["task"][:80], sub_bucket="", chosen=side[row["gold"]], choice=choice,
            correct=choice == side[row["gold"]],
            raw={k: row[k] for k in ("predicted", "margin") if row[k] is not None},
        ))  # fmt: skip
    ItemPrediction.objects.bulk_create(rows, batch_size=2000)
    return len(rows)
