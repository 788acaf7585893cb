"""Per-item results of a Multimodal RewardBench evaluation (ItemPrediction
rows), stored in canonical terms for the drill-down and the label audit."""

from __future__ import annotations

from collections.abc import Sequence

from curation.benchmarks.mrb.records import sub_bucket
from curation.benchmarks.mrb.scoring_input import Prediction
from curation.models import ItemPrediction
from curation.quality.probability import entry_probability, line_pick

MAX_RAW_TEXT = 4000  # characters of judge text kept per order


def _raw(prediction) -> dict:
    if prediction.kind == "judge":
        text = prediction.text or ""
        out: dict = {"kind": "judge", "verdict": prediction.verdict, "output": text[:MAX_RAW_TEXT]}
        if len(text) > MAX_RAW_TEXT:
            out["truncated"] = True
        return out
    if prediction.kind == "label":
        return {"kind": "label", "verdict": prediction.verdict}
    if prediction.kind == "scores":
        return {"kind": "scores", "score_1": prediction.score_1, "score_2": prediction.score_2}
    return {
        "kind": "pairs",
        "chosen_score": prediction.chosen_score,
        "rejected_score": prediction.rejected_score,
    }


def build_item_predictions(*, evaluation, records: Sequence[dict], predictions, report) -> list:
    """Unsaved ItemPrediction rows, one per release item the entry predicted
    (first line per ID and order). `correct` is the official verdict of the
    original order's first line, drawn the same way the scorer drew it."""
    # Keyed by the ID the release's records use (re-keyed or not); MRB
    # records only, the ones a prediction line can name.
    members = {
        ri.public_id: ri
        for ri in evaluation.release.release_items.mrb_records().only(
            "external_id", "released_id", "item_id", "chosen", "better"
        )
    }
    first: dict[str, dict[str, Prediction]] = {}
    for p in predictions:
        if p.id in members:
            first.setdefault(p.id, {}).setdefault(p.order, p)
    original_picks = report.first_picks.get("original", {})
    categories = {r["ID"]: r["Category"] for r in records}
    rows = []
    for rid, lines in first.items():
        member = members[rid]
        chosen, better = member.chosen, member.better
        original = lines.get("original")
        swapped = lines.get("swapped")
        category = categories[rid]
        picked = original_picks.get(rid)
        choice = ""
        if original is not None:
            choice = line_pick(original, better=better, chosen=chosen)
            if original.kind == "judge" and original.verdict is None and picked is not None:
                # The official random draw picked a side: show it, flagged.
                choice = chosen if picked else ("2" if chosen == "1" else "1")
        rows.append(
            ItemPrediction(
                evaluation=evaluation,
                item_id=member.item_id,
                external_id=rid,
                category=category,
                sub_bucket=sub_bucket(category, rid),
                chosen=chosen,
                choice=choice,
                swapped_choice=(
                    line_pick(swapped, better=better, chosen=chosen) if swapped else ""
                ),
                has_swapped=swapped is not None,
                correct=picked is True,
                random_verdict=bool(
                    original is not None and original.kind == "judge" and original.verdict is None
                ),
                p1=entry_probability(
                    [line for line in (original, swapped) if line is not None],
                    better=better,
                    chosen=chosen,
                ),
                raw={order: _raw(line) for order, line in lines.items()},
            )
        )
    return rows


def store_item_predictions(*, evaluation, records, predictions, report) -> int:
    rows = build_item_predictions(
        evaluation=evaluation, records=records, predictions=predictions, report=report
    )
    ItemPrediction.objects.bulk_create(rows, batch_size=2000)
    return len(rows)
