"""The compare page's progress line reads counters the database keeps in
every item change's transaction (annotate.models.progress), not an aggregate
over the project's items (issue 32):

- over random sequences of claims, votes, skips, revisions, expired leases,
  curators closing items and asking for more votes, items added, saved whole
  and deleted, the figures equal the aggregate over every item
  (annotate.loop.page.reference_progress) for every person after every step;
- the page runs the same statements, in number and in SQL, at 100 and at
  100,000 items, and none of them reads the project's items as a whole;
  so does a whole vote through the compare page (vote, claim, fragment);
- the migration sums the items that exist when it runs, and unwinds.
"""

from __future__ import annotations

import re
import threading
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection, transaction
from django.db.models import F
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotate.loop import leases, page, service
from annotate.loop.rules import AnnotationError, Vote
from annotate.models import Assignment, Item, ProgressCounter
from tests.conftest import requires_postgres
from tests.factories import make_item, make_member, make_project, make_user

pytestmark = pytest.mark.django_db

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
PEOPLE = 4  # three annotators and a superuser who is no member
WHO = st.integers(0, PEOPLE - 1)
WHICH = st.integers(0, 7)
ITEM = st.integers(0, 11)
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("claim"), WHO),
        st.tuples(st.just("submit"), WHO, WHICH, st.sampled_from(["1", "2", "tie"])),
        st.tuples(st.just("submit_next"), WHO, WHICH, st.sampled_from(["1", "2", "tie"])),
        st.tuples(st.just("skip"), WHO, WHICH),
        st.tuples(st.just("revise"), WHO, WHICH, st.sampled_from(["1", "2", "tie"])),
        st.tuples(st.just("wait_expire"), st.sampled_from([1, 31, 61])),
        st.tuples(st.just("close"), ITEM),
        st.tuples(st.just("more_votes"), ITEM, st.integers(1, 2)),
        st.tuples(st.just("add_item"), st.integers(1, 3)),
        st.tuples(st.just("delete_unvoted"), ITEM),
        st.tuples(st.just("save_whole"), ITEM),
    ),
    min_size=1,
    max_size=30,
)


def vote(choice: str) -> Vote:
    return Vote(choice=choice, confidence=2, rationale="", active_seconds=3.0)


def figures(totals: dict) -> dict:
    """What progress() reads of either function's answer."""
    return {
        "needed": totals["needed"] or 0,
        "collected": totals["collected"] or 0,
        "left": (totals["held"] or 0) + (totals["open"] or 0),
        "judged": totals["judged"],
    }


def assert_equal_to_reference(project, people) -> None:
    for person in people:
        assert figures(page._project_progress(project, person)) == figures(
            page.reference_progress(project, person)
        )


def nth(person, which: int, project) -> Assignment | None:
    theirs = list(Assignment.objects.filter(annotator=person, item__project=project).order_by("pk"))
    return theirs[which % len(theirs)] if theirs else None


def nth_item(project, which: int) -> Item | None:
    items = list(Item.objects.filter(project=project).order_by("pk"))
    return items[which % len(items)] if items else None


def play(project, people, steps) -> None:
    now = START
    general = project.domains.get(slug="general_preference")
    for step in steps:
        kind, args = step[0], step[1:]
        try:
            if kind == "claim":
                service.claim_next_item(project=project, annotator=people[args[0]], now=now)
            elif kind in ("submit", "submit_next", "revise"):
                person = people[args[0]]
                target = nth(person, args[1], project)
                if target is not None and kind == "submit":
                    service.submit_judgement(
                        assignment_id=target.pk, annotator=person, vote=vote(args[2]), now=now
                    )
                elif target is not None and kind == "submit_next":
                    service.submit_and_claim_next(
                        assignment_id=target.pk, annotator=person, vote=vote(args[2]), now=now
                    )
                elif target is not None:
                    service.revise_judgement(
                        assignment_id=target.pk, annotator=person, vote=vote(args[2])
                    )
            elif kind == "skip":
                target = nth(people[args[0]], args[1], project)
                if target is not None:
                    service.skip_item(
                        assignment_id=target.pk, annotator=people[args[0]], reason="Unsure."
                    )
            elif kind == "wait_expire":
                now += timedelta(minutes=args[0])
                leases.expire_stale_leases(project=project, now=now)
            elif kind == "close":
                item = nth_item(project, args[0])
                if item is not None:
                    leases.stop_collecting_votes(item_id=item.pk)
            elif kind == "more_votes":
                # As a curator's request for more votes writes it.
                item = nth_item(project, args[0])
                if item is not None:
                    Item.objects.filter(pk=item.pk).update(votes_needed=F("votes_needed") + args[1])
            elif kind == "add_item":
                make_item(project, domain=general, votes_needed=args[0], image=None)
            elif kind == "delete_unvoted":
                item = nth_item(project, args[0])
                if item is not None and not item.assignments.exists():
                    item.delete()
            elif kind == "save_whole":
                item = nth_item(project, args[0])
                if item is not None:
                    item.save()  # every column written, the counted ones unchanged
        except (AnnotationError, Assignment.DoesNotExist):
            pass
        assert_equal_to_reference(project, people)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=STEPS)
def test_progress_equals_the_aggregate_over_random_sequences(steps):
    project = make_project(votes_per_item=2, lease_minutes=30)
    general = project.domains.get(slug="general_preference")
    for n, needed in enumerate([3, 2, 1, 2, 0, 2]):
        make_item(project, domain=general, votes_needed=needed, shuffle_key=n * 7 % 5, image=None)
    # Another project's items and votes count only there.
    other = make_project(votes_per_item=1)
    make_item(other, domain=other.domains.get(slug="general_preference"), image=None)
    people = [make_member(project, make_user(), role="annotator") for _ in range(PEOPLE - 1)]
    people.append(make_user(is_superuser=True))
    make_member(other, people[0])
    service.claim_next_item(project=other, annotator=people[0], now=START)
    assert_equal_to_reference(project, people)
    play(project, people, steps)
    assert_equal_to_reference(other, people)


def _bulk_items(project, n: int) -> None:
    """`n` bare items in a few statements (no parts, no images: only the
    counters matter here); a fifth of them already fully leased."""
    domain = project.domains.get(slug="general_preference")
    Item.objects.bulk_create(
        (
            Item(
                project=project,
                domain=domain,
                external_id=f"bulk-{k}",
                prompt="p",
                response_1="a",
                response_2="b",
                content_hash=f"{k:064d}",
                votes_needed=3,
                live_assignments=3 if k % 5 == 0 else 0,
            )
            for k in range(n)
        ),
        batch_size=5000,
    )


def _page_statements(project, user) -> list[str]:
    with CaptureQueriesContext(connection) as ctx:
        shown = page.progress(project, user)
    assert shown["needed"] == 3 * Item.objects.filter(project=project).count()
    # Ids and numbers aside, the statements must be the same.
    return [re.sub(r"\b\d+\b", "N", q["sql"]) for q in ctx.captured_queries]


def _vote_statements(client, project, user) -> list[str]:
    """The statements of one vote through the compare page (the htmx submit:
    the vote, the next item's claim and its fragment), numbers aside."""
    held = Assignment.objects.get(annotator=user, item__project=project, status="open")
    with CaptureQueriesContext(connection) as ctx:
        response = client.post(
            reverse("work_submit", args=[held.pk]), {"choice": "left"}, HTTP_HX_REQUEST="true"
        )
    assert response.status_code == 200 and "HX-Push-Url" in response
    # Savepoint names, ids, times: digits; the rest must be the same.
    return [re.sub(r"\d+", "N", q["sql"]) for q in ctx.captured_queries]


def test_same_statements_at_100_and_100000_items(client):
    user = make_user()
    small, big = make_project(), make_project()
    make_member(small, user)
    make_member(big, user)
    _bulk_items(small, 100)
    _bulk_items(big, 100_000)
    service.claim_next_item(project=big, annotator=user)
    service.claim_next_item(project=small, annotator=user)
    # A vote through the compare page: the same statements at either size
    # (the progress line below is one of them).
    client.force_login(user)
    vote_at_100, vote_at_100k = (_vote_statements(client, p, user) for p in (small, big))
    assert vote_at_100k == vote_at_100
    if connection.vendor == "sqlite":
        # SQLite's claim questions reach the project's items only through
        # the claim order's index (the pick) or by key: never all of them.
        from annotate.loop import sqlite

        with connection.cursor() as cursor:
            cursor.execute(
                "EXPLAIN QUERY PLAN " + sqlite.CLAIM_QUESTIONS_SQL,
                {
                    "project": big.pk,
                    "user": user.pk,
                    "superuser": False,
                    "check_stale": True,
                    "now": "2026-03-02 09:00:00",
                    "group": "",
                },
            )
            plan = [row[-1] for row in cursor.fetchall()]
        by_project = [line for line in plan if "(project_id=?" in line and "membership" not in line]
        # The pick and the grouped pick (the next item of the annotator's
        # group, issue 34): each through an index, never a scan of the items.
        assert by_project, plan
        assert set(by_project) <= {
            "SEARCH p USING INDEX annotate_item_claim_order_idx (project_id=?)",
            "SEARCH p USING INDEX annotate_item_group_idx (project_id=? AND group_key=?)",
        }, plan
    at_100, at_100k = _page_statements(small, user), _page_statements(big, user)
    assert len(at_100) == 1
    assert at_100k == at_100
    # The items are read only through the user's own assignments, by key:
    # never the project's items as a whole.
    (sql,) = at_100
    assert "annotate_progresscounter" in sql
    assert 'FROM "annotate_item"' not in sql
    # And the figures are the aggregate's at 100,000 items too.
    assert figures(page._project_progress(big, user)) == figures(page.reference_progress(big, user))
    # The plan reads the counters and the items by key only (never a scan
    # of the item table).
    ran = []

    def capture(execute, sql, params, many, context):
        ran.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(capture):
        page.progress(big, user)
    (sql, params), explain = ran[0], EXPLAIN[connection.vendor]
    with connection.cursor() as cursor:
        cursor.execute(explain + sql, params)
        plan = "\n".join(
            str(row[-1] if connection.vendor == "sqlite" else row[0]) for row in cursor
        )
    # SQLite: every table read through an index of the counters, the user's
    # assignments or membership, or by rowid; PostgreSQL: the items by their
    # primary key only.
    # (SQLite also scans the statement's own one-row CTEs, counters and mine.)
    keyed = re.compile(
        r"INTEGER PRIMARY KEY|INDEX (?:sqlite_autoindex_)?annotate_"
        r"(?:progresscounter|assignment|membership)|^SCAN (?:counters|mine)$"
    )
    item_access = [
        line
        for line in plan.splitlines()
        if re.search(r"^(?:SCAN|SEARCH)\b", line) and not keyed.search(line)
    ]
    item_access += re.findall(
        r"Seq Scan on annotate_item\b.*|using annotate_item_(?!pkey)\w+", plan
    )
    assert item_access == [], plan


EXPLAIN = {"sqlite": "EXPLAIN QUERY PLAN ", "postgresql": "EXPLAIN "}


def test_counters_equal_the_items_after_bulk_writes_and_deletes():
    project = make_project(votes_per_item=3)
    _bulk_items(project, 2_000)
    Item.objects.filter(project=project, external_id__endswith="7").update(votes_needed=1)
    Item.objects.filter(project=project, external_id__endswith="3").delete()
    user = make_user()
    assert figures(page._project_progress(project, user)) == figures(
        page.reference_progress(project, user)
    )
    # SQLite: a row per item stripe; PostgreSQL: per database session (0025).
    assert 1 <= ProgressCounter.objects.filter(project=project).count() <= 16


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_transactions_writing_items_of_crossed_stripes_do_not_deadlock():
    """Two transactions each change two items, in crossed order of the items'
    stripes (as a vote on one item and the claim of the next do). With a
    counter row per item stripe (migration 0022) the second statements
    waited on each other and PostgreSQL aborted one with "deadlock detected";
    with one stripe per session (0025) each holds one counter row."""
    project = make_project(votes_per_item=3)
    items = [make_item(project) for _ in range(40)]
    by_stripe: dict[int, list[Item]] = {}
    for item in items:
        by_stripe.setdefault(item.pk % 16, []).append(item)
    zero, one = by_stripe[min(by_stripe)], by_stripe[sorted(by_stripe)[1]]
    first_done, second_done = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def bump(item) -> None:
        Item.objects.filter(pk=item.pk).update(votes_needed=F("votes_needed") + 1)

    def work(a, b, mine: threading.Event, theirs: threading.Event) -> None:
        try:
            with transaction.atomic():
                bump(a)
                mine.set()
                theirs.wait(timeout=3)  # the same stripe: the other waits for this commit
                bump(b)
        except BaseException as exc:  # surface in the main thread
            errors.append(exc)
        finally:
            connection.close()

    threads = [
        threading.Thread(target=work, args=(zero[0], one[0], first_done, second_done)),
        threading.Thread(target=work, args=(one[1], zero[1], second_done, first_done)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors
    user = make_user()
    assert figures(page._project_progress(project, user)) == figures(
        page.reference_progress(project, user)
    )
