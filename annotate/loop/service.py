"""The annotation loop: claim, submit, skip, revise (the leases that end:
annotate.loop.leases).

The public functions every caller uses (the compare page, the REST API, the
setup and curation services, the lease sweep). The rules they apply are pure
Python in annotate.loop.rules; the few statements that differ by database
come from annotate.loop.postgres (raw SQL: the claim and the vote in one
statement each), annotate.loop.sqlite (the same as short fixed statements)
or annotate.loop.orm (the same in plain ORM, the reference), chosen in one
place, _statements(). Everything else here is plain ORM on both databases.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from datetime import timedelta
from functools import partial
from types import ModuleType

from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.http import Http404
from django.utils import timezone

from annotate import checks, signals
from annotate.loop import orm, postgres, sqlite
from annotate.loop.leases import expire_stale_leases
from annotate.loop.orm import COMPARE_PAGE_RELATED, tally_update
from annotate.loop.retries import run_again_if_lost
from annotate.loop.rules import (
    AnnotationError,
    DisplayedVote,
    JudgementInvalid,
    Vote,
    can_revise,
    canonical_vote,
    displayed_errors,
    draw_order,
    tally_delta,
    validate_slot_vote,
    validate_vote,
    vote_fields,
)
from annotate.loop.slot_leases import fit_display_order
from annotate.models import (
    Assignment,
    AssignmentStatus,
    Item,
    ItemPart,
    ItemPurpose,
    Judgement,
    Project,
    Task,
)
from annotate.models.parts import group_by_slot
from annotate.qualification.service import check_admitted, is_admitted

# Callers import the vote's types and rules from here with the workflows.
__all__ = [
    "COMPARE_PAGE_RELATED",
    "MAX_HELD",
    "AnnotationError",
    "DisplayedVote",
    "JudgementInvalid",
    "Vote",
    "can_revise",
    "claim_ahead",
    "claim_next_item",
    "expire_stale_leases",
    "own_assignment_for_page",
    "owns_assignment",
    "parts_to_send",
    "revise_judgement",
    "skip_item",
    "submit_and_claim_next",
    "submit_judgement",
    "validate_vote",
    "votes_may_come",
]


def _statements() -> ModuleType:
    """Where the claim, the vote and the reads of one's own assignment run:
    PostgreSQL's raw statements, SQLite's, or the plain ORM's (the reference)
    on any other database. The one place the choice is made."""
    return _BY_VENDOR.get(connection.vendor, orm)


_BY_VENDOR = {"postgresql": postgres, "sqlite": sqlite}


# The display order of each lease (rules.draw_order), drawn here for both paths:
# uniform over the permutations of the item's response slots (pairs: two).
_coin = random.SystemRandom()
PAIR_SLOTS = 2


def votes_may_come(*, project: Project, annotator) -> bool:
    """Whether an item of the project may still ask this annotator for a vote:
    one still collecting votes that they have never been assigned (someone
    else's lease on it may run out, or the votes coming may split and
    escalate). False means the annotator is done for good, unless a curator
    asks for more votes later."""
    from annotate.eligibility import collecting

    return collecting(project).exclude(assignments__annotator=annotator).exists()


# --- Claims ----------------------------------------------------------------------------


def claim_next_item(*, project: Project, annotator, now=None, group: str = "") -> Assignment | None:
    """Lease the next item to `annotator`, or None when nothing is left for them.

    Only for someone who sees the project (annotate.projects). An annotator
    with an open lease in the project gets it back (one item at a time).
    Candidates: items with fewer live assignments than votes needed that this
    person has never been assigned; fewest missing votes first, then the
    project's seeded shuffle. Leases that ran out in the project go back to
    the pool first. The display order is randomised here and stored.

    A new lease comes with its item and domain (on PostgreSQL a resumed one
    too, read in the same statement).
    """
    if project.archived_at is not None:
        return None  # an archived project is read-only
    # Qualification first (issue 36): no query unless the project requires it.
    check_admitted(project=project, user=annotator)
    now = now or timezone.now()
    if project.check_rate > 0:
        # Checks on (annotate.checks): a paused annotator gets nothing, and
        # some leases are checks. Asked only in such projects.
        if checks.is_paused(project, annotator):
            return None
        if checks.may_serve(project=project, annotator=annotator, now=now):
            check = _check_lease(project=project, annotator=annotator, now=now)
            if check is not None:
                return check
    claim = partial(
        _statements().claim,
        project=project,
        annotator=annotator,
        order=draw_order(PAIR_SLOTS, _coin),
        now=now,
        lease_expires_at=now + timedelta(minutes=project.lease_minutes),
        group=group,
    )
    assignment, stale = claim(check_stale=True)
    if stale:
        # Nothing was leased because abandoned leases wait to be returned
        # first; return them, then claim without asking again.
        expire_stale_leases(project=project, now=now)
        assignment, _ = claim(check_stale=False)
    if (
        assignment is None
        and connection.features.has_select_for_update_skip_locked
        and not connection.in_atomic_block
    ):
        assignment = _claim_past_locks(claim, project=project, annotator=annotator)
    if assignment is not None and project.task != Task.PAIRWISE:
        fit_display_order(assignment, _coin)
    return assignment


def _check_lease(*, project: Project, annotator, now) -> Assignment | None:
    """A check's new lease when this claim is a check's turn (annotate.checks)."""
    check = checks.claim_check(
        project=project,
        annotator=annotator,
        order=draw_order(PAIR_SLOTS, _coin),
        now=now,
        lease_expires_at=now + timedelta(minutes=project.lease_minutes),
    )
    if check is not None and project.task != Task.PAIRWISE:
        fit_display_order(check, _coin)
    return check


# Pauses (seconds) of a claim that found nothing while an item it may take
# exists: SKIP LOCKED passed over it because another transaction (a vote on
# it, another claim) held its row for a few milliseconds. Bounded: 0.155 s in
# all, after which the answer is "none now", and votes_may_come() tells the
# caller that more may come.
_LOCKED_PAUSES = (0.005, 0.01, 0.02, 0.04, 0.08)


def _claim_past_locks(claim, *, project: Project, annotator) -> Assignment | None:
    """Claim again while an item this annotator may take exists but was
    locked, or they hold an open lease the claim did not see: their other
    request (the page's claim ahead) leased the locked item and committed
    after the claim read (then the claim hands that lease back). Outside any
    transaction only: waiting while holding a vote's locks would stall the
    claimers waiting for them."""
    for pause in _LOCKED_PAUSES:
        takeable = (
            Item.objects.needing_votes()
            .filter(project=project)
            .exclude(assignments__annotator=annotator)
        )
        held = Assignment.objects.filter(
            annotator=annotator,
            item__project=project,
            status=AssignmentStatus.OPEN,
            lease_expires_at__gt=timezone.now(),
        )
        if not (takeable.exists() or held.exists()):
            return None
        time.sleep(pause)
        assignment, _ = claim(check_stale=False)
        if assignment is not None:
            return assignment
    return None


# How many items an annotator may hold open at once: the one on screen and
# the one the compare page keeps ready behind it (claim_ahead).
MAX_HELD = 2


def claim_ahead(*, project: Project, annotator, holding: int, now=None) -> Assignment | None:
    """Lease the item the compare page keeps ready while the annotator works
    on `holding` (their open assignment), so that a submit can show it at
    once: the next claim_next_item() returns it (the oldest open lease).

    A lease like any other (same candidates and order as claim_next_item(),
    counted in the item's live assignments, expiring the same way); at most
    MAX_HELD open leases per annotator in the project: when they already
    hold another one, that one comes back. None when nothing is left, when
    `holding` is not their open lease, or for a non-member. Off the hot
    path (the page asks for it after it painted), so plain ORM on both
    databases.
    """
    now = now or timezone.now()
    if project.archived_at is not None:
        return None  # an archived project is read-only
    if not Project.objects.visible_to(annotator).filter(pk=project.pk).exists():
        return None
    if project.check_rate > 0 and checks.is_paused(project, annotator):
        return None
    if not is_admitted(project=project, user=annotator):
        return None
    open_leases = (
        Assignment.objects.own(annotator)
        .filter(item__project=project, status=AssignmentStatus.OPEN, lease_expires_at__gt=now)
        .order_by("claimed_at", "pk")
    )
    held = list(open_leases.annotate(group=F("item__group_key")))
    if holding not in {a.pk for a in held}:
        return None
    ahead = [a for a in held if a.pk != holding]
    group = next(a.group for a in held if a.pk == holding)
    if ahead:
        return ahead[0]
    if len(held) >= MAX_HELD:
        return None
    if Assignment.objects.filter(
        item__project=project, status=AssignmentStatus.OPEN, lease_expires_at__lte=now
    ).exists():
        expire_stale_leases(project=project, now=now)
    try:
        return _lease_ahead(project=project, annotator=annotator, now=now, group=group)
    except IntegrityError:
        # Their other request (another tab, a submit's claim) leased the same
        # item and committed after this one read the candidates: that lease
        # is the one kept ready.
        return open_leases.exclude(pk=holding).first()


def _lease_ahead(*, project: Project, annotator, now, group: str) -> Assignment | None:
    if project.check_rate > 0:
        # As the claim: a check when it is one's turn (annotate.checks).
        check = _check_lease(project=project, annotator=annotator, now=now)
        if check is not None:
            return check
    with transaction.atomic():
        # As the claim: the next item of the group she is in first, an item
        # no other claimer holds (PostgreSQL).
        item = orm.pick(project=project, annotator=annotator, group=group)
        if item is None:
            return None
        # The conditional increment and the CHECK constraint make overlap
        # impossible whatever the locking (as in claim_next_item()).
        if not Item.objects.filter(pk=item.pk, live_assignments__lt=F("votes_needed")).update(
            live_assignments=F("live_assignments") + 1
        ):
            return None
        ahead = Assignment.objects.create(
            item=item,
            annotator=annotator,
            display_order=draw_order(PAIR_SLOTS, _coin),
            claimed_at=now,
            lease_expires_at=now + timedelta(minutes=project.lease_minutes),
        )
        if project.task != Task.PAIRWISE:
            fit_display_order(ahead, _coin)
        return ahead


# --- Votes -----------------------------------------------------------------------------


def submit_judgement(
    *, assignment_id: int, annotator, vote: DisplayedVote | Vote, now=None
) -> Judgement:
    """Record a vote for the annotator's assignment, in canonical terms.

    `vote` is what the annotator answered as displayed (a DisplayedVote: the
    compare page, the REST API), mapped here to canonical terms with the
    assignment's display order once its row is locked (rules.canonical_vote),
    its refusals raised by displayed field names; or a Vote already in
    canonical terms (imports, seeding, tests), refused by canonical names.

    Idempotent per assignment: a double click or a retry after a network
    error returns the judgement already stored, with `already_submitted` set
    to True (False on the judgement this call stored). Item tallies, the
    annotator's Membership.judged and the judgement_recorded signal happen in
    the same transaction; the item sent with the signal carries its tallies
    with this vote counted. Raises Assignment.DoesNotExist for an assignment
    that is not the annotator's.
    """
    judgement, _ = _submit(
        assignment_id=assignment_id,
        annotator=annotator,
        vote=vote,
        now=now or timezone.now(),
        claim_next=False,
    )
    return judgement


def submit_and_claim_next(
    *, assignment_id: int, annotator, vote: DisplayedVote | Vote, now=None
) -> tuple[Judgement, Assignment | None]:
    """submit_judgement(), then claim_next_item() in the item's project, in one
    transaction: the page's and the API's submit-and-next. One commit (one WAL
    flush) instead of two. If the claim failed, the vote would roll back with
    it and the request answer an error, so a retry stores it exactly once;
    only an acknowledged vote is ever stored. Raises as submit_judgement().
    """
    return _submit(
        assignment_id=assignment_id,
        annotator=annotator,
        vote=vote,
        now=now or timezone.now(),
        claim_next=True,
    )


def _submit(
    *, assignment_id: int, annotator, vote, now, claim_next: bool
) -> tuple[Judgement, Assignment | None]:
    """The vote (and, with claim_next, the next lease) in one transaction,
    run again if PostgreSQL ends it to break a deadlock (annotate.loop.retries).
    _check_submit() writes nothing: a refusal (an invalid vote, a skipped or
    expired item, someone else's assignment) ends the transaction with COMMIT
    and is raised after it; a ROLLBACK would cost every later request on the
    connection (psycopg drops all its prepared statements on any ROLLBACK,
    so the next claims and votes are parsed and planned again). Anything
    raised after the checks rolls back as usual."""
    refused, judgement, following = run_again_if_lost(
        lambda: _submit_transaction(assignment_id, annotator, vote, now, claim_next)
    )
    if refused is not None:
        raise refused
    if (
        claim_next
        and following is None
        and connection.features.has_select_for_update_skip_locked
        and not connection.in_atomic_block
    ):
        # Nothing could be leased inside the vote's transaction (where a claim must
        # not wait for locked rows); now, its locks released, one patient claim.
        following = _next_lease(judgement, annotator, now)
    return judgement, following


def _submit_transaction(assignment_id: int, annotator, vote, now, claim_next: bool):
    """(The refusal, or None; the judgement; the next lease) of one attempt."""
    with transaction.atomic():
        try:
            checked = _check_submit(assignment_id=assignment_id, annotator=annotator, vote=vote)
        except (AnnotationError, Assignment.DoesNotExist) as exc:
            return exc, None, None
        judgement = _write_submit(checked, annotator=annotator, now=now)
        _after_vote(judgement.assignment.item, annotator=annotator, now=now)
        return None, judgement, _next_lease(judgement, annotator, now) if claim_next else None


def _next_lease(judgement: Judgement, annotator, now) -> Assignment | None:
    item = judgement.assignment.item  # (the next item of its group first)
    return claim_next_item(project=item.project, annotator=annotator, now=now, group=item.group_key)


def _after_vote(item: Item, *, annotator, now) -> None:
    """A vote on a check item: the check rule may pause the annotator (in the
    vote's transaction, so the next claim already sees the pause)."""
    if item.purpose == ItemPurpose.CHECK:
        checks.after_check_vote(project=item.project, annotator=annotator, now=now)


@dataclass
class _CheckedSubmit:
    assignment: Assignment
    vote: Vote | None  # None: already submitted
    stored: Judgement | None = None


def _check_submit(*, assignment_id: int, annotator, vote) -> _CheckedSubmit:
    """Lock the annotator's assignment and check the vote, writing nothing."""
    # The assignment row lock serialises double submits of one assignment.
    # Only that row; the item, project and domain come along unlocked.
    assignment = _statements().locked_assignment(assignment_id=assignment_id, annotator=annotator)
    if assignment is None:
        raise Assignment.DoesNotExist
    if assignment.status == AssignmentStatus.SUBMITTED:
        stored = assignment.judgements.get(is_current=True)
        stored.already_submitted = True
        return _CheckedSubmit(assignment, None, stored)
    item = assignment.item
    check_admitted(project=item.project, user=annotator)  # (issue 36; no query if not required)
    vote = _checked_vote(vote, assignment=assignment, project=item.project, domain=item.domain)
    if assignment.status == AssignmentStatus.SKIPPED:
        raise AnnotationError("You skipped this item; it can no longer be judged.")
    # A late submit after the lease expired still counts if the item has room
    # (the conditional UPDATE writes nothing when it refuses).
    if assignment.status == AssignmentStatus.EXPIRED and not Item.objects.filter(
        pk=item.pk, live_assignments__lt=F("votes_needed")
    ).update(live_assignments=F("live_assignments") + 1):
        raise AnnotationError(
            "This item is no longer open for your vote: your time on it ran out and it was "
            "given to someone else, or a curator closed it."
        )
    return _CheckedSubmit(assignment, vote)


def _checked_vote(vote: DisplayedVote | Vote, *, assignment: Assignment, project, domain) -> Vote:
    """`vote` in canonical terms (mapped with the assignment's display order
    when it came as displayed), or JudgementInvalid with the messages by the
    field names the caller used."""
    if not isinstance(vote, (Vote, DisplayedVote)):
        raise TypeError(f"a vote is a DisplayedVote or a Vote, not {type(vote).__name__}")
    if vote.task != project.task:
        raise JudgementInvalid({"task": f"This project's task is {project.task}, not {vote.task}."})
    check = (  # best of N and rankings: the item's N slots are its display order's
        partial(validate_vote, project=project)
        if project.task == Task.PAIRWISE
        else partial(
            validate_slot_vote,
            n_slots=len(assignment.display_order),
            allow_none=project.allow_none_pick,
        )
    )
    if isinstance(vote, Vote):
        check(vote, domain=domain)
        return vote
    canonical = canonical_vote(vote, order=assignment.display_order)
    try:
        check(canonical, domain=domain)
    except JudgementInvalid as exc:
        raise JudgementInvalid(
            displayed_errors(exc.errors, order=assignment.display_order)
        ) from None
    return canonical


def _write_submit(checked: _CheckedSubmit, *, annotator, now) -> Judgement:
    """Store the checked vote, inside the caller's transaction: the judgement,
    the assignment submitted, the item's tallies and the annotator's
    Membership.judged (one statement on PostgreSQL), then the signal, with
    the item carrying its tallies with this vote counted."""
    if checked.stored is not None:
        return checked.stored
    assignment, vote, item = checked.assignment, checked.vote, checked.assignment.item
    assert vote is not None
    fields = {
        "assignment_id": assignment.pk,
        "revision": 1,
        "is_current": True,
        "seconds_spent": max(0.0, (now - assignment.claimed_at).total_seconds()),
        "created_at": timezone.now(),
        **vote_fields(vote),
    }
    judgement = _statements().record_vote(
        assignment=assignment, annotator=annotator, fields=fields, vote=vote, now=now
    )
    assignment.status = AssignmentStatus.SUBMITTED
    assignment.submitted_at = now
    judgement.assignment = assignment
    judgement.already_submitted = False
    signals.judgement_recorded.send(
        sender=Judgement, judgement=judgement, item=item, revision=False
    )
    return judgement


def skip_item(*, assignment_id: int, annotator, reason: str) -> Assignment:
    """Give an open item back; it is never offered to this annotator again."""
    if not reason.strip():
        raise JudgementInvalid({"skip_reason": "Say why you skip this item."})
    with transaction.atomic():
        assignment = (
            Assignment.objects.own(annotator)
            .select_for_update(of=("self",))
            .filter(pk=assignment_id)
            .first()
        )
        if assignment is None:
            raise Assignment.DoesNotExist
        if assignment.status == AssignmentStatus.SKIPPED:
            return assignment
        if assignment.status == AssignmentStatus.SUBMITTED:
            raise AnnotationError("This item is already judged.")
        was_live = assignment.status == AssignmentStatus.OPEN
        assignment.status = AssignmentStatus.SKIPPED
        assignment.skip_reason = reason.strip()[:500]
        assignment.save(update_fields=["status", "skip_reason"])
        if was_live:
            # A check's lease never counted (annotate.checks).
            Item.objects.filter(pk=assignment.item_id, purpose=ItemPurpose.BENCHMARK).update(
                live_assignments=F("live_assignments") - 1
            )
        project_id = Item.objects.filter(pk=assignment.item_id).values_list(
            "project_id", flat=True
        )[0]
        signals.eligibility_changed.send(
            sender=Assignment, project_id=project_id, item_ids=[assignment.item_id]
        )
        return assignment


def revise_judgement(*, assignment_id: int, annotator, vote: DisplayedVote | Vote) -> Judgement:
    """Supersede the annotator's current judgement with a new revision.
    The old row stays (is_current=False): history is never lost. `vote` as
    submit_judgement() takes it (as displayed, or canonical)."""
    with transaction.atomic():
        assignment = (
            Assignment.objects.own(annotator)
            .select_for_update(of=("self",))
            .filter(pk=assignment_id, status=AssignmentStatus.SUBMITTED)
            .first()
        )
        if assignment is None:
            raise Assignment.DoesNotExist
        item = (
            Item.objects.select_for_update()
            .select_related("project", "domain")
            .get(pk=assignment.item_id)
        )
        if not can_revise(item):
            raise AnnotationError("This item has all its votes; it can no longer be revised.")
        vote = _checked_vote(vote, assignment=assignment, project=item.project, domain=item.domain)
        # The old vote's labels, read through the one accessor of pair answers.
        old = Judgement.objects.with_pair_answers().get(assignment=assignment, is_current=True)
        Judgement.objects.filter(pk=old.pk).update(is_current=False)
        judgement = orm.create_judgement(
            {
                "assignment": assignment,
                "revision": old.revision + 1,
                "seconds_spent": old.seconds_spent,
                **vote_fields(vote),
            },
            vote,
        )
        changes = tally_delta(new=vote, old=old)
        if changes:
            Item.objects.filter(pk=item.pk).update(**tally_update(changes))
        signals.judgement_recorded.send(
            sender=Judgement, judgement=judgement, item=item, revision=True
        )
        _after_vote(item, annotator=annotator, now=timezone.now())
        return judgement


# --- Reads -----------------------------------------------------------------------------


def own_assignment_for_page(*, assignment_id: int, annotator) -> Assignment | None:
    """The annotator's own assignment (annotate.projects) with its item,
    project and domain loaded, or None. On PostgreSQL one raw
    statement that leaves the item's source text deferred."""
    return _statements().assignment_for_page(assignment_id=assignment_id, annotator=annotator)


def parts_to_send(item: Item) -> dict[str, list[ItemPart]]:
    """The item's parts grouped by slot (models.parts.group_by_slot), each
    with its image but not its HTML: what the API sends. One statement."""
    return group_by_slot(_statements().item_parts(item.pk))


def owns_assignment(user, *, assignment_id: int, **_kwargs) -> None:
    """The body check (common.body_guard) of a view of assignment
    `assignment_id`: 404 unless it is the user's own, in a project they still
    see (annotate.projects). The compare page's read, one statement on
    PostgreSQL and SQLite: asked as Assignment.objects.own(user).filter(pk=…)
    .exists() it compiled the same joins on every vote, 14 % of an API vote's
    Python calls (bench/annotate_bench.py --api)."""
    if own_assignment_for_page(assignment_id=assignment_id, annotator=user) is None:
        raise Http404("No such assignment")
