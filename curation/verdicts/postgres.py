"""curation.verdicts.orm's statements as raw SQL, for PostgreSQL: the
same functions, with the same names and results; tests/curation/verdicts/
test_statement_paths.py drives both the same way and compares what they
leave.

Why raw SQL here: the verdict's locked read runs inside every vote, the
other two inside every vote that completes an item (the verdict moves), in
the vote's transaction. The locked read as a QuerySet cost more Python (its
compilation) than any other statement of an API vote (bench/annotate_bench.py
--api). Measured with
bench/verdict_statements_bench.py (figures in docs/decisions.md, issue 32).
The votes are read by index whatever the planner's statistics say: the
item's assignments go in as an array (= ANY(ARRAY(subquery))), where a join
on a table not analysed since it was small (autovacuum off, or not yet run
after an import) got a hash join over every judgement, 2 ms at 13,000 of
them and growing.
"""

from __future__ import annotations

from django.db import connection

from annotate.models import Assignment, Judgement, JudgementSlot
from curation.models import Verdict
from curation.verdicts.orm import RULE_VOTE_FIELDS, VOTE_FIELDS
from curation.verdicts.rule import RuleVote

# Table and column names from the models, never written by hand.
_judgement, _assignment, _slot = Judgement._meta, Assignment._meta, JudgementSlot._meta


def _rule_vote_column(name: str) -> str:
    """A RULE_VOTE_FIELDS value: the judgement's column, or a pair's per-slot
    correctness from its slot row (s1, s2), "" without one, as
    Judgement.objects.with_pair_answers() reads it."""
    if name in ("correct_1", "correct_2"):
        return f"COALESCE(s{name[-1]}.{_slot.get_field('correctness').column}, '')"
    return f"j.{_judgement.get_field(name).column}"


_SLOT_JOIN = "LEFT JOIN {table} s{n} ON s{n}.{judgement} = j.{pk} AND s{n}.{slot} = {n}"
ITEM_RULE_VOTES_SQL = """
    SELECT {columns} FROM {judgement} j
    {slots}
    WHERE j.{current} AND j.{assignment} = ANY(ARRAY(
        SELECT {assignment_pk} FROM {assignments} WHERE {item} = %s))
""".format(
    columns=", ".join(_rule_vote_column(name) for name in RULE_VOTE_FIELDS),
    slots="\n    ".join(
        _SLOT_JOIN.format(
            table=_slot.db_table,
            n=n,
            judgement=_slot.get_field("judgement").column,
            pk=_judgement.pk.column,
            slot=_slot.get_field("slot").column,
        )
        for n in (1, 2)
    ),
    judgement=_judgement.db_table,
    current=_judgement.get_field("is_current").column,
    assignment=_judgement.get_field("assignment").column,
    assignment_pk=_assignment.pk.column,
    assignments=_assignment.db_table,
    item=_assignment.get_field("item").column,
)

# Every column of the verdict, in its fields' order, from the model.
_VERDICT_COLUMNS = list(Verdict._meta.concrete_fields)
LOCKED_VERDICT_SQL = "SELECT {} FROM {} WHERE {} = %s FOR UPDATE".format(
    ", ".join(f.column for f in _VERDICT_COLUMNS),
    Verdict._meta.db_table,
    Verdict._meta.get_field("item").column,
)

_VOTE_FIELDS = [Verdict._meta.get_field(name) for name in VOTE_FIELDS]
SAVE_AFTER_VOTE_SQL = "UPDATE {} SET {} WHERE {} = %s".format(
    Verdict._meta.db_table,
    ", ".join(f"{f.column} = %s" for f in _VOTE_FIELDS),
    Verdict._meta.pk.column,
)


def locked_verdict(item_id: int) -> Verdict | None:
    """The item's verdict, its row locked until the transaction ends; or None."""
    with connection.cursor() as cursor:
        cursor.execute(LOCKED_VERDICT_SQL, [item_id])
        row = cursor.fetchone()
    if row is None:
        return None
    return Verdict.from_db(connection.alias, [f.attname for f in _VERDICT_COLUMNS], row)


def item_rule_votes(item_id: int) -> list[RuleVote]:
    """The current votes on one item, as the contested rule reads them."""
    with connection.cursor() as cursor:
        cursor.execute(ITEM_RULE_VOTES_SQL, [item_id])
        return [RuleVote(*row) for row in cursor]


def save_after_vote(verdict: Verdict) -> None:
    """Write the fields a vote's pass through the rule changes (VOTE_FIELDS;
    updated_at becomes now), as save(update_fields=VOTE_FIELDS) does: each
    value through its field's pre_save (auto_now) and get_db_prep_save."""
    values = [f.get_db_prep_save(f.pre_save(verdict, False), connection) for f in _VOTE_FIELDS]
    with connection.cursor() as cursor:
        cursor.execute(SAVE_AFTER_VOTE_SQL, [*values, verdict.pk])
