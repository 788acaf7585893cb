"""A release's RewardBench 2 part: `rewardbench2/test.jsonl` written by
.release_files, its members only there (no prompt image: not records of the
pair layout) with their provenance.jsonl lines, and the manifest's
`rewardbench2` section (.card)."""

from __future__ import annotations

from curation.benchmarks.base import BuildContext, Part
from curation.benchmarks.common.release import member_rows, own_line, records_part
from curation.benchmarks.rewardbench2 import card
from curation.benchmarks.rewardbench2.release_files import EXPORT_PREFIX, write_file


def prepare(ctx: BuildContext) -> Part:
    members, rows, domains = member_rows(ctx, EXPORT_PREFIX)
    written, warnings = (
        write_file(ctx.folder, rows, salt=ctx.salt, domains=domains) if rows else ([], [])
    )
    return records_part(
        ctx,
        key="rewardbench2",
        written=written,
        members=members.filter(item_id__in=[r.item_id for r in written]),
        manifest=lambda: card.manifest_section(
            written, seed=ctx.release.seed, rekeyed=bool(ctx.salt)
        ),
        describe=describe,
        warnings=warnings,
    )


def describe(r, votes: list, _) -> tuple[str, str, str, dict]:
    """ReleaseItem is pair-shaped (chosen "1"/"2", better Output1/2 or A/B):
    the file's first completion is its chosen one, answer A of the published
    4-way prompt before the shuffle."""
    own = {
        "file": "rewardbench2/test.jsonl",
        "subset": r.subset,
        "num_correct": r.correct,
        "total_completions": r.total,
    }
    return (
        r.final_choice,
        "A",
        r.provenance,
        own_line(r, r.final_choice, votes, "rewardbench2", own),
    )
