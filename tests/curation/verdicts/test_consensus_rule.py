"""Issue 24, graded preference: the contested rule's consensus filter
(MMRB2's: every vote on one side, mean strength at least x), pure and
through the rule page, the votes and the verdicts."""

import pytest
from django.urls import reverse

from annotate.loop.service import Vote, claim_next_item, submit_judgement
from curation.models import ContestKind, Verdict, VerdictStatus
from curation.verdicts.rule import AGREED, CONTESTED, NEEDS_VOTES, RuleVote, Thresholds, decide
from curation.verdicts.service import update_thresholds
from tests.factories import make_item, make_member, make_project


def run(strengths, *, least=2.0, needed=3, gold="", **kwargs):
    votes = [
        RuleVote("1" if s > 0 else "2" if s < 0 else "tie", strength=s, **kwargs) for s in strengths
    ]
    thresholds = Thresholds(votes_per_item=3, consensus_strength=least)
    return decide(votes, votes_needed=needed, escalations=0, thresholds=thresholds, gold=gold)


def test_every_vote_on_one_side_with_enough_strength_is_agreed():
    out = run([3, 2, 1])  # mean 2.0
    assert (out.status, out.final_choice, out.provenance) == (AGREED, "1", "unanimous")
    assert out.reason == "consensus, mean strength 2.00: 3-0-0 (1-2-tie)"
    assert run([-2, -2, -3]).final_choice == "2"


def test_a_weak_consensus_is_contested():
    out = run([1, 2, 2])
    assert (out.status, out.kind) == (CONTESTED, ContestKind.CONSENSUS)
    assert out.reason == "consensus too weak: mean strength 1.67 < 2, 3-0-0 (1-2-tie)"


def test_any_dissent_is_contested_at_once_never_escalated():
    # A 2-1 split would escalate without the filter; a tie is a dissent too.
    for strengths in ([3, 3, -1], [3, 3, 0]):
        out = run(strengths)
        assert (out.status, out.kind, out.escalate_by) == (CONTESTED, "consensus", 0)
        assert out.reason.startswith("no consensus: ")
    plain = decide(
        [RuleVote("1", strength=3), RuleVote("1", strength=3), RuleVote("2", strength=-1)],
        votes_needed=3,
        escalations=0,
        thresholds=Thresholds(votes_per_item=3),
    )
    assert (plain.status, plain.escalate_by) == (NEEDS_VOTES, 2)


def test_the_filter_keeps_the_rule_before_and_after_it():
    assert run([3, 3]).status == NEEDS_VOTES
    assert run([3, 3, 3], flagged_problem=True).kind == "problem"
    assert run([3, 3, 3], gold="2").kind == "gold"
    assert run([1, 1, 1], least=0).status == AGREED  # 0: unanimity alone


@pytest.mark.django_db
def test_the_rule_page_sets_the_strength_and_votes_are_decided_with_it(client):
    project = make_project(preference_scale="graded6", votes_per_item=2, escalation_votes=0)
    domain = project.domains.get(slug="general_preference")
    strong, weak = make_item(project, domain=domain), make_item(project, domain=domain)
    admin = make_member(project, role="admin")
    client.force_login(admin)
    url = reverse("rule_settings", args=[project.slug])
    assert "Consensus strength" in client.get(url).content.decode()
    response = client.post(
        url,
        {"votes_per_item": 2, "agree_share": 0.8, "escalation_votes": 0, "consensus_strength": 2},
    )
    assert response.status_code == 302
    project.refresh_from_db()
    assert project.consensus_strength == 2.0

    given = {strong.pk: [3, 2], weak.pk: [1, 2]}
    for _ in range(2):
        user = make_member(project)
        while (a := claim_next_item(project=project, annotator=user)) is not None:
            s = given[a.item_id].pop()
            submit_judgement(assignment_id=a.pk, annotator=user, vote=Vote(choice="1", strength=s))
    verdicts = {v.item_id: v for v in Verdict.objects.filter(project=project)}
    assert verdicts[strong.pk].status == VerdictStatus.AGREED
    assert (verdicts[weak.pk].status, verdicts[weak.pk].contest_kind) == (
        VerdictStatus.CONTESTED,
        ContestKind.CONSENSUS,
    )

    # Turned off, the weak item is agreed on its collapsed choices as ever.
    moved = update_thresholds(
        project=project,
        actor=admin,
        votes_per_item=2,
        agree_share=0.8,
        escalation_votes=0,
        consensus_strength=None,
    )
    assert moved == {VerdictStatus.AGREED: 1}


@pytest.mark.django_db
def test_an_ab_project_has_no_consensus_strength(client):
    project = make_project()
    admin = make_member(project, role="admin")
    client.force_login(admin)
    assert (
        "Consensus strength"
        not in client.get(reverse("rule_settings", args=[project.slug])).content.decode()
    )
    with pytest.raises(ValueError, match="graded"):
        update_thresholds(
            project=project,
            actor=admin,
            votes_per_item=3,
            agree_share=0.8,
            escalation_votes=2,
            consensus_strength=1.0,
        )
