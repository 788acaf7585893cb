"""Leases that end: run out (the sweep), returned when a member leaves, or
closed with their item by a curator. Plain ORM on both databases; the rows
are locked in the order a vote takes them."""

from __future__ import annotations

from collections import Counter

from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from annotate import signals
from annotate.loop.orm import ITEM_COUNTS
from annotate.models import Assignment, AssignmentStatus, Item, ItemPurpose, Project


def expire_stale_leases(*, project: Project, now=None) -> int:
    """Return abandoned items to the pool: open assignments past their lease
    become expired and stop counting towards their item's votes."""
    now = now or timezone.now()
    with transaction.atomic(savepoint=False):
        # Lock the stale rows so a concurrent submit of the same assignment
        # (which also locks it) either wins before us or sees it expired.
        # Only the assignment rows (`of`), not the joined items claimers lock.
        stale = list(
            Assignment.objects.select_for_update(skip_locked=True, of=("self",))
            .filter(item__project=project, status=AssignmentStatus.OPEN, lease_expires_at__lte=now)
            .values_list("pk", "item_id")
        )
        _end_leases(stale, project_id=project.pk)
    return len(stale)


def return_leases(*, project_id: int, user_id: int) -> list[int]:
    """A member left the project (or their account was deactivated): their
    open leases there go back to the pool now, not when they run out, so no
    item waits on someone who is not there. Their votes stay. Returns the
    items whose leases ended."""
    return release_open_leases(
        Assignment.objects.filter(annotator_id=user_id, item__project_id=project_id),
        project_id=project_id,
    )


def release_open_leases(assignments: QuerySet[Assignment], *, project_id: int) -> list[int]:
    """End the open leases among `assignments` (of one project): expired, no
    longer counting towards their items, and curation rechecks those items.
    Returns the items, sorted. The rows are locked first, so a concurrent
    submit of one either commits before (and is submitted, not open) or
    sees it expired."""
    with transaction.atomic(savepoint=False):
        held = list(
            assignments.select_for_update(of=("self",))
            .filter(status=AssignmentStatus.OPEN)
            .order_by("pk")
            .values_list("pk", "item_id")
        )
        _end_leases(held, project_id=project_id)
    return sorted({item_id for _, item_id in held})


def _end_leases(leases: list[tuple[int, int]], *, project_id: int) -> None:
    """Expire locked open assignments (pk, item_id): they stop counting
    towards their items' votes, and curation rechecks those items."""
    if not leases:
        return
    Assignment.objects.filter(pk__in=[pk for pk, _ in leases]).update(
        status=AssignmentStatus.EXPIRED
    )
    per_item = Counter(item_id for _, item_id in leases)
    for item_id, n in sorted(per_item.items()):
        # A check's lease never counted in live_assignments (annotate.checks).
        Item.objects.filter(pk=item_id, purpose=ItemPurpose.BENCHMARK).update(
            live_assignments=F("live_assignments") - n
        )
    signals.eligibility_changed.send(
        sender=Assignment, project_id=project_id, item_ids=sorted(per_item)
    )


def stop_collecting_votes(*, item_id: int) -> int:
    """A curator closed the item: no more votes are wanted. Its open leases end
    (their holders are told so if they submit) and votes_needed drops to the
    votes it has, so no claim offers it again. Returns how many leases ended.

    Locks the item's open assignments, then its row: the order a vote takes
    them, so a curator's decision and a vote on the same item never deadlock
    (the caller locks the verdict after this, as the vote does)."""
    open_leases = list(
        Assignment.objects.select_for_update(of=("self",))
        .filter(item_id=item_id, status=AssignmentStatus.OPEN)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    item = Item.objects.select_for_update().only(*ITEM_COUNTS).get(pk=item_id)
    if open_leases:
        Assignment.objects.filter(pk__in=open_leases).update(status=AssignmentStatus.EXPIRED)
    Item.objects.filter(pk=item_id).update(
        votes_needed=item.n_votes, live_assignments=F("live_assignments") - len(open_leases)
    )
    return len(open_leases)
