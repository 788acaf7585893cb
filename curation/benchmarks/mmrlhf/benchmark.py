"""MM-RLHF-RewardBench (yfzhang114/MM-RLHF; issue 34) as the studio serves
it: `mmrlhf/mm_rlhf_rewardbench.jsonl` and its media in the published
layout (.release_files), its card and manifest sections (.card), reward
predictions scored by Acc and Acc+ exactly as the published get_acc.py
counts (.scoring, which quotes it), per pair results, its leaderboard
table, and a pairwise judge asked in both orders (.judge).

Differences from the other scorers: pairs are grouped by prompt id and a
group counts for Acc+ only when every pair in it is right; a tie in the
rewards is wrong (strict ``>``), where the Multimodal RewardBench scorer
draws at random and RewardBench 2 shares a point.
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
from curation.benchmarks.mmrlhf import scoring
from curation.benchmarks.mmrlhf.card import FILE, FOLDER, PREDICTIONS_SHAPE

PREFIX = f"{FOLDER}/"  # of the export Category of its domains


class MmRlhf(OwnApiReport, PairJudgeBothOrders, RecordsBenchmark):
    key = "mmrlhf"
    title = "MM-RLHF-RewardBench"
    prefix = PREFIX
    file = FILE
    label = "MM-RLHF-RewardBench"
    upload_label = "MM-RLHF-RewardBench (rewards per pair, JSONL)"
    upload_help = f"MM-RLHF-RewardBench: {PREDICTIONS_SHAPE}."
    judge_label = "MM-RLHF-RewardBench: pairwise judge, both orders"
    # Before the benchmark at 20, whose detection takes any JSON object line
    # without "ID"; its file and table after the ranked one (15).
    position = 16

    # --- evaluation (release, card: .release_part, .card) ----------------------------

    def score(self, release, upload: Upload) -> Scored:
        return self.score_one_file(
            upload,
            refusal=(
                "MM-RLHF-RewardBench predictions are one file of rewards per pair and take no "
                "options; leave the swapped file empty."
            ),
            score_text=score_text,
            records=lambda: release_pairs(release),
            accuracy="acc",
            store=store_items,
        )

    def leaderboard(self, release, evaluations, *, sort: str = "") -> Board:
        return self.board(
            evaluations,
            "categories",
            "category",
            lambda entry: {"percent": percent(entry["acc"]), "plus": percent(entry["acc_plus"])},
            context={"definitions": scoring.DEFINITIONS, "file": FILE},
            acc=lambda report: percent(report.get("acc")),
            acc_plus=lambda report: percent(report.get("acc_plus")),
        )

    # --- the evaluate command, release IDs, API (optional members) -------------------

    files_release_help = (
        f"mmrlhf: a release folder holding {FILE}, or an MM-RLHF-RewardBench JSONL file itself"
    )
    files_predictions_help = f"mmrlhf: one predictions file, {PREDICTIONS_SHAPE}"

    def score_files(self, release: str, predictions: list[str], options: Any) -> FileScore:
        pairs, text = self.one_file(release, predictions, options, pairs_of)
        report = score_text(pairs, text, predictions[0])
        report.pop("items")
        return FileScore(report={"mmrlhf": report}, text=lambda: text_report(report))

    def id_prefix(self, category: str) -> str | None:
        return None  # its IDs are per prompt id (release_files), not per item

    api_serializer = "MmrlhfReportSerializer"

    def item_filters(self, report: dict) -> tuple[list[str], list[str]]:
        """Its categories (and no sub-buckets: a pair's sub-bucket is its prompt id)."""
        return [c["category"] for c in report.get("mmrlhf", report).get("categories", [])], []

    # --- judge runs ----------------------------------------------------------------

    def judge_item_count(self, release) -> int:
        return int((release.manifest or {}).get("mmrlhf", {}).get("pairs", 0))

    def judge_records(self, release) -> list[dict]:
        from curation.benchmarks.mmrlhf import judge

        frames = (release.manifest or {}).get("mmrlhf", {}).get("frames", {})
        out = []
        lines = self.release_records(release)
        for value, pair in zip(lines, scoring.pairs_of(lines, _category), strict=True):
            if value.get("video"):
                names = judge.sampled_frames(frames[value["video"]])
                images = [f"{FOLDER}/{value['video']}/{name}" for name in names]
            else:
                images = [f"{FOLDER}/{value['image']}"]
            out.append({"ID": pair.id, "id": value["id"], "prompt": value["prompt"],
                        "chosen": value["chosen"], "rejected": value["rejected"],
                        "images": images})  # fmt: skip
        return out

    # --- judging a project's items (issue 36 item 3) --------------------------------

    def judge_project_records(self, items) -> list[dict]:
        """Pairs of text responses; the prompt's images as images, its video
        or audio through the run's media options."""
        from curation.benchmarks.common.project_items import FILES, item_parts

        return [{"ID": p.external_id, "id": p.external_id, "prompt": p.prompt,
                 "chosen": p.response_1, "rejected": p.response_2, "images": p.files("image"),
                 "media": [(n, k) for n, k in p.media if k != "image"],
                 FILES: [n for n, _ in p.media]}
                for p in item_parts(items) if p.text_only_responses]  # fmt: skip


BENCHMARK = MmRlhf()


def score_text(pairs: list[scoring.Pair], text: str, filename: str) -> dict:
    try:
        parsed, extra, unknown = scoring.read_predictions(text, filename, pairs)
    except scoring.PredictionsError as exc:
        raise EvaluationError(str(exc)) from None
    return {**scoring.score(pairs, parsed), "extra_lines": extra, "unknown_ids": unknown}


def store_items(evaluation, items: list[dict]) -> int:
    """One ItemPrediction per predicted pair of the release (in the caller's
    transaction); a tie is no pick."""
    from annotate.models import Item
    from curation.benchmarks.mmrlhf.release_files import layout, member_rows
    from curation.models import ItemPrediction

    release = evaluation.release
    members = {ri.item_id: ri for ri in release.release_items.only("item_id", "chosen")}
    mine = Item.objects.filter(pk__in=members, domain__export_category__startswith=PREFIX)
    rows = member_rows(mine)
    item_of = {pair_id: row[0] for row, _, pair_id in layout(rows, release.rekey_salt)}
    out = []
    for entry in items:
        item_id = item_of.get(entry["id"])
        if item_id is None or entry["rewards"] is None:  # rows for predicted pairs only
            continue
        chosen = members[item_id].chosen
        got = entry["rewards"]
        choice = pick_of_scores(chosen, got)
        out.append(
            ItemPrediction(
                evaluation=evaluation, item_id=item_id, external_id=entry["id"],
                category=entry["category"][:80], sub_bucket=entry["group"][:80], chosen=chosen,
                choice=choice, correct=entry["correct"], raw={"rewards": got},
            )
        )  # fmt: skip
    ItemPrediction.objects.bulk_create(out, batch_size=2000)
    return len(out)


def _category(value: dict) -> str:
    path = value.get("image") or value.get("video") or ""
    return path.replace("\\", "/").split("/", 1)[0] if "/" in path else ""


def pairs_of(text: str) -> list[scoring.Pair]:
    """The pairs of an MM-RLHF-RewardBench file's text, in file order."""
    return scoring.pairs_of(jsonl_records(text), _category)


def release_pairs(release) -> list[scoring.Pair]:
    return scoring.pairs_of(BENCHMARK.release_records(release), _category)


def text_report(report: dict) -> str:
    """The report as the shell prints it: a line per category, then overall."""
    lines = [f"{'category':<12} {'Acc %':>7} {'Acc+ %':>7} {'pairs':>6} {'ids':>5} {'missing':>8}"]
    for c in [*report["categories"], {**report, "category": "overall"}]:
        lines.append(
            f"{c['category']:<12} {percent(c['acc']):>7} {percent(c['acc_plus']):>7} "
            f"{c['pairs']:>6} {c['groups']:>5} {c['missing']:>8}"
        )
    lines.append(f"unknown ids: {report['unknown_ids']}, extra lines: {report['extra_lines']}")
    lines.append(report["definitions"])
    return "\n".join(lines) + "\n"
