"""A release's VL-RewardBench part: `vlrb/vl_rewardbench.jsonl` written by
.release_files, the manifest's `vlrb` section (.card), and the provenance
of members only in this file (pairs without a prompt image: the others are
records of the pair layout too, with their provenance there)."""

from __future__ import annotations

from curation.benchmarks.base import BuildContext, Part
from curation.benchmarks.vlrb import card
from curation.benchmarks.vlrb.release_files import write_file
from curation.releases.members import CHUNK, _vote_dicts

FORMAT_NAME = "vl-rewardbench"


def prepare(ctx: BuildContext) -> Part:
    members = ctx.included.filter(item__meta__has_key=card.MARK)
    rows = list(
        members.order_by("item_id").values_list(
            "item_id", "item__external_id", "item__domain__slug", "final_choice", "provenance"
        )
    )
    domains = {d.slug: d.export_category for d in ctx.domains}
    written, warnings = (
        write_file(ctx.folder, rows, salt=ctx.salt, domains=domains) if rows else ([], [])
    )
    only = [r for r in written if not r.mrb_shaped]
    by_domain: dict[str, int] = {}
    for record in only:
        by_domain[record.domain] = by_domain.get(record.domain, 0) + 1
    return Part(
        key="vlrb",
        format_name=FORMAT_NAME,
        # A pair of the pair layout keeps the ID the records give it there.
        released={r.external_id: r.released_id for r in only},
        members_by_domain=by_domain,
        written=members.filter(item_id__in=[r.item_id for r in written]),
        extra_provenance=lambda out: provenance(only, ctx.pseudonyms, out, ctx.vote_extras),
        manifest=card.manifest_section(written, rekeyed=bool(ctx.salt)) if written else {},
        warnings=warnings,
    )


def provenance(written, pseudonyms, members, extras):
    """provenance.jsonl records of the file's own members, appending their
    membership to `members` (curation.releases.members.export_items)."""
    for start in range(0, len(written), CHUNK):
        chunk = written[start : start + CHUNK]
        votes = _vote_dicts([r.item_id for r in chunk], pseudonyms, extras)
        for r in chunk:
            released_id = "" if r.released_id == r.external_id else r.released_id
            # ReleaseItem.better: "A" when response[0] (the first slot) is preferred.
            better = "A" if r.chosen == "1" else "B"
            members.append(
                (r.item_id, r.external_id, released_id, r.domain, r.chosen, better, r.provenance)
            )
            yield {
                "ID": r.released_id,
                "Better": None,
                "chosen_canonical": r.chosen,
                "provenance": r.provenance,
                "votes": votes.get(r.item_id, []),
                "vlrb": {"file": card.FILE, "group": r.group},
            }
