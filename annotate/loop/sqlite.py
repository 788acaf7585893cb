"""The annotation loop's statements for SQLite, the embedded default: the
claim's questions in one SELECT and the vote in fixed raw statements, built
once. The same functions, with the same names and results, as
annotate.loop.orm (the reference in plain ORM) and annotate.loop.postgres;
annotate.loop.service chooses between them, and
tests/annotate/loop/test_statement_paths.py drives this module and the ORM's
with the same random sequence of claims, votes, skips, revisions and lease
expiries on SQLite and compares the database they leave.

Why: on the embedded default, compiling the ORM's claim and vote (their
filters, subqueries and F() updates) was most of a vote's server CPU
(py-spy, issue 32); running the statement is a small part of it. SQLite
allows no INSERT or UPDATE inside a WITH, so where PostgreSQL's claim and
vote are one statement each, here the claim's three questions (its own open
lease, whether any lease ran out, the item to take) are one SELECT, the
text PostgreSQL's claim starts with (postgres.CLAIM_QUESTIONS), and the
writes follow as short statements. No row locks: SQLite's IMMEDIATE
transactions (config/settings.py) serialise writers, and the claim's
questions run inside the write transaction, so nothing changes between the
answer and the writes.

The reads of one's own assignment are PostgreSQL's statement
(postgres.PAGE_SQL) without its row lock, their datetimes made aware as the
ORM makes them.
"""

from __future__ import annotations

from datetime import UTC
from functools import cache

from django.db import connection, transaction
from django.db.models import DateTimeField
from django.utils import timezone

from annotate.loop import orm, postgres
from annotate.loop.rules import Vote, slot_answers, tally_columns
from annotate.models import Assignment, AssignmentStatus, Domain, Item, Judgement, Project
from annotate.projects import MEMBER_SQL

_DATETIMES = {
    model: [f.attname for f in model._meta.concrete_fields if isinstance(f, DateTimeField)]
    for model in (Assignment, Item, Project, Domain)
}


def _as_the_orm_reads(instance) -> None:
    """SQLite's driver gives a datetime column's text as a naive datetime
    (Django's converters for the declared type); the ORM makes it aware in
    the database's time zone, UTC (USE_TZ). Other values come as the ORM
    reads them (booleans by their declared type too)."""
    for name in _DATETIMES[type(instance)]:
        value = getattr(instance, name)
        if value is not None and timezone.is_naive(value):
            setattr(instance, name, timezone.make_aware(value, UTC))


def locked_assignment(*, assignment_id: int, annotator) -> Assignment | None:
    """The annotator's own assignment (annotate.projects) with its item,
    project and domain; or None. No row lock: inside the vote's IMMEDIATE
    transaction no other writer runs until it ends."""
    return assignment_for_page(assignment_id=assignment_id, annotator=annotator)


# The API's read of an item's parts: PostgreSQL's statement (its columns need
# no conversion on SQLite).
item_parts = postgres.item_parts


def assignment_for_page(*, assignment_id: int, annotator) -> Assignment | None:
    """The annotator's own assignment with its item, project and domain; or
    None. PostgreSQL's statement (postgres.PAGE_SQL)."""
    return postgres.read_own_assignment(
        postgres.PAGE_SQL,
        assignment_id=assignment_id,
        annotator=annotator,
        convert=_as_the_orm_reads,
    )


# The claim's questions: (the annotator's oldest unexpired open lease in the
# project, or NULL; whether a lease of the project ran out, asked only with
# check_stale; the item to lease when neither, with its domain, or NULLs).
# Someone who does not see the project gets (NULL, 0, NULLs): every question
# is asked of members only.
CLAIM_QUESTIONS_SQL = (
    "WITH"
    + postgres.CLAIM_QUESTIONS.format(
        own="a.id", member=MEMBER_SQL.format(project="%(project)s"), lock=""
    )
    + f"""
    SELECT (SELECT id FROM own), EXISTS (SELECT 1 FROM stale),
        {", ".join(c for _, c in postgres.CLAIM_ITEM + postgres.CLAIM_DOMAIN)}
    FROM (SELECT 1) AS one
    LEFT JOIN picked ON TRUE
    LEFT JOIN annotate_item i ON i.id = picked.id
    LEFT JOIN annotate_domain d ON d.id = i.domain_id
"""
)
# The count: the condition and the CHECK constraint make overlap impossible
# whatever the locking.
_COUNT_LEASE_SQL = """
    UPDATE annotate_item SET live_assignments = live_assignments + 1
    WHERE id = %s AND live_assignments < votes_needed RETURNING live_assignments
"""
# The lease: every concrete field of Assignment but its key (the list from
# the model), as postgres.CLAIM_SQL's INSERT.
_LEASE_SQL = (
    f"INSERT INTO {Assignment._meta.db_table} "
    f"({', '.join(f.column for f in postgres.NEW_ASSIGNMENT_FIELDS)}) "
    f"VALUES ({', '.join(['%s'] * len(postgres.NEW_ASSIGNMENT_FIELDS))}) RETURNING id"
)
_LEASE_EXPIRES_AT = Assignment._meta.get_field("lease_expires_at")


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
    because stale leases wait to be returned.) As orm.claim: a new lease
    comes with its item (live_assignments counting it) and the item's
    domain; a resumed one bare."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            CLAIM_QUESTIONS_SQL,
            {
                "project": project.pk,
                "user": annotator.pk,
                "superuser": annotator.is_superuser,
                # As the ORM writes a datetime for SQLite (its text).
                "now": _LEASE_EXPIRES_AT.get_db_prep_value(now, connection),
                "check_stale": check_stale,
                "group": group,
                **orm.adaptive_parameters(project),
            },
        )
        own, stale, *picked = cursor.fetchone()
        if own is not None:
            return Assignment.objects.get(pk=own), False
        if stale and check_stale:
            return None, True
        item, domain = postgres.instances(
            picked, (Item, postgres.CLAIM_ITEM), (Domain, postgres.CLAIM_DOMAIN)
        )
        if item.pk is None:
            return None, False
        cursor.execute(_COUNT_LEASE_SQL, [item.pk])
        counted = cursor.fetchone()
        if counted is None:
            return None, False
        for instance in (item, domain):
            _as_the_orm_reads(instance)
        (item.live_assignments,) = counted
        item.project, item.domain = project, domain
        new = orm.new_lease(
            item=item,
            annotator=annotator,
            order=order,
            now=now,
            lease_expires_at=lease_expires_at,
        )
        # Each value as the instance's save() writes it (pre_save,
        # get_db_prep_save), as postgres.claim_parameters.
        values = [f.pre_save(new, True) for f in postgres.NEW_ASSIGNMENT_FIELDS]
        cursor.execute(
            _LEASE_SQL,
            [
                f.get_db_prep_save(v, connection)
                for f, v in zip(postgres.NEW_ASSIGNMENT_FIELDS, values, strict=True)
            ],
        )
        (pk,) = cursor.fetchone()
    assignment = Assignment.from_db(
        connection.alias,
        [Assignment._meta.pk.attname, *(f.attname for f in postgres.NEW_ASSIGNMENT_FIELDS)],
        [pk, *values],
    )
    assignment.item, assignment.annotator = item, annotator
    return assignment, False


_SUBMITTED_AT = Assignment._meta.get_field("submitted_at")
_JUDGEMENT_SQL = (
    f"INSERT INTO annotate_judgement ({', '.join(f.column for f in postgres.JUDGEMENT_FIELDS)}) "
    f"VALUES ({', '.join(['%s'] * len(postgres.JUDGEMENT_FIELDS))}) RETURNING id"
)
_SLOT_SQL = f"INSERT INTO {postgres.SLOT_INSERT} VALUES (%s, %s, %s, %s, %s)"
_SUBMITTED_SQL = "UPDATE annotate_assignment SET status = %s, submitted_at = %s WHERE id = %s"
_MEMBER_SQL = (
    "UPDATE annotate_membership SET judged = judged + 1 WHERE project_id = %s AND user_id = %s"
)


@cache
def _count_sql(tally: tuple[str, ...]) -> str:
    """The item's UPDATE for a vote counted in the `tally` columns (from a
    fixed set: validate_vote checked the labels), bringing back the counts
    update_verdict() reads; built once per set."""
    quote = connection.ops.quote_name
    # Every vote moves at least one tally (a pick or a ranking: votes_ranked).
    counts = ", ".join(f"{quote(c)} = {quote(c)} + 1" for c in tally)
    returning = ", ".join(postgres.ITEM_COUNTS)
    return f"UPDATE annotate_item SET {counts} WHERE id = %s RETURNING {returning}"


def record_vote(*, assignment: Assignment, annotator, fields: dict, vote: Vote, now) -> Judgement:
    """Store the judgement (`fields`) and its per-slot answers, mark the
    assignment submitted, count the vote in its item's tallies and in the
    annotator's Membership.judged; `assignment.item` gets its tallies back
    (from the UPDATE's RETURNING: inside the vote's write transaction)."""
    item = assignment.item
    values, written = postgres.judgement_values(fields)
    with connection.cursor() as cursor:
        cursor.execute(_JUDGEMENT_SQL, written)
        (judgement_id,) = cursor.fetchone()
        answers = slot_answers(vote)
        if answers:
            cursor.executemany(_SLOT_SQL, [(judgement_id, *row) for row in answers])
        cursor.execute(
            _SUBMITTED_SQL,
            [
                AssignmentStatus.SUBMITTED,
                _SUBMITTED_AT.get_db_prep_save(now, connection),
                assignment.pk,
            ],
        )
        cursor.execute(_count_sql(tuple(tally_columns(vote))), [item.pk])
        counts = cursor.fetchone()
        cursor.execute(_MEMBER_SQL, [item.project_id, annotator.pk])
    for name, value in zip(postgres.ITEM_COUNTS, counts, strict=True):
        setattr(item, name, value)
    return postgres.stored_judgement(judgement_id, values)
