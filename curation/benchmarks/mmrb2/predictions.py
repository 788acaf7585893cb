"""Per-item results of an MMRB2 leaderboard entry (issue 30), so MMRB2 entries
join the drill-down and the label audit like MRB ones.

An MMRB2 pair's ``response_a`` is the item's response 1 (the import maps it
so, the release writes it back so), whatever side was chosen. The forward
run showed A first: its judgement "A" picks response 1, "B" response 2. The
reverse run showed them swapped; as the official scorer does, its judgement
is flipped before reading ("A" in the reverse run picks response 2). Any
other value (missing, null, "tie", text) is no pick. ``correct`` is the
forward judgement against the file's ``chosen``, as a one-order count;
``p1`` is the judge's smoothed two-order share (probability.judge_share:
both orders for response 1 -> 5/6, one order -> 0.75, the orders disagreeing
-> 0.5; no pick in either order -> no probability).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from curation.benchmarks.mmrb2.scoring import first_judgement, flip
from curation.models import ItemPrediction
from curation.quality.probability import judge_share

CANONICAL = {"A": "1", "B": "2"}


def pick(judgement: Any) -> str:
    """The canonical side a file-terms judgement ("A"/"B") picks, or ""."""
    return CANONICAL.get(judgement, "") if isinstance(judgement, str) else ""


def build_mmrb2_item_predictions(
    *,
    evaluation,
    tasks: Iterable[tuple[str, Iterable[Mapping]]],
    predictions: Mapping[str, Any],
    members: Mapping[str, Any],
) -> list[ItemPrediction]:
    """Unsaved rows, one per pair of the release's task files that the
    predictions name. `members`: the release's items by the ID its files use."""
    rows = []
    for task, pairs in tasks:
        for pair in pairs:
            pair_id = pair["id"]
            member = members.get(pair_id)
            if member is None or pair_id not in predictions:
                continue
            entry = predictions[pair_id]
            forward = first_judgement(entry, pair_id, "forward")
            reverse = first_judgement(entry, pair_id, "reverse")
            choice, swapped_choice = pick(forward), pick(flip(reverse))
            rows.append(
                ItemPrediction(
                    evaluation=evaluation,
                    item_id=member.item_id,
                    external_id=pair_id,
                    category=task,
                    sub_bucket=str(pair.get("prompt_source", ""))[:80],
                    chosen=member.chosen,
                    choice=choice,
                    swapped_choice=swapped_choice,
                    has_swapped=bool(entry.get("reverse")),
                    correct=bool(forward) and forward == pair["chosen"],
                    p1=judge_share([choice, swapped_choice]),
                    raw={
                        "forward": {"kind": "judge", "verdict": forward},
                        "reverse": {"kind": "judge", "verdict": reverse},
                    },
                )
            )
    return rows


def store_mmrb2_item_predictions(*, evaluation, predictions: Mapping[str, Any]) -> int:
    """Write the entry's per-item rows (in the caller's transaction)."""
    from curation.benchmarks.mmrb2.evaluation import release_tasks, task_pairs

    release = evaluation.release
    members = {
        ri.public_id: ri
        for ri in release.release_items.only("external_id", "released_id", "item_id", "chosen")
    }
    tasks = [(task, task_pairs(release, name)) for task, name in release_tasks(release)]
    rows = build_mmrb2_item_predictions(
        evaluation=evaluation, tasks=tasks, predictions=predictions, members=members
    )
    ItemPrediction.objects.bulk_create(rows, batch_size=2000)
    return len(rows)


def ensure_mmrb2_item_predictions(evaluation) -> int:
    """An MMRB2 entry scored before its per-item rows were kept gets them
    from its stored predictions file (once; a no-op when it has rows)."""
    from django.core.files.storage import default_storage
    from django.db import transaction

    from curation.benchmarks.mmrb2.evaluation import read_predictions_file

    if ItemPrediction.objects.filter(evaluation=evaluation).exists():
        return 0
    with default_storage.open(evaluation.predictions, "rb") as fh:
        parsed, _ = read_predictions_file(fh.read(), evaluation.predictions)
    with transaction.atomic():
        return store_mmrb2_item_predictions(evaluation=evaluation, predictions=parsed)
