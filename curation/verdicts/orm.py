"""The statements every vote runs on its item's verdict, in plain ORM:
the reference implementation, run on SQLite. curation.verdicts.postgres has
the same functions, with the same names and results, as raw SQL for
PostgreSQL; curation.verdicts.service chooses between them (_statements),
and tests/curation/verdicts/test_statement_paths.py drives both with the
same random votes and compares the verdicts and audit events they leave.
"""

from __future__ import annotations

from annotate.models import Judgement
from curation.models import Verdict
from curation.verdicts.rule import RuleVote

# The verdict fields the rule's outcome changes, then updated_at (written by
# a vote's save; reevaluate_items' bulk update leaves it).
VOTE_FIELDS = (
    "status",
    "final_choice",
    "provenance",
    "reason",
    "escalations",
    "escalated_by",
    "contest_kind",
    "version",
    "updated_at",
)
# What the contested rule reads of a current judgement, in RuleVote's order
# (correct_1/2 through Judgement.objects.with_pair_answers()).
RULE_VOTE_FIELDS = ("choice", "correct_1", "correct_2", "flagged_problem", "strength")


def locked_verdict(item_id: int) -> Verdict | None:
    """The item's verdict, its row locked until the transaction ends; or None."""
    return Verdict.objects.select_for_update().filter(item_id=item_id).first()


def item_rule_votes(item_id: int) -> list[RuleVote]:
    """The current votes on one item, as the contested rule reads them."""
    rows = (
        Judgement.objects.with_pair_answers()
        .filter(assignment__item_id=item_id, is_current=True)
        .values_list(*RULE_VOTE_FIELDS)
    )
    return [RuleVote(*row) for row in rows]


def save_after_vote(verdict: Verdict) -> None:
    """Write the fields a vote's pass through the rule changes (VOTE_FIELDS;
    updated_at becomes now)."""
    verdict.save(update_fields=VOTE_FIELDS)
