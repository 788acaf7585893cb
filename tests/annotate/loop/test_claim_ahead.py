"""The item the compare page keeps ready (annotate.loop.service.claim_ahead):
a lease like any other, at most one ahead of the item on screen."""

import threading
from datetime import timedelta
from functools import partial

import pytest
from django.db import close_old_connections, connection, transaction
from django.urls import reverse
from django.utils import timezone

from annotate.loop.service import (
    Vote,
    claim_ahead,
    claim_next_item,
    expire_stale_leases,
    submit_and_claim_next,
    submit_judgement,
)
from annotate.models import Assignment, AssignmentStatus, Item
from tests.annotate.loop.test_claim import run_together
from tests.conftest import requires_postgres
from tests.factories import make_item, make_member, make_project

pytestmark = pytest.mark.django_db


def setup(n_items=4, votes_per_item=1):
    project = make_project(votes_per_item=votes_per_item)
    items = [make_item(project) for _ in range(n_items)]
    return project, items, make_member(project)


def test_a_second_lease_at_most_and_the_next_claim_returns_it():
    project, _, user = setup()
    current = claim_next_item(project=project, annotator=user)
    ahead = claim_ahead(project=project, annotator=user, holding=current.pk)
    assert ahead is not None and ahead.item_id != current.item_id
    assert ahead.status == AssignmentStatus.OPEN and ahead.lease_expires_at > timezone.now()
    # Asked again (a reload): the same one, never a third.
    assert claim_ahead(project=project, annotator=user, holding=current.pk).pk == ahead.pk
    assert Assignment.objects.filter(annotator=user, status="open").count() == 2
    assert Item.objects.get(pk=ahead.item_id).live_assignments == 1
    # Start annotating again: the item on screen; after its vote: the one ahead.
    assert claim_next_item(project=project, annotator=user).pk == current.pk
    _, following = submit_and_claim_next(
        assignment_id=current.pk,
        annotator=user,
        vote=Vote(choice="1", correct_1="yes", correct_2="no"),
    )
    assert following.pk == ahead.pk
    # Not for an assignment that is not the annotator's open one.
    assert claim_ahead(project=project, annotator=user, holding=current.pk) is None
    other = make_member(project)
    assert claim_ahead(project=project, annotator=other, holding=ahead.pk) is None


def test_nothing_ahead_when_nothing_is_left_and_never_someone_elses_item():
    project, _, user = setup(n_items=3)
    other = make_member(project)
    theirs = claim_next_item(project=project, annotator=other)
    current = claim_next_item(project=project, annotator=user)
    ahead = claim_ahead(project=project, annotator=user, holding=current.pk)
    assert ahead.item_id not in (theirs.item_id, current.item_id)
    submit_and_claim_next(
        assignment_id=current.pk,
        annotator=user,
        vote=Vote(choice="1", correct_1="yes", correct_2="no"),
    )
    # One vote per item: every item is held or judged now.
    assert claim_ahead(project=project, annotator=user, holding=ahead.pk) is None


def test_an_expired_lease_ahead_returns_to_the_pool():
    project, _, user = setup(n_items=2)
    current = claim_next_item(project=project, annotator=user)
    ahead = claim_ahead(project=project, annotator=user, holding=current.pk)
    later = timezone.now() + timedelta(minutes=project.lease_minutes + 1)
    assert expire_stale_leases(project=project, now=later) == 2
    assert Assignment.objects.get(pk=ahead.pk).status == AssignmentStatus.EXPIRED
    assert Item.objects.get(pk=ahead.item_id).live_assignments == 0
    other = make_member(project)
    assert claim_next_item(project=project, annotator=other, now=later) is not None


def test_non_members_get_nothing_and_the_view_answers_the_fragment(client):
    project, _, user = setup()
    stranger = make_member(make_project())
    current = claim_next_item(project=project, annotator=user)
    assert claim_ahead(project=project, annotator=stranger, holding=current.pk) is None
    client.force_login(user)
    url = reverse("work_ahead", args=[project.slug])
    response = client.post(url, {"holding": current.pk}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    ahead = Assignment.objects.get(annotator=user, status="open", pk__gt=current.pk)
    assert response["X-Item-Url"] == reverse("work_item", args=[ahead.pk])
    assert response.content.decode().startswith('<div id="work"')
    assert client.post(url, {"holding": "x"}).status_code == 204
    client.force_login(stranger)
    assert client.post(url, {"holding": current.pk}).status_code == 404
    assert client.get(url).status_code == 405


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_claims_ahead_never_share_an_item():
    project, _, _ = setup(n_items=12)
    users = [make_member(project) for _ in range(6)]
    held = {u.pk: claim_next_item(project=project, annotator=u) for u in users}
    got, barrier = [], threading.Barrier(len(users))

    def work(user):
        try:
            barrier.wait()
            a = claim_ahead(project=project, annotator=user, holding=held[user.pk].pk)
            if a is not None:
                got.append(a.item_id)
        finally:
            close_old_connections()

    threads = [threading.Thread(target=work, args=(u,)) for u in users]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    leased = [a.item_id for a in held.values()] + got
    assert len(got) == 6 and len(set(leased)) == len(leased) == 12
    assert all(i.live_assignments == 1 for i in Item.objects.filter(project=project))


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_one_annotators_claims_ahead_racing_never_fail():
    """The page asks for the item to keep ready from two tabs at once (or
    beside a submit's claim): a claim ahead whose read predates the other's
    committed lease on the same item must not fail on the one-assignment-
    per-annotator-and-item rule (it did: an IntegrityError, a 500)."""
    project, _, _ = setup(n_items=80, votes_per_item=3)
    user = make_member(project)
    vote = Vote(choice="1", correct_1="yes", correct_2="no")
    for _ in range(15):
        holding = claim_next_item(project=project, annotator=user)
        _, errors = run_together(
            3, partial(claim_ahead, project=project, annotator=user, holding=holding.pk)
        )
        assert not errors, errors
        for a in Assignment.objects.filter(annotator=user, status=AssignmentStatus.OPEN):
            submit_judgement(assignment_id=a.pk, annotator=user, vote=vote)


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_a_submit_racing_the_claim_ahead_gets_the_item_kept_ready_not_the_done_page(
    monkeypatch,
):
    """The annotator votes right after the page painted, while the page's
    claim ahead leases the last item: the submit's claims skip that item
    (locked), and the claim ahead commits before the patient claim checks
    whether an item is left for them. The item is theirs now, so it comes
    back; it answered None (the done page) with it held (CI, session 15:
    "done" after 3 of 4 items)."""
    from annotate.loop import postgres

    project, _, user = setup(n_items=2)
    holding = claim_next_item(project=project, annotator=user)
    locked, commit, kept = threading.Event(), threading.Event(), []

    def page_claims_ahead():
        try:
            with transaction.atomic():  # holds the item's row lock until `commit`
                kept.append(claim_ahead(project=project, annotator=user, holding=holding.pk))
                locked.set()
                commit.wait(timeout=30)
        finally:
            connection.close()

    real_claim, claims = postgres.claim, []

    def claim(**kwargs):
        found = real_claim(**kwargs)
        claims.append(found[0])
        if len(claims) == 2:  # the patient claim, after the vote committed
            commit.set()
            ahead.join(timeout=30)
        return found

    monkeypatch.setattr(postgres, "claim", claim)
    ahead = threading.Thread(target=page_claims_ahead)
    ahead.start()
    assert locked.wait(timeout=30)
    try:
        _, following = submit_and_claim_next(
            assignment_id=holding.pk,
            annotator=user,
            vote=Vote(choice="1", correct_1="yes", correct_2="no"),
        )
    finally:
        commit.set()
        ahead.join(timeout=30)
    assert claims[:2] == [None, None]  # the race happened as described
    assert kept[0] is not None and following is not None
    assert following.pk == kept[0].pk and following.item_id != holding.item_id
