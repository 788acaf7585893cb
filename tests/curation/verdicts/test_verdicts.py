"""Verdicts follow the votes through curation's receiver, in the vote's transaction."""

import pytest

from annotate.loop.service import Vote, claim_next_item, submit_judgement
from annotate.models import Item
from curation.models import AuditEvent, Verdict, VerdictStatus
from curation.verdicts.service import update_thresholds
from tests.conftest import requires_postgres
from tests.factories import make_item, make_member, make_project, make_user

pytestmark = pytest.mark.django_db


def new_item(team=7, **project_kwargs):
    """A project of `team` annotators (who vote_on() in turn) and one item."""
    project = make_project(**project_kwargs)
    project.team = [make_member(project) for _ in range(team)]
    item = make_item(project, domain=project.domains.get(slug="general_preference"))
    Verdict.objects.create(item=item, project=project)
    return project, item


def vote_on(project, item, choice, *, user=None, **vote_kwargs):
    user = user or (project.team.pop(0) if getattr(project, "team", None) else make_member(project))
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
    assert changed == {"agreed": 1}
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
    from annotate.loop.service import revise_judgement

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


def test_a_vote_on_an_item_without_a_verdict_row_creates_it():
    project = make_project(votes_per_item=2)
    item = make_item(project, domain=project.domains.get(slug="general_preference"))
    assert not Verdict.objects.filter(item=item).exists()
    vote_on(project, item, "1")
    assert verdict(item).status == VerdictStatus.NEEDS_VOTES
    vote_on(project, item, "1")
    assert (verdict(item).status, verdict(item).final_choice) == ("agreed", "1")


# --- PostgreSQL: curation locks its verdict itself, in its receiver ----------------------


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_curations_receiver_locks_the_verdict_after_the_votes_statement():
    """The vote's statement touches no table of curation's; curation's own
    receiver locks the item's verdict, after the vote's rows, and holds the
    lock until the vote commits."""
    import psycopg
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from annotate import signals
    from curation.verdicts import receivers

    project, item = new_item(votes_per_item=3)
    user = make_member(project)
    a = claim_next_item(project=project, annotator=user)
    params = connection.get_connection_params()
    dsn = psycopg.conninfo.make_conninfo(
        **{k: v for k, v in params.items() if k in ("dbname", "host", "port", "user", "password")}
    )
    held = {}

    def probe(name):
        def receiver(sender, **kwargs):
            with psycopg.connect(dsn, autocommit=True) as other:
                other.execute("SET lock_timeout = '100ms'")
                try:
                    other.execute(
                        "SELECT 1 FROM curation_verdict WHERE item_id = %s FOR UPDATE", [item.pk]
                    )
                except psycopg.errors.LockNotAvailable:
                    held[name] = True
                else:
                    held[name] = False

        return receiver

    signal = signals.judgement_recorded
    signal.disconnect(dispatch_uid="curation_judgement_recorded")
    signal.connect(probe("before"), dispatch_uid="test_before", weak=False)
    signal.connect(receivers.update_verdict_on_vote, dispatch_uid="curation_judgement_recorded")
    signal.connect(probe("after"), dispatch_uid="test_after", weak=False)
    try:
        with CaptureQueriesContext(connection) as queries:
            submit_judgement(assignment_id=a.pk, annotator=user, vote=Vote(choice="1"))
    finally:
        signal.disconnect(dispatch_uid="test_before")
        signal.disconnect(dispatch_uid="test_after")
    assert held == {"before": False, "after": True}
    statements = [q["sql"].lstrip() for q in queries]
    vote = next(n for n, sql in enumerate(statements) if sql.startswith("WITH judged AS"))
    assert "curation_verdict" not in statements[vote]
    touching = [n for n, sql in enumerate(statements) if "curation_verdict" in sql]
    assert len(touching) == 1 and touching[0] > vote
    assert statements[touching[0]].rstrip().endswith("FOR UPDATE")
    assert verdict(item).status == VerdictStatus.NEEDS_VOTES


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_the_last_two_votes_at_once_agree_the_item_once():
    """Both locks in one order (item, then verdict), whoever comes second
    waits and sees the first's vote: no deadlock, one rule event."""
    import threading

    from django.db import close_old_connections, connection

    project, item = new_item(votes_per_item=3)
    vote_on(project, item, "2")
    users = [make_member(project) for _ in range(2)]
    leases = [claim_next_item(project=project, annotator=u) for u in users]
    barrier = threading.Barrier(2)
    errors = []

    def vote(user, lease):
        try:
            barrier.wait()
            submit_judgement(assignment_id=lease.pk, annotator=user, vote=Vote(choice="2"))
        except Exception as exc:
            errors.append(exc)
        finally:
            close_old_connections()
            connection.close()

    threads = [threading.Thread(target=vote, args=pair) for pair in zip(users, leases, strict=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert errors == []
    v = verdict(item)
    assert (v.status, v.final_choice, v.provenance) == ("agreed", "2", "unanimous")
    assert AuditEvent.objects.filter(item=item, action="rule").count() == 1
    assert Item.objects.get(pk=item.pk).votes_2 == 3
