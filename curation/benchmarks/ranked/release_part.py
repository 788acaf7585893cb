"""A release's ranked part: `ranked/rankings.jsonl` written by
.release_files, its members only there (not records of the pair layout)
with their provenance.jsonl lines, and the manifest's `ranked` section
(.card)."""

from __future__ import annotations

from curation.benchmarks.base import BuildContext, Part
from curation.benchmarks.ranked import card
from curation.benchmarks.ranked.release_files import EXPORT_PREFIX, write_file
from curation.models.releases import RANKED
from curation.releases.members import CHUNK, _vote_dicts

FORMAT_NAME = "ranked"


def prepare(ctx: BuildContext) -> Part:
    members = ctx.included.filter(item__domain__export_category__startswith=EXPORT_PREFIX)
    rows = list(
        members.order_by("item_id").values_list(
            "item_id", "item__external_id", "item__domain__slug", "final_choice", "provenance",
            "pk",
        )
    )  # fmt: skip
    domains = {d.slug: d.export_category for d in ctx.domains}
    written, warnings = (
        write_file(ctx.folder, rows, salt=ctx.salt, domains=domains) if rows else ([], [])
    )
    # A member of the pair layout's shape is a record there too: its
    # membership and provenance are the records' (as for the task files' pairs).
    only = [r for r in written if not r.mrb_shaped]
    by_domain: dict[str, int] = {}
    for record in only:
        by_domain[record.domain] = by_domain.get(record.domain, 0) + 1
    return Part(
        key="ranked",
        format_name=FORMAT_NAME,
        released={r.external_id: r.released_id for r in written},
        members_by_domain=by_domain,
        written=members.filter(item_id__in=[r.item_id for r in written]),
        extra_provenance=lambda out: provenance(only, ctx.pseudonyms, out, ctx.vote_extras),
        manifest=card.manifest_section(written, rekeyed=bool(ctx.salt)) if written else {},
        warnings=warnings,
    )


def provenance(written, pseudonyms, members, extras):
    """provenance.jsonl records of the file's members, appending their
    membership to `members` (curation.releases.members.export_items)."""
    for start in range(0, len(written), CHUNK):
        chunk = written[start : start + CHUNK]
        votes = _vote_dicts([r.item_id for r in chunk], pseudonyms, extras)
        for r in chunk:
            released_id = "" if r.released_id == r.external_id else r.released_id
            # ReleaseItem: `chosen` the first slot ranked first, `better` "ranked".
            members.append(
                (r.item_id, r.external_id, released_id, r.domain, r.best, RANKED, r.provenance)
            )
            yield {
                "ID": r.released_id,
                "Better": None,
                "chosen_canonical": r.best,
                "provenance": r.provenance,
                "votes": votes.get(r.item_id, []),
                "ranked": {"file": card.FILE, "category": r.category, "responses": r.n},
            }
