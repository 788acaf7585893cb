"""Best-of-N and ranking items through the verdict service (issue 33):
agreed, escalated, contested, audited, final ranks stored in canonical slot
terms; the same on SQLite and PostgreSQL (the ranked path is plain ORM)."""

import pytest

from annotate.models import Item, Membership, Task
from curation.agreement import ranking
from curation.agreement import ranking_aggregate as rka
from curation.models import AuditEvent, Verdict, VerdictRank, VerdictStatus
from curation.verdicts.service import recheck_waiting_items, update_thresholds
from tests.curation.verdicts.ranked_factories import (
    pick_vote,
    rank_vote,
    ranked_item,
    ranked_project,
)

pytestmark = pytest.mark.django_db


def ranks_of(item):
    return list(
        VerdictRank.objects.filter(verdict__item=item)
        .order_by("slot")
        .values_list("rank", flat=True)
    )


def test_a_ranking_waits_for_its_votes_then_agrees_on_the_kemeny_order():
    project = ranked_project()
    item = ranked_item(project)
    votes = [(2, 1, 3, 4), (2, 1, 4, 3), (3, 1, 2, 4)]
    rank_vote(item, votes[0])
    rank_vote(item, votes[1])
    assert Verdict.objects.get(item=item).status == VerdictStatus.NEEDS_VOTES
    assert ranks_of(item) == []
    rank_vote(item, votes[2])
    v = Verdict.objects.get(item=item)
    assert (v.status, v.final_choice, v.provenance) == ("agreed", "2", "majority")
    expected = list(
        rka.kemeny(
            ranking.RankTable.of([ranking.Ranking(0, i, r) for i, r in enumerate(votes)]).ranks
        ).ranks
    )
    assert ranks_of(item) == expected == [2, 1, 3, 4]
    event = AuditEvent.objects.get(item=item, action="rule")
    assert event.before["status"] == "needs_votes"
    assert event.after["final_ranks"] == expected and event.after["final_choice"] == "2"


def test_a_split_top_escalates_once_then_is_contested():
    project = ranked_project()
    item = ranked_item(project)
    for ranks in [(1, 2, 3, 4), (2, 1, 3, 4), (1, 2, 4, 3)]:
        rank_vote(item, ranks)
    v = Verdict.objects.get(item=item)
    assert (v.status, v.escalations, v.escalated_by) == ("needs_votes", 1, 2)
    assert "escalated for 2 more votes" in v.reason
    assert Item.objects.get(pk=item.pk).votes_needed == 5
    rank_vote(item, (2, 1, 3, 4))
    rank_vote(item, (1, 2, 3, 4))
    v = Verdict.objects.get(item=item)
    assert (v.status, v.contest_kind) == ("contested", "split")
    assert v.reason.startswith("still short after escalation: top share 3/5")
    assert ranks_of(item) == []


def test_low_kendalls_w_is_a_split_even_with_one_top():
    project = ranked_project(escalation_votes=0)
    item = ranked_item(project, n=6)
    for ranks in [(1, 2, 5, 4, 6, 3), (1, 5, 3, 2, 4, 6), (1, 5, 4, 6, 2, 3)]:
        rank_vote(item, ranks)
    v = Verdict.objects.get(item=item)
    # Everyone puts slot 1 first, but below it they disagree: W = 0.43 < 0.5.
    assert (v.status, v.contest_kind) == ("contested", "split")
    assert "Kendall's W 0.43 < 0.5" in v.reason


def test_a_flagged_ranking_is_contested_as_a_problem():
    project = ranked_project()
    item = ranked_item(project)
    rank_vote(item, (1, 2, 3, 4))
    rank_vote(item, (1, 2, 3, 4))
    rank_vote(item, (1, 2, 3, 4), flagged=True)
    v = Verdict.objects.get(item=item)
    assert (v.status, v.contest_kind) == ("contested", "problem")


def test_best_of_n_picks_agree_on_the_slot_and_none_majority_is_a_problem():
    project = ranked_project(task=Task.BEST_OF_N)
    item = ranked_item(project)
    for choice in ("3", "3", "3"):
        pick_vote(item, choice)
    v = Verdict.objects.get(item=item)
    assert (v.status, v.final_choice, v.provenance) == ("agreed", "3", "unanimous")
    assert ranks_of(item) == []  # a pick has no ranking
    other = ranked_item(project)
    for choice in ("none", "none", "none"):
        pick_vote(other, choice)
    v = Verdict.objects.get(item=other)
    assert (v.status, v.contest_kind) == ("contested", "problem")


def test_nobody_left_to_break_a_split_goes_to_the_curators_at_once():
    project = ranked_project(team=3)
    item = ranked_item(project)
    for ranks in [(1, 2, 3, 4), (2, 1, 3, 4), (1, 2, 4, 3)]:
        rank_vote(item, ranks)
    v = Verdict.objects.get(item=item)
    assert (v.status, v.contest_kind) == ("contested", "split")
    assert "no annotator left to break it" in v.reason


def test_an_escalation_nobody_can_give_is_taken_back_not_waited_for():
    project = ranked_project(team=4)
    item = ranked_item(project)
    for ranks in [(1, 2, 3, 4), (2, 1, 3, 4), (1, 2, 4, 3)]:
        rank_vote(item, ranks)
    v = Verdict.objects.get(item=item)
    assert (v.status, v.escalated_by) == ("needs_votes", 1)  # one annotator left
    assert Item.objects.get(pk=item.pk).votes_needed == 4
    # The last annotator leaves: the membership receiver rechecks the project.
    Membership.objects.filter(project=project, user=project.team[0]).delete()
    v = Verdict.objects.get(item=item)
    assert Item.objects.get(pk=item.pk).votes_needed == 3
    assert recheck_waiting_items(project=project) == {}  # nothing left short
    assert (v.status, v.contest_kind, v.escalated_by) == ("contested", "split", 0)
    assert v.reason.endswith("no annotator left to break it")


def test_new_thresholds_re_decide_ranked_items_and_their_final_ranks():
    project = ranked_project()
    item = ranked_item(project)
    for ranks in [(1, 2, 3, 4), (1, 2, 3, 4), (2, 1, 3, 4)]:
        rank_vote(item, ranks)
    assert Verdict.objects.get(item=item).status == "needs_votes"  # 2/3 < 0.8: escalated
    # A lower share and no escalation: decided at once on its three rankings.
    moved = update_thresholds(
        project=project, actor=None, votes_per_item=3, agree_share=0.6, escalation_votes=0
    )
    v = Verdict.objects.get(item=item)
    assert moved == {"agreed": 1}
    assert (v.status, v.final_choice) == ("agreed", "1")
    assert ranks_of(item) == [1, 2, 3, 4]
    moved = update_thresholds(
        project=project, actor=None, votes_per_item=3, agree_share=0.9, escalation_votes=0
    )
    v = Verdict.objects.get(item=item)
    assert v.status == "contested" and ranks_of(item) == []


def test_a_completing_ranked_vote_costs_the_same_statements_whatever_the_votes():
    """The rule's pass over a ranked item reads its votes in two queries (the
    judgements, their ranks), whether it has three rankings or seven."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from curation.verdicts.service import update_verdict

    counts = []
    for n_votes in (3, 7):
        project = ranked_project(team=n_votes, votes_per_item=n_votes)
        item = ranked_item(project)
        for _ in range(n_votes):
            rank_vote(item, (2, 1, 3, 4), decide=False)
        with CaptureQueriesContext(connection) as queries:
            update_verdict(item=item)
        assert Verdict.objects.get(item=item).status == "agreed"
        counts.append(len(queries))
    # verdict lock, judgements, ranks, audit insert, verdict update, final
    # ranks (delete, insert): seven, whatever the votes (a verdict not yet
    # agreed has no stored final ranks to read).
    assert counts == [7, 7], counts
