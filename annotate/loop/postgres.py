"""The annotation loop's raw statements, for PostgreSQL: the claim and the
vote each in one statement, and the two reads of an annotator's own
assignment (the submit's locked one, the compare page's). The same
functions, with the same names and results, as annotate.loop.orm, the
reference implementation in plain ORM; annotate.loop.service chooses between
them, and tests/annotate/loop/test_statement_paths.py drives both with the
same random sequence of claims, votes, skips, revisions and lease expiries
and compares the database they leave.

Why raw SQL here: a claim and a vote are the two requests every judgement
makes. As single statements they took a judgement from ~30 to ~12 ms
(bench/HISTORY.md), and PostgreSQL's server-side prepared statements
(prepare_threshold in config/settings.py) keep their fixed text planned once
per connection.
"""

from __future__ import annotations

from functools import cache

from django.db import connection
from django.db.models import Model

from annotate.loop import orm
from annotate.loop.rules import SLOT_ANSWER_FIELDS, Vote, slot_answers, tally_columns
from annotate.models import (
    Assignment,
    AssignmentStatus,
    Domain,
    ImageAsset,
    Item,
    ItemPart,
    Judgement,
    JudgementSlot,
    Project,
)
from annotate.projects import MEMBER_SQL

# What update_verdict() reads from the item a vote was counted on: the
# tallies a vote's statement brings back (see orm.ITEM_COUNTS).
ITEM_COUNTS = ("votes_needed", "votes_1", "votes_2", "votes_tie", "votes_ranked")


def _select_columns(alias: str, model: type[Model], skip=()) -> list[tuple[str, str]]:
    """(attname, alias.column) of `model`'s concrete fields, in their order,
    for a raw SELECT, minus `skip` and fields whose raw value needs
    converting (JSON): those are left deferred, loaded on first access."""
    return [
        (f.attname, f"{alias}.{f.column}")
        for f in model._meta.concrete_fields
        if f.name not in skip and not hasattr(f, "from_db_value")
    ]


def instances(row, *parts: tuple[type[Model], list[tuple[str, str]]]) -> list:
    """Model instances (Model.from_db) from consecutive slices of a raw row:
    PostgreSQL's driver returns ready Python values for the columns
    _select_columns picks."""
    made, at = [], 0
    for model, columns in parts:
        names = [name for name, _ in columns]
        made.append(model.from_db(connection.alias, names, row[at : at + len(names)]))
        at += len(names)
    return made


# The item's long text is out of line in PostgreSQL (migration 0009): each
# value read costs a TOAST lookup, so these statements read only what their
# callers show (the page reads the parts, the API the Markdown) and leave the
# rest deferred.
_SOURCE_TEXT = ("prompt", "response_1", "response_2", "reference_answer")
_MEMBER = MEMBER_SQL.format(project="%(project)s")
CLAIM_ITEM = _select_columns("i", Item, skip=("reference_answer",))
CLAIM_DOMAIN = _select_columns("d", Domain)
# The claim's INSERT writes every concrete field of Assignment but its key,
# the list taken from the model (never written by hand), so a field added to
# Assignment is written here too: the item from the statement, every other
# field from the same unsaved instance the ORM's create() saves
# (orm.new_lease), through its pre_save and get_db_prep_save as Django's own
# INSERT does. tests/annotate/loop/test_statement_paths.py holds the list
# equal to the model's fields.
NEW_ASSIGNMENT_FIELDS = [f for f in Assignment._meta.concrete_fields if not f.primary_key]
# What `own` selects and `leased` returns, in one order: every column.
_ASSIGNMENT_ROW = [f.column for f in Assignment._meta.concrete_fields]
# What the final SELECT reads of the assignment (JSON-like fields deferred).
_CLAIM_ASSIGNMENT = _select_columns("found", Assignment)


# The columns of the one-lease-per-annotator-and-item rule, from the model:
# the claim's INSERT does nothing where it would break it (ON CONFLICT).
_ONE_PER_ANNOTATOR = next(
    [Assignment._meta.get_field(name).column for name in constraint.fields]
    for constraint in Assignment._meta.constraints
    if constraint.name == "annotate_assignment_one_per_annotator"
)


def _new_value(field) -> str:
    """The INSERT's expression for `field` of a new assignment."""
    return "picked.id" if field.attname == "item_id" else f"%(new_{field.column})s"


# The claim: the lease checks, the pick, the count and the lease in one
# statement (its own transaction), bringing back what the compare page
# shows. The same rules as orm.claim():
# - Only for someone who sees the project (annotate.projects): `{member}` in
#   `own`, `stale` and `picked`.
# - `own`: the annotator's oldest unexpired open lease in the project; when
#   there is one, nothing new is leased and it comes back (resumed).
# - `stale`: whether any open lease of the project has run out (only asked
#   when check_stale). Then nothing is leased either: the caller returns the
#   abandoned items to the pool first (leases.expire_stale_leases) and
#   claims again without the check, so an item someone abandoned goes out
#   before a fresh one, as it would if the expiry had already happened.
# - `picked`: Item.objects.needing_votes() of the project, never an item this
#   person was assigned, fewest missing votes first, then the seeded shuffle
#   and the id (the whole ORDER BY is annotate_item_claim_order_idx, so the
#   scan stops at the first item it may take). NOT IN, as the ORM's
#   exclude() writes it: PostgreSQL hashes the annotator's items once, where
#   NOT EXISTS let it plan a nested loop over them for every candidate
#   (item_id is never NULL, so the two mean the same).
#   `grouped` comes first: with %(group)s (the group key of the item the
#   annotator just judged or holds, "" for none) the lowest-id item of that
#   group she may take (annotate_item_group_idx), so a group's items reach
#   her one after another; only when it has none, `ungrouped`, the order above.
#   Adaptive votes (annotate.loop.adaptive; %(adaptive)s, %(base)s from
#   orm.adaptive_parameters): `ungrouped` serves only benchmark items below
#   the base votes (%(base)s is ADAPTIVE_OFF for a fixed project: no limit;
#   qualification and check items keep their own count); after
#   them `uncertain`, the open items of the last refit least certain first
#   (annotate_certainty_queue_idx, the scan stops at the first it may take).
#   FOR UPDATE OF p SKIP LOCKED: lock the chosen item row and skip rows other
#   claimers hold, so concurrent claimers take different items without
#   waiting; only the item row, since locking the joined domain
#   rows would make every other claimer skip all items sharing them.
# - `leased`, then `counted`: the lease of the picked item, counted in its
#   live assignments. The pick's lock (taken on the row's latest version,
#   its room rechecked) keeps that room until commit; the CHECK constraint
#   (live_assignments <= votes_needed) would fail the statement, never
#   overlap, if the lock did not. ON CONFLICT DO NOTHING: the same person's
#   other claim (another tab, the page's claim ahead) leased this item and
#   committed after this statement's snapshot (the lock rechecked the item's
#   room, not the snapshot's list of their items); then nothing is leased or
#   counted, the statement ends normally (a vote's transaction needs no
#   savepoint around it) and says so (`conflict`), and claim() asks again.
# - The final SELECT always returns one row (the stale and conflict flags), with the
#   leased or resumed assignment's item and domain when there is one (the
#   page and the API show the item's parts, images included: no join of
#   Item.image),
#   read as of the statement's start: only live_assignments changed, and
#   that comes from the UPDATE's RETURNING.
# The claim's first three questions (`own`, `stale`, `picked` below), SELECTs
# only: the start of CLAIM_SQL, and on SQLite, which allows no INSERT or
# UPDATE in a WITH, the whole of annotate.loop.sqlite's CLAIM_QUESTIONS_SQL
# (there without the row lock: SQLite's IMMEDIATE transactions serialise
# writers). `{own}`: what `own` selects of the lease; `{lock}`: the pick's
# locking clause. `stale`'s CROSS JOIN makes SQLite start from the open
# leases that ran out (annotate_assignment_lease_idx), not from every item
# of the project (its plan with INNER JOIN: a vote's cost grew with the
# project); PostgreSQL plans it as the inner join it is.
CLAIM_QUESTIONS = """
    own AS (
        SELECT {own}
        FROM annotate_assignment a INNER JOIN annotate_item o ON o.id = a.item_id
        WHERE a.annotator_id = %(user)s AND a.status = 'open'
          AND a.lease_expires_at > %(now)s AND o.project_id = %(project)s AND {member}
        ORDER BY a.claimed_at, a.id
        LIMIT 1
    ), stale AS (
        SELECT 1 FROM annotate_assignment a CROSS JOIN annotate_item o
        WHERE o.id = a.item_id
          AND %(check_stale)s AND a.status = 'open' AND a.lease_expires_at <= %(now)s
          AND o.project_id = %(project)s AND {member}
        LIMIT 1
    ), grouped AS (
        SELECT p.id FROM annotate_item p
        WHERE %(group)s <> '' AND p.project_id = %(project)s AND p.group_key <> ''
          AND p.group_key = %(group)s AND p.live_assignments < p.votes_needed
          AND p.id NOT IN (
              SELECT x.item_id FROM annotate_assignment x WHERE x.annotator_id = %(user)s)
          AND NOT EXISTS (SELECT 1 FROM own) AND NOT EXISTS (SELECT 1 FROM stale) AND {member}
        ORDER BY p.id
        LIMIT 1
        {lock}
    ), ungrouped AS (
        SELECT p.id FROM annotate_item p
        WHERE p.project_id = %(project)s AND p.live_assignments < p.votes_needed
          AND p.id NOT IN (
              SELECT x.item_id FROM annotate_assignment x WHERE x.annotator_id = %(user)s)
          AND NOT EXISTS (SELECT 1 FROM own) AND NOT EXISTS (SELECT 1 FROM stale) AND {member}
          AND NOT EXISTS (SELECT 1 FROM grouped)
          AND (p.live_assignments < %(base)s OR p.purpose <> 'benchmark')
        ORDER BY (p.votes_needed - p.live_assignments), p.shuffle_key, p.id
        LIMIT 1
        {lock}
    ), uncertain AS (
        SELECT p.id FROM annotate_itemcertainty c INNER JOIN annotate_item p ON p.id = c.item_id
        WHERE %(adaptive)s AND c.project_id = %(project)s AND c.open
          AND p.live_assignments < p.votes_needed
          AND p.id NOT IN (
              SELECT x.item_id FROM annotate_assignment x WHERE x.annotator_id = %(user)s)
          AND NOT EXISTS (SELECT 1 FROM own) AND NOT EXISTS (SELECT 1 FROM stale) AND {member}
          AND NOT EXISTS (SELECT 1 FROM grouped) AND NOT EXISTS (SELECT 1 FROM ungrouped)
        ORDER BY c.certainty, c.item_id
        LIMIT 1
        {lock}
    ), picked AS (
        SELECT id FROM grouped UNION ALL SELECT id FROM ungrouped UNION ALL SELECT id FROM uncertain
    )"""
CLAIM_SQL = (
    "\n    WITH"
    + CLAIM_QUESTIONS.format(
        own=", ".join(f"a.{column}" for column in _ASSIGNMENT_ROW),
        member=_MEMBER,
        lock="FOR UPDATE OF p SKIP LOCKED",
    )
    + """, leased AS (
        INSERT INTO {table} ({insert_columns})
        SELECT {insert_values}
        FROM picked
        ON CONFLICT ({one_per_annotator}) DO NOTHING
        RETURNING {returned}
    ), counted AS (
        UPDATE annotate_item u SET live_assignments = u.live_assignments + 1
        FROM leased WHERE u.id = leased.item_id
        RETURNING u.id, u.live_assignments
    ), found AS (
        SELECT leased.*, counted.live_assignments AS live
        FROM leased INNER JOIN counted ON counted.id = leased.item_id
        UNION ALL
        SELECT own.*, NULL FROM own
    )
    SELECT
        EXISTS (SELECT 1 FROM stale),
        EXISTS (SELECT 1 FROM picked) AND NOT EXISTS (SELECT 1 FROM leased),
        COALESCE(found.live, i.live_assignments),
        {columns}
    FROM (SELECT 1) AS one
    LEFT JOIN found ON TRUE
    LEFT JOIN annotate_item i ON i.id = found.item_id
    LEFT JOIN annotate_domain d ON d.id = i.domain_id
""".format(
        table=Assignment._meta.db_table,
        insert_columns=", ".join(f.column for f in NEW_ASSIGNMENT_FIELDS),
        insert_values=", ".join(_new_value(f) for f in NEW_ASSIGNMENT_FIELDS),
        one_per_annotator=", ".join(_ONE_PER_ANNOTATOR),
        returned=", ".join(_ASSIGNMENT_ROW),
        columns=", ".join(column for _, column in _CLAIM_ASSIGNMENT + CLAIM_ITEM + CLAIM_DOMAIN),
    )
)


def claim_parameters(
    *,
    project: Project,
    annotator,
    order: str,
    now,
    lease_expires_at,
    check_stale: bool,
    group: str = "",
) -> dict:
    """CLAIM_SQL's parameters: the new assignment's values (new_<column>)
    are those of the instance orm.new_lease builds, as its save() would
    write them."""
    new = orm.new_lease(
        item=None, annotator=annotator, order=order, now=now, lease_expires_at=lease_expires_at
    )
    return {
        "project": project.pk,
        "user": annotator.pk,
        "superuser": annotator.is_superuser,
        "now": now,
        "check_stale": check_stale,
        "group": group,
        **orm.adaptive_parameters(project),
        **{
            f"new_{f.column}": f.get_db_prep_save(f.pre_save(new, True), connection)
            for f in NEW_ASSIGNMENT_FIELDS
            if f.attname != "item_id"
        },
    }


def claim(
    *,
    project: Project,
    annotator,
    order: str,
    now,
    lease_expires_at,
    check_stale: bool,
    group: str = "",
) -> tuple[Assignment | None, bool]:
    """(The leased or resumed assignment, or None; whether nothing was leased
    because stale leases wait to be returned.) The assignment comes with its
    item (its live_assignments with this claim counted), the item's project
    and domain."""
    parameters = claim_parameters(
        project=project,
        annotator=annotator,
        order=order,
        now=now,
        lease_expires_at=lease_expires_at,
        check_stale=check_stale,
        group=group,
    )
    # One statement, with no savepoint inside a vote's transaction: a
    # conflict with the same person's other claim ends it normally.
    with connection.cursor() as cursor:
        cursor.execute(CLAIM_SQL, parameters)
        row = cursor.fetchone()
        if row[1]:
            # That other claim's lease committed after this statement's
            # snapshot: claim again; the new statement sees the lease and
            # hands it back (it is theirs and open).
            cursor.execute(CLAIM_SQL, parameters)
            row = cursor.fetchone()
    stale, _, live = row[:3]
    assignment, item, domain = instances(
        row[3:],
        (Assignment, _CLAIM_ASSIGNMENT),
        (Item, CLAIM_ITEM),
        (Domain, CLAIM_DOMAIN),
    )
    if assignment.pk is None:
        return None, stale
    item.live_assignments = live
    item.project, item.domain = project, domain
    assignment.item, assignment.annotator = item, annotator
    return assignment, False


_OWN_ASSIGNMENT = _select_columns("a", Assignment)
# A vote reads no text at all, and the page shows the item's parts: the
# item's source text stays deferred.
_OWN_ITEM = _select_columns("i", Item, skip=_SOURCE_TEXT)
_OWN_PROJECT = _select_columns("p", Project)
_OWN_DOMAIN = _select_columns("d", Domain)
_OWN_PARTS = (
    (Assignment, _OWN_ASSIGNMENT),
    (Item, _OWN_ITEM),
    (Project, _OWN_PROJECT),
    (Domain, _OWN_DOMAIN),
)
# The compare page's read: the annotator's own assignment (annotate.projects)
# with its item, project and domain, in one statement (the ORM's
# select_related() of the same cost more CPU to compile than the rest of the
# page, and building it as a QuerySet more than PostgreSQL spends running
# it). Also annotate.loop.sqlite's two reads.
PAGE_SQL = f"""
    SELECT {", ".join(c for _, columns in _OWN_PARTS for _, c in columns)}
    FROM annotate_assignment a
    INNER JOIN annotate_item i ON i.id = a.item_id
    INNER JOIN annotate_project p ON p.id = i.project_id
    INNER JOIN annotate_domain d ON d.id = i.domain_id
    WHERE a.id = %(assignment)s AND a.annotator_id = %(user)s
      AND {MEMBER_SQL.format(project="i.project_id")}
"""
# The submit's read: the same, the assignment's row locked (which serialises
# double submits of one assignment), its item, project and domain unlocked.
LOCKED_ASSIGNMENT_SQL = PAGE_SQL + "    FOR UPDATE OF a\n"


def read_own_assignment(sql: str, *, assignment_id: int, annotator, convert=None):
    """The annotator's own assignment with its item, project and domain, read
    by `sql` (PAGE_SQL or LOCKED_ASSIGNMENT_SQL), or None. `convert`, called
    on each instance, turns a driver's raw values into the ORM's (SQLite's
    datetimes)."""
    with connection.cursor() as cursor:
        cursor.execute(
            sql,
            {
                "assignment": assignment_id,
                "user": annotator.pk,
                "superuser": annotator.is_superuser,
            },
        )
        row = cursor.fetchone()
    if row is None:
        return None
    made = instances(row, *_OWN_PARTS)
    if convert is not None:
        for instance in made:
            convert(instance)
    assignment, item, project, domain = made
    item.project, item.domain = project, domain
    assignment.item, assignment.annotator = item, annotator
    return assignment


def locked_assignment(*, assignment_id: int, annotator) -> Assignment | None:
    """The annotator's own assignment (annotate.projects), its row locked
    until the transaction ends, with its item, project and domain; or None."""
    return read_own_assignment(
        LOCKED_ASSIGNMENT_SQL, assignment_id=assignment_id, annotator=annotator
    )


def assignment_for_page(*, assignment_id: int, annotator) -> Assignment | None:
    """The annotator's own assignment with its item, project and domain; or
    None. The item's source text stays deferred."""
    return read_own_assignment(PAGE_SQL, assignment_id=assignment_id, annotator=annotator)


# The vote's INSERT: every concrete field of Judgement but the key.
JUDGEMENT_FIELDS = [f for f in Judgement._meta.concrete_fields if not f.primary_key]


# A slot row's columns after its judgement's (rules.SLOT_ANSWER_FIELDS),
# from the model.
_SLOT = JudgementSlot._meta
_SLOT_COLUMNS = [_SLOT.get_field(name).column for name in SLOT_ANSWER_FIELDS]
SLOT_INSERT = (
    f"{_SLOT.db_table} ({_SLOT.get_field('judgement').column}, {', '.join(_SLOT_COLUMNS)})"
)


@cache
def _record_vote_sql(tally: tuple[str, ...], n_slots: int = 0) -> str:
    """record_vote()'s statement for a vote counted in the `tally` columns
    (from a fixed set: validate_vote checked the labels) with `n_slots`
    slot rows (rules.slot_answers), built once."""
    quote = connection.ops.quote_name
    # Every vote moves at least one tally (a pick or a ranking: votes_ranked).
    counts = ", ".join(f"{quote(c)} = {quote(c)} + 1" for c in tally)
    slotted = ""
    if n_slots:
        row = "(%s::smallint, %s, %s, %s::smallint)"
        slotted = f"""
        ), slotted AS (
            INSERT INTO {SLOT_INSERT}
            SELECT judged.id, v.* FROM judged
            CROSS JOIN (VALUES {", ".join([row] * n_slots)}) AS v ({", ".join(_SLOT_COLUMNS)})"""
    return f"""
        WITH judged AS (
            INSERT INTO annotate_judgement ({", ".join(f.column for f in JUDGEMENT_FIELDS)})
            VALUES ({", ".join(["%s"] * len(JUDGEMENT_FIELDS))})
            RETURNING id{slotted}
        ), submitted AS (
            UPDATE annotate_assignment SET status = %s, submitted_at = %s WHERE id = %s
        ), counted AS (
            UPDATE annotate_item SET {counts}
            WHERE id = %s
            RETURNING id, {", ".join(ITEM_COUNTS)}
        ), member AS (
            UPDATE annotate_membership SET judged = judged + 1
            WHERE project_id = %s AND user_id = %s
        )
        SELECT judged.id, {", ".join(f"counted.{c}" for c in ITEM_COUNTS)}
        FROM judged CROSS JOIN counted
    """


def record_vote(*, assignment: Assignment, annotator, fields: dict, vote: Vote, now) -> Judgement:
    """Store the judgement (`fields`) and its per-slot answers, mark the
    assignment submitted, count the vote in its item's tallies and in the
    annotator's Membership.judged, in one statement; `assignment.item` gets
    its tallies back (the UPDATE holds the item row until commit, so they
    include every vote committed before and none after)."""
    item = assignment.item
    values, written = judgement_values(fields)
    answers = slot_answers(vote)
    with connection.cursor() as cursor:
        cursor.execute(
            _record_vote_sql(tuple(tally_columns(vote)), len(answers)),
            [
                *written,
                *(value for row in answers for value in row),
                AssignmentStatus.SUBMITTED,
                now,
                assignment.pk,
                item.pk,
                item.project_id,
                annotator.pk,
            ],
        )
        judgement_id, *counts = cursor.fetchone()
    for name, value in zip(ITEM_COUNTS, counts, strict=True):
        setattr(item, name, value)
    return stored_judgement(judgement_id, values)


def judgement_values(fields: dict) -> tuple[list, list]:
    """(values, as written) of every concrete field of Judgement but the key
    (JUDGEMENT_FIELDS, from the model), each as the ORM's create(**fields)
    writes it: the instance's (its default where `fields` leaves it out)
    through pre_save (auto_now_add) and get_db_prep_save. A field added to
    Judgement needs no edit here."""
    new = Judgement(**fields)
    values = [f.pre_save(new, True) for f in JUDGEMENT_FIELDS]
    written = [
        f.get_db_prep_save(v, connection) for f, v in zip(JUDGEMENT_FIELDS, values, strict=True)
    ]
    return values, written


def stored_judgement(judgement_id: int, values: list) -> Judgement:
    """The Judgement instance of the row judgement_values() wrote."""
    return Judgement.from_db(
        connection.alias,
        [Judgement._meta.pk.attname, *(f.attname for f in JUDGEMENT_FIELDS)],
        [judgement_id, *values],
    )


# The API's read of an item's parts (annotate.api.content): every column of a
# part but its HTML (the API sends the Markdown), with its image, if any;
# the image's created_at (a datetime, raw on SQLite) stays deferred, unread.
# As a QuerySet with select_related() its compilation was the largest share
# of an API vote's Python (bench/annotate_bench.py --api).
_PART = _select_columns("pt", ItemPart, skip=("html",))
_PART_IMAGE = _select_columns("im", ImageAsset, skip=("created_at",))
ITEM_PARTS_SQL = """
    SELECT {columns}
    FROM {parts} pt LEFT JOIN {images} im ON im.{image_pk} = pt.{image}
    WHERE pt.{item} = %s
""".format(
    columns=", ".join(column for _, column in _PART + _PART_IMAGE),
    parts=ItemPart._meta.db_table,
    images=ImageAsset._meta.db_table,
    image_pk=ImageAsset._meta.pk.column,
    image=ItemPart._meta.get_field("image").column,
    item=ItemPart._meta.get_field("item").column,
)


def item_parts(item_id: int) -> list[ItemPart]:
    """The item's parts (models.parts.group_by_slot orders them), each with
    its image; their HTML left deferred."""
    with connection.cursor() as cursor:
        cursor.execute(ITEM_PARTS_SQL, [item_id])
        rows = cursor.fetchall()
    parts = []
    for row in rows:
        part, image = instances(row, (ItemPart, _PART), (ImageAsset, _PART_IMAGE))
        part.image = image if part.image_id is not None else None
        parts.append(part)
    return parts
