import threading
from collections import Counter
from datetime import timedelta

import pytest
from django.db import close_old_connections, connection
from django.utils import timezone

from annotate.loop.service import (
    Vote,
    claim_next_item,
    expire_stale_leases,
    skip_item,
    submit_judgement,
)
from annotate.models import Assignment, AssignmentStatus, Item, Membership
from tests.conftest import on_postgres, requires_postgres
from tests.factories import make_item, make_member, make_project

pytestmark = pytest.mark.django_db


def vote(choice="1"):
    # vqa is a correctness domain, so both correctness labels are required
    return Vote(choice=choice, correct_1="yes", correct_2="no", confidence=2)


def test_claim_gives_an_item_and_counts_it_live():
    project = make_project(votes_per_item=2)
    item = make_item(project)
    user = make_member(project)
    assignment = claim_next_item(project=project, annotator=user)
    assert assignment.item == item
    assert assignment.status == AssignmentStatus.OPEN
    item.refresh_from_db()
    assert item.live_assignments == 1


def test_claim_resumes_the_open_assignment_instead_of_taking_another():
    project = make_project()
    make_item(project)
    make_item(project)
    user = make_member(project)
    first = claim_next_item(project=project, annotator=user)
    again = claim_next_item(project=project, annotator=user)
    assert again.pk == first.pk
    assert Assignment.objects.filter(annotator=user).count() == 1


def test_item_is_never_given_twice_to_the_same_annotator():
    project = make_project(votes_per_item=3)
    make_item(project)
    user = make_member(project)
    a = claim_next_item(project=project, annotator=user)
    submit_judgement(assignment_id=a.pk, annotator=user, vote=vote())
    assert claim_next_item(project=project, annotator=user) is None


def test_overlap_never_exceeds_votes_needed():
    project = make_project(votes_per_item=2)
    item = make_item(project)
    users = [make_member(project) for _ in range(3)]
    claims = [claim_next_item(project=project, annotator=u) for u in users]
    assert claims[0] is not None and claims[1] is not None
    assert claims[2] is None
    item.refresh_from_db()
    assert item.live_assignments == 2


def test_items_closest_to_completion_come_first():
    project = make_project(votes_per_item=3)
    fresh = make_item(project)
    started = make_item(project)
    for _ in range(2):
        u = make_member(project)
        a = claim_next_item(project=project, annotator=u)
        # make sure the first two claims went to one item by pinning order
        if a.item_id != started.pk:
            Item.objects.filter(pk=a.item_id).update(live_assignments=0)
            Item.objects.filter(pk=started.pk).update(live_assignments=2)
            a.delete()
            break
    Item.objects.filter(pk=started.pk).update(live_assignments=2)
    Item.objects.filter(pk=fresh.pk).update(live_assignments=0)
    nxt = claim_next_item(project=project, annotator=make_member(project))
    assert nxt.item_id == started.pk


def test_equal_items_follow_the_seeded_shuffle_not_insertion_order():
    project = make_project(votes_per_item=1, seed=7)
    items = [make_item(project, shuffle_key=key) for key in (50, 10, 30)]
    order = []
    for _ in items:
        a = claim_next_item(project=project, annotator=make_member(project))
        order.append(a.item_id)
    assert order == [items[1].pk, items[2].pk, items[0].pk]


def test_expired_lease_returns_the_item_to_the_pool():
    project = make_project(votes_per_item=1, lease_minutes=30)
    item = make_item(project)
    slow = make_member(project)
    a = claim_next_item(project=project, annotator=slow)
    later = timezone.now() + timedelta(minutes=31)
    other = claim_next_item(project=project, annotator=make_member(project), now=later)
    assert other is not None and other.item_id == item.pk
    a.refresh_from_db()
    assert a.status == AssignmentStatus.EXPIRED
    item.refresh_from_db()
    assert item.live_assignments == 1


def test_lease_not_yet_expired_keeps_the_item():
    project = make_project(votes_per_item=1, lease_minutes=30)
    make_item(project)
    claim_next_item(project=project, annotator=make_member(project))
    soon = timezone.now() + timedelta(minutes=29)
    assert expire_stale_leases(project=project, now=soon) == 0
    assert claim_next_item(project=project, annotator=make_member(project), now=soon) is None


def test_skipped_item_returns_to_pool_and_is_never_offered_to_skipper_again():
    project = make_project(votes_per_item=1)
    item = make_item(project)
    skipper = make_member(project)
    a = claim_next_item(project=project, annotator=skipper)
    skip_item(assignment_id=a.pk, annotator=skipper, reason="outside my expertise")
    item.refresh_from_db()
    assert item.live_assignments == 0
    assert claim_next_item(project=project, annotator=skipper) is None
    assert claim_next_item(project=project, annotator=make_member(project)).item_id == item.pk


def test_skip_requires_a_reason():
    from annotate.loop.service import JudgementInvalid

    project = make_project()
    make_item(project)
    user = make_member(project)
    a = claim_next_item(project=project, annotator=user)
    with pytest.raises(JudgementInvalid):
        skip_item(assignment_id=a.pk, annotator=user, reason="  ")


def test_display_order_is_randomised_per_assignment():
    project = make_project(votes_per_item=1)
    for _ in range(40):
        make_item(project)
    swapped = Counter()
    for _ in range(40):
        user = make_member(project)
        a = claim_next_item(project=project, annotator=user)
        swapped[a.shown_swapped] += 1
        submit_judgement(assignment_id=a.pk, annotator=user, vote=vote())
    assert swapped[True] > 5 and swapped[False] > 5


def test_claim_runs_a_constant_number_of_queries(django_assert_max_num_queries):
    project = make_project(votes_per_item=3)
    for _ in range(30):
        make_item(project)
    user = make_member(project)
    # PostgreSQL checks the membership, looks at the open leases (resume?
    # expire?), picks, counts, leases and returns what the compare page shows,
    # with the annotator's count, in one statement; SQLite asks the same
    # questions (membership, leases, the item to take with its domain) in
    # one SELECT, then counts the lease and inserts it (annotate.loop.sqlite).
    # Both add the SAVEPOINT/RELEASE pair the test's own transaction brings
    # (a claim inside a transaction runs in a savepoint; alone, PostgreSQL's
    # is one statement: the test below).
    with django_assert_max_num_queries(3 if on_postgres() else 5):
        assignment = claim_next_item(project=project, annotator=user)
    with django_assert_max_num_queries(0):
        assignment.item.domain, assignment.item.project  # noqa: B018


def test_claim_with_a_stale_lease_in_the_project_expires_it_first():
    project = make_project(votes_per_item=1, lease_minutes=30)
    item = make_item(project)
    slow = make_member(project)
    stale = claim_next_item(project=project, annotator=slow)
    later = timezone.now() + timedelta(minutes=31)
    # The slow annotator's own lease ran out too: they get nothing back, and
    # the item they held is not offered to them again.
    assert claim_next_item(project=project, annotator=slow, now=later) is None
    stale.refresh_from_db()
    assert stale.status == AssignmentStatus.EXPIRED
    item.refresh_from_db()
    assert item.live_assignments == 0


def test_an_item_someone_abandoned_goes_to_the_next_claimer():
    # The only item's only slot is held by a lease that ran out: the claim
    # returns it to the pool and hands it out in the same call.
    project = make_project(votes_per_item=1, lease_minutes=30)
    item = make_item(project)
    slow, next_one = make_member(project), make_member(project)
    stale = claim_next_item(project=project, annotator=slow)
    later = timezone.now() + timedelta(minutes=31)
    taken = claim_next_item(project=project, annotator=next_one, now=later)
    assert taken is not None and taken.item_id == item.pk
    stale.refresh_from_db()
    assert stale.status == AssignmentStatus.EXPIRED
    item.refresh_from_db()
    assert item.live_assignments == 1


def test_resumed_lease_comes_back_with_what_the_compare_page_shows(
    django_assert_max_num_queries,
):
    project = make_project(votes_per_item=2)
    make_item(project)
    make_item(project)
    user = make_member(project)
    first = claim_next_item(project=project, annotator=user)
    submit_judgement(assignment_id=first.pk, annotator=user, vote=vote())
    second = claim_next_item(project=project, annotator=user)
    with django_assert_max_num_queries(3 if on_postgres() else 4):  # a SAVEPOINT pair too
        again = claim_next_item(project=project, annotator=user)
    assert again.pk == second.pk
    stored = Assignment.objects.get(pk=second.pk)
    assert (again.shown_swapped, again.claimed_at, again.lease_expires_at) == (
        stored.shown_swapped,
        stored.claimed_at,
        stored.lease_expires_at,
    )
    if on_postgres():
        # The item and domain come along.
        with django_assert_max_num_queries(0):
            assert again.item.domain.slug
            assert again.item.project == project
        assert again.item.live_assignments == 1


def test_membership_created_after_judging_counts_the_earlier_judgements():
    project = make_project(votes_per_item=1)
    make_item(project)
    user = make_member(project)
    a = claim_next_item(project=project, annotator=user)
    submit_judgement(assignment_id=a.pk, annotator=user, vote=vote())
    assert Membership.objects.get(user=user).judged == 1
    Membership.objects.filter(user=user).delete()
    # Re-added (say, after a role change by delete and add): the count is kept.
    assert Membership.objects.create(project=project, user=user).judged == 1


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_claimers_never_exceed_overlap_or_repeat_an_item():
    """20 claimers on separate PostgreSQL connections, each claiming and
    submitting until nothing is left."""
    assert connection.vendor == "postgresql"
    project = make_project(votes_per_item=3)
    for _ in range(40):
        make_item(project)
    users = [make_member(project) for _ in range(20)]
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(users))

    def work(user):
        try:
            barrier.wait()
            while True:
                a = claim_next_item(project=project, annotator=user)
                if a is None:
                    return
                submit_judgement(assignment_id=a.pk, annotator=user, vote=vote())
        except BaseException as exc:  # surface in the main thread
            errors.append(exc)
        finally:
            close_old_connections()
            connection.close()

    threads = [threading.Thread(target=work, args=(u,)) for u in users]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    per_item = Counter(
        Assignment.objects.filter(status=AssignmentStatus.SUBMITTED).values_list(
            "item_id", flat=True
        )
    )
    assert set(per_item.values()) == {3}
    assert len(per_item) == 40
    pairs = list(Assignment.objects.values_list("item_id", "annotator_id"))
    assert len(pairs) == len(set(pairs))
    for item in Item.objects.all():
        assert item.live_assignments == 3
        assert item.votes_1 == 3


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_a_claim_outside_a_transaction_is_one_statement_on_postgresql(
    django_assert_num_queries,
):
    project = make_project(votes_per_item=3)
    make_item(project)
    user = make_member(project)
    with django_assert_num_queries(1):
        assert claim_next_item(project=project, annotator=user) is not None
    with django_assert_num_queries(1):  # resumed
        assert claim_next_item(project=project, annotator=user) is not None


def run_together(n: int, fn) -> tuple[list, list[BaseException]]:
    """fn() on n threads (each its own connection) released at once: what
    they returned, and what they raised."""
    barrier, results, errors = threading.Barrier(n), [], []

    def work():
        try:
            barrier.wait()
            results.append(fn())
        except BaseException as exc:  # surface in the main thread
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=work) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return results, errors


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_one_annotators_claims_racing_on_several_connections_all_get_a_lease():
    """Two tabs, or the page's claim ahead beside a submit's claim: one
    person's claims race. A claim whose snapshot predates the other's
    committed lease on the same item must not fail on the one-assignment-
    per-annotator-and-item rule (it did: an IntegrityError, a 500 on submit)."""
    assert connection.vendor == "postgresql"
    project = make_project(votes_per_item=3)  # the item still needs votes after a lease
    for _ in range(100):  # 20 rounds of up to 4 leases
        make_item(project)
    user = make_member(project)
    for _ in range(20):
        got, errors = run_together(4, lambda: claim_next_item(project=project, annotator=user))
        assert not errors, errors
        assert len(got) == 4 and None not in got, got
        for pk in {a.pk for a in got}:
            submit_judgement(assignment_id=pk, annotator=user, vote=vote())
    pairs = list(Assignment.objects.values_list("item_id", "annotator_id"))
    assert len(pairs) == len(set(pairs))
