"""A release's VideoRewardBench-style part: its file and videos written by
.release_files, the manifest's `videorb` section (.card) and the provenance
of its members (curation.benchmarks.common.release)."""

from __future__ import annotations

from curation.benchmarks.base import BuildContext, Part
from curation.benchmarks.common.release import records_part
from curation.benchmarks.videorb import card, release_files


def prepare(ctx: BuildContext) -> Part:
    members = ctx.included.filter(item__domain__export_category__startswith=f"{card.FOLDER}/")
    domains = {d.slug: d.export_category for d in ctx.domains}
    written, warnings = release_files.write_file(
        ctx.folder, members, salt=ctx.salt, domains=domains
    )
    return records_part(
        ctx,
        key="videorb",
        written=written,
        members=members.filter(item_id__in=[w.item_id for w in written]),
        manifest=lambda: card.manifest_section(written, rekeyed=bool(ctx.salt)),
        describe=describe,
        warnings=warnings,
    )


def describe(w, votes: list, looked: dict) -> tuple[str, str, str, dict]:
    """A member's provenance: ReleaseItem `better` "A" (the line's chosen
    comes first, as in MM-RLHF-RewardBench's lines)."""
    line = {
        "ID": w.released_id,
        "Better": "A",
        "chosen_canonical": w.chosen,
        "provenance": w.provenance,
        "votes": votes,
        "videorb": {"file": card.FILE, "dimension": w.dimension, "video": w.video},
    }
    return w.chosen, "A", w.provenance, line
