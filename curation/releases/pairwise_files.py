"""A release's pairwise decompositions (issue 33, item 5):
``pairwise/<domain slug>.parquet`` in TRL's conversational preference layout
(curation.releases.trl: the same columns, features and writer options as
trl/), one row per pair of a ranked member's final ranking, in the mode the
curator chose (Release.pairwise; the rule is curation.releases.pairwise).

The decomposed members are those of the benchmarks' own files that are not
records of the pair layout (those already have their trl/ row): their
verdict's final ranking (VerdictRank, the Kemeny-Young order or the
curator's), else their best-of-N pick. Each one's ranking is frozen on its
ReleaseItem (`ranks`), so a training mix built from the release takes the
same pairs (curation.releases.mixes.build).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.core.files.storage import default_storage

from common.storage import read_stored
from curation.models import VerdictRank
from curation.models.verdicts import SLOT_CHOICES
from curation.releases import pairwise, trl
from curation.releases.content import item_contents

FOLDER = "pairwise"
CHUNK = 500


@dataclass
class Decomposed:
    """What was written: the manifest section and each member's ranking."""

    manifest: dict[str, Any] = field(default_factory=dict)
    ranks: dict[int, str] = field(default_factory=dict)  # item id -> "1,2,2,4"
    domains: list[str] = field(default_factory=list)  # with a file, in domain order


def final_ranks(verdict_rows: list[tuple], contents: dict) -> dict[int, tuple[int, ...]]:
    """{item id: ranking} of (verdict id, item id, final_choice) rows: the
    VerdictRank rows, else the pick; a member without either (a curator's
    tie) has none."""
    by_verdict: dict[int, dict[int, int]] = {}
    for verdict_id, slot, rank in VerdictRank.objects.filter(
        verdict_id__in=[row[0] for row in verdict_rows]
    ).values_list("verdict_id", "slot", "rank"):
        by_verdict.setdefault(verdict_id, {})[slot] = rank
    out: dict[int, tuple[int, ...]] = {}
    for verdict_id, item_id, final_choice in verdict_rows:
        n = len(contents[item_id].responses)
        ranked = by_verdict.get(verdict_id)
        if ranked and len(ranked) == n:
            out[item_id] = tuple(ranked[s] for s in range(1, n + 1))
        elif final_choice in SLOT_CHOICES and int(final_choice) <= n:
            out[item_id] = pairwise.pick_ranks(n, int(final_choice))
    return out


def write_pairs(
    folder: Path, *, verdicts, mode: str, released: dict[str, str], domains
) -> Decomposed:
    """Write the files of `verdicts` (a QuerySet of the decomposed members'
    verdicts) under `folder`; `released` maps external to released IDs."""
    categories = {d.slug: d.export_category for d in domains}
    order = [d.slug for d in domains]
    rows = list(
        verdicts.order_by("item__external_id").values_list(
            "pk", "item_id", "item__external_id", "item__domain__slug", "final_choice"
        )
    )
    by_domain: dict[str, list[tuple]] = {}
    for row in rows:
        by_domain.setdefault(row[3], []).append(row)
    out = Decomposed()
    pairs_by_domain: dict[str, int] = {}
    items_by_domain: dict[str, int] = {}
    for slug in [s for s in order if s in by_domain]:
        # IDs in released-ID order (a re-keyed release's old order would show its old IDs).
        members = sorted(by_domain[slug], key=lambda r: released.get(r[2], r[2]))
        rowfile = trl.RowFile(folder / FOLDER / f"{slug}.parquet")
        written = items = 0
        try:
            for start in range(0, len(members), CHUNK):
                chunk = members[start : start + CHUNK]
                contents = item_contents(r[1] for r in chunk)
                ranks = final_ranks([(r[0], r[1], r[4]) for r in chunk], contents)
                for _, item_id, ext_id, _, _ in chunk:
                    if item_id not in ranks:
                        continue
                    out.ranks[item_id] = pairwise.ranks_text(ranks[item_id])
                    content = contents[item_id]
                    image = content.image_file
                    images = (
                        [(read_stored(default_storage, image), image.rsplit("/", 1)[-1])]
                        if image
                        else []
                    )
                    items += 1
                    for chosen, rejected in pairwise.pairs(ranks[item_id], mode):
                        rowfile.append(
                            trl.conversational_row(
                                id=pairwise.pair_id(released.get(ext_id, ext_id), chosen, rejected),
                                prompt=content.prompt,
                                chosen=content.responses[chosen - 1],
                                rejected=content.responses[rejected - 1],
                                category=categories[slug],
                                images=images,
                            )
                        )
                        written += 1
        except BaseException:
            rowfile.abort()
            raise
        rowfile.close()
        out.domains.append(slug)
        pairs_by_domain[slug] = written
        items_by_domain[slug] = items
    out.manifest = {
        "mode": mode,
        "mode_title": pairwise.MODES[mode],
        "rule": f"{pairwise.RULES[mode]}; {pairwise.TIE_RULE}",
        "layout": "trl",
        "files": [f"{FOLDER}/{slug}.parquet" for slug in out.domains],
        "items": items_by_domain,
        "pairs": pairs_by_domain,
        "total_pairs": sum(pairs_by_domain.values()),
    }
    return out
