"""Qualification and training (issue 36 item 1): a project may require its
annotators to pass its qualification items (gold items, each with an
explanation) before they get benchmark items.

A newcomer starts an attempt; the attempt serves the qualification items one
by one (the compare page); each answer is stored in the attempt's own rows
(QualificationAnswer, never a Judgement: no statistic, verdict, release,
export or progress count can see it) and shown right or wrong with the
item's explanation. When every item is answered the attempt finishes: passed
at the project's pass mark (the member is admitted), else a retry is open
after the project's wait, enforced here. A curator may admit a member by
hand (audited). Curators and admins are never asked to qualify.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from annotate.loop.rules import (
    AnnotationError,
    DisplayedVote,
    JudgementInvalid,
    canonical_vote,
    displayed_errors,
    validate_vote,
)
from annotate.models import (
    Item,
    ItemPurpose,
    Membership,
    Project,
    QualificationAnswer,
    QualificationAttempt,
    Role,
    Task,
)
from annotate.setup.models import SetupEvent


class QualificationRequired(AnnotationError):
    """A non-admitted annotator asked for (or voted on) benchmark items."""

    def __init__(self, project: Project):
        super().__init__(
            "This project requires qualification first: answer its qualification items "
            f"(/p/{project.slug}/qualify/) before you get benchmark items."
        )


class QualificationError(AnnotationError):
    """A qualification step that is not allowed now (a retry too early, …)."""


def qualification_items(project: Project, annotator=None):
    """The project's qualification items in the order attempts serve them
    (the project's seeded shuffle, then the id): those no curator retired
    and, for `annotator`, none copied from an item they voted on (a copy a
    curator made, curation.gold: they would know its answer)."""
    items = Item.objects.live_gates(ItemPurpose.QUALIFICATION)
    if annotator is not None:
        items = items.exclude(copied_from__assignments__annotator=annotator)
    return items.filter(project=project).order_by("shuffle_key", "id")


def needs_qualification(project: Project, membership: Membership | None) -> bool:
    """Whether this member must still qualify: the project requires it, they
    annotate (curators and admins never qualify) and are not admitted."""
    if not project.qualification_required or membership is None:
        return False
    return membership.role == Role.ANNOTATOR and membership.admitted_at is None


def _membership(project: Project, user) -> Membership | None:
    return Membership.objects.filter(project=project, user=user, is_active=True).first()


def is_admitted(*, project: Project, user) -> bool:
    """Whether `user` may get and vote on the project's benchmark items as
    far as qualification goes (no query unless the project requires it)."""
    if not project.qualification_required or user.is_superuser:
        return True
    return not needs_qualification(project, _membership(project, user))


def check_admitted(*, project: Project, user) -> None:
    """Raise QualificationRequired for a member who must qualify first."""
    if not is_admitted(project=project, user=user):
        raise QualificationRequired(project)


def display_order(attempt_id: int, item_id: int) -> str:
    """The pair's display order of an item in an attempt ("12" or "21"):
    drawn from both ids, so the page and the answer agree without a stored
    lease, and a retry may show the item the other way round."""
    digest = hashlib.sha256(f"qualification:{attempt_id}:{item_id}".encode()).digest()
    return "21" if digest[0] & 1 else "12"


@dataclass
class Status:
    """Where a member stands: what the qualification page and the API show."""

    required: bool
    admitted: bool
    admitted_at: datetime | None
    manual: bool  # admitted by a curator
    open_attempt: QualificationAttempt | None
    last_attempt: QualificationAttempt | None
    retry_at: datetime | None  # a failed attempt's wait, while it runs
    attempts: list[QualificationAttempt] = field(default_factory=list)
    n_items: int = 0

    @property
    def can_start(self) -> bool:
        return (
            self.required
            and not self.admitted
            and self.open_attempt is None
            and self.retry_at is None
            and self.n_items > 0
        )


def retry_at(project: Project, last: QualificationAttempt | None, now: datetime) -> datetime | None:
    """When a failed last attempt may be retried, if that is still ahead."""
    if last is None or last.passed or last.finished_at is None:
        return None
    at = last.finished_at + timedelta(hours=project.qualification_retry_hours)
    return at if at > now else None


def qualification_status(*, project: Project, user, now: datetime | None = None) -> Status:
    now = now or timezone.now()
    membership = _membership(project, user)
    attempts = list(
        QualificationAttempt.objects.filter(project=project, annotator=user).order_by(
            "-started_at", "-id"
        )
    )
    open_attempt = next((a for a in attempts if a.finished_at is None), None)
    finished = [a for a in attempts if a.finished_at is not None]
    last = finished[0] if finished else None
    required = project.qualification_required and not user.is_superuser
    admitted = not needs_qualification(project, membership) if required else True
    return Status(
        required=required,
        admitted=admitted,
        admitted_at=membership.admitted_at if membership else None,
        manual=bool(membership and membership.admitted_by_id),
        open_attempt=open_attempt,
        last_attempt=last,
        retry_at=None if admitted else retry_at(project, last, now),
        attempts=attempts,
        n_items=qualification_items(project, user).count(),
    )


def start_attempt(*, project: Project, annotator, now: datetime | None = None):
    """The member's open attempt, or a new one when a start is allowed now:
    not admitted, the project has qualification items, and no failed
    attempt's wait still runs (QualificationError otherwise)."""
    now = now or timezone.now()
    if project.archived_at is not None:
        raise QualificationError("This project is archived.")
    if project.task != Task.PAIRWISE:
        raise QualificationError("Qualification is served for pairwise projects only.")
    with transaction.atomic():
        # The membership row lock serialises two starts by the same member.
        membership = (
            Membership.objects.select_for_update()
            .filter(project=project, user=annotator, is_active=True)
            .first()
        )
        if not needs_qualification(project, membership):
            raise QualificationError("You do not need to qualify in this project.")
        open_attempt = QualificationAttempt.objects.filter(
            project=project, annotator=annotator, finished_at__isnull=True
        ).first()
        if open_attempt is not None:
            return open_attempt
        last = (
            QualificationAttempt.objects.filter(project=project, annotator=annotator)
            .order_by("-started_at", "-id")
            .first()
        )
        wait = retry_at(project, last, now)
        if wait is not None:
            raise QualificationError(
                f"You may retry the qualification after {wait:%Y-%m-%d %H:%M} UTC."
            )
        item_ids = list(qualification_items(project, annotator).values_list("pk", flat=True))
        if not item_ids:
            raise QualificationError(
                "This project has no qualification items yet: ask its curators."
            )
        return QualificationAttempt.objects.create(
            project=project,
            annotator=annotator,
            started_at=now,
            item_ids=item_ids,
            total=len(item_ids),
            pass_mark=project.qualification_pass_mark,
        )


def next_item(attempt: QualificationAttempt) -> Item | None:
    """The attempt's first item not answered yet (None: all answered)."""
    answered = set(attempt.answers.values_list("item_id", flat=True))
    for pk in attempt.item_ids:
        if pk not in answered:
            item = Item.objects.filter(pk=pk).select_related("project", "domain", "image").first()
            if item is not None:  # (an item deleted meanwhile is passed over)
                return item
    return None


def answer_item(
    *, attempt_id: int, annotator, item_id: int, vote: DisplayedVote, now: datetime | None = None
) -> QualificationAnswer:
    """Store the member's answer to the attempt's item: checked as a vote of
    the project (the same rules as the compare page), mapped to canonical
    terms with the item's display order in the attempt, right when its
    choice is the item's gold. The last answer finishes the attempt (and
    admits the member at the pass mark). Raises QualificationError for an
    attempt that is not theirs or not open, or an item not in it; returns the
    stored answer (the same one again for a repeated post)."""
    now = now or timezone.now()
    with transaction.atomic():
        # The attempt's row lock serialises two answers of one attempt.
        attempt = (
            QualificationAttempt.objects.select_for_update()
            .select_related("project")
            .filter(pk=attempt_id, annotator=annotator)
            .first()
        )
        if attempt is None:
            raise QualificationError("No such qualification attempt.")
        stored = attempt.answers.filter(item_id=item_id).first()
        if stored is not None:
            return stored  # a double submit: the first answer stands
        if attempt.finished_at is not None:
            raise QualificationError("This qualification attempt is finished.")
        if item_id not in attempt.item_ids:
            raise QualificationError("This item is not part of your qualification.")
        item = Item.objects.select_related("domain").get(pk=item_id)
        order = display_order(attempt.pk, item.pk)
        canonical = canonical_vote(vote, order=order)
        try:
            validate_vote(canonical, project=attempt.project, domain=item.domain)
        except JudgementInvalid as exc:  # by the field names the page shows
            raise JudgementInvalid(displayed_errors(exc.errors, order=order)) from None
        try:
            with transaction.atomic():
                answer = QualificationAnswer.objects.create(
                    attempt=attempt,
                    item=item,
                    display_order=order,
                    choice=canonical.choice,
                    correct=canonical.choice == item.gold_choice,
                    answered_at=now,
                )
        except IntegrityError:  # (the attempt's lock makes this unreachable)
            return attempt.answers.get(item_id=item_id)
        _finish_if_done(attempt, now)
        return answer


def _finish_if_done(attempt: QualificationAttempt, now: datetime) -> None:
    answers = list(attempt.answers.values_list("item_id", "correct"))
    remaining = set(attempt.item_ids) - {pk for pk, _ in answers}
    if remaining and Item.objects.filter(pk__in=remaining).exists():
        return
    project = attempt.project
    attempt.right = sum(1 for _, correct in answers if correct)
    attempt.total = len(answers)
    attempt.pass_mark = project.qualification_pass_mark
    attempt.passed = attempt.total > 0 and attempt.right >= attempt.pass_mark * attempt.total
    attempt.finished_at = now
    attempt.save(update_fields=["right", "total", "pass_mark", "passed", "finished_at"])
    if attempt.passed:
        Membership.objects.filter(
            project=project, user_id=attempt.annotator_id, admitted_at__isnull=True
        ).update(admitted_at=now)


def admit_member(*, project: Project, user_id: int, actor, reason: str = "") -> Membership:
    """A curator admits a member by hand (audited as a SetupEvent)."""
    with transaction.atomic():
        membership = (
            Membership.objects.select_for_update().filter(project=project, user_id=user_id).first()
        )
        if membership is None:
            raise QualificationError("No such member.")
        if membership.admitted_at is not None:
            return membership
        membership.admitted_at = timezone.now()
        membership.admitted_by = actor
        membership.save(update_fields=["admitted_at", "admitted_by"])
        SetupEvent.objects.create(
            project=project,
            actor=actor,
            subject_id=user_id,
            action="qualification_admit",
            before={"admitted": False},
            after={"admitted": True, "reason": reason},
        )
    return membership


def attempts_by_member(project: Project) -> dict[int, list[QualificationAttempt]]:
    """Every attempt of the project, by annotator id, newest first (one query)."""
    out: dict[int, list[QualificationAttempt]] = {}
    for attempt in QualificationAttempt.objects.filter(project=project).order_by(
        "-started_at", "-id"
    ):
        out.setdefault(attempt.annotator_id, []).append(attempt)
    return out
