import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotate import signals
from annotate.loop.service import (
    AnnotationError,
    JudgementInvalid,
    Vote,
    claim_next_item,
    revise_judgement,
    skip_item,
    submit_judgement,
)
from annotate.models import AssignmentStatus, Judgement
from tests.conftest import on_postgres
from tests.factories import make_item, make_member, make_project, make_user

pytestmark = pytest.mark.django_db


def claimed(project=None, domain="vqa", **project_kwargs):
    project = project or make_project(**project_kwargs)
    item = make_item(project, domain=project.domains.get(slug=domain))
    user = make_member(project)
    return claim_next_item(project=project, annotator=user), user, item


def test_submit_stores_canonical_choice_and_updates_tallies():
    a, user, item = claimed(domain="general_preference")
    j = submit_judgement(assignment_id=a.pk, annotator=user, vote=Vote(choice="2"))
    assert j.choice == "2" and j.revision == 1 and j.is_current
    a.refresh_from_db()
    item.refresh_from_db()
    assert a.status == AssignmentStatus.SUBMITTED and a.submitted_at is not None
    assert (item.votes_1, item.votes_2, item.votes_tie) == (0, 1, 0)
    assert j.seconds_spent >= 0


def test_double_submit_stores_one_judgement():
    a, user, item = claimed(domain="general_preference")
    first = submit_judgement(assignment_id=a.pk, annotator=user, vote=Vote(choice="1"))
    second = submit_judgement(assignment_id=a.pk, annotator=user, vote=Vote(choice="1"))
    assert first.pk == second.pk
    assert Judgement.objects.count() == 1
    item.refresh_from_db()
    assert item.votes_1 == 1


def test_judgement_recorded_fires_once_inside_the_transaction():
    a, user, _ = claimed(domain="general_preference")
    calls = []

    def receiver(sender, judgement, item, revision, **kwargs):
        calls.append((judgement.pk, revision, connection.in_atomic_block))

    signals.judgement_recorded.connect(receiver)
    try:
        submit_judgement(assignment_id=a.pk, annotator=user, vote=Vote(choice="1"))
        submit_judgement(assignment_id=a.pk, annotator=user, vote=Vote(choice="1"))
    finally:
        signals.judgement_recorded.disconnect(receiver)
    assert len(calls) == 1
    assert calls[0][1] is False
    assert calls[0][2] is True


def test_receiver_failure_rolls_back_the_vote():
    a, user, item = claimed(domain="general_preference")

    def boom(**kwargs):
        raise RuntimeError("curation failed")

    signals.judgement_recorded.connect(boom)
    try:
        with pytest.raises(RuntimeError):
            submit_judgement(assignment_id=a.pk, annotator=user, vote=Vote(choice="1"))
    finally:
        signals.judgement_recorded.disconnect(boom)
    assert Judgement.objects.count() == 0
    item.refresh_from_db()
    assert item.votes_1 == 0


def test_correctness_domain_requires_both_labels():
    a, user, _ = claimed(domain="vqa")
    with pytest.raises(JudgementInvalid) as exc:
        submit_judgement(assignment_id=a.pk, annotator=user, vote=Vote(choice="1", correct_1="yes"))
    assert "correct_2" in exc.value.errors
    assert Judgement.objects.count() == 0


def test_preference_domain_refuses_correctness_labels():
    a, user, _ = claimed(domain="general_preference")
    with pytest.raises(JudgementInvalid):
        submit_judgement(assignment_id=a.pk, annotator=user, vote=Vote(choice="1", correct_1="yes"))


def test_tie_needs_a_rationale_and_a_project_that_allows_ties():
    a, user, _ = claimed(domain="general_preference")
    with pytest.raises(JudgementInvalid) as exc:
        submit_judgement(assignment_id=a.pk, annotator=user, vote=Vote(choice="tie"))
    assert "rationale" in exc.value.errors
    j = submit_judgement(
        assignment_id=a.pk, annotator=user, vote=Vote(choice="tie", rationale="Both fine.")
    )
    assert j.choice == "tie"
    b, user2, _ = claimed(domain="general_preference", allow_tie=False)
    with pytest.raises(JudgementInvalid) as exc:
        submit_judgement(
            assignment_id=b.pk, annotator=user2, vote=Vote(choice="tie", rationale="x")
        )
    assert "choice" in exc.value.errors


def test_required_rationale_is_enforced():
    a, user, _ = claimed(domain="general_preference", require_rationale=True)
    with pytest.raises(JudgementInvalid) as exc:
        submit_judgement(assignment_id=a.pk, annotator=user, vote=Vote(choice="1"))
    assert "rationale" in exc.value.errors


def test_problem_flag_needs_a_reason():
    a, user, _ = claimed(domain="general_preference")
    with pytest.raises(JudgementInvalid) as exc:
        submit_judgement(
            assignment_id=a.pk, annotator=user, vote=Vote(choice="1", flagged_problem=True)
        )
    assert "problem_reason" in exc.value.errors


def test_another_annotators_assignment_cannot_be_submitted():
    from annotate.models import Assignment

    a, _, _ = claimed(domain="general_preference")
    with pytest.raises(Assignment.DoesNotExist):
        submit_judgement(assignment_id=a.pk, annotator=make_user(), vote=Vote(choice="1"))


def test_skipped_assignment_cannot_be_submitted():
    a, user, _ = claimed(domain="general_preference")
    skip_item(assignment_id=a.pk, annotator=user, reason="unsure")
    with pytest.raises(AnnotationError):
        submit_judgement(assignment_id=a.pk, annotator=user, vote=Vote(choice="1"))


def test_revision_supersedes_and_keeps_history():
    project = make_project(votes_per_item=3)
    a, user, item = claimed(project=project, domain="general_preference")
    first = submit_judgement(assignment_id=a.pk, annotator=user, vote=Vote(choice="1"))
    second = revise_judgement(assignment_id=a.pk, annotator=user, vote=Vote(choice="2"))
    first.refresh_from_db()
    assert not first.is_current and second.is_current and second.revision == 2
    item.refresh_from_db()
    assert (item.votes_1, item.votes_2) == (0, 1)
    assert Judgement.objects.filter(assignment=a).count() == 2


LABEL_TALLIES = [f"correct_{r}_{label}" for r in "12" for label in ("yes", "no", "unsure")]


def label_tallies(item) -> dict[str, int]:
    item.refresh_from_db()
    return {c: getattr(item, c) for c in LABEL_TALLIES if getattr(item, c)}


def test_submit_counts_correctness_labels_on_the_item():
    a, user, item = claimed(domain="vqa")
    submit_judgement(
        assignment_id=a.pk, annotator=user, vote=Vote(choice="1", correct_1="yes", correct_2="no")
    )
    assert label_tallies(item) == {"correct_1_yes": 1, "correct_2_no": 1}


def test_revision_moves_label_tallies_in_the_same_update():
    project = make_project(votes_per_item=3)
    a, user, item = claimed(project=project, domain="vqa")
    submit_judgement(
        assignment_id=a.pk, annotator=user, vote=Vote(choice="1", correct_1="yes", correct_2="no")
    )
    new = Vote(choice="1", correct_1="yes", correct_2="unsure")
    revise_judgement(assignment_id=a.pk, annotator=user, vote=new)
    assert label_tallies(item) == {"correct_1_yes": 1, "correct_2_unsure": 1}
    item.refresh_from_db()
    assert (item.votes_1, item.votes_2, item.votes_tie) == (1, 0, 0)
    # Choice and labels both change: still one UPDATE of the item.
    changed = Vote(choice="2", correct_1="no", correct_2="yes")
    with CaptureQueriesContext(connection) as queries:
        revise_judgement(assignment_id=a.pk, annotator=user, vote=changed)
    item_updates = [q for q in queries if q["sql"].startswith('UPDATE "annotate_item"')]
    assert len(item_updates) == 1
    assert label_tallies(item) == {"correct_1_no": 1, "correct_2_yes": 1}
    item.refresh_from_db()
    assert (item.votes_1, item.votes_2, item.votes_tie) == (0, 1, 0)


def test_revision_is_refused_once_the_item_has_all_its_votes():
    project = make_project(votes_per_item=1)
    a, user, _ = claimed(project=project, domain="general_preference")
    submit_judgement(assignment_id=a.pk, annotator=user, vote=Vote(choice="1"))
    with pytest.raises(AnnotationError):
        revise_judgement(assignment_id=a.pk, annotator=user, vote=Vote(choice="2"))


def test_submit_runs_a_constant_number_of_queries(django_assert_max_num_queries):
    from curation.models import Verdict

    a, user, item = claimed(domain="general_preference")
    Verdict.objects.create(item=item, project=item.project)
    # assignment lock (item, project and domain joined); judgement insert,
    # assignment, tally and Membership.judged updates (one statement on
    # PostgreSQL; on SQLite four, the tallies' update returning them); the verdict
    # lock of curation's receiver (the item is below its votes, so no votes
    # are read); the SAVEPOINT pair comes from the test's transaction. A
    # status change adds one update.
    with django_assert_max_num_queries(5 if on_postgres() else 8):
        submit_judgement(assignment_id=a.pk, annotator=user, vote=Vote(choice="1"))


def test_submit_and_claim_next_is_one_transaction(monkeypatch):
    from annotate.loop import service as services

    project = make_project(votes_per_item=1)
    domain = project.domains.get(slug="general_preference")
    first, second = make_item(project, domain=domain), make_item(project, domain=domain)
    user = make_member(project)
    a = claim_next_item(project=project, annotator=user)

    def broken_claim(**kwargs):
        raise RuntimeError("claim failed")

    # A failing claim takes the vote with it: nothing acknowledged, nothing stored.
    monkeypatch.setattr(services, "claim_next_item", broken_claim)
    with pytest.raises(RuntimeError):
        services.submit_and_claim_next(assignment_id=a.pk, annotator=user, vote=Vote(choice="1"))
    assert not Judgement.objects.filter(assignment=a).exists()
    a.refresh_from_db()
    assert a.status == AssignmentStatus.OPEN
    monkeypatch.undo()
    # The retry stores the vote once and leases the other item.
    judgement, following = services.submit_and_claim_next(
        assignment_id=a.pk, annotator=user, vote=Vote(choice="1")
    )
    assert judgement.already_submitted is False
    assert {a.item_id, following.item_id} == {first.pk, second.pk}
    assert Judgement.objects.filter(assignment=a).count() == 1
    # A repeat returns the stored vote and the lease now held.
    again, held = services.submit_and_claim_next(
        assignment_id=a.pk, annotator=user, vote=Vote(choice="2")
    )
    assert again.already_submitted is True and again.choice == "1"
    assert held.pk == following.pk


def _refusals():
    """(name, how to set the assignment up, the vote, the exception) for each
    way a submit is refused before anything is written."""
    from annotate.models import Assignment

    def expired_without_room(a, user):
        # The lease ran out and the item went to someone else meanwhile.
        Assignment.objects.filter(pk=a.pk).update(status=AssignmentStatus.EXPIRED)
        a.item.__class__.objects.filter(pk=a.item_id).update(votes_needed=1, live_assignments=1)

    return [
        ("invalid", lambda a, user: None, Vote(choice="tie"), JudgementInvalid),
        (
            "skipped",
            lambda a, user: skip_item(assignment_id=a.pk, annotator=user, reason="unsure"),
            Vote(choice="1"),
            AnnotationError,
        ),
        ("expired", expired_without_room, Vote(choice="1"), AnnotationError),
        ("not theirs", "other", Vote(choice="1"), Assignment.DoesNotExist),
    ]


@pytest.mark.parametrize("submit", ["submit_judgement", "submit_and_claim_next"])
@pytest.mark.parametrize("name,setup,vote,error", _refusals(), ids=lambda v: v)
def test_a_refused_submit_commits_its_empty_transaction(submit, name, setup, vote, error):
    """A refusal writes nothing and ends the submit's transaction (here the
    test's savepoint) with a commit, not a rollback: psycopg drops every
    prepared statement of the connection on any ROLLBACK."""
    from annotate.loop import service as services
    from annotate.models import Assignment, Item

    a, user, item = claimed(domain="general_preference")
    if setup == "other":
        user = make_member(item.project)
    else:
        setup(a, user)
    before = (
        list(Assignment.objects.values_list("id", "status")),
        list(Item.objects.values_list("id", "live_assignments", "votes_1", "votes_tie")),
    )
    with CaptureQueriesContext(connection) as ctx, pytest.raises(error):
        getattr(services, submit)(assignment_id=a.pk, annotator=user, vote=vote)
    statements = [q["sql"].upper() for q in ctx.captured_queries]
    assert any(s.startswith("RELEASE SAVEPOINT") for s in statements), statements
    assert not any(s.startswith("ROLLBACK") for s in statements), statements
    assert not Judgement.objects.exists()
    assert before == (
        list(Assignment.objects.values_list("id", "status")),
        list(Item.objects.values_list("id", "live_assignments", "votes_1", "votes_tie")),
    )


@pytest.mark.skipif(not on_postgres(), reason="prepared statements: PostgreSQL")
def test_prepared_statements_survive_an_invalid_vote():
    from annotate.loop.service import submit_and_claim_next

    a, user, _ = claimed(domain="general_preference")

    def prepared() -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_prepared_statements")
            return cursor.fetchone()[0]

    for _ in range(6):  # psycopg prepares a statement on its fifth run
        prepared()
    assert prepared() >= 1
    with pytest.raises(JudgementInvalid):
        submit_and_claim_next(assignment_id=a.pk, annotator=user, vote=Vote(choice="tie"))
    assert prepared() >= 1
