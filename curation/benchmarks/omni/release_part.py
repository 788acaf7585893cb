"""A release's Omni-RewardBench part: its task files written by
.release_files, the manifest's `omni` section (.card) and the provenance of
its own members."""

from __future__ import annotations

from collections import Counter

from curation.benchmarks.base import BuildContext, Part
from curation.benchmarks.common.release import MEMBER_COLUMNS
from curation.benchmarks.omni import card
from curation.benchmarks.omni.benchmark import PREFIX
from curation.benchmarks.omni.release_files import write_files
from curation.models import Verdict
from curation.models.verdicts import RELEASABLE_STATUSES, FinalChoice


def prepare(ctx: BuildContext) -> Part:
    sides = ctx.included.filter(item__domain__export_category__startswith=PREFIX)
    ties = Verdict.objects.filter(
        project=ctx.project, item__domain__slug__in=[d.slug for d in ctx.domains],
        item__domain__export_category__startswith=PREFIX,
        status__in=RELEASABLE_STATUSES, final_choice=FinalChoice.TIE,
    )  # fmt: skip
    rows = sorted([*sides.values_list(*MEMBER_COLUMNS), *ties.values_list(*MEMBER_COLUMNS)])
    rows = [r for r in rows if r[3] in ("1", "2", "tie")]
    domains = {d.slug: d.export_category for d in ctx.domains}
    written, warnings = write_files(ctx.folder, rows, salt=ctx.salt, domains=domains)
    # Sides are release members (ReleaseItem better A/B); a tie has no
    # member row (ReleaseItem's better holds no tie) and is in the file only.
    # A side with one prompt image is a pair-layout record too: its
    # membership and provenance are the records' (as for ranked files).
    members = [r for r in written if r.preference != "tie" and not r.mrb_shaped]
    return Part(
        key="omni", format_name="omni",
        released={r.external_id: r.released_id for r in written},
        members_by_domain=dict(Counter(r.domain for r in members)),
        written=sides.filter(item_id__in=[r.item_id for r in members]),
        extra_provenance=lambda out: provenance(members, out),
        manifest=card.manifest_section(written, rekeyed=bool(ctx.salt)) if written else {},
        warnings=warnings,
    )  # fmt: skip


def provenance(written, members: list):
    """provenance.jsonl lines of the file's own members (no votes), appending
    their membership to `members`."""
    for r in written:
        released_id = "" if r.released_id == r.external_id else r.released_id
        better = "A" if r.preference == "1" else "B"
        members.append((r.item_id, r.external_id, released_id, r.domain, r.preference, better,
                        r.provenance))  # fmt: skip
        yield {"ID": r.released_id, "Better": better, "chosen_canonical": r.preference,
               "provenance": r.provenance, "votes": [],
               "omni": {"task": r.task}}  # fmt: skip
