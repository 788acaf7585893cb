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

import json
from collections.abc import Callable, Sequence
from typing import Any

from curation.benchmarks.base import (
    MAX_PREDICTIONS_BYTES,
    ApiReport,
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
from curation.benchmarks.mmrlhf import scoring
from curation.benchmarks.mmrlhf.card import FILE, FOLDER, PREDICTIONS_SHAPE

PREFIX = f"{FOLDER}/"  # of the export Category of its domains


class MmRlhf:
    key = "mmrlhf"
    title = "MM-RLHF-RewardBench"
    upload_label = "MM-RLHF-RewardBench (rewards per pair, JSONL)"
    upload_help = f"MM-RLHF-RewardBench: {PREDICTIONS_SHAPE}."
    judge_label = "MM-RLHF-RewardBench: pairwise judge, both orders"
    rekey_prefix = ""  # its own rule is in its own manifest section
    detect_last = False
    judge_both_orders = True
    # Before the benchmark at 20, whose detection takes any JSON object line
    # without "ID"; its file and table after the ranked one (15).
    position = 16

    # --- release -------------------------------------------------------------------

    def serves(self, domains: Sequence[Any]) -> bool:
        return any(d.export_category.startswith(PREFIX) for d in domains)

    def prepare(self, ctx: BuildContext) -> Part:
        from curation.benchmarks.mmrlhf import card, release_files

        members = ctx.included.filter(item__domain__export_category__startswith=PREFIX)
        domains = {d.slug: d.export_category for d in ctx.domains}
        written, warnings = release_files.write_file(
            ctx.folder, members, salt=ctx.salt, domains=domains
        )
        only = [w for w in written if not w.mrb_shaped]
        by_domain: dict[str, int] = {}
        for w in only:
            by_domain[w.domain] = by_domain.get(w.domain, 0) + 1
        return Part(
            key="mmrlhf",
            format_name="mmrlhf",
            released={w.external_id: w.released_id for w in written},
            members_by_domain=by_domain,
            written=members.filter(item_id__in=[w.item_id for w in written]),
            extra_provenance=lambda out: _provenance(only, ctx, out),
            manifest=card.manifest_section(written, rekeyed=bool(ctx.salt)) if written else {},
            warnings=warnings,
        )

    def card(self, meta: Any, summary: dict):
        from curation.benchmarks.mmrlhf import card

        return card.CardSection(meta, summary)

    # --- evaluation ----------------------------------------------------------------

    def in_release(self, release) -> bool:
        return FILE in (release.manifest or {}).get("files", {})

    def missing_message(self, release) -> str:
        return f"This release has no MM-RLHF-RewardBench file ({FILE})."

    def detects(self, head: str) -> bool:
        return scoring.looks_like_predictions(head)

    def score(self, release, upload: Upload) -> Scored:
        if upload.swapped or upload.official_compat:
            raise EvaluationError(
                "MM-RLHF-RewardBench predictions are one file of rewards per pair and take no "
                "options; leave the swapped file empty."
            )
        report = score_text(
            release_pairs(release), _text(upload.predictions, upload.filename), upload.filename
        )
        items = report.pop("items")
        return Scored(
            report={"mmrlhf": report},
            accuracy=report["acc"],
            files={".jsonl": upload.predictions},
            store_items=lambda evaluation: store_items(evaluation, items),
        )

    def leaderboard(self, release, evaluations, *, sort: str = "") -> Board:
        categories: list[str] = []
        rows = []
        for e in evaluations.order_by("-accuracy", "name", "pk"):
            report = e.report.get("mmrlhf", {})
            by = {c["category"]: c for c in report.get("categories", [])}
            categories.extend(c for c in by if c not in categories)
            rows.append({"evaluation": e, "by": by, "report": report})
        for row in rows:
            row["cells"] = [_cell(row["by"].get(name)) for name in categories]
            row["acc"] = _percent(row["report"].get("acc"))
            row["acc_plus"] = _percent(row["report"].get("acc_plus"))
        return Board(
            key=self.key,
            title=self.title,
            template="curation/leaderboards/mmrlhf.html",
            columns=categories,
            rows=rows,
            context={"definitions": scoring.DEFINITIONS, "file": FILE},
        )

    def ensure_item_predictions(self, entry) -> int:
        return 0  # written when scored

    # --- the evaluate command, release IDs, API (optional members) -------------------

    files_release_help = (
        f"mmrlhf: a release folder holding {FILE}, or an MM-RLHF-RewardBench JSONL file itself"
    )
    files_predictions_help = f"mmrlhf: one predictions file, {PREDICTIONS_SHAPE}"

    def score_files(self, release: str, predictions: list[str], options: Any) -> FileScore:
        from pathlib import Path

        if getattr(options, "swapped", None) or getattr(options, "official_compat", False):
            raise EvaluationError("MM-RLHF-RewardBench predictions take one file and no options.")
        if len(predictions) != 1:
            raise EvaluationError("MM-RLHF-RewardBench: give one predictions file.")
        where = Path(release)
        source = where / FILE if where.is_dir() else where
        try:
            pairs = pairs_of(source.read_text(encoding="utf-8"))
            raw = Path(predictions[0]).read_bytes()
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise EvaluationError(f"{source}: not an MM-RLHF-RewardBench file ({exc})") from None
        report = score_text(pairs, _text(raw, predictions[0]), predictions[0])
        report.pop("items")
        return FileScore(report={"mmrlhf": report}, text=lambda: text_report(report))

    def id_prefix(self, category: str) -> str | None:
        return None  # its IDs are per prompt id (release_files), not per item

    @property
    def api_report(self) -> ApiReport:
        from curation.benchmarks.mmrlhf import api

        return ApiReport(serializer=api.ReportSerializer, help_text=api.HELP_TEXT)

    def item_filters(self, report: dict) -> tuple[list[str], list[str]]:
        """Its categories (and no sub-buckets: a pair's sub-bucket is its prompt id)."""
        return [c["category"] for c in report.get("mmrlhf", report).get("categories", [])], []

    # --- judge runs ----------------------------------------------------------------

    def judge_item_count(self, release) -> int:
        return int((release.manifest or {}).get("mmrlhf", {}).get("pairs", 0))

    def judge_records(self, release) -> list[dict]:
        frames = (release.manifest or {}).get("mmrlhf", {}).get("frames", {})
        out = []
        for value, pair in zip(release_lines(release), release_pairs(release), strict=True):
            if value.get("video"):
                images = [f"{FOLDER}/{value['video']}/{name}" for name in frames[value["video"]]]
            else:
                images = [f"{FOLDER}/{value['image']}"]
            out.append({"ID": pair.id, "id": value["id"], "prompt": value["prompt"],
                        "chosen": value["chosen"], "rejected": value["rejected"],
                        "images": images})  # fmt: skip
        return out

    def judge_request(
        self, record: dict, read_image: Callable[[str], bytes], endpoint, *, swapped: bool
    ) -> dict:
        from curation.benchmarks.mmrlhf import judge

        return judge.request_body(record, read_image, endpoint, swapped=swapped)

    def judge_predictions(self, outputs: dict, records: list[dict], run) -> Upload:
        from curation.benchmarks.mmrlhf import judge

        return Upload(
            predictions=judge.predictions_lines(outputs, records),
            filename=f"judge-run-{run.pk}.jsonl",
        )


BENCHMARK = MmRlhf()


def _provenance(only, ctx, members):
    """provenance.jsonl lines of the members only in this file, appending
    their membership (ReleaseItem `better` "A": the line's chosen comes
    first, as RewardBench 2's) to `members`."""
    from curation.releases.members import CHUNK, _vote_dicts

    for start in range(0, len(only), CHUNK):
        chunk = only[start : start + CHUNK]
        votes = _vote_dicts([w.item_id for w in chunk], ctx.pseudonyms, ctx.vote_extras)
        for w in chunk:
            released_id = "" if w.released_id == w.external_id else w.released_id
            members.append(
                (w.item_id, w.external_id, released_id, w.domain, w.chosen, "A", w.provenance)
            )
            yield {
                "ID": w.released_id,
                "Better": "A",
                "chosen_canonical": w.chosen,
                "provenance": w.provenance,
                "votes": votes.get(w.item_id, []),
                "mmrlhf": {"file": FILE, "category": w.category},
            }


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
        other = "2" if chosen == "1" else "1"
        got = entry["rewards"]
        choice = "" if got is None or got[0] == got[1] else chosen if got[0] > got[1] else other
        out.append(
            ItemPrediction(
                evaluation=evaluation, item_id=item_id, external_id=entry["id"],
                category=entry["category"][:80], sub_bucket=entry["group"][:80], chosen=chosen,
                choice=choice, correct=entry["correct"], raw={"rewards": got},
            )
        )  # fmt: skip
    ItemPrediction.objects.bulk_create(out, batch_size=2000)
    return len(out)


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}"


def _cell(entry: dict | None) -> dict | None:
    if entry is None:
        return None
    return {**entry, "percent": _percent(entry["acc"]), "plus": _percent(entry["acc_plus"])}


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


def _category(value: dict) -> str:
    path = value.get("image") or value.get("video") or ""
    return path.replace("\\", "/").split("/", 1)[0] if "/" in path else ""


def lines_of(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def pairs_of(text: str) -> list[scoring.Pair]:
    """The pairs of an MM-RLHF-RewardBench file's text, in file order."""
    return scoring.pairs_of(lines_of(text), _category)


def release_lines(release) -> list[dict]:
    from common.storage import read_stored
    from curation.releases import publishing

    try:
        data = read_stored(publishing.release_storage(), f"{release.folder}/{FILE}")
    except FileNotFoundError:
        raise EvaluationError(f"{FILE} is missing from the release's files.") from None
    return lines_of(data.decode("utf-8"))


def release_pairs(release) -> list[scoring.Pair]:
    return scoring.pairs_of(release_lines(release), _category)


def text_report(report: dict) -> str:
    """The report as the shell prints it: a line per category, then overall."""
    lines = [f"{'category':<12} {'Acc %':>7} {'Acc+ %':>7} {'pairs':>6} {'ids':>5} {'missing':>8}"]
    for c in [*report["categories"], {**report, "category": "overall"}]:
        lines.append(
            f"{c['category']:<12} {_percent(c['acc']):>7} {_percent(c['acc_plus']):>7} "
            f"{c['pairs']:>6} {c['groups']:>5} {c['missing']:>8}"
        )
    lines.append(f"unknown ids: {report['unknown_ids']}, extra lines: {report['extra_lines']}")
    lines.append(report["definitions"])
    return "\n".join(lines) + "\n"
