"""Item tallies (votes_1/2/tie and the six correctness-label counts) always
equal a recount of the item's current judgements, and each annotator's
Membership.judged a count of their submitted assignments, whatever sequence
of claims, submits, revisions, skips, lease expiries and late submits led
there. The agreement dashboard reads its point estimates from these tallies
only; the compare page shows Membership.judged."""

from collections import Counter
from contextlib import suppress
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotate.loop.service import (
    AnnotationError,
    Vote,
    claim_next_item,
    expire_stale_leases,
    revise_judgement,
    skip_item,
    submit_judgement,
)
from annotate.models import Assignment, AssignmentStatus, Item, Judgement, Membership
from tests.factories import make_item, make_member, make_project

pytestmark = pytest.mark.django_db

LABELS = ("yes", "no", "unsure")
TALLIES = [
    "votes_1",
    "votes_2",
    "votes_tie",
    *(f"correct_{r}_{label}" for r in "12" for label in LABELS),
]
CHOICE_COLUMN = {"1": "votes_1", "2": "votes_2", "tie": "votes_tie"}


def recount(item: Item) -> dict[str, int]:
    """The tallies counted afresh from the item's current judgements."""
    counts: Counter[str] = Counter({column: 0 for column in TALLIES})
    for choice, c1, c2 in (
        Judgement.objects.with_pair_answers()
        .filter(assignment__item=item, is_current=True)
        .values_list("choice", "correct_1", "correct_2")
    ):
        counts[CHOICE_COLUMN[choice]] += 1
        for response, label in (("1", c1), ("2", c2)):
            if label:
                counts[f"correct_{response}_{label}"] += 1
    return dict(counts)


def stored(item: Item) -> dict[str, int]:
    item.refresh_from_db()
    return {column: getattr(item, column) for column in TALLIES}


def assert_consistent(items: list[Item], users=()) -> None:
    for user in users:
        submitted = Assignment.objects.filter(
            annotator=user, status=AssignmentStatus.SUBMITTED
        ).count()
        assert Membership.objects.get(user=user).judged == submitted
    for item in items:
        assert stored(item) == recount(item)
        live = Assignment.objects.filter(
            item=item, status__in=(AssignmentStatus.OPEN, AssignmentStatus.SUBMITTED)
        ).count()
        assert item.live_assignments == live


def vote_for(item: Item, choice: str, labels: tuple[str, str]) -> Vote:
    if not item.domain.is_correctness:
        return Vote(choice=choice, rationale="because")
    return Vote(choice=choice, correct_1=labels[0], correct_2=labels[1], rationale="because")


step = st.tuples(
    st.sampled_from(["claim", "submit", "revise", "skip", "expire"]),
    st.integers(0, 3),  # which annotator acts
    st.sampled_from(["1", "2", "tie"]),
    st.tuples(st.sampled_from(LABELS), st.sampled_from(LABELS)),
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(step, min_size=1, max_size=30))
def test_tallies_equal_a_recount_after_any_sequence_of_actions(steps):
    project = make_project(votes_per_item=3, escalation_votes=2, lease_minutes=10)
    items = [
        make_item(project, domain=project.domains.get(slug="vqa")),
        make_item(project, domain=project.domains.get(slug="general_preference")),
    ]
    users = [make_member(project) for _ in range(4)]
    now = project.created_at
    for action, who, choice, labels in steps:
        user = users[who]
        mine = Assignment.objects.filter(item__project=project, annotator=user).select_related(
            "item__domain"
        )
        if action == "claim":
            claim_next_item(project=project, annotator=user, now=now)
        elif action == "submit":
            # An open lease, or (a late submit) one that expired meanwhile;
            # with neither, claim first (so that votes are common).
            a = mine.filter(status__in=(AssignmentStatus.OPEN, AssignmentStatus.EXPIRED)).first()
            a = a or claim_next_item(project=project, annotator=user, now=now)
            if a is not None:
                # Refused when it expired and the item went to someone else.
                with suppress(AnnotationError):
                    submit_judgement(
                        assignment_id=a.pk,
                        annotator=user,
                        vote=vote_for(a.item, choice, labels),
                        now=now,
                    )
        elif action == "revise":
            a = mine.filter(status=AssignmentStatus.SUBMITTED).first()
            if a is not None:
                with suppress(AnnotationError):  # refused once the item has all its votes
                    revise_judgement(
                        assignment_id=a.pk, annotator=user, vote=vote_for(a.item, choice, labels)
                    )
        elif action == "skip":
            a = mine.filter(status=AssignmentStatus.OPEN).first()
            if a is not None:
                skip_item(assignment_id=a.pk, annotator=user, reason="not sure")
        else:  # time passes beyond every lease
            now += timedelta(minutes=project.lease_minutes + 1)
            expire_stale_leases(project=project, now=now)
        assert_consistent(items, users)


def test_revision_changing_only_labels_moves_only_label_tallies():
    project = make_project(votes_per_item=3)
    item = make_item(project, domain=project.domains.get(slug="vqa"))
    user = make_member(project)
    a = claim_next_item(project=project, annotator=user)
    submit_judgement(
        assignment_id=a.pk, annotator=user, vote=Vote(choice="1", correct_1="yes", correct_2="no")
    )
    revise_judgement(
        assignment_id=a.pk,
        annotator=user,
        vote=Vote(choice="1", correct_1="unsure", correct_2="no"),
    )
    assert stored(item) == recount(item)
    assert stored(item)["correct_1_unsure"] == 1 and stored(item)["correct_1_yes"] == 0
    assert stored(item)["votes_1"] == 1
