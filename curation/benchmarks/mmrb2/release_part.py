"""A release's Multimodal RewardBench 2 task files (issue 24): written in
the published layout by .release_files (`mmrb2/<task>.json`, their images
beside them), the members only there (image or interleaved responses:
not records of the pair layout) with their provenance.jsonl lines, and the
manifest's `mmrb2` section (.card)."""

from __future__ import annotations

from curation.benchmarks.base import BuildContext, Part
from curation.benchmarks.common.release import records_part
from curation.benchmarks.mmrb2 import card
from curation.benchmarks.mmrb2.release_files import export_mmrb2
from curation.models import Verdict

FORMAT_NAME = "mmrb2"
PREFIX = "mmrb2/"


def prepare(ctx: BuildContext) -> Part:
    pairs = export_mmrb2(
        project=ctx.project,
        folder=ctx.folder / "mmrb2",
        item_ids=ctx.included.values("item_id"),
        domain_slugs=ctx.release.domains,
        rekey=bool(ctx.salt),
        salt=ctx.salt,
    )["pairs"]
    return records_part(
        ctx,
        key=FORMAT_NAME,
        written=pairs,
        members=ctx.included.filter(
            item__domain__export_category__startswith=PREFIX, item__meta__has_key="mmrb2"
        ),
        manifest=lambda: card.manifest_section(pairs, scale=ctx.project.preference_scale),
        describe=describe,
        lookup=verdicts,
    )


def verdicts(ids: list[int]) -> dict[int, tuple]:
    return {
        row[0]: row[1:]
        for row in Verdict.objects.filter(item_id__in=ids).values_list(
            "item_id", "final_choice", "provenance", "reason", "item__model_1", "item__model_2"
        )
    }


def describe(pair, votes: list, verdicts: dict) -> tuple[str, str, str, dict]:
    """The provenance line of a pair only in the task files (`Better` null,
    the file and its `chosen` under "mmrb2")."""
    final_choice, provenance, reason, model_1, model_2 = verdicts[pair.item_id]
    line = {
        "ID": pair.released_id,
        "Better": None,
        "chosen_canonical": final_choice,
        "provenance": provenance,
        "curator_reason": reason if provenance == "adjudicated" else "",
        "votes": votes,
        "model_1": model_1,
        "model_2": model_2,
        "mmrb2": {"file": f"mmrb2/{pair.task}.json", "chosen": pair.chosen},
    }
    return final_choice, pair.chosen, provenance, line
