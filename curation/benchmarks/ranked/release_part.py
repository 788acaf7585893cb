"""A release's ranked part: `ranked/rankings.jsonl` written by
.release_files, its members only there (not records of the pair layout)
with their provenance.jsonl lines, and the manifest's `ranked` section
(.card)."""

from __future__ import annotations

from curation.benchmarks.base import BuildContext, Part
from curation.benchmarks.common.release import member_rows, own_line, records_part
from curation.benchmarks.ranked import card
from curation.benchmarks.ranked.release_files import EXPORT_PREFIX, write_file
from curation.models.releases import RANKED


def prepare(ctx: BuildContext) -> Part:
    members, rows, domains = member_rows(ctx, EXPORT_PREFIX, "pk")
    written, warnings = (
        write_file(ctx.folder, rows, salt=ctx.salt, domains=domains) if rows else ([], [])
    )
    return records_part(
        ctx,
        key="ranked",
        written=written,
        members=members.filter(item_id__in=[r.item_id for r in written]),
        manifest=lambda: card.manifest_section(written, rekeyed=bool(ctx.salt)),
        describe=describe,
        warnings=warnings,
    )


def describe(r, votes: list, _) -> tuple[str, str, str, dict]:
    """ReleaseItem: `chosen` the first slot ranked first, `better` "ranked"."""
    own = {"file": card.FILE, "category": r.category, "responses": r.n}
    return r.best, RANKED, r.provenance, own_line(r, r.best, votes, "ranked", own)
