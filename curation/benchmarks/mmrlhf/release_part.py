"""A release's MM-RLHF-RewardBench part: its file written by .release_files,
the manifest's `mmrlhf` section (.card) and the provenance of members only
in this file (curation.benchmarks.common.release)."""

from __future__ import annotations

from curation.benchmarks.base import BuildContext, Part
from curation.benchmarks.common.release import records_part
from curation.benchmarks.mmrlhf import card, release_files


def prepare(ctx: BuildContext) -> Part:
    members = ctx.included.filter(item__domain__export_category__startswith=f"{card.FOLDER}/")
    domains = {d.slug: d.export_category for d in ctx.domains}
    written, warnings = release_files.write_file(
        ctx.folder, members, salt=ctx.salt, domains=domains
    )
    return records_part(
        ctx,
        key="mmrlhf",
        written=written,
        members=members.filter(item_id__in=[w.item_id for w in written]),
        manifest=lambda: card.manifest_section(written, rekeyed=bool(ctx.salt)),
        describe=describe,
        warnings=warnings,
    )


def describe(w, votes: list, looked: dict) -> tuple[str, str, str, dict]:
    """A member's provenance: ReleaseItem `better` "A" (the line's chosen
    comes first, as RewardBench 2's)."""
    line = {
        "ID": w.released_id,
        "Better": "A",
        "chosen_canonical": w.chosen,
        "provenance": w.provenance,
        "votes": votes,
        "mmrlhf": {"file": card.FILE, "category": w.category},
    }
    return w.chosen, "A", w.provenance, line
