"""Curator decisions: every change audited, conflicts of interest refused,
stale decisions refused with a clear message, votes never lost."""

import itertools
import threading

import pytest
from django.db import close_old_connections, connection

from annotate.loop.service import Vote, claim_next_item, submit_judgement
from annotate.models import Item, Judgement
from curation.models import AuditEvent, Verdict, VerdictStatus
from curation.verdicts.decisions import (
    ConflictOfInterest,
    CurationError,
    StaleDecision,
    accept_agreed,
    exclude_item,
    reopen_item,
    request_more_votes,
    resolve_item,
)
from tests.conftest import requires_postgres
from tests.factories import make_item, make_member, make_project

pytestmark = pytest.mark.django_db


def contested_item(project=None, choices=("1", "tie", "tie")):
    project = project or make_project(votes_per_item=3)
    item = make_item(project, domain=project.domains.get(slug="general_preference"))
    Verdict.objects.create(item=item, project=project)
    voters = []
    for c in choices:
        user = make_member(project)
        a = claim_next_item(project=project, annotator=user)
        submit_judgement(assignment_id=a.pk, annotator=user, vote=Vote(choice=c, rationale="r"))
        voters.append(user)
    v = Verdict.objects.get(item=item)
    assert v.status == VerdictStatus.CONTESTED
    return project, item, v, voters


def test_resolve_records_the_decision_and_an_audit_event():
    project, item, v, _ = contested_item()
    curator = make_member(project, role="curator")
    resolve_item(
        project=project,
        item_id=item.pk,
        curator=curator,
        choice="2",
        reason="B cites the chart",
        version=v.version,
    )
    v.refresh_from_db()
    assert (v.status, v.final_choice, v.provenance, v.decided_by) == (
        "resolved",
        "2",
        "adjudicated",
        curator,
    )
    event = AuditEvent.objects.get(item=item, action="resolve")
    assert event.actor == curator and event.reason == "B cites the chart"
    assert event.before["status"] == "contested" and event.after["final_choice"] == "2"


def test_every_decision_needs_a_reason():
    project, item, v, _ = contested_item()
    curator = make_member(project, role="curator")
    with pytest.raises(CurationError):
        resolve_item(
            project=project,
            item_id=item.pk,
            curator=curator,
            choice="1",
            reason=" ",
            version=v.version,
        )
    with pytest.raises(CurationError):
        exclude_item(
            project=project,
            item_id=item.pk,
            curator=curator,
            category="ambiguous",
            reason="",
            version=v.version,
        )


def test_curator_who_voted_cannot_resolve_unless_the_project_allows_it():
    project, item, v, voters = contested_item()
    voter = voters[0]
    with pytest.raises(ConflictOfInterest):
        resolve_item(
            project=project,
            item_id=item.pk,
            curator=voter,
            choice="1",
            reason="mine",
            version=v.version,
        )
    assert Verdict.objects.get(item=item).status == "contested"
    project.allow_self_adjudication = True
    project.save()
    resolve_item(
        project=project,
        item_id=item.pk,
        curator=voter,
        choice="1",
        reason="tiny team",
        version=v.version,
    )
    assert Verdict.objects.get(item=item).status == "resolved"


def test_a_decision_on_a_stale_page_is_refused_and_changes_nothing():
    project, item, v, _ = contested_item()
    first, second = make_member(project, role="curator"), make_member(project, role="curator")
    seen = v.version
    resolve_item(
        project=project, item_id=item.pk, curator=first, choice="1", reason="a", version=seen
    )
    with pytest.raises(StaleDecision) as exc:
        resolve_item(
            project=project, item_id=item.pk, curator=second, choice="2", reason="b", version=seen
        )
    assert first.get_username() in str(exc.value)
    v.refresh_from_db()
    assert (v.final_choice, v.decided_by) == ("1", first)
    assert AuditEvent.objects.filter(item=item, action="resolve").count() == 1


def test_exclude_keeps_votes_and_item_visible():
    project, item, v, _ = contested_item()
    curator = make_member(project, role="curator")
    exclude_item(
        project=project,
        item_id=item.pk,
        curator=curator,
        category="both_bad",
        reason="both wrong",
        version=v.version,
    )
    v.refresh_from_db()
    assert (v.status, v.exclusion_category) == ("excluded", "both_bad")
    assert Item.objects.filter(pk=item.pk).exists()
    assert Judgement.objects.filter(assignment__item=item).count() == 3


def test_request_more_votes_returns_the_item_to_the_pool():
    project, item, v, voters = contested_item()
    curator = make_member(project, role="curator")
    request_more_votes(
        project=project,
        item_id=item.pk,
        curator=curator,
        n=2,
        reason="need experts",
        version=v.version,
    )
    item.refresh_from_db()
    assert item.votes_needed == 5
    assert Verdict.objects.get(item=item).status == "needs_votes"
    newcomer = make_member(project)
    assert claim_next_item(project=project, annotator=newcomer).item_id == item.pk
    assert claim_next_item(project=project, annotator=voters[0]) is None


def test_reopen_sends_a_resolved_item_back_to_the_queue():
    project, item, v, _ = contested_item()
    curator = make_member(project, role="curator")
    v = resolve_item(
        project=project, item_id=item.pk, curator=curator, choice="1", reason="a", version=v.version
    )
    reopen_item(
        project=project, item_id=item.pk, curator=curator, reason="second look", version=v.version
    )
    v.refresh_from_db()
    assert (v.status, v.contest_kind, v.final_choice) == ("contested", "reopened", "")


def test_bulk_accept_resolves_agreed_items_of_one_domain_with_audit():
    project = make_project(votes_per_item=1)
    pref = project.domains.get(slug="general_preference")
    vqa = project.domains.get(slug="vqa")
    items = [make_item(project, domain=pref) for _ in range(3)] + [make_item(project, domain=vqa)]
    for item in items:
        Verdict.objects.create(
            item=item, project=project, status="agreed", final_choice="1", provenance="unanimous"
        )
    curator = make_member(project, role="curator")
    assert accept_agreed(project=project, domain=pref, curator=curator) == 3
    assert Verdict.objects.filter(status="resolved", provenance="unanimous").count() == 3
    assert Verdict.objects.get(item=items[-1]).status == "agreed"
    assert AuditEvent.objects.filter(action="accept", actor=curator).count() == 3


def test_audit_trail_is_complete_for_a_life_cycle():
    project, item, v, _ = contested_item()
    curator = make_member(project, role="curator")
    v = resolve_item(
        project=project, item_id=item.pk, curator=curator, choice="1", reason="a", version=v.version
    )
    v = reopen_item(
        project=project, item_id=item.pk, curator=curator, reason="b", version=v.version
    )
    v = exclude_item(
        project=project,
        item_id=item.pk,
        curator=curator,
        category="other",
        reason="c",
        version=v.version,
    )
    actions = list(
        AuditEvent.objects.filter(item=item)
        .order_by("created_at", "pk")
        .values_list("action", flat=True)
    )
    assert actions == ["rule", "resolve", "reopen", "exclude"]
    events = list(AuditEvent.objects.filter(item=item).order_by("created_at", "pk"))
    for earlier, later in itertools.pairwise(events):
        assert earlier.after["status"] == later.before["status"]


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_two_curators_resolving_at_once_one_wins_the_other_is_told():
    assert connection.vendor == "postgresql"
    project, item, v, _ = contested_item()
    curators = [make_member(project, role="curator") for _ in range(2)]
    barrier = threading.Barrier(2)
    outcomes: dict[int, str] = {}

    def decide(i, curator):
        try:
            barrier.wait()
            resolve_item(
                project=project,
                item_id=item.pk,
                curator=curator,
                choice=str(i + 1),
                reason=f"curator {i}",
                version=v.version,
            )
            outcomes[i] = "won"
        except StaleDecision as exc:
            outcomes[i] = f"stale: {exc}"
        finally:
            close_old_connections()
            connection.close()

    threads = [threading.Thread(target=decide, args=(i, c)) for i, c in enumerate(curators)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert sorted(o.split(":")[0] for o in outcomes.values()) == ["stale", "won"]
    winner = next(i for i, o in outcomes.items() if o == "won")
    final = Verdict.objects.get(item=item)
    assert final.final_choice == str(winner + 1) and final.decided_by == curators[winner]
    assert AuditEvent.objects.filter(item=item, action="resolve").count() == 1
    assert Judgement.objects.filter(assignment__item=item).count() == 3
