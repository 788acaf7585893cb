"""A release's Multimodal RewardBench 2 task files (issue 24): written in
the published layout by .release_files (`mmrb2/<task>.json`, their images
beside them), the members only there (image or interleaved responses:
not records of the pair layout) with their provenance.jsonl lines, and the
manifest's `mmrb2` section (.card)."""

from __future__ import annotations

from curation.benchmarks.base import BuildContext, Part
from curation.benchmarks.mmrb2 import card
from curation.benchmarks.mmrb2.release_files import export_mmrb2
from curation.models import Verdict
from curation.releases.members import CHUNK, _vote_dicts

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
    only = [pair for pair in pairs if not pair.mrb_shaped]
    members_by_domain: dict[str, int] = {}
    for pair in only:
        members_by_domain[pair.domain] = members_by_domain.get(pair.domain, 0) + 1
    return Part(
        key="mmrb2",
        format_name=FORMAT_NAME,
        released={pair.external_id: pair.released_id for pair in pairs},
        members_by_domain=members_by_domain,
        written=ctx.included.filter(
            item__domain__export_category__startswith=PREFIX, item__meta__has_key="mmrb2"
        ),
        extra_provenance=lambda members: provenance(only, ctx.pseudonyms, members, ctx.vote_extras),
        manifest=card.manifest_section(pairs, scale=ctx.project.preference_scale) if pairs else {},
    )


def provenance(pairs, pseudonyms, members, extras):
    """provenance.jsonl records of the pairs only in MMRB2 task files (after
    the MRB records; `Better` null, the file and its `chosen` under
    "mmrb2"), appending their membership to `members` (export_items)."""
    for start in range(0, len(pairs), CHUNK):
        chunk = pairs[start : start + CHUNK]
        ids = [pair.item_id for pair in chunk]
        votes = _vote_dicts(ids, pseudonyms, extras)
        verdicts = {
            row[0]: row[1:]
            for row in Verdict.objects.filter(item_id__in=ids).values_list(
                "item_id", "final_choice", "provenance", "reason", "item__model_1", "item__model_2"
            )
        }
        for pair in chunk:
            final_choice, provenance, reason, model_1, model_2 = verdicts[pair.item_id]
            released_id = "" if pair.released_id == pair.external_id else pair.released_id
            members.append(
                (
                    pair.item_id,
                    pair.external_id,
                    released_id,
                    pair.domain,
                    final_choice,
                    pair.chosen,
                    provenance,
                )
            )
            yield {
                "ID": pair.released_id,
                "Better": None,
                "chosen_canonical": final_choice,
                "provenance": provenance,
                "curator_reason": reason if provenance == "adjudicated" else "",
                "votes": votes.get(pair.item_id, []),
                "model_1": model_1,
                "model_2": model_2,
                "mmrb2": {"file": f"mmrb2/{pair.task}.json", "chosen": pair.chosen},
            }
