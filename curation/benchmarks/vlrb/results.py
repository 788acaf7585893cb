"""Per-item results of a scored VL-RewardBench upload: one ItemPrediction
per predicted pair of the release, in the project's canonical terms
(`choice` the pair's majority pick, none when undecided or unparsed;
`correct` when cal.py counts it agree), for the per-item results page and
the label-quality audit."""

from __future__ import annotations

from curation.models import ItemPrediction
from curation.models.quality import Side

_OTHER_SIDE = {"1": "2", "2": "1"}


def store_item_results(evaluation, report: dict) -> int:
    members = {
        ri.public_id: ri
        for ri in evaluation.release.release_items.only(
            "external_id", "released_id", "item_id", "chosen"
        )
    }
    rows = []
    for entry in report["per_item"]:
        member = members.get(entry["id"])
        if member is None or entry["class"] is None:
            continue
        label, chosen = entry["class"], member.chosen
        choice = {"agree": chosen, "reject": _OTHER_SIDE.get(chosen, "")}.get(label, Side.NONE)
        agree, reject, unparsed = entry["runs"]
        rows.append(
            ItemPrediction(
                evaluation=evaluation, item_id=member.item_id, external_id=entry["id"],
                category=entry["group"], sub_bucket=entry["dataset"], chosen=chosen,
                choice=choice, correct=label == "agree",
                raw={"class": label, "agree": agree, "reject": reject, "unparsed": unparsed},
            )
        )  # fmt: skip
    ItemPrediction.objects.bulk_create(rows, batch_size=2000)
    return len(rows)
