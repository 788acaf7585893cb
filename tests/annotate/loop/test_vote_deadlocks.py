"""Two votes' transactions that deadlock: PostgreSQL ends one of them, and
the vote runs again (annotate.loop.retries) instead of answering HTTP 500."""

import threading

import pytest
from django.db import DatabaseError, connection, transaction
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate import signals
from annotate.loop import retries
from annotate.loop.service import claim_next_item
from annotate.models import Assignment, AssignmentStatus, Item, Judgement, Membership
from curation.models import Verdict
from tests.conftest import _postgres_url
from tests.factories import make_item, make_member, make_project

NOT_ON_SQLITE = (
    "a deadlock needs two transactions holding row locks at once: SQLite runs one "
    "writing transaction at a time (BEGIN IMMEDIATE), so two votes never wait on each other"
)
VOTE = {"choice": "left", "correct_left": "yes", "correct_right": "no"}


def crossed_votes(attempts: int):
    """Two annotators vote at once through the API (?next=true), each on the
    item it holds. On each vote's first attempt, once both votes have
    written their item, the vote's transaction also locks the other vote's
    item (a receiver of judgement_recorded, where curation's receivers take
    their rows): the two wait on each other, and PostgreSQL ends one of
    them (deadlock detected). Returns (status codes, first attempts per
    assignment, attempts per assignment)."""
    # One vote per item: the two annotators hold two different items.
    project = make_project(votes_per_item=1)
    items = [make_item(project) for _ in range(6)]
    Verdict.objects.bulk_create([Verdict(item=i, project=project) for i in items])
    users = [make_member(project) for _ in range(2)]
    held = {u.pk: claim_next_item(project=project, annotator=u) for u in users}
    assert held[users[0].pk].item_id != held[users[1].pk].item_id
    other_item = {
        held[a.pk].pk: held[b.pk].item_id for a, b in ((users[0], users[1]), (users[1], users[0]))
    }
    both_voted = threading.Barrier(2, timeout=20)
    attempts_seen: dict[int, int] = {}

    def cross(sender, *, judgement, **kwargs):
        assignment_id = judgement.assignment_id
        attempts_seen[assignment_id] = attempts_seen.get(assignment_id, 0) + 1
        if attempts_seen[assignment_id] == 1:
            both_voted.wait()  # both transactions hold their item now
            list(Item.objects.select_for_update().filter(pk=other_item[assignment_id]))

    statuses: dict[int, int] = {}

    def vote(user):
        client = APIClient(raise_request_exception=False)
        client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get(user=user).key}")
        try:
            a = held[user.pk]
            url = f"/api/v1/assignments/{a.pk}/judgement/?next=true"
            statuses[a.pk] = client.post(url, VOTE, format="json").status_code
        finally:
            connection.close()

    for user in users:
        Token.objects.create(user=user)
    signals.judgement_recorded.connect(cross, dispatch_uid="test-crossed-votes")
    original = retries.ATTEMPTS
    retries.ATTEMPTS = attempts
    try:
        threads = [threading.Thread(target=vote, args=(u,)) for u in users]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
    finally:
        retries.ATTEMPTS = original
        signals.judgement_recorded.disconnect(dispatch_uid="test-crossed-votes")
    return statuses, held, attempts_seen


pg_only = pytest.mark.skipif(not _postgres_url(), reason=NOT_ON_SQLITE)


@pg_only
@pytest.mark.django_db(transaction=True)
def test_two_votes_that_deadlock_are_both_stored_and_answered():
    statuses, held, attempts = crossed_votes(retries.ATTEMPTS)
    assert sorted(statuses.values()) == [201, 201], statuses
    # One of the two lost the deadlock and ran again.
    assert sorted(attempts.values()) == [1, 2], attempts
    for assignment in held.values():
        stored = Judgement.objects.filter(assignment_id=assignment.pk)
        assert stored.count() == 1
        assert Assignment.objects.get(pk=assignment.pk).status == AssignmentStatus.SUBMITTED
        item = Item.objects.get(pk=assignment.item_id)
        assert item.votes_1 + item.votes_2 == 1  # "left", either response as displayed
    # Each vote counted once in its annotator's tally, and each got its next lease.
    assert list(Membership.objects.values_list("judged", flat=True)) == [1, 1]
    assert Assignment.objects.filter(status=AssignmentStatus.OPEN).count() == 2


@pg_only
@pytest.mark.django_db(transaction=True)
def test_without_the_retry_the_same_deadlock_drops_a_vote():
    """The scene above does deadlock: with one attempt, one vote is a 500 and
    is not stored."""
    statuses, _, _ = crossed_votes(1)
    assert sorted(statuses.values()) == [201, 500], statuses
    assert Judgement.objects.count() == 1


class _Driver(Exception):
    def __init__(self, sqlstate):
        self.sqlstate = sqlstate


def _lost(sqlstate: str) -> DatabaseError:
    try:
        raise DatabaseError("lost") from _Driver(sqlstate)
    except DatabaseError as exc:
        return exc


@pytest.mark.parametrize("sqlstate", ["40P01", "40001"])
def test_a_transaction_lost_to_a_deadlock_runs_again_a_bounded_number_of_times(sqlstate):
    calls = []

    def work():
        calls.append(1)
        if len(calls) < retries.ATTEMPTS:
            raise _lost(sqlstate)
        return "stored"

    assert retries.run_again_if_lost(work) == "stored"
    assert len(calls) == retries.ATTEMPTS

    def always():
        calls.append(1)
        raise _lost(sqlstate)

    calls.clear()
    with pytest.raises(DatabaseError):
        retries.run_again_if_lost(always)
    assert len(calls) == retries.ATTEMPTS


def test_other_errors_and_nested_transactions_are_not_run_again(db):
    calls = []

    def unique_violation():
        calls.append(1)
        raise _lost("23505")

    with pytest.raises(DatabaseError):
        retries.run_again_if_lost(unique_violation)
    assert len(calls) == 1

    def deadlock():
        calls.append(1)
        raise _lost("40P01")

    calls.clear()
    with transaction.atomic(), pytest.raises(DatabaseError):
        # Inside a caller's transaction the loss is the caller's to handle.
        retries.run_again_if_lost(deadlock)
    assert len(calls) == 1
