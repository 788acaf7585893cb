"""A release's VL-RewardBench part: `vlrb/vl_rewardbench.jsonl` written by
.release_files, the manifest's `vlrb` section (.card), and the provenance
of members only in this file (pairs without a prompt image: the others are
records of the pair layout too, with their provenance there)."""

from __future__ import annotations

from collections import Counter

from curation.benchmarks.base import BuildContext, Part
from curation.benchmarks.common.release import MEMBER_COLUMNS, own_line, provenance
from curation.benchmarks.vlrb import card
from curation.benchmarks.vlrb.release_files import write_file

FORMAT_NAME = "vl-rewardbench"


def prepare(ctx: BuildContext) -> Part:
    members = ctx.included.filter(item__meta__has_key=card.MARK)
    rows = list(members.order_by("item_id").values_list(*MEMBER_COLUMNS))
    domains = {d.slug: d.export_category for d in ctx.domains}
    written, warnings = (
        write_file(ctx.folder, rows, salt=ctx.salt, domains=domains) if rows else ([], [])
    )
    only = [r for r in written if not r.mrb_shaped]
    return Part(
        key="vlrb",
        format_name=FORMAT_NAME,
        # A pair of the pair layout keeps the ID the records give it there.
        released={r.external_id: r.released_id for r in only},
        members_by_domain=dict(Counter(r.domain for r in only)),
        written=members.filter(item_id__in=[r.item_id for r in written]),
        extra_provenance=lambda out: provenance(only, ctx, out, describe),
        manifest=card.manifest_section(written, rekeyed=bool(ctx.salt)) if written else {},
        warnings=warnings,
    )


def describe(r, votes: list, looked: dict) -> tuple[str, str, str, dict]:
    """A member's provenance: ReleaseItem.better "A" when response[0] (the
    first slot) is preferred; its line's `Better` null."""
    better = "A" if r.chosen == "1" else "B"
    line = own_line(r, r.chosen, votes, "vlrb", {"file": card.FILE, "group": r.group})
    return r.chosen, better, r.provenance, line
