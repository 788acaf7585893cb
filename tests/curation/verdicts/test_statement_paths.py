"""Both statement paths of a vote's verdict leave the same database.

curation.verdicts.service runs the statements of a vote on its verdict (the
verdict's locked read; when the verdict moves, the item's current votes and
the verdict's save) as raw SQL on
PostgreSQL (curation.verdicts.postgres) and as plain ORM elsewhere
(curation.verdicts.orm, the reference). Here both run on PostgreSQL: each
function on the same random judgements and verdict values, and the whole
vote path through the annotation loop's random sequences
(tests/annotate/loop/test_statement_paths.py) with one module then the
other; every answer, verdict and audit event comes out equal.
"""

from __future__ import annotations

import dataclasses
import random
from datetime import UTC, datetime, timedelta
from unittest import mock

import pytest
from django.db import transaction
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotate.loop import postgres as loop_postgres
from annotate.loop import service as loop_service
from annotate.models import Assignment, AssignmentStatus
from curation.models import (
    ContestKind,
    FinalChoice,
    Provenance,
    Verdict,
    VerdictStatus,
)
from curation.verdicts import orm, postgres, service
from tests.annotate.loop.test_statement_paths import STEPS, database, make_world, run
from tests.conftest import requires_postgres
from tests.factories import make_item, make_judgement, make_project, make_user

pytestmark = [requires_postgres, pytest.mark.django_db]

CLAIMED = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
CORRECT = st.sampled_from(["", "yes", "no", "unsure"])
# A judgement as drawn: choice, graded or not (the strength's sign is the
# choice's, as the database requires), correctness labels, problem flag,
# and whether a later revision superseded it.
STRENGTH = {"1": [1, 2, 3], "2": [-1, -2, -3], "tie": [0]}
JUDGEMENTS = st.lists(
    st.tuples(
        st.sampled_from(["1", "2", "tie"]),
        st.booleans(),
        st.integers(0, 2),
        CORRECT,
        CORRECT,
        st.booleans(),
        st.booleans(),
    ),
    max_size=6,
)
# The values a vote's pass through the rule writes (orm.VOTE_FIELDS), as
# the database allows them together (a side and a provenance iff decided).
OUTCOMES = st.one_of(
    st.tuples(
        st.sampled_from([VerdictStatus.NEEDS_VOTES, VerdictStatus.CONTESTED]),
        st.just(FinalChoice.NONE),
        st.just(Provenance.NONE),
    ),
    st.tuples(
        st.just(VerdictStatus.AGREED),
        st.sampled_from([FinalChoice.RESPONSE_1, FinalChoice.RESPONSE_2]),
        st.sampled_from([Provenance.UNANIMOUS, Provenance.MAJORITY, Provenance.GOLD]),
    ),
)
VERDICT_VALUES = st.builds(
    lambda outcome, **rest: (
        dict(zip(("status", "final_choice", "provenance"), outcome, strict=True)) | rest
    ),
    OUTCOMES,
    reason=st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=40),
    escalations=st.integers(0, 5),
    escalated_by=st.integers(0, 5),
    contest_kind=st.sampled_from(list(ContestKind)),
    version=st.integers(0, 10**6),
)


def _judge(item, annotator, drawn) -> None:
    choice, graded, level, c1, c2, flagged, superseded = drawn
    assignment = Assignment.objects.create(
        item=item,
        annotator=annotator,
        status=AssignmentStatus.SUBMITTED,
        display_order="12",
        claimed_at=CLAIMED,
        lease_expires_at=CLAIMED + timedelta(minutes=30),
        submitted_at=CLAIMED,
    )
    vote = {
        "choice": choice,
        "strength": STRENGTH[choice][level % len(STRENGTH[choice])] if graded else None,
        "correct_1": c1,
        "correct_2": c2,
        "flagged_problem": flagged,
    }
    # make_judgement writes correct_1/2 as slot rows (issue 32); the tallies
    # it also counts are not what these statements read.
    if superseded:
        make_judgement(assignment, is_current=False, **vote)
        make_judgement(assignment, revision=2, choice=choice)
    else:
        make_judgement(assignment, **vote)


def _fields(verdict: Verdict) -> dict:
    return {f.attname: getattr(verdict, f.attname) for f in Verdict._meta.concrete_fields}


def _sorted(votes) -> list[tuple]:
    return sorted((dataclasses.astuple(v) for v in votes), key=repr)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(items=st.lists(JUDGEMENTS, min_size=1, max_size=4), values=VERDICT_VALUES)
def test_both_modules_read_the_same_votes_and_write_the_same_verdict(items, values):
    with transaction.atomic():
        project = make_project(votes_per_item=3)
        people = [make_user() for _ in range(6)]
        made = []
        for judgements in items:
            item = make_item(project, image=None)
            for person, drawn in zip(people, judgements, strict=False):
                _judge(item, person, drawn)
            made.append(item)
        make_item(project, image=None)  # an item nobody judged: its votes stay out
        for item in made:
            orm_votes = orm.item_rule_votes(item.pk)
            assert _sorted(postgres.item_rule_votes(item.pk)) == _sorted(orm_votes)
            assert len(orm_votes) == len(item.assignments.all())
        assert orm.locked_verdict(made[0].pk) is None  # (no verdict yet)
        assert postgres.locked_verdict(made[0].pk) is None
        verdict = Verdict.objects.create(item=made[0], project=project)
        for name, value in values.items():
            setattr(verdict, name, value)
        orm.save_after_vote(verdict)
        read = [module.locked_verdict(made[0].pk) for module in (orm, postgres)]
        assert _fields(read[0]) == _fields(read[1]) == _fields(verdict)
        rows = []
        for module in (orm, postgres):
            before = timezone.now()
            for name, value in values.items():
                setattr(verdict, name, value)
            module.save_after_vote(verdict)
            row = Verdict.objects.values().get(pk=verdict.pk)
            assert before <= row.pop("updated_at") <= timezone.now()
            assert verdict.updated_at >= before  # the instance has it too, as save() gives it
            rows.append(row)
            Verdict.objects.filter(pk=verdict.pk).update(reason="reset", version=0)
        assert rows[0] == rows[1]
        assert {k: rows[0][k] for k in values} == values
        transaction.set_rollback(True)


def played(statements, steps, seed: int, world) -> tuple[list, dict]:
    """The loop's answers and database after `steps` with the verdict's
    `statements` module (the loop's own raw statements both times), rolled
    back afterwards."""
    project, people = world
    with transaction.atomic():
        with (
            mock.patch.object(service, "_statements", lambda: statements),
            mock.patch.object(loop_service, "_statements", lambda: loop_postgres),
            mock.patch.object(loop_service, "_coin", random.Random(seed)),
        ):
            answers = run(project, people, steps)
        state = database(project)
        transaction.set_rollback(True)
    return answers, state


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=STEPS, seed=st.integers(0, 2**16))
def test_votes_through_either_module_leave_the_same_verdicts(steps, seed):
    with transaction.atomic():
        world = make_world()
        (orm_answers, orm_state), (pg_answers, pg_state) = (
            played(orm, steps, seed, world),
            played(postgres, steps, seed, world),
        )
        transaction.set_rollback(True)
    assert pg_answers == orm_answers
    assert pg_state == orm_state


def test_a_vote_sequence_moves_verdicts_through_both_modules():
    """A fixed sequence in which items complete, so both modules read votes
    and save verdicts (whatever Hypothesis draws above)."""
    good = ("1", True, "yes", "no", "", (False, ""))
    other = ("2", True, "no", "yes", "Why not.", (False, ""))
    steps = [
        ("claim", 0),
        ("claim", 1),
        ("submit_next", 0, 0, good),
        ("submit_next", 1, 0, other),  # a split: escalated or contested
        ("submit_next", 0, 1, good),
        ("submit_next", 1, 1, good),
        ("claim", 2),
        ("submit_next", 2, 0, good),
        ("submit_next", 2, 1, good),
    ]
    calls = {orm: [], postgres: []}
    with transaction.atomic():
        world = make_world()
        results = []
        for module in (orm, postgres):
            with (
                mock.patch.object(module, "item_rule_votes", wraps=module.item_rule_votes) as read,
                mock.patch.object(module, "save_after_vote", wraps=module.save_after_vote) as save,
            ):
                results.append(played(module, steps, 1, world))
                calls[module] = [read.call_count, save.call_count]
        transaction.set_rollback(True)
    assert results[0] == results[1]
    assert calls[orm] == calls[postgres]
    assert all(n > 0 for n in calls[orm]), calls
    assert any(a["status"] != "needs_votes" for a in results[0][1]["verdicts"].values())
