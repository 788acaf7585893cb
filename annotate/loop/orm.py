"""The annotation loop's statements in plain ORM: the reference
implementation, run on SQLite. annotate.loop.postgres has the same
functions, with the same names and results, as raw SQL for PostgreSQL;
annotate.loop.service chooses between them, and
tests/annotate/loop/test_statement_paths.py drives both with the same random
sequence of claims, votes, skips, revisions and lease expiries and compares
the database they leave.

The locks are written as PostgreSQL would take them (select_for_update, with
SKIP LOCKED for the claim's pick): Django leaves them out on SQLite, whose
IMMEDIATE transactions serialise writers anyway (config/settings.py).
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Case, Exists, F, Q, When
from django.utils import timezone

from annotate.loop.rules import SLOT_ANSWER_FIELDS, Vote, slot_answers, tally_delta
from annotate.models import (
    Assignment,
    AssignmentStatus,
    Item,
    ItemPart,
    ItemPurpose,
    Judgement,
    JudgementSlot,
    Membership,
    Project,
)

# What update_verdict() reads from the item a vote was counted on.
ITEM_COUNTS = ("votes_needed", "votes_1", "votes_2", "votes_tie", "votes_ranked")
# What the compare page shows besides the assignment (the item's content,
# images included, comes from its parts: no join of Item.image).
COMPARE_PAGE_RELATED = ("item__project", "item__domain")


def tally_update(delta: dict[str, int]) -> dict:
    """F() updates moving an item's tallies by `delta` (rules.tally_delta),
    for one UPDATE statement."""
    return {column: F(column) + n for column, n in delta.items()}


def check_leases(*, project: Project, annotator, now=None) -> tuple[Assignment | None, bool]:
    """The two questions a claim asks first, in one statement that makes at
    most one instance: the annotator's own unexpired open lease, if any
    (oldest first), and whether any lease of the project has run out (an
    EXISTS, not a walk over the leases)."""
    now = now or timezone.now()
    open_leases = Assignment.objects.filter(item__project=project, status=AssignmentStatus.OPEN)
    stale = Q(lease_expires_at__lte=now)
    first = (
        open_leases.filter(Q(annotator=annotator, lease_expires_at__gt=now) | stale)
        .annotate(any_stale=Exists(open_leases.filter(stale)))
        # Their own lease first; a stale one only when they hold none.
        .order_by(Case(When(stale, then=1), default=0), "claimed_at", "pk")
        .first()
    )
    if first is None:
        return None, False
    if first.lease_expires_at <= now:
        return None, True
    return first, first.any_stale


def claim(
    *,
    project: Project,
    annotator,
    order: str,
    now,
    lease_expires_at,
    check_stale: bool,
    group: str = "",
) -> tuple[Assignment | None, bool]:
    """(The leased or resumed assignment, or None; whether nothing was leased
    because stale leases wait to be returned: with check_stale, any lease of
    the project that ran out stops the claim, so the caller can return the
    abandoned items first.) Only for someone who sees the project; their
    oldest unexpired open lease there comes back instead of a new one. A new
    lease comes with its item (live_assignments counting it) and the item's
    domain; a resumed one bare."""
    if not Project.objects.visible_to(annotator).filter(pk=project.pk).exists():
        return None, False
    resumed, any_stale = check_leases(project=project, annotator=annotator, now=now)
    if resumed is not None:
        return resumed, False
    if any_stale and check_stale:
        return None, True
    with transaction.atomic():
        item = pick(project=project, annotator=annotator, group=group, related=("domain",))
        if item is None:
            return None, False
        # Conditional increment: the condition and the CHECK constraint make
        # overlap impossible whatever the locking.
        if not Item.objects.filter(pk=item.pk, live_assignments__lt=F("votes_needed")).update(
            live_assignments=F("live_assignments") + 1
        ):
            return None, False
        item.live_assignments += 1
        item.project = project
        assignment = new_lease(
            item=item,
            annotator=annotator,
            order=order,
            now=now,
            lease_expires_at=lease_expires_at,
        )
        assignment.save(force_insert=True)
    return assignment, False


def pick(*, project: Project, annotator, group: str = "", related=()) -> Item | None:
    """The item a claim takes, its row locked (PostgreSQL; SKIP LOCKED, so
    concurrent claimers take different items without waiting): the
    lowest-id item of `group` (the group of the item the annotator just
    judged or holds) she may take, else the claim order, fewest missing
    votes first, then the seeded shuffle (a group's items share its key,
    annotate.models.shuffle_key) and the id. In adaptive mode that order
    serves items below the base votes only; then the open items of the last
    refit, least certain first (annotate.loop.adaptive)."""
    candidates = (
        Item.objects.needing_votes()
        .filter(project=project)
        .exclude(assignments__annotator=annotator)
        .select_for_update(skip_locked=True, of=("self",))
        .select_related(*related)
    )
    if group:
        item = candidates.filter(group_key=group).exclude(group_key="").order_by("pk").first()
        if item is not None:
            return item
    adaptive = adaptive_parameters(project)
    item = (
        candidates.filter(
            Q(live_assignments__lt=adaptive["base"]) | ~Q(purpose=ItemPurpose.BENCHMARK)
        )
        .order_by(F("votes_needed") - F("live_assignments"), "shuffle_key", "pk")
        .first()
    )
    if item is not None or not adaptive["adaptive"]:
        return item
    # Adaptive votes: past the base votes, the open items of the last refit,
    # least certain first (annotate_certainty_queue_idx).
    return (
        candidates.filter(certainty__project=project, certainty__open=True)
        .order_by("certainty__certainty", "pk")
        .first()
    )


# A fixed project's `base` in the claim: above any votes_needed, no limit.
ADAPTIVE_OFF = 32767


def adaptive_parameters(project: Project) -> dict:
    """The claim's adaptive-votes parameters (postgres.CLAIM_QUESTIONS):
    whether the project is in adaptive mode, and the live assignments below
    which an item is still collecting its base votes in the ordinary order."""
    if project.is_adaptive:
        return {"adaptive": True, "base": project.adaptive_base_votes}
    return {"adaptive": False, "base": ADAPTIVE_OFF}


def new_lease(*, item, annotator, order: str, now, lease_expires_at) -> Assignment:
    """The new, unsaved assignment a claim leases, every field not named here
    at its default: saved by claim() above, and written by
    annotate.loop.postgres's claim from these very values."""
    return Assignment(
        item=item,
        annotator=annotator,
        display_order=order,
        claimed_at=now,
        lease_expires_at=lease_expires_at,
    )


def locked_assignment(*, assignment_id: int, annotator) -> Assignment | None:
    """The annotator's own assignment (annotate.projects), its row locked
    until the transaction ends, with its item, project and domain; or None."""
    return (
        Assignment.objects.own(annotator)
        .select_for_update(of=("self",))
        .select_related("item__project", "item__domain")
        .filter(pk=assignment_id)
        .first()
    )


def assignment_for_page(*, assignment_id: int, annotator) -> Assignment | None:
    """The annotator's own assignment with its item, project and domain; or
    None."""
    return (
        Assignment.objects.own(annotator)
        .filter(pk=assignment_id)
        .select_related(*COMPARE_PAGE_RELATED)
        .first()
    )


def create_judgement(fields: dict, vote: Vote) -> Judgement:
    """A judgement row (`fields`) and its slot rows (rules.slot_answers)."""
    judgement = Judgement.objects.create(**fields)
    answers = slot_answers(vote)
    if answers:
        JudgementSlot.objects.bulk_create(
            JudgementSlot(judgement=judgement, **dict(zip(SLOT_ANSWER_FIELDS, row, strict=True)))
            for row in answers
        )
    return judgement


def record_vote(*, assignment: Assignment, annotator, fields: dict, vote: Vote, now) -> Judgement:
    """Store the judgement (`fields`) and its per-slot answers, mark the
    assignment submitted, count the vote in its item's tallies and in the
    annotator's Membership.judged; `assignment.item` gets its tallies back."""
    item = assignment.item
    judgement = create_judgement(fields, vote)
    Assignment.objects.filter(pk=assignment.pk).update(
        status=AssignmentStatus.SUBMITTED, submitted_at=now
    )
    Item.objects.filter(pk=item.pk).update(**tally_update(tally_delta(new=vote)))
    Membership.objects.filter(project_id=item.project_id, user=annotator).update(
        judged=F("judged") + 1
    )
    item.refresh_from_db(fields=ITEM_COUNTS)
    return judgement


def item_parts(item_id: int) -> list[ItemPart]:
    """The item's parts (models.parts.group_by_slot orders them), each with
    its image; their HTML left deferred."""
    return list(ItemPart.objects.filter(item_id=item_id).select_related("image").defer("html"))
