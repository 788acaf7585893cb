"""'Nothing left' is final (issue 17): on PostgreSQL the claim's SKIP LOCKED
passes over rows other transactions hold for a moment. A client that stops
when told it is done must never leave an item short of the vote it could
have given."""

import random
import threading
import time

import pytest
from django.db import close_old_connections, connection

from annotate.eligibility import collecting
from annotate.loop.service import Vote, claim_next_item, submit_and_claim_next, votes_may_come
from curation.models import Verdict, VerdictStatus
from curation.verdicts.service import stuck_items
from tests.conftest import requires_postgres
from tests.factories import make_image, make_item, make_member, make_project

pytestmark = [requires_postgres, pytest.mark.django_db(transaction=True)]


def trusting_client(project, user, seed, told_done):
    """Judges until told 'done' (no lease and nothing may come); on 'more may
    come' it asks again shortly, as the API's 202 says."""
    rng = random.Random(seed)
    assignment = claim_next_item(project=project, annotator=user)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if assignment is None:
            if not votes_may_come(project=project, annotator=user):
                told_done.append(user.pk)
                return
            time.sleep(0.02)
            assignment = claim_next_item(project=project, annotator=user)
            continue
        _, assignment = submit_and_claim_next(
            assignment_id=assignment.pk, annotator=user, vote=Vote(choice=rng.choice("12"))
        )
    raise AssertionError(f"annotator {user.pk} still working after 120 s")


@pytest.mark.parametrize("run", range(3))
def test_no_annotator_is_told_done_while_an_item_still_needs_their_vote(run):
    """Five annotators, three votes per item and two more on a split: every
    escalated item needs all five, so a client told 'done' one vote early
    leaves an item short for good."""
    assert connection.vendor == "postgresql"
    project = make_project(votes_per_item=3, escalation_votes=2)
    domain = project.domains.get(slug="general_preference")
    image = make_image()
    items = [make_item(project, domain=domain, image=image) for _ in range(40)]
    Verdict.objects.bulk_create([Verdict(item=i, project=project) for i in items])
    users = [make_member(project) for _ in range(5)]
    errors: list[BaseException] = []
    told_done: list[int] = []
    barrier = threading.Barrier(len(users))

    def work(user, seed):
        try:
            barrier.wait()
            trusting_client(project, user, seed, told_done)
        except BaseException as exc:  # surface in the main thread
            errors.append(exc)
        finally:
            close_old_connections()
            connection.close()

    threads = [threading.Thread(target=work, args=(u, 1000 * run + i)) for i, u in enumerate(users)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=150)
    assert not errors, errors
    assert sorted(told_done) == sorted(u.pk for u in users)
    # Every item is settled: nothing still collects votes, nothing is stuck.
    assert not collecting(project).exists()
    assert not list(stuck_items(project))
    statuses = set(Verdict.objects.filter(project=project).values_list("status", flat=True))
    assert statuses <= {VerdictStatus.AGREED, VerdictStatus.CONTESTED}
