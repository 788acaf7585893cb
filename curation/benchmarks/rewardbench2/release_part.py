"""A release's RewardBench 2 part: `rewardbench2/test.jsonl` written by
.release_files, its members only there (no prompt image: not records of the
pair layout) with their provenance.jsonl lines, and the manifest's
`rewardbench2` section (.card)."""

from __future__ import annotations

from curation.benchmarks.base import BuildContext, Part
from curation.benchmarks.rewardbench2 import card
from curation.benchmarks.rewardbench2.release_files import EXPORT_PREFIX, write_file
from curation.releases.members import CHUNK, _vote_dicts

FORMAT_NAME = "rewardbench2"


def prepare(ctx: BuildContext) -> Part:
    members = ctx.included.filter(item__domain__export_category__startswith=EXPORT_PREFIX)
    rows = list(
        members.order_by("item_id").values_list(
            "item_id", "item__external_id", "item__domain__slug", "final_choice", "provenance"
        )
    )
    domains = {d.slug: d.export_category for d in ctx.domains}
    written, warnings = (
        write_file(ctx.folder, rows, salt=ctx.salt, domains=domains) if rows else ([], [])
    )
    by_domain: dict[str, int] = {}
    for record in written:
        by_domain[record.domain] = by_domain.get(record.domain, 0) + 1
    return Part(
        key="rewardbench2",
        format_name=FORMAT_NAME,
        released={r.external_id: r.released_id for r in written},
        members_by_domain=by_domain,
        written=members.filter(item_id__in=[r.item_id for r in written]),
        extra_provenance=lambda out: provenance(written, ctx.pseudonyms, out, ctx.vote_extras),
        manifest=card.manifest_section(written, seed=ctx.release.seed, rekeyed=bool(ctx.salt))
        if written
        else {},
        warnings=warnings,
    )


def provenance(written, pseudonyms, members, extras):
    """provenance.jsonl records of the file's members (after the pair
    layout's), appending their membership to `members` (export_items)."""
    for start in range(0, len(written), CHUNK):
        chunk = written[start : start + CHUNK]
        votes = _vote_dicts([r.item_id for r in chunk], pseudonyms, extras)
        for r in chunk:
            released_id = "" if r.released_id == r.external_id else r.released_id
            # ReleaseItem is pair-shaped (chosen "1"/"2", better Output1/2 or A/B):
            # the file's first completion is its chosen one, answer A of the
            # published 4-way prompt before the shuffle.
            members.append(
                (r.item_id, r.external_id, released_id, r.domain, r.final_choice, "A",
                 r.provenance)
            )  # fmt: skip
            yield {
                "ID": r.released_id,
                "Better": None,
                "chosen_canonical": r.final_choice,
                "provenance": r.provenance,
                "votes": votes.get(r.item_id, []),
                "rewardbench2": {
                    "file": "rewardbench2/test.jsonl",
                    "subset": r.subset,
                    "num_correct": r.correct,
                    "total_completions": r.total,
                },
            }
