"""Both statement paths of the annotation loop leave the same database.

annotate.loop.service runs the claim, the vote and the reads of one's own
assignment as raw SQL on PostgreSQL (annotate.loop.postgres) and on SQLite
(annotate.loop.sqlite), and as plain ORM elsewhere (annotate.loop.orm, the
reference). Here the database's raw path and the ORM's run on that
database (PostgreSQL or SQLite), from the same starting state, through the same random sequence
of claims, votes (valid or not, on time or after the lease ran out),
submit-and-next, skips, revisions, lease expiries and members leaving and
coming back, with the same clock and the same coin for the display order;
every call answers the same and the assignments, judgements, item tallies,
membership counters, verdicts and audit events come out equal; for pair
projects and for best-of-N and ranking ones (issue 33: their votes counted
in votes_ranked).
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from unittest import mock

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotate.loop import leases, orm, postgres, rules, service, sqlite
from annotate.loop.rules import AnnotationError, Vote, vote_fields
from annotate.models import (
    Assignment,
    AssignmentStatus,
    Item,
    Judgement,
    JudgementSlot,
    Membership,
    Task,
    text_part,
    write_item_content,
)
from curation.models import AuditEvent, Verdict
from tests.conftest import on_postgres
from tests.factories import make_item, make_member, make_project, make_user

pytestmark = pytest.mark.django_db

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
ANNOTATORS = 4  # members (the last one a curator)
PEOPLE = ANNOTATORS + 2  # and a superuser who is no member, and a stranger

# A vote as drawn: the choice, whether to give the correctness labels a
# correctness domain asks for (and to give them where none are asked: both
# refused), which labels, a rationale, a problem flag with or without reason.
VOTES = st.tuples(
    st.sampled_from(["1", "2", "tie"]),
    st.booleans(),
    st.sampled_from(["yes", "no", "unsure"]),
    st.sampled_from(["yes", "no", "unsure"]),
    st.sampled_from(["", "Both fine."]),
    st.sampled_from([(False, ""), (True, "Blurry image."), (True, "")]),
)
WHO = st.integers(0, PEOPLE - 1)
WHICH = st.integers(0, 7)  # one of the person's assignments, by position
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("claim"), WHO),
        st.tuples(st.just("claim_in"), WHO, st.sampled_from(["a", "b", "none"])),
        st.tuples(st.just("submit"), WHO, WHICH, VOTES),
        st.tuples(st.just("submit_next"), WHO, WHICH, VOTES),
        st.tuples(st.just("skip"), WHO, WHICH),
        st.tuples(st.just("revise"), WHO, WHICH, VOTES),
        st.tuples(st.just("wait"), st.sampled_from([1, 10, 31, 61])),
        st.tuples(st.just("expire")),
        st.tuples(st.just("leave_or_return"), st.integers(0, ANNOTATORS - 1)),
    ),
    min_size=1,
    max_size=40,
)


def make_world(task: str = Task.PAIRWISE):
    project = make_project(
        slug="paths", votes_per_item=2, escalation_votes=1, lease_minutes=30, task=task
    )
    domains = [project.domains.get(slug="general_preference"), project.domains.get(slug="vqa")]
    # Items needing different numbers of votes (some escalated), so the claim
    # order (fewest missing votes, then the shuffle) matters from the start.
    for n, votes_needed in enumerate([4, 2, 3, 2, 3, 2]):
        item = make_item(
            project,
            domain=domains[n % 2],
            external_id=f"item-{n}",
            shuffle_key=n * 7 % 5,
            votes_needed=votes_needed,
            # Two groups (issue 34) and an item of its own: a submit's next
            # claim prefers the group of the item just judged.
            group_key=["", "a", "b", "a", "b", "a"][n],
        )
        if task != Task.PAIRWISE:  # three responses
            write_item_content(
                item, [text_part("Which?")], [[text_part(f"R{k}")] for k in range(1, 4)]
            )
    people = [
        make_member(project, make_user(f"person-{n}"), role="curator" if n == 3 else "annotator")
        for n in range(ANNOTATORS)
    ]
    people.append(make_user(f"person-{ANNOTATORS}", is_superuser=True))
    people.append(make_user(f"person-{ANNOTATORS + 1}"))
    return project, people


# An N-slot vote drawn from a pair's draw: the choice picks the ranking or
# the pick (its "tie" a tied top, or "none is acceptable").
N_SLOT_ANSWERS = {
    Task.RANKING: {"1": ("", (1, 2, 3)), "2": ("", (2, 1, 3)), "tie": ("", (1, 1, 3))},
    Task.BEST_OF_N: {"1": ("1", ()), "2": ("3", ()), "tie": ("none", ())},
}


def vote_for(drawn, item: Item) -> Vote:
    choice, labels_as_asked, correct_1, correct_2, rationale, (flagged, reason) = drawn
    give_labels = labels_as_asked == item.domain.is_correctness
    task = item.project.task
    if task != Task.PAIRWISE:
        picked, ranks = N_SLOT_ANSWERS[task][choice]
        return Vote(
            task=task,
            choice=picked,
            ranks=ranks,
            slot_correct=(correct_1, correct_2, correct_1) if give_labels else (),
            confidence=2,
            rationale=rationale,
            active_seconds=12.5,
            flagged_problem=flagged,
            problem_reason=reason,
        )
    return Vote(
        choice=choice,
        correct_1=correct_1 if give_labels else "",
        correct_2=correct_2 if give_labels else "",
        confidence=2,
        rationale=rationale,
        active_seconds=12.5,
        flagged_problem=flagged,
        problem_reason=reason,
    )


def nth_assignment(person, which: int) -> Assignment | None:
    """One of the person's assignments, in an order both runs share."""
    theirs = list(
        Assignment.objects.filter(annotator=person)
        .select_related("item__domain")
        .order_by("claimed_at", "item__external_id")
    )
    return theirs[which % len(theirs)] if theirs else None


def run(project, people, steps) -> list:
    """Play `steps`; what each call answered (or raised)."""
    now = START
    answers: list = []
    for step in steps:
        kind, args = step[0], step[1:]
        try:
            if kind in ("claim", "claim_in"):
                group = args[1] if kind == "claim_in" else ""
                a = service.claim_next_item(
                    project=project, annotator=people[args[0]], now=now, group=group
                )
                answers.append(a and (a.item.external_id, a.display_order, a.lease_expires_at))
            elif kind in ("submit", "submit_next"):
                person, which, drawn = people[args[0]], args[1], args[2]
                target = nth_assignment(person, which)
                if target is None:
                    answers.append(None)
                    continue

                vote = vote_for(drawn, target.item)
                if kind == "submit":
                    j = service.submit_judgement(
                        assignment_id=target.pk, annotator=person, vote=vote, now=now
                    )
                    following = None
                else:
                    j, following = service.submit_and_claim_next(
                        assignment_id=target.pk, annotator=person, vote=vote, now=now
                    )
                answers.append(
                    (
                        j.choice,
                        j.revision,
                        j.already_submitted,
                        following and following.item.external_id,
                    )
                )
            elif kind == "skip":
                target = nth_assignment(people[args[0]], args[1])
                if target is None:
                    answers.append(None)
                    continue
                a = service.skip_item(
                    assignment_id=target.pk, annotator=people[args[0]], reason="Unsure."
                )
                answers.append(a.status)
            elif kind == "revise":
                person, which, drawn = people[args[0]], args[1], args[2]
                target = nth_assignment(person, which)
                if target is None:
                    answers.append(None)
                    continue
                j = service.revise_judgement(
                    assignment_id=target.pk, annotator=person, vote=vote_for(drawn, target.item)
                )
                answers.append((j.choice, j.revision))
            elif kind == "wait":
                now += timedelta(minutes=args[0])
                answers.append(now)
            elif kind == "expire":
                answers.append(leases.expire_stale_leases(project=project, now=now))
            elif kind == "leave_or_return":
                membership = Membership.objects.get(project=project, user=people[args[0]])
                # As a deactivation does (annotate.setup.team): leases go back.
                Membership.objects.filter(pk=membership.pk).update(
                    is_active=not membership.is_active
                )
                if membership.is_active:
                    leases.return_leases(project_id=project.pk, user_id=membership.user_id)
                answers.append(not membership.is_active)
        except (AnnotationError, Assignment.DoesNotExist) as exc:
            answers.append(f"{type(exc).__name__}: {exc}")
    return answers


def database(project) -> dict:
    """The rows the loop writes, keyed by what both runs share (item external
    IDs, usernames), without row ids or wall-clock stamps."""
    item_key = dict(Item.objects.filter(project=project).values_list("pk", "external_id"))

    def rows(values, key, *, skip=()) -> dict:
        out = {}
        for row in values:
            for name in ("id", "created_at", "updated_at", *skip):
                row.pop(name, None)
            if "item_id" in row:
                row["item_id"] = item_key.get(row["item_id"])
            out[key(row)] = row
        return out

    assignments = Assignment.objects.filter(item__project=project).values(
        "annotator__username", *_fields(Assignment)
    )
    judgements = Judgement.objects.filter(assignment__item__project=project).values(
        "assignment__item__external_id", "assignment__annotator__username", *_fields(Judgement)
    )
    return {
        "assignments": rows(
            assignments,
            lambda r: (r["item_id"], r["annotator__username"]),
            skip=("annotator_id",),
        ),
        "judgements": rows(
            judgements,
            lambda r: (
                r["assignment__item__external_id"],
                r["assignment__annotator__username"],
                r["revision"],
            ),
            skip=("assignment_id",),
        ),
        # Each judgement's per-slot answers (issue 32), by judgement and slot.
        "slots": rows(
            JudgementSlot.objects.filter(judgement__assignment__item__project=project).values(
                "judgement__assignment__item__external_id",
                "judgement__assignment__annotator__username",
                "judgement__revision",
                *_fields(JudgementSlot),
            ),
            lambda r: (
                r["judgement__assignment__item__external_id"],
                r["judgement__assignment__annotator__username"],
                r["judgement__revision"],
                r["slot"],
            ),
            skip=("judgement_id",),
        ),
        "items": rows(Item.objects.filter(project=project).values(), lambda r: r["external_id"]),
        "memberships": dict(
            Membership.objects.filter(project=project).values_list("user__username", "judged")
        ),
        "verdicts": rows(Verdict.objects.filter(project=project).values(), lambda r: r["item_id"]),
        "audit": sorted(
            (item_key.get(e.item_id), e.action, repr(e.before), repr(e.after), e.reason)
            for e in AuditEvent.objects.filter(project=project)
        ),
    }


def _fields(model) -> list[str]:
    return [f.attname for f in model._meta.concrete_fields]


def played(statements, steps, seed: int, world) -> tuple[list, dict]:
    """The answers and the database after `steps` with `statements` (orm or
    postgres), from `world`, everything they wrote rolled back afterwards."""
    project, people = world
    with transaction.atomic():
        with (
            mock.patch.object(service, "_statements", lambda: statements),
            mock.patch.object(service, "_coin", random.Random(seed)),
        ):
            answers = run(project, people, steps)
        state = database(project)
        transaction.set_rollback(True)
    return answers, state


def raw_path():
    """The raw statements of the database the tests run on."""
    return postgres if on_postgres() else sqlite


def both_paths(
    steps, seed: int, task: str = Task.PAIRWISE
) -> tuple[tuple[list, dict], tuple[list, dict]]:
    """played() with the ORM's statements, then the database's raw ones
    (PostgreSQL's or SQLite's), from one world (of `task`'s items)."""
    with transaction.atomic():
        world = make_world(task)
        results = played(orm, steps, seed, world), played(raw_path(), steps, seed, world)
        transaction.set_rollback(True)
    return results


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=STEPS, seed=st.integers(0, 2**16))
def test_orm_and_raw_statements_leave_the_same_database(steps, seed):
    (orm_answers, orm_state), (pg_answers, pg_state) = both_paths(steps, seed)
    assert pg_answers == orm_answers
    assert pg_state == orm_state


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    steps=STEPS,
    seed=st.integers(0, 2**16),
    task=st.sampled_from([Task.RANKING, Task.BEST_OF_N]),
)
def test_orm_and_raw_statements_leave_the_same_database_for_n_slot_votes(steps, seed, task):
    """The same for best-of-N picks and rankings (issue 33): each counted in
    its item's votes_ranked by the vote's own statement, revisions moving
    no count."""
    (orm_answers, orm_state), (raw_answers, raw_state) = both_paths(steps, seed, task)
    assert raw_answers == orm_answers
    assert raw_state == orm_state


def test_a_scripted_n_slot_sequence_counts_every_vote_once():
    good = ("1", True, "yes", "no", "", (False, ""))
    other = ("2", True, "no", "yes", "", (False, ""))
    steps = [
        ("claim", 0),
        ("claim", 1),
        ("submit", 0, 0, good),
        ("revise", 0, 0, other),
        ("submit_next", 1, 0, other),
        ("claim", 2),
        ("submit", 2, 0, good),
        ("wait", 31),
        ("expire",),
    ]
    for task in (Task.RANKING, Task.BEST_OF_N):
        (orm_answers, orm_state), (raw_answers, raw_state) = both_paths(steps, 1, task)
        assert raw_answers == orm_answers
        assert raw_state == orm_state
        judged = [k for k, j in orm_state["judgements"].items() if j["is_current"]]
        counted = {key: row["votes_ranked"] for key, row in orm_state["items"].items()}
        assert sum(counted.values()) == len(judged) == 3, (counted, judged)
        for key, row in orm_state["items"].items():
            assert (row["votes_1"], row["votes_2"], row["votes_tie"]) == (0, 0, 0)
            assert row["votes_ranked"] == sum(1 for j in judged if j[0] == key)


def test_a_scripted_sequence_touches_every_kind_of_step():
    """A fixed sequence with every step kind, so the comparison above is
    known to cover claims, valid and refused votes, late votes, skips,
    revisions, expiries and a member leaving, whatever Hypothesis draws."""
    good = ("1", True, "yes", "no", "", (False, ""))
    tie = ("tie", True, "yes", "no", "", (False, ""))  # no rationale: refused
    steps = [
        ("claim", 0),
        ("claim", 1),
        ("claim", 4),  # the superuser, no member
        ("claim", 5),  # a stranger: nothing
        ("submit", 0, 0, good),
        ("submit", 0, 0, good),  # again: the stored one comes back
        ("revise", 0, 0, ("2", True, "no", "yes", "", (False, ""))),
        ("submit", 1, 0, tie),
        ("submit_next", 1, 0, ("2", True, "no", "no", "Why not.", (True, "Odd."))),
        ("revise", 0, 0, good),  # its item has all its votes now: refused
        ("skip", 1, 0),
        ("wait", 31),
        ("claim", 5),  # a stranger's claim leaves the stale lease alone
        ("claim", 2),  # the superuser's lease ran out: returned first
        ("submit", 4, 0, good),  # late, and its item still has room
        ("expire",),
        ("leave_or_return", 2),
        ("submit", 2, 0, good),  # no longer a member: not theirs
        ("leave_or_return", 2),
        ("claim", 3),
        ("submit_next", 3, 0, good),
    ]
    (orm_answers, orm_state), (pg_answers, pg_state) = both_paths(steps, seed=1)
    assert pg_answers == orm_answers
    assert pg_state == orm_state
    said = [str(a) for a in orm_answers]
    for refusal in ("JudgementInvalid", "AnnotationError", "DoesNotExist"):
        assert any(a.startswith(refusal) for a in said), (refusal, said)
    assert "skipped" in said
    assert any(key[2] == 2 for key in orm_state["judgements"])  # a revision
    assert orm_state["memberships"] == {"person-0": 1, "person-1": 1, "person-2": 0, "person-3": 1}
    assert {a["status"] for a in orm_state["assignments"].values()} == set(AssignmentStatus)


def _row(instance) -> dict:
    return {f.attname: getattr(instance, f.attname) for f in type(instance)._meta.concrete_fields}


def test_the_raw_claim_and_vote_return_every_field_of_the_rows_they_write():
    """What the raw claim and record_vote (PostgreSQL's or SQLite's) hand
    back is the row in the database, field for field (the lists come from
    the models: a new field is read back too)."""
    raw = raw_path()
    project, people = make_world()
    now = START
    leased, _ = raw.claim(
        project=project,
        annotator=people[0],
        order="21",
        now=now,
        lease_expires_at=now + timedelta(minutes=30),
        check_stale=False,
    )
    assert _row(leased) == _row(Assignment.objects.get(pk=leased.pk))
    # The item and domain it comes with are what the ORM reads (types too:
    # SQLite's raw datetimes are made aware as the ORM makes them), the
    # item's live_assignments counting this lease.
    stored = Item.objects.select_related("domain").get(pk=leased.item_id)
    assert stored.live_assignments == 1
    for got, want in ((leased.item, stored), (leased.item.domain, stored.domain)):
        shown = [f.attname for f in type(got)._meta.concrete_fields]
        shown = [name for name in shown if name not in got.get_deferred_fields()]
        assert {n: (type(getattr(got, n)), getattr(got, n)) for n in shown} == {
            n: (type(getattr(want, n)), getattr(want, n)) for n in shown
        }
    resumed, _ = raw.claim(
        project=project,
        annotator=people[0],
        order="12",
        now=now + timedelta(minutes=1),
        lease_expires_at=now + timedelta(minutes=31),
        check_stale=False,
    )
    assert resumed.pk == leased.pk
    assert _row(resumed) == _row(Assignment.objects.get(pk=leased.pk))
    with transaction.atomic():
        locked = raw.locked_assignment(assignment_id=leased.pk, annotator=people[0])
        vote = vote_for(("1", True, "yes", "no", "", (False, "")), locked.item)
        judgement = raw.record_vote(
            assignment=locked,
            annotator=people[0],
            fields={"assignment_id": leased.pk, **vote_fields(vote)},
            vote=vote,
            now=now,
        )
    assert _row(judgement) == _row(Judgement.objects.get(pk=judgement.pk))
    assert judgement.created_at is not None  # auto_now_add, as create() gives it
    # Its per-slot answers went in with it (issue 32).
    written = JudgementSlot.objects.filter(judgement_id=judgement.pk).order_by("slot")
    assert [tuple(r) for r in written.values_list("slot", "correctness", "grade", "rank")] == (
        rules.slot_answers(vote)
    )
