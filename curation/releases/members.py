"""The rows a release build writes and the membership it records (used by
curation.releases.build): the pair layout's records from the included
verdicts' rows and their items' parts (curation.releases.content), and each
vote as provenance.jsonl holds it (also for the members only in a
benchmark's own files: curation.benchmarks).
"""

from __future__ import annotations

from collections import defaultdict
from typing import NamedTuple

from annotate.models import Judgement
from curation.exports.records import pseudonym_of
from curation.releases import exporter
from curation.releases.content import ItemContent

CHUNK = 2000


# What the build reads of each included verdict (as named rows, see _write);
# the item's content comes from its parts (content.item_contents, per chunk).
ROW_FIELDS = (
    "item_id",
    "final_choice",
    "provenance",
    "reason",
    "item__external_id",
    "item__domain__slug",
    "item__domain__export_category",
    "item__model_1",
    "item__model_2",
)


# A member of the release, as export_items appends it (a ReleaseItem's fields).
MEMBER_FIELDS = (
    "item_id", "external_id", "released_id", "domain", "chosen", "better", "provenance"
)  # fmt: skip


class VoteExtras(NamedTuple):
    """Which vote fields beyond the A/B ones provenance.jsonl carries."""

    strength: bool  # the canonical signed strength (graded projects)
    grades: bool  # the letter grades of response 1 and 2 (domains asking them)


def _vote_dicts(item_ids, pseudonyms, extras: VoteExtras) -> dict[int, list[dict]]:
    """The current votes of items as provenance.jsonl writes them, by item
    id (one query)."""
    votes: dict[int, list[dict]] = defaultdict(list)
    rows = (
        Judgement.objects.with_pair_answers()
        .filter(assignment__item_id__in=item_ids, is_current=True)
        .order_by("assignment__item_id", "assignment__annotator_id")
        .values_list(
            "assignment__item_id",
            "assignment__annotator_id",
            "choice",
            "correct_1",
            "correct_2",
            "confidence",
            "strength",
            "grade_1",
            "grade_2",
            "imported",
        )
    )
    for item_id, annotator, choice, c1, c2, confidence, strength, g1, g2, imported in rows:
        vote = {
            "annotator": pseudonym_of(pseudonyms, annotator),
            "choice": choice,
            "correct_1": c1,
            "correct_2": c2,
            "confidence": confidence,
        }
        if extras.strength:
            vote["strength"] = strength
        if extras.grades:
            vote["grade_1"], vote["grade_2"] = g1, g2
        if imported:  # a published annotation (only then: older releases keep their bytes)
            vote["imported"] = True
        votes[item_id].append(vote)
    return votes


def export_items(
    chunk, contents: dict[int, ItemContent], pseudonyms, members, slots, shape, released, extras
):
    """ExportItems of a chunk of rows (ROW_FIELDS) and their items' content
    (content.item_contents), with their current votes (one query per
    chunk). Appends each item's membership to `members` as a
    tuple: (item_id, external_id, released_id, domain, chosen, better,
    provenance); released_id is "" unless the release re-keys IDs, better
    the record's slot of the chosen response (`slots`, named by `shape`)."""
    votes = _vote_dicts([v.item_id for v in chunk], pseudonyms, extras)
    for v in chunk:
        released_id = released[v.item__external_id]
        content = contents[v.item_id]
        export = exporter.ExportItem(
            external_id=released_id,
            domain=v.item__domain__slug,
            category=v.item__domain__export_category,
            prompt=content.prompt,
            image_path=content.image_path,
            image_sha256=content.image_sha256,
            image_ext=content.image_ext,
            response_1=content.response_1,
            response_2=content.response_2,
            chosen=v.final_choice,
            provenance=v.provenance,
            reason=v.reason if v.provenance == "adjudicated" else "",
            votes=tuple(votes.get(v.item_id, ())),
            model_1=v.item__model_1,
            model_2=v.item__model_2,
            image_source=content.image_file,
        )
        # A tuple, not a ReleaseItem: at 100,000 items the instances alone
        # were ~100 MB. _publish makes the rows in batches.
        members.append(
            (
                v.item_id,
                v.item__external_id,
                "" if released_id == v.item__external_id else released_id,
                v.item__domain__slug,
                v.final_choice,
                shape.better(slots[released_id]),
                v.provenance,
            )
        )
        yield export
