"""Issue 36 item 2, ongoing checks: check items served at the project's
rate, deterministically per annotator and never twice; the pause after a
check vote (leases back, audit, curators' mail) and a curator's
reinstatement; check leases never counted in live_assignments."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from statsmodels.stats.proportion import proportion_confint

from annotate import checks
from annotate.loop.service import (
    Vote,
    can_revise,
    claim_ahead,
    claim_next_item,
    expire_stale_leases,
    revise_judgement,
    skip_item,
    submit_and_claim_next,
    submit_judgement,
)
from annotate.models import Assignment, AssignmentStatus, Item, ItemPurpose, ProjectPause
from curation.models import AuditEvent
from tests.factories import make_item, make_member, make_project, make_user

pytestmark = pytest.mark.django_db


def vote(choice="1"):
    return Vote(choice=choice, correct_1="yes", correct_2="no", confidence=2)


def make_check(project, gold="1", **kwargs):
    return make_item(project, purpose=ItemPurpose.CHECK, gold_choice=gold, **kwargs)


def checks_project(*, rate=0.3, threshold=0.7, minimum=3, n_items=20, n_checks=6, **kwargs):
    project = make_project(
        check_rate=rate, check_threshold=threshold, check_minimum=minimum, **kwargs
    )
    items = [make_item(project) for _ in range(n_items)]
    check_items = [make_check(project) for _ in range(n_checks)]
    return project, items, check_items


def work_through(project, user, *, wrong_on_checks=False, limit=100):
    """Claim and vote until nothing comes; the sequence of item ids served."""
    served = []
    for _ in range(limit):
        a = claim_next_item(project=project, annotator=user)
        if a is None:
            break
        served.append(a.item_id)
        is_check = Item.objects.get(pk=a.item_id).purpose == ItemPurpose.CHECK
        submit_judgement(
            assignment_id=a.pk,
            annotator=user,
            vote=vote("2" if is_check and wrong_on_checks else "1"),
        )
    return served


def test_checks_come_at_the_rate_never_twice_and_the_same_way_on_every_run():
    project, items, check_items = checks_project(rate=0.3, n_items=30, n_checks=5, minimum=99)
    check_ids = {c.pk for c in check_items}
    user = make_member(project)
    served = work_through(project, user)
    served_checks = [pk for pk in served if pk in check_ids]
    assert len(served_checks) == len(set(served_checks))  # never the same check twice
    assert set(served) - check_ids == {i.pk for i in items}  # every benchmark item
    assert 1 <= len(served_checks) <= 5
    # The draw is seeded: which leases are checks is known in advance.
    turns = [n for n in range(len(served)) if checks.is_check_turn(project, user, served=n)]
    taken = [n for n, pk in enumerate(served) if pk in check_ids]
    assert taken == turns[:5]  # every turn until the five checks are used up
    # ... and in the annotator's own seeded order of the checks.
    order = checks.check_order(project, user, sorted(check_ids))
    assert served_checks == order[: len(served_checks)]


def test_the_check_draw_is_deterministic_and_follows_the_rate():
    project = make_project(check_rate=0.1, seed=7)
    user = make_user()
    draws = [checks.is_check_turn(project, user, served=n) for n in range(5000)]
    assert draws == [checks.is_check_turn(project, user, served=n) for n in range(5000)]
    assert 0.08 < sum(draws) / len(draws) < 0.12
    project.check_rate = 0
    assert not any(checks.is_check_turn(project, user, served=n) for n in range(200))


def test_no_check_is_served_while_checks_are_off_and_checks_never_enter_the_pool():
    project, items, _ = checks_project(rate=0.0, n_items=4, n_checks=3)
    user = make_member(project)
    served = work_through(project, user)
    assert sorted(served) == sorted(i.pk for i in items)


def test_a_checks_lease_never_counts_and_ending_it_moves_nothing():
    project, _, (check,) = checks_project(rate=1.0, n_items=1, n_checks=1)
    user, other = make_member(project), make_member(project)
    a = claim_next_item(project=project, annotator=user)
    b = claim_next_item(project=project, annotator=other)
    assert a.item_id == b.item_id == check.pk  # any number may hold a check
    check.refresh_from_db()
    assert (check.live_assignments, check.votes_needed) == (0, 0)
    skip_item(assignment_id=a.pk, annotator=user, reason="unclear")
    later = timezone.now() + timedelta(days=1)
    assert expire_stale_leases(project=project, now=later) == 1
    assert Assignment.objects.get(pk=b.pk).status == AssignmentStatus.EXPIRED
    check.refresh_from_db()
    assert check.live_assignments == 0


def test_claim_ahead_also_serves_checks_at_their_turn():
    project, _, check_items = checks_project(rate=1.0, n_items=3, n_checks=2)
    user = make_member(project)
    first = claim_next_item(project=project, annotator=user)
    ahead = claim_ahead(project=project, annotator=user, holding=first.pk)
    assert {first.item_id, ahead.item_id} == {c.pk for c in check_items}


def pause_setup(**kwargs):
    project, _, _ = checks_project(
        rate=1.0, threshold=0.7, minimum=3, n_items=5, n_checks=6, **kwargs
    )
    user = make_member(project)
    curator = make_member(project, make_user(email="cur@example.org"), role="curator")
    return project, user, curator


def test_wrong_checks_pause_the_annotator_with_figures_audit_and_mail(
    django_capture_on_commit_callbacks,
):
    project, user, _ = pause_setup()
    with django_capture_on_commit_callbacks(execute=True):
        served = work_through(project, user, wrong_on_checks=True)
    assert len(served) == 3  # paused after the minimum of three wrong checks
    pause = ProjectPause.objects.get(project=project, annotator=user)
    acc = checks.rule_accuracy(project, user)
    assert (pause.right, pause.total) == (0, 3)
    assert (pause.low, pause.high) == pytest.approx((acc.low, acc.high), abs=1e-12)
    assert pause.high < 0.7 and pause.threshold == 0.7 and pause.is_open
    assert "0/3" in pause.reason
    assert claim_next_item(project=project, annotator=user) is None
    event = AuditEvent.objects.get(project=project, action="pause")
    assert event.after["annotator"] == user.pk and event.after["total"] == 3
    assert [m.to for m in mail.outbox] == [["cur@example.org"]]
    assert user.get_username() in mail.outbox[0].subject


def test_a_pause_returns_the_open_leases_to_the_pool():
    project, user, _ = pause_setup()
    for _ in range(2):
        a = claim_next_item(project=project, annotator=user)
        submit_judgement(assignment_id=a.pk, annotator=user, vote=vote("2"))
    third = claim_next_item(project=project, annotator=user)
    # The page keeps the next item ready: make it a benchmark item's lease.
    project.check_rate = 0.0
    project.save(update_fields=["check_rate"])
    ahead = claim_ahead(project=project, annotator=user, holding=third.pk)
    assert ahead.item.purpose == ItemPurpose.BENCHMARK
    project.check_rate = 1.0
    project.save(update_fields=["check_rate"])
    _, following = submit_and_claim_next(assignment_id=third.pk, annotator=user, vote=vote("2"))
    assert following is None
    ahead.refresh_from_db()
    assert ahead.status == AssignmentStatus.EXPIRED
    assert Item.objects.get(pk=ahead.item_id).live_assignments == 0


def test_right_checks_do_not_pause_and_a_short_unlucky_run_does_not_either():
    project, user, _ = pause_setup()
    work_through(project, user)  # all right
    assert not ProjectPause.objects.exists()
    project2, user2, _ = pause_setup()
    project2.check_minimum = 10
    project2.save(update_fields=["check_minimum"])
    work_through(project2, user2, wrong_on_checks=True)
    assert not ProjectPause.objects.exists()  # 6 wrong checks < the minimum of 10


def test_a_curator_reinstates_and_the_rule_starts_afresh():
    project, user, curator = pause_setup()
    work_through(project, user, wrong_on_checks=True)
    pause = checks.reinstate(actor=curator, project=project, annotator=user)
    assert pause.reinstated_by == curator and not pause.is_open
    assert AuditEvent.objects.filter(project=project, action="reinstate", actor=curator).exists()
    with pytest.raises(checks.NotPaused):
        checks.reinstate(actor=curator, project=project, annotator=user)
    # They continue; the checks before the reinstatement no longer count.
    assert checks.rule_accuracy(project, user).total == 0
    a = claim_next_item(project=project, annotator=user)
    assert a is not None
    submit_judgement(assignment_id=a.pk, annotator=user, vote=vote("1"))
    assert not checks.is_paused(project, user)


def test_the_annotator_rows_show_accuracy_interval_n_and_pause():
    project, user, _ = pause_setup()
    other = make_member(project)
    work_through(project, user, wrong_on_checks=True)
    work_through(project, other, limit=4)
    rows = {r.membership.user_id: r.checks for r in checks.annotator_rows(project)}
    assert set(rows) == {user.pk, other.pk}  # the curator annotates nothing
    assert rows[user.pk].paused and (rows[user.pk].right, rows[user.pk].total) == (0, 3)
    assert not rows[other.pk].paused and rows[other.pk].total == 4
    assert rows[other.pk].accuracy == 1.0


def test_a_check_vote_is_revisable_like_a_fresh_benchmark_vote_and_is_judged_again():
    project, user, _ = pause_setup()
    project.check_minimum = 1
    project.check_threshold = 0.1
    project.save(update_fields=["check_minimum", "check_threshold"])
    a = claim_next_item(project=project, annotator=user)
    submit_judgement(assignment_id=a.pk, annotator=user, vote=vote("1"))
    item = Item.objects.select_related("project").get(pk=a.item_id)
    assert item.purpose == ItemPurpose.CHECK and can_revise(item)
    assert not checks.is_paused(project, user)
    revise_judgement(assignment_id=a.pk, annotator=user, vote=vote("2"))
    # 0/1 right: the interval's upper end (0.79) is not below 0.1 ...
    assert not checks.is_paused(project, user)
    project.check_threshold = 0.9
    project.save(update_fields=["check_threshold"])
    revise_judgement(assignment_id=a.pk, annotator=user, vote=vote("2"))
    assert checks.is_paused(project, user)  # ... but is below 0.9


def test_the_table_interval_equals_statsmodels_wilson():
    project, user, _ = pause_setup()
    project.check_minimum = 99
    project.save(update_fields=["check_minimum"])
    for n in range(5):
        a = claim_next_item(project=project, annotator=user)
        submit_judgement(assignment_id=a.pk, annotator=user, vote=vote("1" if n % 2 else "2"))
    (row,) = [r.checks for r in checks.annotator_rows(project)]
    low, high = proportion_confint(row.right, row.total, alpha=0.05, method="wilson")
    assert row.total == 5 and 0 < row.right < 5
    assert abs(row.low - low) < 1e-9 and abs(row.high - high) < 1e-9


def test_the_annotator_page_runs_the_same_queries_for_two_or_eight_annotators(client):
    counts = []
    for n in (2, 8):
        project, _, curator = pause_setup()
        for _ in range(n - 1):
            user = make_member(project)
            work_through(project, user, wrong_on_checks=True, limit=4)
        client.force_login(curator)
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(reverse("annotators", args=[project.slug])).status_code == 200
        counts.append(len(ctx))
    assert counts[0] == counts[1]


def test_pausing_twice_at_once_keeps_one_pause_and_the_vote(monkeypatch):
    project, user, _ = pause_setup()
    acc = checks.CheckAccuracy(right=0, total=3, low=0.0, high=0.56)
    assert checks.pause_annotator(project=project, annotator=user, accuracy=acc) is not None
    assert checks.pause_annotator(project=project, annotator=user, accuracy=acc) is None
    # The other vote's pause committed between the check and the insert.
    monkeypatch.setattr(checks, "is_paused", lambda *args: False)
    assert checks.pause_annotator(project=project, annotator=user, accuracy=acc) is None
    assert ProjectPause.objects.filter(annotator=user).count() == 1
