"""Issue 33: a best-of-N pick or a ranking counts on its item exactly as a
pair's vote does (Item.votes_ranked, moved by the vote's own statement), so
everything that counts an item's votes sees it: the progress line and its
counters, collecting() and the done page, stuck-item detection, revision,
the curator closing an item, and the ranked verdict rule, which runs when
the item reaches its votes. The vote costs the statements a pair's costs.
Runs on SQLite and PostgreSQL (the two statement paths)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotate.eligibility import collecting
from annotate.loop import page
from annotate.loop.rules import AnnotationError, Vote
from annotate.loop.service import (
    claim_next_item,
    revise_judgement,
    submit_judgement,
    votes_may_come,
)
from annotate.models import Item, Task, text_part, write_item_content
from curation.models import Verdict, VerdictStatus
from curation.verdicts.service import stuck_items, stuck_reason
from tests.conftest import on_postgres
from tests.factories import make_item, make_member, make_project

pytestmark = pytest.mark.django_db

RANKED = [Task.RANKING, Task.BEST_OF_N]


def n_item(project, n=4):
    item = make_item(project, domain=project.domains.get(slug="general_preference"))
    write_item_content(
        item,
        [text_part("Which answer is best?")],
        [[text_part(f"Answer {k}")] for k in range(1, n + 1)],
    )
    return item


def best_first(task, best=1, n=4) -> Vote:
    """A canonical vote putting slot `best` alone on top."""
    if task == Task.BEST_OF_N:
        return Vote(task=task, choice=str(best))
    others = iter(range(2, n + 1))
    return Vote(
        task=task, choice="", ranks=tuple(1 if s == best else next(others) for s in range(1, n + 1))
    )


def vote(project, user, task, best=1):
    a = claim_next_item(project=project, annotator=user)
    assert a is not None
    return a, submit_judgement(assignment_id=a.pk, annotator=user, vote=best_first(task, best))


@pytest.mark.parametrize("task", RANKED)
def test_three_n_slot_votes_fill_an_item_like_three_pair_votes(task, client):
    project = make_project(task=task, votes_per_item=3)
    item = n_item(project)
    team = [make_member(project) for _ in range(4)]
    for k, user in enumerate(team[:3], start=1):
        assert collecting(project).filter(pk=item.pk).exists()
        a, _ = vote(project, user, task)
        assert a.item_id == item.pk
        item.refresh_from_db()
        assert (item.votes_ranked, item.n_votes) == (k, k)
        assert (item.votes_1, item.votes_2, item.votes_tie) == (0, 0, 0)
        shown = page.progress(project, user)
        assert (shown["collected"], shown["needed"]) == (k, 3)
        assert page.reference_progress(project, user)["collected"] == k
    # Full: it leaves the queue, nobody waits for it, the rule decided it.
    assert page.progress(project, team[3])["project_percent"] == 100
    assert not collecting(project).exists()
    assert not stuck_items(project).exists()
    assert not votes_may_come(project=project, annotator=team[3])
    assert claim_next_item(project=project, annotator=team[3]) is None
    verdict = Verdict.objects.get(item=item)
    assert (verdict.status, verdict.final_choice) == (VerdictStatus.AGREED, "1")
    # Revision closes with the votes every item gets, as for pairs.
    with pytest.raises(AnnotationError, match="all its votes"):
        revise_judgement(assignment_id=a.pk, annotator=team[2], vote=best_first(task, 2))
    # The done page: the fourth member is done, the project's votes all in.
    client.force_login(team[3])
    html = client.get(reverse("work_done", args=[project.slug])).content.decode()
    assert f"You are done with {project.name}" in html
    assert "Project progress: 3 of 3 votes (100.0%)" in html


@pytest.mark.parametrize("task", RANKED)
def test_a_revision_moves_no_count_while_the_item_collects(task):
    project = make_project(task=task, votes_per_item=3)
    item = n_item(project)
    user = make_member(project)
    a, _ = vote(project, user, task)
    revise_judgement(assignment_id=a.pk, annotator=user, vote=best_first(task, 3))
    item.refresh_from_db()
    assert (item.votes_ranked, item.n_votes) == (1, 1)
    assert Verdict.objects.get(item=item).status == VerdictStatus.NEEDS_VOTES


@pytest.mark.parametrize("task", RANKED)
def test_an_item_no_one_is_left_to_finish_is_stuck_with_the_votes_it_lacks(task):
    project = make_project(task=task, votes_per_item=3)
    item = n_item(project)
    for _ in range(2):
        vote(project, make_member(project), task)
    stuck = list(stuck_items(project))
    assert [s.pk for s in stuck] == [item.pk]
    assert stuck_reason(stuck[0]) == "needs 1 more vote; no annotator left who has not seen it"
    # A third member finishes it: nothing is stuck any more.
    vote(project, make_member(project), task)
    assert not stuck_items(project).exists() and not collecting(project).exists()


@pytest.mark.parametrize("task", RANKED)
def test_a_split_escalates_by_the_eligible_then_nothing_waits(task):
    """Three votes split at the top: the item asks the two members left for
    two more (collecting again), and is decided when they come."""
    project = make_project(task=task, votes_per_item=3, escalation_votes=2)
    item = n_item(project)
    team = [make_member(project) for _ in range(5)]
    for user, best in zip(team[:3], (1, 2, 3), strict=True):
        vote(project, user, task, best)
    item.refresh_from_db()
    verdict = Verdict.objects.get(item=item)
    assert (verdict.status, verdict.escalated_by, item.votes_needed) == ("needs_votes", 2, 5)
    assert collecting(project).filter(pk=item.pk).exists()
    assert page.progress(project, team[3])["collected"] == 3
    for user in team[3:]:
        vote(project, user, task, 1)
    item.refresh_from_db()
    assert item.n_votes == item.votes_needed == 5
    assert not collecting(project).exists() and not stuck_items(project).exists()
    assert Verdict.objects.get(item=item).status == VerdictStatus.CONTESTED


def test_a_split_with_no_one_left_goes_to_the_curators_at_once():
    project = make_project(task=Task.RANKING, votes_per_item=3, escalation_votes=2)
    item = n_item(project)
    for best in (1, 2, 3):
        vote(project, make_member(project), Task.RANKING, best)
    item.refresh_from_db()
    assert item.votes_needed == 3 and not collecting(project).exists()
    assert Verdict.objects.get(item=item).status == VerdictStatus.CONTESTED


def _statements_of_a_vote(project, user, vote) -> int:
    a = claim_next_item(project=project, annotator=user)
    Verdict.objects.get_or_create(item_id=a.item_id, project=project)
    with CaptureQueriesContext(connection) as queries:
        submit_judgement(assignment_id=a.pk, annotator=user, vote=vote)
    return len(queries)


@pytest.mark.parametrize("task", RANKED)
def test_an_n_slot_vote_below_its_votes_costs_what_a_pair_vote_costs(task):
    """Below the votes it needs, the rule reads nothing of a ranked item
    either: its count came back with the vote's own statement, and no final
    ranks are stored before it is agreed. PostgreSQL: the assignment lock,
    the vote's one statement (judgement, slot rows, assignment, count,
    Membership.judged), the verdict lock and the test's SAVEPOINT pair.
    SQLite: the vote's writes are four statements, and a ranking's slot
    rows one more (one executemany)."""
    pairs = make_project(votes_per_item=3)
    make_item(pairs, domain=pairs.domains.get(slug="general_preference"))
    pair = _statements_of_a_vote(pairs, make_member(pairs), Vote(choice="1"))
    assert pair == (5 if on_postgres() else 8)

    project = make_project(task=task, votes_per_item=3)
    n_item(project)
    counts = [
        _statements_of_a_vote(project, make_member(project), best_first(task)) for _ in range(2)
    ]
    slot_rows = 1 if task == Task.RANKING and not on_postgres() else 0
    assert counts == [pair + slot_rows] * 2


def test_the_completing_vote_reads_the_votes_once_whatever_came_before():
    """The vote that fills the item runs the ranked rule, which reads its
    rankings (judgements and ranks) and stores the agreed order: the same
    statements at three votes and at five."""
    counts = []
    for needed in (3, 5):
        project = make_project(task=Task.RANKING, votes_per_item=needed)
        item = n_item(project)
        for _ in range(needed - 1):
            vote(project, make_member(project), Task.RANKING)
        last = best_first(Task.RANKING)
        counts.append(_statements_of_a_vote(project, make_member(project), last))
        assert Verdict.objects.get(item=item).status == VerdictStatus.AGREED
    assert counts[0] == counts[1]


def test_closing_an_item_keeps_the_votes_counted_without_reading_them():
    from django.db import transaction

    from annotate.loop.leases import stop_collecting_votes

    project = make_project(task=Task.RANKING, votes_per_item=3)
    item = n_item(project)
    vote(project, make_member(project), Task.RANKING)
    vote(project, make_member(project), Task.RANKING)
    with transaction.atomic():
        stop_collecting_votes(item_id=item.pk)
    item = Item.objects.get(pk=item.pk)
    assert (item.votes_needed, item.live_assignments, item.n_votes) == (2, 2, 2)
    assert not collecting(project).exists()
