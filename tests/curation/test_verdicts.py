"""Verdicts follow the votes through curation's receiver, in the vote's transaction."""

import pytest

from annotate.models import Item
from annotate.services import Vote, claim_next_item, submit_judgement
from curation.models import AuditEvent, Verdict, VerdictStatus
from curation.services import update_thresholds
from tests.factories import make_item, make_member, make_project, make_user

pytestmark = pytest.mark.django_db


def new_item(**project_kwargs):
    project = make_project(**project_kwargs)
    item = make_item(project, domain=project.domains.get(slug="general_preference"))
    Verdict.objects.create(item=item, project=project)
    return project, item


def vote_on(project, item, choice, *, user=None, **vote_kwargs):
    user = user or make_member(project)
    a = claim_next_item(project=project, annotator=user)
    assert a is not None and a.item_id == item.pk
    submit_judgement(assignment_id=a.pk, annotator=user, vote=Vote(choice=choice, **vote_kwargs))
    return user


def verdict(item):
    return Verdict.objects.get(item=item)


def test_item_stays_needs_votes_until_it_has_enough():
    project, item = new_item()
    vote_on(project, item, "1")
    vote_on(project, item, "1")
    assert verdict(item).status == VerdictStatus.NEEDS_VOTES


def test_unanimous_votes_agree_and_are_audited():
    project, item = new_item()
    for _ in range(3):
        vote_on(project, item, "2")
    v = verdict(item)
    assert (v.status, v.final_choice, v.provenance) == ("agreed", "2", "unanimous")
    event = AuditEvent.objects.get(item=item, action="rule")
    assert event.before["status"] == "needs_votes" and event.after["status"] == "agreed"
    assert event.actor is None


def test_split_escalates_and_new_annotators_get_the_item():
    project, item = new_item()
    voters = [vote_on(project, item, c) for c in ("1", "1", "2")]
    v = verdict(item)
    assert v.status == VerdictStatus.NEEDS_VOTES and v.escalations == 1
    item.refresh_from_db()
    assert item.votes_needed == 5
    # earlier voters are not offered it again; new ones are
    for user in voters:
        assert claim_next_item(project=project, annotator=user) is None
    vote_on(project, item, "1")
    vote_on(project, item, "1")
    v = verdict(item)
    assert (v.status, v.final_choice, v.provenance) == ("agreed", "1", "majority")


def test_split_that_persists_after_escalation_is_contested():
    project, item = new_item()
    for c in ("1", "1", "2", "2", "2"):
        vote_on(project, item, c)
    v = verdict(item)
    assert v.status == VerdictStatus.CONTESTED and v.escalations == 1


def test_tie_majority_is_contested_without_escalation():
    project, item = new_item()
    vote_on(project, item, "1")
    vote_on(project, item, "tie", rationale="same")
    vote_on(project, item, "tie", rationale="same")
    v = verdict(item)
    assert v.status == VerdictStatus.CONTESTED and v.escalations == 0


def test_problem_flag_makes_it_contested():
    project, item = new_item()
    vote_on(project, item, "1")
    vote_on(project, item, "1")
    vote_on(project, item, "1", flagged_problem=True, problem_reason="image broken")
    assert verdict(item).status == VerdictStatus.CONTESTED


def test_gold_disagreement_is_contested():
    project, item = new_item()
    Item.objects.filter(pk=item.pk).update(gold_choice="2")
    for _ in range(3):
        vote_on(project, item, "1")
    assert verdict(item).status == VerdictStatus.CONTESTED


def test_curator_decision_is_not_overturned_by_a_late_vote():
    project, item = new_item()
    vote_on(project, item, "1")
    Verdict.objects.filter(item=item).update(
        status="resolved", final_choice="2", provenance="adjudicated"
    )
    vote_on(project, item, "1")
    assert verdict(item).status == "resolved" and verdict(item).final_choice == "2"


def test_changing_thresholds_reevaluates_open_items():
    project, item = new_item()
    for c in ("1", "1", "2", "2", "1"):
        vote_on(project, item, c)
    assert verdict(item).status == VerdictStatus.CONTESTED  # 3/5 = 0.6 < 0.8
    admin = make_user()
    changed = update_thresholds(
        project=project, actor=admin, votes_per_item=3, agree_share=0.6, escalation_votes=2
    )
    assert changed == 1
    v = verdict(item)
    assert (v.status, v.final_choice) == ("agreed", "1")
    assert AuditEvent.objects.filter(action="thresholds", actor=admin).exists()


def test_raising_votes_per_item_reopens_agreed_items_for_more_votes():
    project, item = new_item()
    for _ in range(3):
        vote_on(project, item, "1")
    assert verdict(item).status == "agreed"
    update_thresholds(
        project=project, actor=make_user(), votes_per_item=4, agree_share=0.8, escalation_votes=2
    )
    item.refresh_from_db()
    assert item.votes_needed == 4
    assert verdict(item).status == VerdictStatus.NEEDS_VOTES
    vote_on(project, item, "1")
    assert verdict(item).status == "agreed"


def test_revision_moves_the_verdict():
    from annotate.services import revise_judgement

    project, item = new_item(votes_per_item=2)
    u1 = vote_on(project, item, "1")
    a1 = u1.assignments.get()
    revise_judgement(assignment_id=a1.pk, annotator=u1, vote=Vote(choice="2"))
    vote_on(project, item, "2")
    v = verdict(item)
    assert (v.status, v.final_choice) == ("agreed", "2")


def test_rule_settings_page_is_for_admins_only(client):
    from django.urls import reverse

    from tests.factories import make_member

    project, _ = new_item()
    url = reverse("rule_settings", args=[project.slug])
    client.force_login(make_member(project, role="annotator"))
    assert client.get(url).status_code == 403
    client.force_login(make_member(project, role="curator"))
    assert client.get(url).status_code == 403
    client.force_login(make_user())
    assert client.get(url).status_code == 404
    client.force_login(make_member(project, role="admin"))
    assert client.get(url).status_code == 200
    bad = client.post(url, {"votes_per_item": 0, "agree_share": 2, "escalation_votes": 1})
    assert bad.status_code == 400
    ok = client.post(url, {"votes_per_item": 5, "agree_share": 0.75, "escalation_votes": 0})
    assert ok.status_code == 302
    project.refresh_from_db()
    assert (project.votes_per_item, project.agree_share, project.escalation_votes) == (5, 0.75, 0)
