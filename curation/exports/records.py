"""What one exported vote or verdict row holds, pure Python (no Django
import); docs/exports.md describes every column.

A vote row is one Judgement row, every field of it and every revision, in
canonical terms (response 1 / response 2 as imported) and as the annotator
saw it, through the one mapping of annotate.loop.rules; a graded strength
also on the project's scale (annotate.loop.scales.scale_value), the number
a release writes. Annotators are named as releases name them
(`pseudonym_of`). No model names, prompts, responses or gold answers: an
export describes the votes. A verdict row is one item's Verdict with its
current tallies. Each column has a type that the Parquet writer maps to
Arrow types and the CSV writer spells as text.
"""

from __future__ import annotations

from collections.abc import Mapping

from annotate.loop import rules, scales

# An item's response slots at most: rank_1 .. rank_8 (curation.models.MAX_VERDICT_SLOTS).
MAX_SLOTS = 8

# Column types: "string", "int" (nullable 64-bit), "float", "bool", "timestamp" (UTC).
VOTE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("vote_id", "int"),
    ("assignment_id", "int"),
    ("project", "string"),
    ("domain", "string"),
    ("item", "string"),
    ("annotator", "string"),
    ("revision", "int"),
    ("is_current", "bool"),
    ("choice", "string"),
    ("scale", "string"),
    ("strength", "int"),
    ("scale_value", "int"),
    ("grade_1", "string"),
    ("grade_2", "string"),
    ("correct_1", "string"),
    ("correct_2", "string"),
    ("shown_left", "string"),
    ("choice_displayed", "string"),
    ("strength_displayed", "int"),
    ("point_displayed", "string"),
    ("grade_left", "string"),
    ("grade_right", "string"),
    ("correct_left", "string"),
    ("correct_right", "string"),
    ("confidence", "int"),
    ("rationale", "string"),
    ("flagged_problem", "bool"),
    ("problem_reason", "string"),
    ("claimed_at", "timestamp"),
    ("submitted_at", "timestamp"),
    ("voted_at", "timestamp"),
    ("seconds_spent", "float"),
    ("active_seconds", "float"),
    ("imported", "bool"),  # a published annotation cast as a vote by the import
    ("task", "string"),  # what the vote answers: "pairwise" (every pair's vote)
)

# Every field of annotate's Judgement and the vote column that carries it
# (tests/curation/exports holds the keys equal to Judgement._meta's fields:
# a field added to the model fails the suite until it is exported).
JUDGEMENT_COLUMNS = {
    "id": "vote_id",
    "assignment": "assignment_id",
    "revision": "revision",
    "is_current": "is_current",
    "choice": "choice",
    "strength": "strength",
    "confidence": "confidence",
    "rationale": "rationale",
    "seconds_spent": "seconds_spent",
    "active_seconds": "active_seconds",
    "flagged_problem": "flagged_problem",
    "problem_reason": "problem_reason",
    "created_at": "voted_at",
    "imported": "imported",
    "task": "task",
}

VERDICT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("item_id", "int"),
    ("project", "string"),
    ("domain", "string"),
    ("item", "string"),
    ("status", "string"),
    ("final_choice", "string"),
    ("provenance", "string"),
    ("reason", "string"),
    ("exclusion_category", "string"),
    ("contest_kind", "string"),
    ("escalations", "int"),
    ("votes_1", "int"),
    ("votes_2", "int"),
    ("votes_tie", "int"),
    ("votes_needed", "int"),
    ("decided_by", "string"),
    ("version", "int"),
    ("updated_at", "timestamp"),
    # An N-slot item's (best-of-N or ranking project): its picks and rankings
    # counted, and its final ranking per canonical slot (1 = best, ties share
    # a place; null beyond its slots or without a final ranking). A pair's
    # are null, as an N-slot item's pair tallies are.
    ("votes_ranked", "int"),
    *((f"rank_{slot}", "int") for slot in range(1, MAX_SLOTS + 1)),
)

COLUMNS = {"votes": VOTE_COLUMNS, "verdicts": VERDICT_COLUMNS}

# What the service reads of each Judgement (values_list through its
# assignment and item, on Judgement.objects.with_pair_answers()), in this
# order; vote_record turns it into a row.
VOTE_FIELDS = (
    "pk",
    "assignment_id",
    "assignment__item__domain_id",
    "assignment__item__external_id",
    "assignment__annotator_id",
    "shown_swapped",
    "revision",
    "is_current",
    "choice",
    "strength",
    "grade_1",
    "grade_2",
    "correct_1",
    "correct_2",
    "confidence",
    "rationale",
    "flagged_problem",
    "problem_reason",
    "assignment__claimed_at",
    "assignment__submitted_at",
    "created_at",
    "seconds_spent",
    "active_seconds",
    "imported",
    "task",
)

VERDICT_FIELDS = (
    "item_id",
    "item__domain_id",
    "item__external_id",
    "status",
    "final_choice",
    "provenance",
    "reason",
    "exclusion_category",
    "contest_kind",
    "escalations",
    "item__votes_1",
    "item__votes_2",
    "item__votes_tie",
    "item__votes_needed",
    "decided_by_id",
    "version",
    "updated_at",
    "item__votes_ranked",
)


def pseudonym_of(names: Mapping[int, str], user_id: int | None) -> str:
    """A user's name in exports and releases: their membership's pseudonym,
    else ``annotator-<user id>`` (a member without one, or a superuser who
    is no member); "" for nobody (a verdict the rule decided)."""
    if user_id is None:
        return ""
    return names.get(user_id) or f"annotator-{user_id}"


def vote_record(
    row: tuple,
    *,
    project: str,
    names: Mapping[int, str],
    domains: Mapping[int, str],
    scale: str = scales.AB,
) -> tuple:
    """One vote row (VOTE_COLUMNS order) from a VOTE_FIELDS tuple; `names`
    are pseudonyms by user id, `domains` slugs by domain id, `scale` the
    project's preference scale (annotate.loop.scales)."""
    (
        pk,
        assignment_id,
        domain,
        item,
        annotator_id,
        swapped,
        revision,
        is_current,
        choice,
        strength,
        grade_1,
        grade_2,
        correct_1,
        correct_2,
        confidence,
        rationale,
        flagged,
        problem,
        claimed_at,
        submitted_at,
        voted_at,
        seconds,
        active,
        imported,
        task,
    ) = row
    correct_left, correct_right = rules.displayed_pair(correct_1, correct_2, swapped=swapped)
    grade_left, grade_right = rules.displayed_pair(grade_1, grade_2, swapped=swapped)
    # Displayed terms are the canonical ones with the sign changed when
    # response 2 was on the left (the mapping is its own inverse); None on A/B.
    shown = rules.canonical_strength(strength, swapped=swapped)
    point = None if shown is None else scales.point_label(shown)
    # A strength that is no point of the scale (a project whose scale changed,
    # which setup refuses once votes exist) has no number on it.
    on_scale = strength is not None and strength in scales.POINTS.get(scale, ())
    scale_value = scales.scale_value(strength, scale) if on_scale else None
    return (
        pk,
        assignment_id,
        project,
        domains[domain],
        item,
        pseudonym_of(names, annotator_id),
        revision,
        is_current,
        choice,
        scale,
        strength,
        scale_value,
        grade_1,
        grade_2,
        correct_1,
        correct_2,
        rules.response_on("left", swapped=swapped),
        rules.displayed_choice(choice, swapped=swapped),
        shown,
        point,
        grade_left,
        grade_right,
        correct_left,
        correct_right,
        confidence,
        rationale,
        flagged,
        problem,
        claimed_at,
        submitted_at,
        voted_at,
        seconds,
        active,
        imported,
        task,
    )


def verdict_record(
    row: tuple,
    *,
    project: str,
    names: Mapping[int, str],
    domains: Mapping[int, str],
    n_slot: bool = False,
    ranks: Mapping[int, int] | None = None,
) -> tuple:
    """One verdict row (VERDICT_COLUMNS order) from a VERDICT_FIELDS tuple.
    `n_slot`: the item is a best-of-N pick's or a ranking's (its pair
    tallies are null, its votes_ranked and final `ranks` {slot: rank} are
    given); a pair's N-slot columns are null."""
    (*head, decided_by, version, updated_at, votes_ranked) = row
    item_id, domain, item, *rest = head
    if n_slot:
        rest[-4:-1] = [None, None, None]  # votes_1, votes_2, votes_tie
        ranks = ranks or {}
        n_slot_columns = (votes_ranked, *(ranks.get(s) for s in range(1, MAX_SLOTS + 1)))
    else:
        n_slot_columns = (None,) * (1 + MAX_SLOTS)
    return (
        item_id,
        project,
        domains[domain],
        item,
        *rest,
        pseudonym_of(names, decided_by),
        version,
        updated_at,
        *n_slot_columns,
    )
