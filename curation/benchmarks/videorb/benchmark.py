"""VideoRewardBench (arXiv 2509.00484; issue 35 item 5) in a style layout,
as the studio serves it: `videorb/videorewardbench.jsonl` and its videos
(.release_files), its card and manifest sections (.card), predictions scored
by accuracy overall, macro and on the five dimensions (.scoring, which states
the rules), per-sample results, its leaderboard table, and a pairwise judge
asked in both orders with the video as a video part (.judge).

Its release carries videos (`carries_media`), so items holding them may be
released through it.
"""

from __future__ import annotations

from typing import Any

from curation.benchmarks.base import Board, EvaluationError, FileScore, Scored, Upload
from curation.benchmarks.common.records import (
    OwnApiReport,
    PairJudgeBothOrders,
    RecordsBenchmark,
    jsonl_records,
    percent,
    pick_of_scores,
)
from curation.benchmarks.videorb import scoring
from curation.benchmarks.videorb.card import FILE, FOLDER, PREDICTIONS_SHAPE

PREFIX = f"{FOLDER}/"  # of the export Category of its domains


class VideoRewardBench(OwnApiReport, PairJudgeBothOrders, RecordsBenchmark):
    key = "videorb"
    title = "VideoRewardBench (style)"
    prefix = PREFIX
    file = FILE
    label = "VideoRewardBench"
    upload_label = "VideoRewardBench-style (chosen and rejected scores per sample, JSONL)"
    upload_help = f"VideoRewardBench-style: {PREDICTIONS_SHAPE}."
    judge_label = "VideoRewardBench-style: pairwise judge with the video, both orders"
    # After MM-RLHF-RewardBench (16); before the benchmark at 20, whose
    # detection takes any JSON object line without "ID".
    position = 17
    carries_media = True  # its file's videos go beside it

    # --- evaluation (release, card: .release_part, .card) ----------------------------

    def score(self, release, upload: Upload) -> Scored:
        return self.score_one_file(
            upload,
            refusal=(
                "VideoRewardBench-style predictions are one file of scores per sample and take "
                "no options; leave the swapped file empty."
            ),
            score_text=score_text,
            records=lambda: release_samples(release),
            accuracy="accuracy",
            store=store_items,
        )

    def leaderboard(self, release, evaluations, *, sort: str = "") -> Board:
        return self.board(
            evaluations,
            "dimensions",
            "dimension",
            lambda entry: {"percent": percent(entry["accuracy"])},
            context={"definitions": scoring.DEFINITIONS, "file": FILE},
            overall=lambda report: percent(report.get("accuracy")),
            macro=lambda report: percent(report.get("macro_accuracy")),
        )

    # --- the evaluate command, release IDs, API (optional members) -------------------

    files_release_help = (
        f"videorb: a release folder holding {FILE}, or a VideoRewardBench-style JSONL file itself"
    )
    files_predictions_help = f"videorb: one predictions file, {PREDICTIONS_SHAPE}"

    def score_files(self, release: str, predictions: list[str], options: Any) -> FileScore:
        samples, text = self.one_file(
            release, predictions, options, lambda t: scoring.samples_of(jsonl_records(t))
        )
        report = score_text(samples, text, predictions[0])
        report.pop("items")
        return FileScore(report={"videorb": report}, text=lambda: text_report(report))

    def id_prefix(self, category: str) -> str | None:
        return "vrb" if category.startswith(PREFIX) else None

    api_serializer = "VideorbReportSerializer"

    def item_filters(self, report: dict) -> tuple[list[str], list[str]]:
        """Its dimensions (no sub-buckets)."""
        return [d["dimension"] for d in report.get("videorb", report).get("dimensions", [])], []

    # --- judge runs ----------------------------------------------------------------

    def judge_item_count(self, release) -> int:
        return int((release.manifest or {}).get("videorb", {}).get("samples", 0))

    def judge_records(self, release) -> list[dict]:
        return [{"ID": str(v["id"]), "prompt": v["prompt"], "chosen": v["chosen"],
                 "rejected": v["rejected"], "video": f"{FOLDER}/{v['video']}",
                 "dimension": v["dimension"]}
                for v in self.release_records(release)]  # fmt: skip

    # --- judging a project's items (issue 36 item 3) --------------------------------

    def judge_project_records(self, items) -> list[dict]:
        """Pairs of text responses to a prompt with one video."""
        from curation.benchmarks.common.project_items import FILES, item_parts

        return [{"ID": p.external_id, "prompt": p.prompt, "chosen": p.response_1,
                 "rejected": p.response_2, "video": p.files("video")[0],
                 FILES: p.files("video")}
                for p in item_parts(items)
                if p.text_only_responses and len(p.files("video")) == 1]  # fmt: skip


BENCHMARK = VideoRewardBench()


def release_samples(release) -> list[scoring.Sample]:
    return scoring.samples_of(BENCHMARK.release_records(release))


def score_text(samples: list[scoring.Sample], text: str, filename: str) -> dict:
    try:
        parsed, unknown = scoring.read_predictions(text, filename, samples)
    except scoring.PredictionsError as exc:
        raise EvaluationError(str(exc)) from None
    return {**scoring.score(samples, parsed), "unknown_ids": unknown}


def store_items(evaluation, items: list[dict]) -> int:
    """One ItemPrediction per predicted sample of the release (in the
    caller's transaction); equal scores are no pick."""
    from curation.models import ItemPrediction

    members = {
        (ri.released_id or ri.external_id): ri
        for ri in evaluation.release.release_items.filter(
            item__domain__export_category__startswith=PREFIX
        ).only("item_id", "external_id", "released_id", "chosen")
    }
    out = []
    for entry in items:
        member = members.get(entry["id"])
        if member is None or entry["scores"] is None:  # rows for predicted samples only
            continue
        chosen = member.chosen
        got = entry["scores"]
        choice = pick_of_scores(chosen, got)
        out.append(
            ItemPrediction(
                evaluation=evaluation, item_id=member.item_id, external_id=entry["id"],
                category=entry["dimension"][:80], sub_bucket="", chosen=chosen, choice=choice,
                correct=entry["correct"], raw={"scores": got},
            )
        )  # fmt: skip
    ItemPrediction.objects.bulk_create(out, batch_size=2000)
    return len(out)


def text_report(report: dict) -> str:
    """The report as the shell prints it: a line per dimension, overall, macro."""
    lines = [f"{'dimension':<22} {'Acc %':>7} {'samples':>8} {'missing':>8}"]
    for d in [*report["dimensions"], {**report, "dimension": "overall"}]:
        lines.append(
            f"{d['dimension']:<22} {percent(d['accuracy']):>7} {d['samples']:>8} {d['missing']:>8}"
        )
    lines.append(f"{'macro':<22} {percent(report['macro_accuracy']):>7}")
    lines.append(f"unknown ids: {report['unknown_ids']}")
    lines.append(report["definitions"])
    return "\n".join(lines) + "\n"
