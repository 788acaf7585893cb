"""Ongoing checks (issue 36 item 2): check items (gold and attention
checks, purpose "check") mixed into an annotator's queue at the project's
check_rate, and the pause of an annotator whose accuracy on them falls below
the project's threshold (annotate.gates: the accuracy, its Wilson interval
and the rule).

Serving is deterministic per annotator: whether their n-th lease in the
project is a check is a seeded draw on (project seed, project, annotator,
n), and which check comes is the first one they have never been assigned in
a seeded per-annotator order of the project's checks, so no check comes
twice while unseen ones remain (the assignment's one-per-annotator rule
makes it never). A check's lease does not count in the item's
live_assignments: check items collect no benchmark votes (their
votes_needed is 0, annotate_item_gate_needs_no_votes) and any number of
annotators may hold one.

A pause stops an annotator's claims in the project until a curator
reinstates them; their open leases return to the pool, the project's
curators get an e-mail, and curation audits the pause and the reinstatement
(signals annotator_paused / annotator_reinstated). The rule counts the
checks answered since their last reinstatement, so a reinstated annotator
starts afresh; the annotator table shows the accuracy over all their checks.
Checks are off, pauses included, while the project's check_rate is 0: the
claim asks nothing more then (annotate.loop.service).
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass

from django.conf import settings
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.db.models import Count, Exists, F, Max, OuterRef, Q
from django.utils import timezone

from annotate import signals
from annotate.gates import CheckAccuracy, below_threshold, check_accuracy, wilson_interval
from annotate.loop.leases import return_leases
from annotate.models import (
    Assignment,
    AssignmentStatus,
    Item,
    ItemPurpose,
    Judgement,
    Membership,
    Project,
    ProjectPause,
    Role,
)

logger = logging.getLogger(__name__)


class NotPaused(Exception):
    """Reinstating someone who is not paused."""


# --- Serving ---------------------------------------------------------------------------


def is_check_turn(project: Project, annotator, *, served: int) -> bool:
    """Whether the annotator's lease number `served` (0-based, in the order
    of their assignments in the project) is a check: a seeded draw, the same
    on every run, with probability check_rate."""
    if project.check_rate <= 0:
        return False
    draw = random.Random(f"checks:{project.seed}:{project.pk}:{annotator.pk}:{served}")
    return draw.random() < project.check_rate


def check_order(project: Project, annotator, check_ids: list[int]) -> list[int]:
    """The project's checks in this annotator's seeded order."""
    ordered = sorted(check_ids)
    random.Random(f"check-order:{project.seed}:{project.pk}:{annotator.pk}").shuffle(ordered)
    return ordered


def may_serve(*, project: Project, annotator, now) -> bool:
    """Whether a claim may start with a check: a member who holds no open
    unexpired lease in the project (the usual claim hands that back)."""
    if not Project.objects.visible_to(annotator).filter(pk=project.pk).exists():
        return False
    return not Assignment.objects.filter(
        annotator=annotator,
        item__project=project,
        status=AssignmentStatus.OPEN,
        lease_expires_at__gt=now,
    ).exists()


def seen_content(annotator) -> dict:
    """Whether `annotator` has seen the outer item's content: Exists
    subqueries (annotations of an Item queryset; any true means seen) on the
    item itself, the item it was copied from, and another copy of that source.
    Three, not one with OR: each is an index lookup (the assignment's unique
    (item, annotator), the item's copied_from index), where an OR over a join
    would read all of the annotator's assignments for every check."""
    source = OuterRef("copied_from_id")
    mine = Assignment.objects.filter(annotator=annotator)
    return {
        "seen_self": Exists(mine.filter(item_id=OuterRef("pk"))),
        "seen_source": Exists(mine.filter(item_id=source)),
        "seen_copy": Exists(mine.filter(item__copied_from_id=source)),
    }


def claim_check(
    *, project: Project, annotator, order: str, now, lease_expires_at
) -> Assignment | None:
    """Lease a check to `annotator` when their next lease in the project is
    a check's turn and one they have not seen remains; else None (the caller
    claims as usual). The caller made sure they hold no open lease there.
    Plain ORM on both databases: three small statements, asked only in
    projects with checks on."""
    served = Assignment.objects.filter(item__project=project, annotator=annotator).count()
    if not is_check_turn(project, annotator, served=served):
        return None
    # Each live check of the project and whether this annotator has seen it:
    # was ever assigned it or, for a copy a curator made (curation.gold), its
    # source or another copy of it (they voted on that content already).
    seen = seen_content(annotator)
    checks = list(
        Item.objects.live_gates(ItemPurpose.CHECK)
        .filter(project=project)
        .annotate(**seen)
        .values_list("pk", *seen)
    )
    unseen = {pk for pk, *seen_by in checks if not any(seen_by)}
    order_ = check_order(project, annotator, [pk for pk, *_ in checks])
    chosen = next((pk for pk in order_ if pk in unseen), None)
    if chosen is None:
        return None
    try:
        with transaction.atomic():
            return Assignment.objects.create(
                item=Item.objects.select_related("domain").get(pk=chosen),
                annotator=annotator,
                display_order=order,
                claimed_at=now,
                lease_expires_at=lease_expires_at,
            )
    except IntegrityError:
        # Their other request (another tab, the page's claim ahead) leased
        # the same check a moment ago: the usual claim hands that lease back.
        return None


# --- Pauses ----------------------------------------------------------------------------


def open_pause(project: Project, annotator) -> ProjectPause | None:
    return ProjectPause.objects.open().filter(project=project, annotator=annotator).first()


def pause_in_force(project: Project, annotator) -> ProjectPause | None:
    """The annotator's open pause when it stops them (checks on), or None."""
    return open_pause(project, annotator) if project.check_rate > 0 else None


def is_paused(project: Project, annotator) -> bool:
    return ProjectPause.objects.open().filter(project=project, annotator=annotator).exists()


def rule_accuracy(project: Project, annotator) -> CheckAccuracy:
    """The accuracy the pause rule reads: checks answered since the
    annotator's last reinstatement in the project (all of them if none)."""
    since = ProjectPause.objects.filter(project=project, annotator=annotator).aggregate(
        last=Max("reinstated_at")
    )["last"]
    return check_accuracy(project, annotator, since=since)


def pause_reason(acc: CheckAccuracy, *, threshold: float) -> str:
    return (
        f"Accuracy on check items {acc.right}/{acc.total} "
        f"(95 % interval {100 * acc.low:.1f} to {100 * acc.high:.1f} %) is below "
        f"the project's threshold of {100 * threshold:.0f} %."
    )


def after_check_vote(*, project: Project, annotator, now=None) -> ProjectPause | None:
    """Recompute the annotator's check accuracy after a vote on a check (in
    the vote's transaction) and pause them when the rule says so. Returns the
    new pause, or None."""
    if project.check_rate <= 0:
        return None
    acc = rule_accuracy(project, annotator)
    if not below_threshold(acc, threshold=project.check_threshold, minimum=project.check_minimum):
        return None
    return pause_annotator(project=project, annotator=annotator, accuracy=acc, now=now)


def pause_annotator(
    *, project: Project, annotator, accuracy: CheckAccuracy, now=None
) -> ProjectPause | None:
    """Pause the annotator in the project: the record, their open leases
    back to the pool, the audit (curation, through the signal) and an e-mail
    to the project's curators once the transaction commits. None when they
    are paused already."""
    now = now or timezone.now()
    with transaction.atomic():
        if is_paused(project, annotator):
            return None
        try:
            # A savepoint: the same annotator's other vote (another tab)
            # may pause them at the same moment (annotate_projectpause_one_open);
            # then that pause stands and this vote is kept.
            with transaction.atomic():
                pause = _create_pause(project, annotator, accuracy, now)
        except IntegrityError:
            return None
        return_leases(project_id=project.pk, user_id=annotator.pk)
        signals.annotator_paused.send(sender=ProjectPause, pause=pause)
        transaction.on_commit(lambda: _tell_curators(pause))
    return pause


def _create_pause(project: Project, annotator, accuracy: CheckAccuracy, now) -> ProjectPause:
    return ProjectPause.objects.create(
        project=project,
        annotator=annotator,
        paused_at=now,
        reason=pause_reason(accuracy, threshold=project.check_threshold),
        right=accuracy.right,
        total=accuracy.total,
        low=accuracy.low,
        high=accuracy.high,
        threshold=project.check_threshold,
        minimum=project.check_minimum,
    )


def reinstate(*, actor, project: Project, annotator, now=None) -> ProjectPause:
    """A curator lifts the annotator's open pause in the project (audited).
    A conditional update: of two curators pressing at once, one reinstates
    and the other is told nobody is paused."""
    now = now or timezone.now()
    with transaction.atomic():
        pause = open_pause(project, annotator)
        if pause is None or not ProjectPause.objects.filter(
            pk=pause.pk, reinstated_at__isnull=True
        ).update(reinstated_at=now, reinstated_by=actor):
            raise NotPaused(f"{annotator.get_username()} is not paused in {project.name}.")
        pause.refresh_from_db()
        signals.annotator_reinstated.send(sender=ProjectPause, pause=pause, actor=actor)
    return pause


def _tell_curators(pause: ProjectPause) -> None:
    """E-mail the project's curators and admins who have an address. A mail
    failure is logged, never raised: the pause stands either way and shows
    on the annotator table."""
    to = list(
        Membership.objects.filter(
            project_id=pause.project_id, role__in=(Role.CURATOR, Role.ADMIN), is_active=True
        )
        .exclude(user__email="")
        .values_list("user__email", flat=True)
    )
    if not to:
        return
    project = pause.project
    try:
        send_mail(
            subject=f"[{project.name}] {pause.annotator.get_username()} is paused",
            message=(
                f"{pause.annotator.get_username()} was paused in {project.name} at "
                f"{pause.paused_at:%Y-%m-%d %H:%M} UTC.\n\n{pause.reason}\n\n"
                "A curator can reinstate them from the project's members page."
            ),
            from_email=settings.DEFAULT_FROM_EMAIL,
            recipient_list=to,
        )
    except Exception:  # a mail server's failure must not undo a pause
        logger.exception("could not e-mail the curators of project %s", project.pk)


# --- The annotator table ---------------------------------------------------------------


@dataclass(frozen=True)
class CheckRow:
    right: int
    total: int
    low: float
    high: float
    pause: ProjectPause | None

    @property
    def accuracy(self) -> float | None:
        return self.right / self.total if self.total else None

    @property
    def paused(self) -> bool:
        return self.pause is not None


def check_rows(project: Project) -> dict[int, CheckRow]:
    """Each member's (user id) accuracy on the project's checks over all
    their current votes on them, its Wilson interval, and their open pause:
    two queries whatever the team's size."""
    counts = {
        row["assignment__annotator_id"]: row
        for row in Judgement.objects.filter(
            is_current=True,
            imported=False,
            assignment__item__project=project,
            assignment__item__purpose=ItemPurpose.CHECK,
            assignment__item__retired_at__isnull=True,
        )
        .values("assignment__annotator_id")
        .annotate(
            total=Count("pk"),
            right=Count("pk", filter=Q(choice=F("assignment__item__gold_choice"))),
        )
        .order_by()
    }
    pauses = {
        p.annotator_id: p
        for p in ProjectPause.objects.open().filter(project=project).select_related("reinstated_by")
    }
    rows = {}
    for user_id in {*counts, *pauses}:
        c = counts.get(user_id, {"right": 0, "total": 0})
        low, high = wilson_interval(c["right"], c["total"])
        rows[user_id] = CheckRow(c["right"], c["total"], low, high, pauses.get(user_id))
    return rows


EMPTY_ROW = CheckRow(0, 0, 0.0, 1.0, None)


@dataclass(frozen=True)
class AnnotatorCheckRow:
    membership: Membership
    checks: CheckRow


def annotator_rows(project: Project) -> list[AnnotatorCheckRow]:
    """The annotator table: every member who annotates (the annotator role,
    or anyone with checks answered or a pause) by pseudonym, with their
    check figures. Three queries whatever the team's size."""
    rows = check_rows(project)
    members = (
        Membership.objects.filter(project=project)
        .filter(Q(role=Role.ANNOTATOR) | Q(user_id__in=list(rows)))
        .select_related("user")
        .order_by("pseudonym", "pk")
    )
    return [AnnotatorCheckRow(m, rows.get(m.user_id, EMPTY_ROW)) for m in members]
