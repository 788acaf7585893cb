"""VL-RewardBench as published (vl-rewardbench/VL_RewardBench; issue 34):
`vlrb/vl_rewardbench.jsonl` in the release, one official record a line
(.release_files, .release_part), its card and manifest sections (.card),
k judge runs per pair scored as ``cal.py`` does (.scoring: majority per
pair, undecided and unparsed pairs out of the denominator, micro and macro
over the official id grouping), the official judge prompt sent k times with
seeded swaps (.judge), its leaderboard table, per-item results and API
section (.api)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from curation.benchmarks.base import Board, EvaluationError, FileScore, Scored, Upload
from curation.benchmarks.common.records import (
    OwnApiReport,
    RecordsBenchmark,
    jsonl_records,
    read_release_file,
)
from curation.benchmarks.vlrb import judge, scoring
from curation.benchmarks.vlrb.card import FILE, GROUP_CATEGORIES, MARK, PREDICTIONS_SHAPE

FOLDER = "vlrb/"  # the file's folder: its records' image paths are relative to it


class VLRewardBench(OwnApiReport, RecordsBenchmark):
    key = "vlrb"
    title = "VL-RewardBench"
    file = FILE
    label = "VL-RewardBench"
    upload_label = "VL-RewardBench (k judge runs per pair, JSONL)"
    upload_help = f"VL-RewardBench: {PREDICTIONS_SHAPE}."
    judge_label = f"VL-RewardBench: the official prompt, {judge.JUDGE_RUNS} runs per pair"
    judge_both_orders = False  # each run draws its own order (judge_calls)
    judge_calls_help = (
        f"{judge.JUDGE_RUNS} calls per pair, each shown in an order (swapped or not) "
        "drawn from the run's seed"
    )
    # Before the ranked benchmark (15), whose detection takes any line with
    # "id" and "ranking": the official inference output has both.
    position = 12

    # --- release (.release_part, .card; no prefix: its pairs are marked, serves) -----

    def serves(self, domains: Sequence[Any]) -> bool:
        """Whether the domains hold pairs imported in the official shape (a
        Multimodal RewardBench project has a "reasoning" Category too)."""
        from annotate.models import Item

        return Item.objects.filter(domain__in=list(domains), meta__has_key=MARK).exists()

    def score(self, release, upload: Upload) -> Scored:
        def store_items(evaluation, report: dict) -> None:
            from curation.benchmarks.vlrb.results import store_item_results

            store_item_results(evaluation, report)

        return self.score_one_file(
            upload,
            refusal=(
                "VL-RewardBench predictions are one file holding every run (each with its own "
                "random_number) and take no options; leave the swapped file empty."
            ),
            score_text=score_text,
            records=lambda: release_pairs(release),
            accuracy="overall",
            store=store_items,
            items=None,
        )

    def leaderboard(self, release, evaluations, *, sort: str = "") -> Board:
        rows = []
        for e in evaluations.order_by("-accuracy", "name", "pk"):
            report = e.report.get("vlrb", {})
            by = {g["group"]: g for g in report.get("groups", [])}
            rows.append({
                "evaluation": e, "report": report,
                "cells": [_cell(by.get(name)) for name in GROUP_CATEGORIES],
                "overall": _percent(report.get("overall")), "macro": _percent(report.get("macro")),
            })  # fmt: skip
        return Board(
            key=self.key,
            title=self.title,
            template="curation/leaderboards/vlrb.html",
            columns=list(GROUP_CATEGORIES),
            rows=rows,
            context={"definitions": scoring.DEFINITIONS, "file": FILE},
            csv=lambda: csv_rows(rows),
        )

    # --- optional: files on disk, API, per-item filters -----------------------------

    files_release_help = f"vlrb: a release folder holding {FILE}, or such a JSONL file itself"
    files_predictions_help = f"vlrb: one predictions file, {PREDICTIONS_SHAPE}"

    def score_files(self, release: str, predictions: list[str], options: Any) -> FileScore:
        pairs, text = self.one_file(release, predictions, options, pairs_of)
        report = score_text(pairs, text, predictions[0])
        return FileScore(report={"vlrb": report}, text=lambda: text_report(report))

    api_serializer = "VlrbReportSerializer"

    def item_filters(self, report: dict) -> tuple[list[str], list[str]]:
        """Its groups and source datasets, from the report."""
        section = report.get("vlrb", {})
        return (
            [g["group"] for g in section.get("groups", []) if g["items"]],
            [d["dataset"] for d in section.get("datasets", [])],
        )

    # --- judge runs ----------------------------------------------------------------

    def judge_item_count(self, release) -> int:
        return int(((release.manifest or {}).get("vlrb") or {}).get("records", 0))

    def judge_records(self, release) -> list[dict]:
        return [_judge_record(v) for v in self.release_records(release)]

    def judge_request(
        self, record: dict, read_image: Callable[[str], bytes], endpoint, *, swapped: bool
    ) -> dict:
        """One call without the seam's call keys: the file's order, or swapped."""
        image = read_image(record["Image"]) if record["Image"] else None
        return judge.request_body(record, image, endpoint, number=int(swapped))

    def judge_calls(self, record: dict, seed: int, *, both_orders: bool) -> list[str]:
        """k calls per pair, "run1".."run10" (inference_hf.py's --k 10)."""
        return list(judge.CALLS)

    def judge_call_request(
        self, record: dict, read_image: Callable[[str], bytes], endpoint, *, call: str, seed: int
    ) -> dict:
        """The call's request, its order drawn from Random(f"{seed}:{ID}:{call}")."""
        image = read_image(record["Image"]) if record["Image"] else None
        number = judge.random_number(seed, record["ID"], call)
        return judge.request_body(record, image, endpoint, number=number)

    def judge_predictions(self, outputs: dict, records: list[dict], run) -> Upload:
        """The run's answers as one predictions file: a line per pair, its
        runs with the random_number re-derived from run.seed (a run of the
        runner before the seam: "original" and "swapped" answers, 0 and 1)."""
        return Upload(
            predictions=judge.predictions_lines(outputs, records, getattr(run, "seed", 0)),
            filename=f"judge-run-{run.pk}.jsonl",
        )

    # --- judging a project's items (issue 36 item 3) --------------------------------

    def judge_project_records(self, items) -> list[dict]:
        """Pairs of text responses to a prompt with at most one image (the
        official prompt's shape); each order sent through `judge_request`."""
        from curation.benchmarks.common.project_items import FILES, item_parts

        return [{"ID": p.external_id, "Image": (p.files("image") or [""])[0], "query": p.prompt,
                 "response": [p.response_1, p.response_2], FILES: p.files("image")}
                for p in item_parts(items) if p.text_only_responses
                and all(k == "image" for _, k in p.media) and len(p.media) <= 1]  # fmt: skip

    def judge_vote(self, output: str, *, call: str) -> str | None:
        """ "Answer N is better" (the official flag_choice): N is the answer
        shown in that place, response N in the original order."""
        from curation.benchmarks.common.project_items import canonical

        number = scoring.choice(output)
        return canonical({1: "A", 2: "B"}.get(number), call)


BENCHMARK = VLRewardBench()


def _judge_record(value: dict) -> dict:
    image = value.get("image")
    return {
        "ID": value["id"],
        "Image": f"{FOLDER}{image}" if image else "",
        "query": value["query"],
        "response": value["response"],
        "human_ranking": value["human_ranking"],
    }


def score_text(pairs: list[scoring.Pair], text: str, filename: str) -> dict:
    try:
        runs, repeated, unknown = scoring.read_predictions(text.splitlines(), filename, pairs)
    except scoring.PredictionsError as exc:
        raise EvaluationError(str(exc)) from None
    return {**scoring.score(pairs, runs), "repeated_ids": repeated, "unknown_lines": unknown}


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.2f}"


def _cell(entry: dict | None) -> dict | None:
    return entry and {**entry, "percent": _percent(entry["accuracy"])}


def csv_rows(rows: list[dict]) -> list[list[Any]]:
    head = ["model", *GROUP_CATEGORIES, "overall", "macro", "k", "undecided", "unparsed",
            "missing"]  # fmt: skip
    out: list[list[Any]] = [head]
    for row in rows:
        r = row["report"]
        out.append([row["evaluation"].name, *[c and c["accuracy"] for c in row["cells"]],
                    r.get("overall"), r.get("macro"), r.get("k"), r.get("undecided"),
                    r.get("unparsed"), r.get("missing")])  # fmt: skip
    return out


def pairs_of(text: str) -> list[scoring.Pair]:
    """The pairs of a VL-RewardBench file's text, in file order, each in its
    group by the official id grouping."""
    from annotate.importing.formats.vlrb import dataset_of, group_of

    return [
        scoring.Pair(
            v["id"], v["query"], tuple(v["response"]), tuple(v["human_ranking"]),
            group_of(v["id"]), dataset_of(v["id"]),
        )
        for v in jsonl_records(text)
    ]  # fmt: skip


def release_pairs(release) -> list[scoring.Pair]:
    return pairs_of(read_release_file(release, FILE).decode("utf-8"))


def text_report(report: dict) -> str:
    """The report as the shell prints it, cal.py's table then the counts."""
    groups = {g["group"]: g for g in report["groups"]}
    return (
        "general\t hallucination\t reasoning\n"
        + "\t ".join(_percent(groups[g]["accuracy"]) for g in GROUP_CATEGORIES)
        + f"\nOverall Accuracy: {_percent(report['overall'])}\n"
        + f"Macro Average Acc: {_percent(report['macro'])}\n"
        + f"pairs {report['items']}, decided {report['total']}, undecided {report['undecided']}, "
        + f"unparsed {report['unparsed']}, missing {report['missing']}, k {report['k']}\n"
        + report["definitions"]
        + "\n"
    )
