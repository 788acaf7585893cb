"""Omni-RewardBench (arXiv 2510.23451; issue 34) as the studio serves it:
per task ``omni/<task>_preferences.json`` in the release (.release_files),
its card and manifest sections (.card), generative judges' answers and
scalar reward models' scores scored per task by the published rules
(.scoring, quoted there), its leaderboard table and its judge prompt
(.judge: criterion stated, response1 always A, no swap).

Judge runs: the runner has no per-run options, so the ties mode is this
module's constant ``JUDGE_WITH_TIES`` (False, the published default:
tie-labelled items are not sent, the prompt offers [[A]]/[[B]]). While an
answer is unparsed the runner asks again up to ``judge_retries`` = 4 more
times: five attempts in all, as the published loop (``for retry in
range(5)``) makes; where the issue's summary and the code differ, the code wins.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from curation.benchmarks.base import (
    MAX_PREDICTIONS_BYTES,
    ApiField,
    Board,
    BuildContext,
    EvaluationError,
    Part,
    Scored,
    Upload,
    size_of,
)  # fmt: skip
from curation.benchmarks.omni import scoring

PREFIX = "omni/"
JUDGE_WITH_TIES = False


class Omni:
    key = "omni"
    title = "Omni-RewardBench (free-form criteria)"
    upload_label = "Omni-RewardBench (judge answers or reward-model scores per item, JSONL)"
    upload_help = "Omni-RewardBench predictions: see the release card."
    judge_label = "Omni-RewardBench: criterion prompt, response1 as A, [[A]]/[[B]]"
    rekey_prefix = ""
    detect_last = False
    judge_both_orders = False
    position = 14  # before the generic shapes, whose keys ("id", "scores") overlap
    judge_retries = 4  # re-asks after the first: 5 attempts, as published

    def judge_unparsed(self, output: str) -> bool:
        """Whether the published parse finds no verdict (the runner asks again)."""
        return scoring.parse_judgement(output or "") is None

    # --- release ------------------------------------------------------------------

    def serves(self, domains: Sequence[Any]) -> bool:
        return any(d.export_category.startswith(PREFIX) for d in domains)

    def prepare(self, ctx: BuildContext) -> Part:
        from curation.benchmarks.omni import card
        from curation.benchmarks.omni.release_files import write_files
        from curation.models import Verdict
        from curation.models.verdicts import RELEASABLE_STATUSES, FinalChoice

        sides = ctx.included.filter(item__domain__export_category__startswith=PREFIX)
        ties = Verdict.objects.filter(
            project=ctx.project, item__domain__slug__in=[d.slug for d in ctx.domains],
            item__domain__export_category__startswith=PREFIX,
            status__in=RELEASABLE_STATUSES, final_choice=FinalChoice.TIE,
        )  # fmt: skip
        fields = ("item_id", "item__external_id", "item__domain__slug", "final_choice",
                  "provenance")  # fmt: skip
        rows = sorted([*sides.values_list(*fields), *ties.values_list(*fields)])
        rows = [r for r in rows if r[3] in ("1", "2", "tie")]
        domains = {d.slug: d.export_category for d in ctx.domains}
        written, warnings = write_files(ctx.folder, rows, salt=ctx.salt, domains=domains)
        # Sides are release members (ReleaseItem better A/B); a tie has no
        # member row (ReleaseItem's better holds no tie) and is in the file only.
        # A side with one prompt image is a pair-layout record too: its
        # membership and provenance are the records' (as for ranked files).
        members = [r for r in written if r.preference != "tie" and not r.mrb_shaped]
        by_domain: dict[str, int] = {}
        for r in members:
            by_domain[r.domain] = by_domain.get(r.domain, 0) + 1
        return Part(
            key="omni", format_name="omni",
            released={r.external_id: r.released_id for r in written},
            members_by_domain=by_domain,
            written=sides.filter(item_id__in=[r.item_id for r in members]),
            extra_provenance=lambda out: _provenance(members, out),
            manifest=card.manifest_section(written, rekeyed=bool(ctx.salt)) if written else {},
            warnings=warnings,
        )  # fmt: skip

    def card(self, meta: Any, summary: dict):
        from curation.benchmarks.omni import card

        return card.CardSection(meta, summary)

    def id_prefix(self, category: str) -> str | None:
        return "om" if category.startswith(PREFIX) else None

    # --- evaluation -----------------------------------------------------------------

    def in_release(self, release) -> bool:
        return any(f.startswith(PREFIX) for f in (release.manifest or {}).get("files", {}))

    def missing_message(self, release) -> str:
        return "This release has no Omni-RewardBench files (omni/<task>_preferences.json)."

    def detects(self, head: str) -> bool:
        return scoring.looks_like_predictions(head)

    def score(self, release, upload: Upload) -> Scored:
        if upload.swapped or upload.official_compat:
            raise EvaluationError(
                "Omni-RewardBench predictions are one file (response1 is always A); leave the "
                "swapped file empty."
            )
        items = release_items(release)
        read = read_text(items, _text(upload.predictions, upload.filename), upload.filename)
        report = scoring.score(items, read)
        return Scored(
            report={"omni": report},
            accuracy=report["overall"],
            files={".jsonl": upload.predictions},
            store_items=lambda entry: store_item_predictions(entry, items, read),
        )

    def leaderboard(self, release, evaluations, *, sort: str = "") -> Board:
        tasks: list[str] = []
        rows = []
        for e in evaluations.order_by("-accuracy", "name", "pk"):
            report = e.report.get("omni", {})
            by = {t["task"]: t for t in report.get("tasks", [])}
            tasks.extend(t for t in by if t not in tasks)
            kind = ("judge" if report.get("kind") == "judge" else "reward model") + (
                ", with ties" if report.get("with_ties") else ", without ties"
            )
            rows.append({"evaluation": e, "by": by, "report": report, "kind": kind,
                         "overall": _percent(report.get("overall"))})  # fmt: skip
        for row in rows:
            row["cells"] = [_cell(row["by"].get(t)) for t in tasks]
        return Board(key=self.key, title=self.title, template="curation/leaderboards/omni.html",
                     columns=tasks, rows=rows,
                     context={"definitions": scoring.DEFINITIONS})  # fmt: skip

    def ensure_item_predictions(self, entry) -> int:
        return 0

    def api_fields(self) -> dict[str, ApiField]:
        from rest_framework import serializers

        return {
            "omni_tasks": ApiField(
                read=lambda r: (r.get("omni") or {}).get("tasks"),
                schema=serializers.JSONField(),
                help_text="Omni-RewardBench: accuracy per task (the published rules).",
            ),
            "omni_with_ties": ApiField(
                read=lambda r: (r.get("omni") or {}).get("with_ties"),
                schema=serializers.BooleanField(),
                help_text="Omni-RewardBench: whether the with-ties mode was scored.",
            ),
        }

    def item_filters(self, report: dict) -> tuple[list[str], list[str]]:
        """The per-item results page's filters: the tasks (no sub-buckets)."""
        return [t["task"] for t in (report.get("omni") or {}).get("tasks", [])], []

    # --- judge runs -----------------------------------------------------------------

    def judge_item_count(self, release) -> int:
        return len(self.judge_records(release))

    def judge_records(self, release) -> list[dict]:
        return [r for r in release_records(release)
                if JUDGE_WITH_TIES or r["criteria_preference"] != "tie"]  # fmt: skip

    def judge_request(self, record: dict, read_image: Callable[[str], bytes], endpoint, *,
                      swapped: bool) -> dict:  # fmt: skip
        from curation.benchmarks.omni import judge

        return judge.request_body(record, read_image, endpoint, with_ties=JUDGE_WITH_TIES)

    def judge_predictions(self, outputs: dict, records: list[dict], run) -> Upload:
        from curation.models import JudgeOrder

        lines = [json.dumps({"id": r["ID"], "output": outputs.get((r["ID"], JudgeOrder.ORIGINAL))
                             or "", "with_ties": JUDGE_WITH_TIES}) for r in records]  # fmt: skip
        return Upload(predictions="\n".join(lines).encode() + b"\n",
                      filename=f"judge-run-{run.pk}.jsonl")  # fmt: skip


BENCHMARK = Omni()


def _provenance(written, members: list):
    for r in written:
        released_id = "" if r.released_id == r.external_id else r.released_id
        better = "A" if r.preference == "1" else "B"
        members.append((r.item_id, r.external_id, released_id, r.domain, r.preference, better,
                        r.provenance))  # fmt: skip
        yield {"ID": r.released_id, "Better": better, "chosen_canonical": r.preference,
               "provenance": r.provenance, "votes": [],
               "omni": {"task": r.task}}  # fmt: skip


def records_of(task: str, text: str) -> list[dict]:
    """The judge records of one task file's text, each with its item ID
    ("ID", the import's rule)."""
    from collections import Counter

    from annotate.importing.formats.omni import TASKS, external_id

    values = json.loads(text)
    counts = Counter(str(v["id"]) for v in values)
    return [{**v, "ID": external_id(v, task, counts[str(v["id"])] > 1), "task": task,
             "image_responses": TASKS[task][1]} for v in values]  # fmt: skip


def release_records(release) -> list[dict]:
    from common.storage import read_stored
    from curation.releases import publishing

    section = (release.manifest or {}).get("omni") or {}
    out = []
    for task, path in section.get("files", {}).items():
        try:
            data = read_stored(publishing.release_storage(), f"{release.folder}/{path}")
        except FileNotFoundError:
            raise EvaluationError(f"{path} is missing from the release's files.") from None
        out.extend(records_of(task, data.decode("utf-8")))
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


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}"


def _cell(entry: dict | None) -> dict | None:
    return None if entry is None else {**entry, "percent": _percent(entry["accuracy"])}


def _text(predictions, filename: str) -> str:
    if size_of(predictions) > MAX_PREDICTIONS_BYTES:
        raise EvaluationError(f"{filename}: larger than {MAX_PREDICTIONS_BYTES} bytes")
    raw = predictions if isinstance(predictions, bytes) else predictions.open("rb").read()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise EvaluationError(f"{filename}: not valid UTF-8 (byte {exc.start})") from None
