"""Every project finishes (issue 17): escalation asks only for votes that can
come, curators close any item, rule changes re-decide what they touch, and
nothing waits silently."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotate.loop.service import (
    AnnotationError,
    Vote,
    claim_next_item,
    expire_stale_leases,
    revise_judgement,
    skip_item,
    submit_judgement,
    votes_may_come,
)
from annotate.models import Assignment, AssignmentStatus, Item, Membership
from curation.models import AuditEvent, Verdict, VerdictStatus
from curation.verdicts.decisions import (
    CurationError,
    StaleDecision,
    exclude_item,
    reopen_item,
    request_more_votes,
    resolve_item,
)
from curation.verdicts.service import stuck_items, stuck_reason, update_thresholds
from tests.factories import make_item, make_member, make_project, make_user

pytestmark = pytest.mark.django_db


def team_project(annotators: int, **project_kwargs):
    project = make_project(**project_kwargs)
    team = [make_member(project) for _ in range(annotators)]
    item = make_item(project, domain=project.domains.get(slug="general_preference"))
    Verdict.objects.create(item=item, project=project)
    return project, team, item


def vote(project, user, choice, item=None, **kwargs):
    a = claim_next_item(project=project, annotator=user)
    assert a is not None
    if item is not None:
        assert a.item_id == item.pk
    submit_judgement(assignment_id=a.pk, annotator=user, vote=Vote(choice=choice, **kwargs))
    return a


def state(item):
    item.refresh_from_db()
    v = Verdict.objects.get(item=item)
    return v


# --- 1. Escalation only asks for what can come ---------------------------------------------


def test_a_split_with_nobody_left_goes_straight_to_the_curators():
    project, team, item = team_project(3)
    for user, choice in zip(team[:3], "112", strict=True):
        vote(project, user, choice)
    v = state(item)
    assert v.status == VerdictStatus.CONTESTED and v.contest_kind == "split"
    assert "no annotator left to break it" in v.reason
    assert (item.votes_needed, v.escalated_by) == (3, 0)
    # Nobody is told that it comes back.
    assert not any(votes_may_come(project=project, annotator=u) for u in team)


def test_escalation_asks_for_as_many_votes_as_eligible_annotators_are_left():
    project, team, item = team_project(4)
    for user, choice in zip(team[:3], "112", strict=True):
        vote(project, user, choice)
    v = state(item)
    assert v.status == VerdictStatus.NEEDS_VOTES and v.escalations == 1
    assert (item.votes_needed, v.escalated_by) == (4, 1)
    assert "escalated for 1 more vote" in v.reason
    vote(project, team[3], "1")
    v = state(item)
    assert (v.status, v.final_choice) == ("contested", "")  # 3-1 = 0.75 < 0.8


def test_curators_admins_and_inactive_accounts_are_not_eligible():
    project, team, item = team_project(3)
    make_member(project, role="curator")
    make_member(project, role="admin")
    make_member(project, user=make_user(is_active=False))
    for user, choice in zip(team[:3], "121", strict=True):
        vote(project, user, choice)
    assert state(item).status == VerdictStatus.CONTESTED


def test_a_skip_takes_back_the_vote_its_annotator_could_have_given():
    project, team, item = team_project(4)
    for user, choice in zip(team[:3], "112", strict=True):
        vote(project, user, choice)
    assert state(item).status == VerdictStatus.NEEDS_VOTES
    lease = claim_next_item(project=project, annotator=team[3])
    skip_item(assignment_id=lease.pk, annotator=team[3], reason="cannot read the chart")
    v = state(item)
    assert v.status == VerdictStatus.CONTESTED and "no annotator left" in v.reason
    assert (item.votes_needed, v.escalated_by) == (3, 0)
    event = AuditEvent.objects.filter(item=item, action="rule").latest("pk")
    assert event.after["status"] == "contested"


def test_an_expired_lease_takes_back_the_vote_when_nobody_else_is_left():
    project, team, item = team_project(4)
    for user, choice in zip(team[:3], "112", strict=True):
        vote(project, user, choice)
    claim_next_item(project=project, annotator=team[3])
    expire_stale_leases(project=project, now=timezone.now() + timedelta(days=1))
    v = state(item)
    assert v.status == VerdictStatus.CONTESTED
    assert item.live_assignments == 3 and item.votes_needed == 3


def test_removing_or_deactivating_an_annotator_rechecks_waiting_items():
    project, team, item = team_project(5)
    for user, choice in zip(team[:3], "112", strict=True):
        vote(project, user, choice)
    assert (state(item).status, item.votes_needed) == ("needs_votes", 5)
    Membership.objects.filter(project=project, user=team[3]).delete()
    v = state(item)
    assert (v.status, item.votes_needed, v.escalated_by) == ("needs_votes", 4, 1)
    team[4].is_active = False
    team[4].save()
    v = state(item)
    assert v.status == VerdictStatus.CONTESTED and item.votes_needed == 3


def test_a_role_change_away_from_annotator_rechecks_too():
    project, team, item = team_project(4)
    for user, choice in zip(team[:3], "112", strict=True):
        vote(project, user, choice)
    Membership.objects.filter(project=project, user=team[3]).update(role="curator")
    assert state(item).status == VerdictStatus.NEEDS_VOTES  # .update() sends no signal
    membership = Membership.objects.get(project=project, user=team[3])
    membership.save()
    assert state(item).status == VerdictStatus.CONTESTED


def test_a_vote_in_flight_still_counts_when_others_leave():
    project, team, item = team_project(5)
    for user, choice in zip(team[:3], "112", strict=True):
        vote(project, user, choice)
    lease = claim_next_item(project=project, annotator=team[3])
    Membership.objects.filter(project=project, user=team[4]).delete()
    assert (state(item).status, item.votes_needed) == ("needs_votes", 4)
    submit_judgement(assignment_id=lease.pk, annotator=team[3], vote=Vote(choice="1"))
    v = state(item)
    assert (v.status, v.final_choice) == ("contested", "")  # 3-1 after the cut


# --- 2. Curators can close any open item ---------------------------------------------------


def test_a_curator_resolves_an_item_still_collecting_votes_and_its_lease_ends():
    project, team, item = team_project(4)
    curator = make_member(project, role="curator")
    vote(project, team[0], "1")
    lease = claim_next_item(project=project, annotator=team[1])
    v = state(item)
    resolve_item(
        project=project,
        item_id=item.pk,
        curator=curator,
        choice="2",
        reason="obvious",
        version=v.version,
    )
    v = state(item)
    assert (v.status, v.final_choice, v.provenance) == ("resolved", "2", "adjudicated")
    assert (item.votes_needed, item.live_assignments) == (1, 1)
    assert Assignment.objects.get(pk=lease.pk).status == AssignmentStatus.EXPIRED
    with pytest.raises(AnnotationError, match="curator closed it"):
        submit_judgement(assignment_id=lease.pk, annotator=team[1], vote=Vote(choice="1"))
    # Nobody gets it again; nobody is told it may come back.
    for user in team:
        assert claim_next_item(project=project, annotator=user) is None
        assert not votes_may_come(project=project, annotator=user)
    assert AuditEvent.objects.filter(item=item, action="resolve", actor=curator).exists()


def test_an_item_closed_before_any_vote_needs_none():
    project, team, item = team_project(3)
    curator = make_member(project, role="curator")
    exclude_item(
        project=project,
        item_id=item.pk,
        curator=curator,
        category="broken",
        reason="image missing",
        version=0,
    )
    assert state(item).status == "excluded" and item.votes_needed == 0
    assert claim_next_item(project=project, annotator=team[0]) is None


def test_tie_resolutions_only_where_ties_are_allowed_and_never_released():
    project, _, item = team_project(3, allow_tie=False)
    curator = make_member(project, role="curator")
    with pytest.raises(CurationError, match="response 1 or response 2"):
        resolve_item(
            project=project, item_id=item.pk, curator=curator, choice="tie", reason="x", version=0
        )
    project.allow_tie = True
    project.save()
    resolve_item(
        project=project, item_id=item.pk, curator=curator, choice="tie", reason="same", version=0
    )
    v = state(item)
    assert (v.status, v.final_choice) == ("resolved", "tie")
    assert not Verdict.objects.releasable().filter(pk=v.pk).exists()


def test_reopening_an_item_still_collecting_sends_it_to_the_curators_now():
    project, team, item = team_project(5)
    curator = make_member(project, role="curator")
    vote(project, team[0], "1")
    reopen_item(project=project, item_id=item.pk, curator=curator, reason="look now", version=0)
    v = state(item)
    assert (v.status, v.contest_kind, item.votes_needed) == ("contested", "reopened", 1)
    with pytest.raises(CurationError, match="already in the contested queue"):
        reopen_item(
            project=project, item_id=item.pk, curator=curator, reason="x", version=v.version
        )


def test_closing_keeps_the_conflict_of_interest_rule():
    project, team, item = team_project(3)
    voter = team[0]
    Membership.objects.filter(project=project, user=voter).update(role="curator")
    vote(project, voter, "1")
    with pytest.raises(CurationError, match="another curator must decide"):
        resolve_item(
            project=project,
            item_id=item.pk,
            curator=voter,
            choice="1",
            reason="x",
            version=state(item).version,
        )
    assert state(item).status == VerdictStatus.NEEDS_VOTES and item.votes_needed == 3


def test_an_item_of_another_project_is_not_found_and_untouched():
    _, _, item = team_project(3)
    other = make_project()
    curator = make_member(other, role="curator")
    with pytest.raises(Verdict.DoesNotExist):
        resolve_item(
            project=other, item_id=item.pk, curator=curator, choice="1", reason="x", version=0
        )
    assert state(item).status == VerdictStatus.NEEDS_VOTES and item.votes_needed == 3


# --- 3. Rule changes re-evaluate what they touch -------------------------------------------


def escalated(project, team, item):
    for user, choice in zip(team[:3], "112", strict=True):
        vote(project, user, choice, item=item)
    assert state(item).status == VerdictStatus.NEEDS_VOTES


def test_lowering_the_escalation_to_zero_releases_escalated_items_at_once():
    project, team, item = team_project(6)
    escalated(project, team, item)
    moved = update_thresholds(
        project=project, actor=make_user(), votes_per_item=3, agree_share=0.8, escalation_votes=0
    )
    assert moved == {"contested": 1}
    v = state(item)
    assert (v.status, item.votes_needed, v.escalated_by) == ("contested", 3, 0)
    assert claim_next_item(project=project, annotator=team[3]) is None


def test_lowering_the_escalation_keeps_a_vote_in_flight():
    project, team, item = team_project(6)
    escalated(project, team, item)
    lease = claim_next_item(project=project, annotator=team[3])
    moved = update_thresholds(
        project=project, actor=make_user(), votes_per_item=3, agree_share=0.8, escalation_votes=0
    )
    assert moved == {}  # still waiting for the vote someone is giving
    assert (state(item).status, item.votes_needed) == ("needs_votes", 4)
    submit_judgement(assignment_id=lease.pk, annotator=team[3], vote=Vote(choice="1"))
    assert state(item).status == VerdictStatus.CONTESTED  # 3-1, no second escalation


def test_raising_the_escalation_asks_waiting_items_for_more_within_the_team():
    project, team, item = team_project(5, escalation_votes=1)
    escalated(project, team, item)
    assert item.votes_needed == 4
    moved = update_thresholds(
        project=project, actor=make_user(), votes_per_item=3, agree_share=0.8, escalation_votes=5
    )
    assert moved == {}
    v = state(item)
    # Asked for 5, capped to the 2 eligible annotators left.
    assert (v.status, item.votes_needed, v.escalated_by) == ("needs_votes", 5, 2)


def test_threshold_report_counts_status_moves_not_rows_written():
    project = make_project()
    team = [make_member(project) for _ in range(3)]
    items = [
        make_item(project, domain=project.domains.get(slug="general_preference")) for _ in range(3)
    ]
    for item in items:
        Verdict.objects.create(item=item, project=project)
    for item, choices in zip(items, ["111", "112", "221"], strict=True):
        for user, choice in zip(team, choices, strict=True):
            a = claim_next_item(project=project, annotator=user)
            while a.item_id != item.pk:  # take them in order
                skip_item(assignment_id=a.pk, annotator=user, reason="order")
                a = claim_next_item(project=project, annotator=user)
            submit_judgement(assignment_id=a.pk, annotator=user, vote=Vote(choice=choice))
    moved = update_thresholds(
        project=project, actor=make_user(), votes_per_item=3, agree_share=0.6, escalation_votes=2
    )
    assert moved == {"agreed": 2}


# --- 5. A curator's decision stays decided -------------------------------------------------


def test_a_revision_after_a_decision_does_not_change_it():
    project, team, item = team_project(4)
    curator = make_member(project, role="curator")
    first = vote(project, team[0], "1")
    v = state(item)
    resolve_item(
        project=project, item_id=item.pk, curator=curator, choice="2", reason="r", version=v.version
    )
    with pytest.raises(AnnotationError):  # nothing left to revise once closed
        revise_judgement(assignment_id=first.pk, annotator=team[0], vote=Vote(choice="2"))
    v = state(item)
    assert (v.status, v.final_choice) == ("resolved", "2")


def test_a_second_curator_must_have_read_the_first_decision():
    project, team, item = team_project(3)
    first, second = make_member(project, role="curator"), make_member(project, role="curator")
    for user, choice in zip(team[:3], "112", strict=True):
        vote(project, user, choice)
    read = state(item).version
    resolve_item(
        project=project, item_id=item.pk, curator=first, choice="1", reason="a", version=read
    )
    with pytest.raises(StaleDecision):
        exclude_item(
            project=project,
            item_id=item.pk,
            curator=second,
            category="ambiguous",
            reason="b",
            version=read,
        )
    v = state(item)
    assert (v.status, v.final_choice, v.decided_by) == ("resolved", "1", first)
    exclude_item(
        project=project,
        item_id=item.pk,
        curator=second,
        category="ambiguous",
        reason="read it",
        version=v.version,
    )
    assert state(item).status == "excluded"


# --- 6. Nothing waits silently -------------------------------------------------------------


def test_a_team_smaller_than_the_vote_count_is_reported_stuck_with_why():
    project, team, item = team_project(2)
    for user in team:
        vote(project, user, "1")
    assert state(item).status == VerdictStatus.NEEDS_VOTES
    stuck = list(stuck_items(project))
    assert [i.pk for i in stuck] == [item.pk]
    assert stuck_reason(stuck[0]) == "needs 1 more vote; no annotator left who has not seen it"
    assert not any(votes_may_come(project=project, annotator=u) for u in team)


def test_asking_for_more_votes_than_eligible_leaves_the_item_stuck_and_says_so():
    project, team, item = team_project(4)
    curator = make_member(project, role="curator")
    for user, choice in zip(team[:3], "111", strict=True):
        vote(project, user, choice)
    v = state(item)
    assert v.status == "agreed"
    reopen_item(project=project, item_id=item.pk, curator=curator, reason="r", version=v.version)
    request_more_votes(
        project=project,
        item_id=item.pk,
        curator=curator,
        n=3,
        reason="check",
        version=state(item).version,
    )
    stuck = list(stuck_items(project))
    assert stuck_reason(stuck[0]) == "needs 3 more votes; only 1 eligible annotator left"


def test_an_item_held_by_someone_else_may_come_back():
    project, team, item = team_project(4)
    for user, choice in zip(team[:2], "11", strict=True):
        vote(project, user, choice)
    lease = claim_next_item(project=project, annotator=team[2])
    assert claim_next_item(project=project, annotator=team[3]) is None
    assert votes_may_come(project=project, annotator=team[3])
    assert not list(stuck_items(project))
    Assignment.objects.filter(pk=lease.pk).update(lease_expires_at=timezone.now())
    assert claim_next_item(project=project, annotator=team[3]).item_id == item.pk
    assert Item.objects.get(pk=item.pk).live_assignments == 3


def test_a_departing_member_returns_their_open_lease_at_once():
    project, team, item = team_project(3)
    for user, choice in zip(team[:2], "12", strict=True):
        vote(project, user, choice)
    lease = claim_next_item(project=project, annotator=team[2])
    Membership.objects.filter(project=project, user=team[2]).delete()
    assert Assignment.objects.get(pk=lease.pk).status == AssignmentStatus.EXPIRED
    item.refresh_from_db()
    assert item.live_assignments == 2
    stuck = list(stuck_items(project))
    assert stuck_reason(stuck[0]) == "needs 1 more vote; no annotator left who has not seen it"


def test_a_deactivated_account_returns_its_leases_in_every_project():
    project, team, item = team_project(4)
    vote(project, team[0], "1")
    lease = claim_next_item(project=project, annotator=team[1])
    team[1].is_active = False
    team[1].save(update_fields=["is_active"])
    assert Assignment.objects.get(pk=lease.pk).status == AssignmentStatus.EXPIRED
    assert claim_next_item(project=project, annotator=team[2]).item_id == item.pk


def test_the_worker_sweep_returns_expired_leases_when_nobody_claims():
    from annotate.tasks import expire_stale_leases_everywhere

    project, team, _ = team_project(3)
    for user, choice in zip(team[:2], "12", strict=True):
        vote(project, user, choice)
    lease = claim_next_item(project=project, annotator=team[2])
    Assignment.objects.filter(pk=lease.pk).update(lease_expires_at=timezone.now())
    assert not list(stuck_items(project))  # the lease still counts
    assert expire_stale_leases_everywhere.delay().get() == 1
    stuck = list(stuck_items(project))
    assert stuck_reason(stuck[0]) == "needs 1 more vote; no annotator left who has not seen it"


def test_deactivating_a_member_on_the_members_page_rechecks_their_items():
    from annotate.setup.team import deactivate_member

    project, team, item = team_project(4)
    admin = make_member(project, role="admin")
    for user, choice in zip(team[:3], "112", strict=True):
        vote(project, user, choice)
    lease = claim_next_item(project=project, annotator=team[3])
    assert (state(item).status, item.votes_needed) == ("needs_votes", 4)
    released = deactivate_member(actor=admin, project=project, user=team[3])
    assert released == [item.pk]
    assert Assignment.objects.get(pk=lease.pk).status == AssignmentStatus.EXPIRED
    v = state(item)
    assert v.status == VerdictStatus.CONTESTED and "no annotator left" in v.reason
