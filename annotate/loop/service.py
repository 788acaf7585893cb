"""The annotation loop: claim, submit, skip, revise."""

from __future__ import annotations

import logging
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from functools import cache, partial
from typing import Any

from django.db import connection, transaction
from django.db.models import F, Q, QuerySet
from django.db.models.base import ModelState
from django.db.models.signals import post_init, pre_init
from django.utils import timezone

from annotate import signals
from annotate.models import (
    Assignment,
    AssignmentStatus,
    Choice,
    Domain,
    ImageAsset,
    Item,
    Judgement,
    Membership,
    Project,
)

log = logging.getLogger(__name__)


# --- Annotation: claim, submit, skip, revise ------------------------------------------


class AnnotationError(Exception):
    """A request the rules refuse; the message is shown to the annotator."""


class JudgementInvalid(AnnotationError):
    def __init__(self, errors: dict[str, str]):
        self.errors = errors
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))


@dataclass(frozen=True)
class Vote:
    """A judgement in canonical terms (response 1 / response 2), as the form or
    API hands it over after undoing the displayed order."""

    choice: str  # "1", "2" or "tie"
    correct_1: str = ""
    correct_2: str = ""
    confidence: int | None = None
    rationale: str = ""
    active_seconds: float = 0.0
    flagged_problem: bool = False
    problem_reason: str = ""


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
        Item.objects.filter(pk=item_id).update(live_assignments=F("live_assignments") - n)
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
    item = Item.objects.select_for_update().only(*_ITEM_COUNTS).get(pk=item_id)
    if open_leases:
        Assignment.objects.filter(pk__in=open_leases).update(status=AssignmentStatus.EXPIRED)
    Item.objects.filter(pk=item_id).update(
        votes_needed=item.n_votes, live_assignments=F("live_assignments") - len(open_leases)
    )
    return len(open_leases)


def votes_may_come(*, project: Project, annotator) -> bool:
    """Whether an item of the project may still ask this annotator for a vote:
    one still collecting votes that they have never been assigned (someone
    else's lease on it may run out, or the votes coming may split and
    escalate). False means the annotator is done for good, unless a curator
    asks for more votes later."""
    from annotate.eligibility import collecting

    return collecting(project).exclude(assignments__annotator=annotator).exists()


def check_leases(*, project: Project, annotator, now=None) -> tuple[Assignment | None, bool]:
    """The two questions a claim asks first, in one query over the project's
    open leases: the annotator's own unexpired one, if any (oldest first), and
    whether any lease has run out. (SQLite's claim; PostgreSQL's asks both
    inside its one statement, _CLAIM_SQL.)"""
    now = now or timezone.now()
    current, any_stale = None, False
    leases = (
        Assignment.objects.filter(item__project=project, status=AssignmentStatus.OPEN)
        .filter(Q(annotator=annotator, lease_expires_at__gt=now) | Q(lease_expires_at__lte=now))
        .order_by("claimed_at", "pk")
    )
    for lease in leases:
        if lease.lease_expires_at <= now:
            any_stale = True
        elif current is None:
            current = lease
    return current, any_stale


def own_assignments(annotator) -> QuerySet[Assignment]:
    """The annotator's assignments in projects they are a member of (a
    superuser: all of theirs). A member removed from a project loses the
    items they hold there at once: every read of "my assignment" goes
    through this (or the same condition in raw SQL: _MEMBER_CONDITION)."""
    mine = Assignment.objects.filter(annotator=annotator)
    if annotator.is_superuser:
        return mine
    return mine.filter(
        item__project__memberships__user=annotator, item__project__memberships__is_active=True
    )


# The raw-SQL form of own_assignments()' membership test, with named
# parameters; `{project}` and `{user}` are the SQL expressions to test.
_MEMBER_CONDITION = """(%(superuser)s OR EXISTS (
    SELECT 1 FROM annotate_membership m
    WHERE m.project_id = {project} AND m.user_id = {user} AND m.is_active))"""


def claim_next_item(*, project: Project, annotator, now=None) -> Assignment | None:
    """Lease the next item to `annotator`, or None when nothing is left for them.

    An annotator with an open lease in the project gets it back (one item at a
    time). Candidates: items with fewer live assignments than votes needed that
    this person has never been assigned; fewest missing votes first, then the
    project's seeded shuffle. The display order is randomised here and stored.

    On PostgreSQL the assignment comes with its item, domain and image, and
    with `judged_in_project`: how many items the annotator has judged in the
    project (Membership.judged, None for a non-member), read in the same
    statement, for the compare page's progress line.
    """
    if project.archived_at is not None:
        return None  # an archived project is read-only
    now = now or timezone.now()
    swapped = _coin.random() < 0.5
    lease_expires_at = now + timedelta(minutes=project.lease_minutes)
    if connection.features.has_select_for_update_skip_locked:
        claim = partial(
            _claim_in_one_statement,
            project=project,
            annotator=annotator,
            swapped=swapped,
            now=now,
            lease_expires_at=lease_expires_at,
        )
        assignment, stale = claim(check_stale=True)
        if stale:
            # Nothing was leased because abandoned leases wait to be returned
            # first; return them, then claim without asking again.
            expire_stale_leases(project=project, now=now)
            assignment, _ = claim(check_stale=False)
        if assignment is None and not connection.in_atomic_block:
            assignment = _claim_past_locks(claim, project=project, annotator=annotator)
        return assignment
    if (
        not annotator.is_superuser
        and not project.memberships.filter(user=annotator, is_active=True).exists()
    ):
        return None  # (PostgreSQL's statement asks the same)
    resumed, any_stale = check_leases(project=project, annotator=annotator, now=now)
    if resumed is not None:
        return resumed
    if any_stale:
        expire_stale_leases(project=project, now=now)
    # SQLite: the IMMEDIATE transaction serialises claims.
    with transaction.atomic():
        item = (
            Item.objects.needing_votes()
            .filter(project=project)
            .exclude(assignments__annotator=annotator)
            .order_by(F("votes_needed") - F("live_assignments"), "shuffle_key", "pk")
            .select_related("domain", "image")
            .first()
        )
        if item is None:
            return None
        # Conditional increment: the condition and the CHECK constraint make
        # overlap impossible whatever the locking.
        if not Item.objects.filter(pk=item.pk, live_assignments__lt=F("votes_needed")).update(
            live_assignments=F("live_assignments") + 1
        ):
            return None
        item.live_assignments += 1
        item.project = project
        return Assignment.objects.create(
            item=item,
            annotator=annotator,
            shown_swapped=swapped,
            claimed_at=now,
            lease_expires_at=lease_expires_at,
        )


# Pauses (seconds) of a claim that found nothing while an item it may take
# exists: SKIP LOCKED passed over it because another transaction (a vote on
# it, another claim) held its row for a few milliseconds. Bounded: 0.155 s in
# all, after which the answer is "none now", and votes_may_come() tells the
# caller that more may come.
_LOCKED_PAUSES = (0.005, 0.01, 0.02, 0.04, 0.08)


def _claim_past_locks(claim, *, project: Project, annotator) -> Assignment | None:
    """Claim again while an item this annotator may take exists but was
    locked. Outside any transaction only: waiting while holding a vote's
    locks would stall the claimers waiting for them."""
    for pause in _LOCKED_PAUSES:
        takeable = (
            Item.objects.needing_votes()
            .filter(project=project)
            .exclude(assignments__annotator=annotator)
        )
        if not takeable.exists():
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
    databases; PostgreSQL skips item rows other claimers hold.
    """
    now = now or timezone.now()
    if project.archived_at is not None:
        return None  # an archived project is read-only
    if not annotator.is_superuser and not (
        project.memberships.filter(user=annotator, is_active=True).exists()
    ):
        return None
    held = list(
        own_assignments(annotator)
        .filter(item__project=project, status=AssignmentStatus.OPEN, lease_expires_at__gt=now)
        .order_by("claimed_at", "pk")
    )
    if holding not in {a.pk for a in held}:
        return None
    ahead = [a for a in held if a.pk != holding]
    if ahead:
        return ahead[0]
    if len(held) >= MAX_HELD:
        return None
    if Assignment.objects.filter(
        item__project=project, status=AssignmentStatus.OPEN, lease_expires_at__lte=now
    ).exists():
        expire_stale_leases(project=project, now=now)
    with transaction.atomic():
        candidates = (
            Item.objects.needing_votes()
            .filter(project=project)
            .exclude(assignments__annotator=annotator)
            .order_by(F("votes_needed") - F("live_assignments"), "shuffle_key", "pk")
        )
        if connection.features.has_select_for_update_skip_locked:
            # As the claim's statement: take an item no other claimer holds.
            candidates = candidates.select_for_update(skip_locked=True, of=("self",))
        item = candidates.first()
        if item is None:
            return None
        # The conditional increment and the CHECK constraint make overlap
        # impossible whatever the locking (as in claim_next_item()).
        if not Item.objects.filter(pk=item.pk, live_assignments__lt=F("votes_needed")).update(
            live_assignments=F("live_assignments") + 1
        ):
            return None
        return Assignment.objects.create(
            item=item,
            annotator=annotator,
            shown_swapped=_coin.random() < 0.5,
            claimed_at=now,
            lease_expires_at=now + timedelta(minutes=project.lease_minutes),
        )


# PostgreSQL's claim: the lease checks, the pick, the count and the lease in
# one statement (its own transaction), bringing back what the compare page
# shows. The same rules as check_leases() and the SQLite branch:
# - Only for a member of the project (or a superuser): `{member}` in `own`
#   and `picked`, as own_assignments() asks.
# - `own`: the annotator's oldest unexpired open lease in the project; when
#   there is one, nothing new is leased and it comes back (`resumed`).
# - `stale`: whether any open lease of the project has run out (only asked
#   when check_stale). Then nothing is leased either: the caller returns the
#   abandoned items to the pool first (expire_stale_leases) and claims again
#   without the check, so an item someone abandoned goes out before a fresh
#   one, as it would if the expiry had already happened.
# - `picked`: Item.objects.needing_votes() of the project, never an item this
#   person was assigned, fewest missing votes first, then the seeded shuffle
#   and the id (the whole ORDER BY is annotate_item_claim_order_idx, so the
#   scan stops at the first item it may take). NOT IN, as the ORM's
#   exclude() writes it: PostgreSQL hashes the annotator's items once, where
#   NOT EXISTS let it plan a nested loop over them for every candidate
#   (item_id is never NULL, so the two mean the same).
#   FOR UPDATE OF i SKIP LOCKED: lock the chosen item row and skip rows other
#   claimers hold, so concurrent claimers take different items without
#   waiting; only the item row, since locking the joined domain and image rows
#   would make every other claimer skip all items sharing them.
# - `counted`: the UPDATE's condition (rechecked on the row's latest version)
#   and the CHECK constraint make overlap impossible even if the lock did not.
# - The final SELECT always returns one row (the membership's count and the
#   stale flag), with the leased or resumed assignment's item, domain and
#   image when there is one, read as of the statement's start: only
#   live_assignments changed, and that comes from the UPDATE's RETURNING.
_CLAIM_SQL = """
    WITH own AS (
        SELECT a.id, a.item_id, a.shown_swapped, a.claimed_at, a.lease_expires_at
        FROM annotate_assignment a INNER JOIN annotate_item o ON o.id = a.item_id
        WHERE a.annotator_id = %(annotator)s AND a.status = 'open'
          AND a.lease_expires_at > %(now)s AND o.project_id = %(project)s AND {member}
        ORDER BY a.claimed_at, a.id
        LIMIT 1
    ), stale AS (
        SELECT 1 FROM annotate_assignment a INNER JOIN annotate_item o ON o.id = a.item_id
        WHERE %(check_stale)s AND a.status = 'open' AND a.lease_expires_at <= %(now)s
          AND o.project_id = %(project)s
        LIMIT 1
    ), picked AS (
        SELECT p.id FROM annotate_item p
        WHERE p.project_id = %(project)s AND p.live_assignments < p.votes_needed
          AND p.id NOT IN (
              SELECT x.item_id FROM annotate_assignment x WHERE x.annotator_id = %(annotator)s)
          AND NOT EXISTS (SELECT 1 FROM own) AND NOT EXISTS (SELECT 1 FROM stale) AND {member}
        ORDER BY (p.votes_needed - p.live_assignments), p.shuffle_key, p.id
        LIMIT 1
        FOR UPDATE OF p SKIP LOCKED
    ), counted AS (
        UPDATE annotate_item u SET live_assignments = u.live_assignments + 1
        FROM picked WHERE u.id = picked.id AND u.live_assignments < u.votes_needed
        RETURNING u.id, u.live_assignments
    ), leased AS (
        INSERT INTO annotate_assignment
            (item_id, annotator_id, status, shown_swapped, claimed_at, lease_expires_at,
             submitted_at, skip_reason)
        SELECT id, %(annotator)s, 'open', %(swapped)s, %(now)s, %(lease)s, NULL, ''
        FROM counted
        RETURNING id, item_id, shown_swapped, claimed_at, lease_expires_at
    ), found AS (
        SELECT leased.*, counted.live_assignments AS live
        FROM leased INNER JOIN counted ON counted.id = leased.item_id
        UNION ALL
        SELECT own.*, NULL FROM own
    )
    SELECT
        (SELECT m.judged FROM annotate_membership m
         WHERE m.project_id = %(project)s AND m.user_id = %(annotator)s),
        EXISTS (SELECT 1 FROM stale),
        found.id, found.shown_swapped, found.claimed_at, found.lease_expires_at,
        COALESCE(found.live, i.live_assignments),
        {columns}
    FROM (SELECT 1) AS one
    LEFT JOIN found ON TRUE
    LEFT JOIN annotate_item i ON i.id = found.item_id
    LEFT JOIN annotate_domain d ON d.id = i.domain_id
    LEFT JOIN annotate_imageasset g ON g.id = i.image_id
"""


def _select_columns(alias: str, model, skip=()) -> list[tuple[str, str]]:
    """(attname, alias.column) of `model`'s concrete fields for a raw SELECT,
    minus `skip` and fields whose raw value needs converting (JSON): those are
    left deferred, loaded on first access."""
    return [
        (f.attname, f"{alias}.{f.column}")
        for f in model._meta.concrete_fields
        if f.name not in skip and not hasattr(f, "from_db_value")
    ]


def _instances(db: str, row, *parts: tuple[type, list[tuple[str, str]]]) -> list:
    """Model instances from consecutive slices of a raw row (PostgreSQL's
    driver returns ready Python values for the columns _select_columns picks)."""
    made, at = [], 0
    for model, columns in parts:
        names = [name for name, _ in columns]
        made.append(_from_db(model, db, names, row[at : at + len(names)]))
        at += len(names)
    return made


def _from_db(model, db: str, names: list[str], values) -> Any:
    """model.from_db(db, names, values) without Model.__init__ (its field loop
    and signals cost about 30 µs an instance, seven instances a judgement): the
    values go straight into the instance's __dict__ under their attnames, and
    fields not named stay deferred, as from_db leaves them. Only when nothing
    listens for the model's pre_init or post_init signals (which __init__
    sends); otherwise from_db itself."""
    if pre_init.has_listeners(model) or post_init.has_listeners(model):
        return model.from_db(db, names, values)
    instance = model.__new__(model)
    state = instance._state = ModelState()
    state.adding, state.db = False, db
    instance.__dict__.update(zip(names, values, strict=True))
    return instance


# The item's long text, out of line in PostgreSQL (migration 0009): each
# value read costs a TOAST lookup, so the hot statements read only what their
# callers show (the page its stored HTML, the API the Markdown) and leave the
# rest deferred.
_SOURCE_TEXT = ("prompt", "response_1", "response_2", "reference_answer")
_CLAIM_ITEM = _select_columns("i", Item, skip=("reference_answer",))
_CLAIM_DOMAIN = _select_columns("d", Domain)
_CLAIM_IMAGE = _select_columns("g", ImageAsset)
_CLAIM_SQL = _CLAIM_SQL.format(
    columns=", ".join(column for _, column in _CLAIM_ITEM + _CLAIM_DOMAIN + _CLAIM_IMAGE),
    member=_MEMBER_CONDITION.format(project="%(project)s", user="%(annotator)s"),
)


def _attach(instance, **related) -> None:
    """Set related objects (`instance.<name> = obj`) whose ids `instance`
    already holds, read in the same row, without the descriptor's checks:
    what the assignment to the attribute would cache."""
    instance._state.fields_cache.update(related)


def _claim_in_one_statement(
    *, project: Project, annotator, swapped: bool, now, lease_expires_at, check_stale: bool
) -> tuple[Assignment | None, bool]:
    """(the leased or resumed assignment or None, whether nothing was leased
    because stale leases wait to be returned)."""
    with connection.cursor() as cursor:
        cursor.execute(
            _CLAIM_SQL,
            {
                "project": project.pk,
                "annotator": annotator.pk,
                "swapped": swapped,
                "now": now,
                "lease": lease_expires_at,
                "check_stale": check_stale,
                "superuser": annotator.is_superuser,
            },
        )
        row = cursor.fetchone()
    judged, stale, assignment_id, shown_swapped, claimed_at, lease_until, live = row[:7]
    if assignment_id is None:
        return None, stale
    item, domain, image = _instances(
        connection.alias,
        row[7:],
        (Item, _CLAIM_ITEM),
        (Domain, _CLAIM_DOMAIN),
        (ImageAsset, _CLAIM_IMAGE),
    )
    item.live_assignments = live  # with this claim counted
    _attach(item, project=project, domain=domain, image=image)
    fields = {
        "id": assignment_id,
        "item_id": item.pk,
        "annotator_id": annotator.pk,
        "status": AssignmentStatus.OPEN,
        "shown_swapped": shown_swapped,
        "claimed_at": claimed_at,
        "lease_expires_at": lease_until,
        "submitted_at": None,
        "skip_reason": "",
    }
    assignment = _from_db(Assignment, connection.alias, list(fields), list(fields.values()))
    _attach(assignment, item=item, annotator=annotator)
    assignment.judged_in_project = judged
    return assignment, False


def validate_vote(vote: Vote, *, project: Project, domain) -> None:
    errors: dict[str, str] = {}
    if vote.choice not in Choice.values:
        errors["choice"] = "Choose the better response."
    elif vote.choice == Choice.TIE and not project.allow_tie:
        errors["choice"] = "This project does not allow ties."
    if domain.is_correctness:
        for name in ("correct_1", "correct_2"):
            if getattr(vote, name) not in ("yes", "no", "unsure"):
                errors[name] = "Say whether this response is correct."
    elif vote.correct_1 or vote.correct_2:
        errors["correct_1"] = "Correctness is not asked in this domain."
    if vote.confidence is not None and not 1 <= vote.confidence <= 3:
        errors["confidence"] = "Confidence is 1, 2 or 3."
    if not vote.rationale.strip():
        if vote.choice == Choice.TIE:
            errors["rationale"] = "Explain why the responses are equally good."
        elif project.require_rationale:
            errors["rationale"] = "This project asks for a short rationale."
    if vote.flagged_problem and not vote.problem_reason.strip():
        errors["problem_reason"] = "Say what is wrong with the item."
    if vote.active_seconds < 0 or vote.active_seconds != vote.active_seconds:
        errors["active_seconds"] = "Must be a non-negative number."
    if errors:
        raise JudgementInvalid(errors)


def submit_judgement(
    *, assignment_id: int, annotator, vote: Vote | Callable[[Assignment], Vote], now=None
) -> Judgement:
    """Record a vote for the annotator's assignment, in canonical terms.

    `vote` is the Vote, or a function making it from the assignment (as read
    and locked here): how a page or API maps what it displayed (left/right)
    to canonical terms without reading the assignment first.

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
    *, assignment_id: int, annotator, vote: Vote | Callable[[Assignment], Vote], now=None
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
    """The vote (and, with claim_next, the next lease) in one transaction.

    _check_submit() writes nothing, so when it refuses (an invalid vote, a
    skipped or expired item, someone else's assignment) the transaction ends
    with COMMIT and the refusal is raised after it. A ROLLBACK would change
    nothing in the data but cost every later request on the connection:
    psycopg drops all of the connection's prepared statements on any
    ROLLBACK, so the next five claims and votes would be parsed and planned
    again. Anything raised after the checks rolls back as usual.
    """
    refused: Exception | None = None
    following: Assignment | None = None
    with transaction.atomic():
        try:
            checked = _check_submit(assignment_id=assignment_id, annotator=annotator, vote=vote)
        except (AnnotationError, Assignment.DoesNotExist) as exc:
            refused = exc
        else:
            judgement = _write_submit(checked, annotator=annotator, now=now)
            if claim_next:
                project = judgement.assignment.item.project
                following = claim_next_item(project=project, annotator=annotator, now=now)
    if refused is not None:
        raise refused
    if (
        claim_next
        and following is None
        and connection.features.has_select_for_update_skip_locked
        and not connection.in_atomic_block
    ):
        # Nothing could be leased inside the vote's transaction (where a claim
        # must not wait for locked rows); now, with the vote committed and its
        # locks released, one patient claim.
        following = claim_next_item(project=project, annotator=annotator, now=now)
    return judgement, following


@dataclass
class _CheckedSubmit:
    assignment: Assignment
    vote: Vote | None  # None: already submitted
    stored: Judgement | None = None


def _check_submit(*, assignment_id: int, annotator, vote) -> _CheckedSubmit:
    """Lock the annotator's assignment and check the vote, writing nothing."""
    on_postgres = connection.vendor == "postgresql"
    # The assignment row lock serialises double submits of one assignment.
    # Only that row (`of`); the item, project and domain come along unlocked.
    if on_postgres:
        assignment = _locked_assignment(assignment_id=assignment_id, annotator=annotator)
    else:
        assignment = (
            own_assignments(annotator)
            .select_for_update(of=("self",))
            .select_related("item__project", "item__domain")
            .filter(pk=assignment_id)
            .first()
        )
    if assignment is None:
        raise Assignment.DoesNotExist
    if assignment.status == AssignmentStatus.SUBMITTED:
        stored = assignment.judgements.get(is_current=True)
        stored.already_submitted = True
        return _CheckedSubmit(assignment, None, stored)
    item = assignment.item
    if callable(vote):
        vote = vote(assignment)
    validate_vote(vote, project=item.project, domain=item.domain)
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


def _write_submit(checked: _CheckedSubmit, *, annotator, now) -> Judgement:
    """Store the checked vote, inside the caller's transaction."""
    if checked.stored is not None:
        return checked.stored
    assignment, vote, item = checked.assignment, checked.vote, checked.assignment.item
    assert vote is not None
    on_postgres = connection.vendor == "postgresql"
    fields = {
        "assignment_id": assignment.pk,
        "revision": 1,
        "is_current": True,
        "seconds_spent": max(0.0, (now - assignment.claimed_at).total_seconds()),
        "created_at": timezone.now(),
        **_vote_fields(vote),
    }
    locked: dict[str, tuple] = {}
    if on_postgres:
        judgement, locked = _record_vote(
            item=item, annotator_id=annotator.pk, fields=fields, vote=vote, now=now
        )
    else:
        judgement = Judgement.objects.create(**fields)
        Assignment.objects.filter(pk=assignment.pk).update(
            status=AssignmentStatus.SUBMITTED, submitted_at=now
        )
        Item.objects.filter(pk=item.pk).update(**_tally_changes(new=vote))
        Membership.objects.filter(project_id=item.project_id, user=annotator).update(
            judged=F("judged") + 1
        )
        item.refresh_from_db(fields=_ITEM_COUNTS)
    assignment.status = AssignmentStatus.SUBMITTED
    assignment.submitted_at = now
    _attach(judgement, assignment=assignment)
    judgement.already_submitted = False
    signals.judgement_recorded.send(
        sender=Judgement, judgement=judgement, item=item, revision=False, locked=locked
    )
    return judgement


# What update_verdict() reads from the item a vote was counted on.
_ITEM_COUNTS = ["votes_needed", "votes_1", "votes_2", "votes_tie"]


_LOCK_ASSIGNMENT = _select_columns("a", Assignment)
# A vote reads no text at all.
_LOCK_ITEM = _select_columns(
    "i", Item, skip=(*_SOURCE_TEXT, "prompt_html", "response_1_html", "response_2_html")
)
_LOCK_PROJECT = _select_columns("p", Project)
_LOCK_DOMAIN = _select_columns("d", Domain)
# Raw SQL for the two statements of a PostgreSQL submit: building them as
# QuerySets cost more CPU than PostgreSQL spends running them.
_LOCK_ASSIGNMENT_SQL = f"""
    SELECT {", ".join(c for _, c in _LOCK_ASSIGNMENT + _LOCK_ITEM + _LOCK_PROJECT + _LOCK_DOMAIN)}
    FROM annotate_assignment a
    INNER JOIN annotate_item i ON i.id = a.item_id
    INNER JOIN annotate_project p ON p.id = i.project_id
    INNER JOIN annotate_domain d ON d.id = i.domain_id
    WHERE a.id = %(assignment)s AND a.annotator_id = %(annotator)s AND {
    _MEMBER_CONDITION.format(project="i.project_id", user="a.annotator_id")
}
    FOR UPDATE OF a
"""


def _own_assignment_row(sql: str, *, assignment_id: int, annotator) -> tuple | None:
    """The one row of `sql` (a read of the annotator's own assignment with
    _MEMBER_CONDITION's parameters), or None."""
    with connection.cursor() as cursor:
        cursor.execute(
            sql,
            {
                "assignment": assignment_id,
                "annotator": annotator.pk,
                "superuser": annotator.is_superuser,
            },
        )
        return cursor.fetchone()


def _locked_assignment(*, assignment_id: int, annotator) -> Assignment | None:
    row = _own_assignment_row(
        _LOCK_ASSIGNMENT_SQL, assignment_id=assignment_id, annotator=annotator
    )
    if row is None:
        return None
    assignment, item, project, domain = _instances(
        connection.alias,
        row,
        (Assignment, _LOCK_ASSIGNMENT),
        (Item, _LOCK_ITEM),
        (Project, _LOCK_PROJECT),
        (Domain, _LOCK_DOMAIN),
    )
    _attach(item, project=project, domain=domain)
    _attach(assignment, item=item)
    return assignment


# The compare page's read (PostgreSQL): the annotator's own assignment with its
# item, project, domain and image, and their Membership.judged for the
# progress line, in one statement (the ORM's select_related() of the same
# cost more CPU to compile than the rest of the page). The item's source text
# stays deferred: the page shows its stored HTML.
_PAGE_ASSIGNMENT = _LOCK_ASSIGNMENT
_PAGE_ITEM = _select_columns("i", Item, skip=_SOURCE_TEXT)
_PAGE_IMAGE = _select_columns("g", ImageAsset)
_PAGE_COLUMNS = _PAGE_ASSIGNMENT + _PAGE_ITEM + _LOCK_PROJECT + _LOCK_DOMAIN + _PAGE_IMAGE
_PAGE_SQL = f"""
    SELECT (SELECT m.judged FROM annotate_membership m
            WHERE m.project_id = i.project_id AND m.user_id = a.annotator_id),
        {", ".join(c for _, c in _PAGE_COLUMNS)}
    FROM annotate_assignment a
    INNER JOIN annotate_item i ON i.id = a.item_id
    INNER JOIN annotate_project p ON p.id = i.project_id
    INNER JOIN annotate_domain d ON d.id = i.domain_id
    INNER JOIN annotate_imageasset g ON g.id = i.image_id
    WHERE a.id = %(assignment)s AND a.annotator_id = %(annotator)s AND {
    _MEMBER_CONDITION.format(project="i.project_id", user="a.annotator_id")
}
"""


# What the compare page shows besides the assignment.
COMPARE_PAGE_RELATED = ("item__project", "item__domain", "item__image")


def own_assignment_for_page(*, assignment_id: int, annotator) -> Assignment | None:
    """The annotator's own assignment (as own_assignments() allows) with its
    item, project, domain and image loaded, or None. On PostgreSQL one raw
    statement that also sets `judged_in_project` (Membership.judged, None for
    a non-member) and leaves the item's source text deferred."""
    if connection.vendor != "postgresql":
        return (
            own_assignments(annotator)
            .filter(pk=assignment_id)
            .select_related(*COMPARE_PAGE_RELATED)
            .first()
        )
    row = _own_assignment_row(_PAGE_SQL, assignment_id=assignment_id, annotator=annotator)
    if row is None:
        return None
    assignment, item, project, domain, image = _instances(
        connection.alias,
        row[1:],
        (Assignment, _PAGE_ASSIGNMENT),
        (Item, _PAGE_ITEM),
        (Project, _LOCK_PROJECT),
        (Domain, _LOCK_DOMAIN),
        (ImageAsset, _PAGE_IMAGE),
    )
    _attach(item, project=project, domain=domain, image=image)
    _attach(assignment, item=item, annotator=annotator)
    assignment.judged_in_project = row[0]
    return assignment


_JUDGEMENT_COLUMNS = [f.column for f in Judgement._meta.concrete_fields if not f.primary_key]
# The judgement _record_vote() stored: its id, then the values it inserted.
_JUDGEMENT_ATTNAMES = [
    Judgement._meta.pk.attname,
    *(f.attname for f in Judgement._meta.concrete_fields if not f.primary_key),
]


@dataclass(frozen=True)
class VoteRowLock:
    """A row of another app's table, one per item, that a judgement_recorded
    receiver locks on every vote (curation's Verdict). Registered with
    lock_with_each_vote(), it is locked and read by the vote's own statement
    on PostgreSQL, after the item's tallies (the order the receiver took the
    two locks in before), and the signal carries it: `locked[name]` is the
    row's values in `columns`' order. One round trip fewer per vote, and
    annotate still names no table of another app.

    Where `name` is not in `locked` the receiver reads and locks the row
    itself, in a statement of its own: on SQLite, for revisions, and when
    the vote's statement found no row. That last case must look again: the
    statement reads as of its start, so a row another vote on the same item
    inserted while this one waited for the item's lock is invisible to it
    (a row that existed is locked in its latest version whatever the
    snapshot, as FOR UPDATE does)."""

    name: str
    table: str
    item_column: str  # holds the item's id; unique in the table
    columns: tuple[str, ...]  # the first NOT NULL (the primary key, say)


_VOTE_ROW_LOCKS: dict[str, VoteRowLock] = {}


def lock_with_each_vote(lock: VoteRowLock) -> None:
    """Have every vote's statement lock and return `lock`'s row (an app's
    ready() calls this for the rows its judgement_recorded receiver locks)."""
    _VOTE_ROW_LOCKS[lock.name] = lock


@cache
def _record_vote_sql(tally_columns: tuple[str, ...], locks: tuple[VoteRowLock, ...]) -> str:
    """_record_vote()'s statement for a vote counted in `tally_columns`
    (from a fixed set: validate_vote checked the labels), built once."""
    quote = connection.ops.quote_name
    tallies = ", ".join(f"{quote(c)} = {quote(c)} + 1" for c in tally_columns)
    # Each registered row, locked once the item's row is: `(SELECT id FROM
    # counted)` runs the tally UPDATE first. A row locked before the item
    # could deadlock with a concurrent vote on the same item holding the item.
    lock_ctes = "".join(
        f""", locked_{n} AS MATERIALIZED (
            SELECT {", ".join(quote(c) for c in lock.columns)} FROM {quote(lock.table)}
            WHERE {quote(lock.item_column)} = (SELECT id FROM counted)
            FOR UPDATE
        )"""
        for n, lock in enumerate(locks)
    )
    lock_columns = "".join(
        f", locked_{n}.{quote(c)}" for n, lock in enumerate(locks) for c in lock.columns
    )
    lock_joins = "".join(f" LEFT JOIN locked_{n} ON TRUE" for n in range(len(locks)))
    return f"""
        WITH judged AS (
            INSERT INTO annotate_judgement ({", ".join(_JUDGEMENT_COLUMNS)})
            VALUES ({", ".join(["%s"] * len(_JUDGEMENT_COLUMNS))})
            RETURNING id
        ), submitted AS (
            UPDATE annotate_assignment SET status = %s, submitted_at = %s WHERE id = %s
        ), counted AS (
            UPDATE annotate_item SET {tallies} WHERE id = %s
            RETURNING id, {", ".join(_ITEM_COUNTS)}
        ), member AS (
            UPDATE annotate_membership SET judged = judged + 1
            WHERE project_id = %s AND user_id = %s
        ){lock_ctes}
        SELECT judged.id, {", ".join(f"counted.{c}" for c in _ITEM_COUNTS)}{lock_columns}
        FROM judged CROSS JOIN counted{lock_joins}
    """


def _record_vote(
    *, item: Item, annotator_id: int, fields: dict, vote: Vote, now
) -> tuple[Judgement, dict[str, tuple]]:
    """PostgreSQL: store the judgement, mark the assignment submitted, count
    the vote in the item's tallies and in the annotator's membership, and
    lock the rows registered with lock_with_each_vote(), in one statement;
    the item gets the tallies back (the UPDATE holds the item row until
    commit, so they include every vote committed before and none after).
    Returns the judgement and the locked rows by name."""
    locks = tuple(_VOTE_ROW_LOCKS.values())
    sql = _record_vote_sql(tuple(_tally_columns(vote)), locks)
    values = [fields[f.attname] for f in Judgement._meta.concrete_fields if not f.primary_key]
    with connection.cursor() as cursor:
        cursor.execute(
            sql,
            [
                *values,
                AssignmentStatus.SUBMITTED,
                now,
                fields["assignment_id"],
                item.pk,
                item.project_id,
                annotator_id,
            ],
        )
        row = cursor.fetchone()
    judgement_id = row[0]
    at = 1 + len(_ITEM_COUNTS)
    for name, value in zip(_ITEM_COUNTS, row[1:at], strict=True):
        setattr(item, name, value)
    locked: dict[str, tuple] = {}
    for lock in locks:
        found = row[at : at + len(lock.columns)]
        if found[0] is not None:
            locked[lock.name] = found
        at += len(lock.columns)
    judgement = _from_db(Judgement, connection.alias, _JUDGEMENT_ATTNAMES, (judgement_id, *values))
    return judgement, locked


def skip_item(*, assignment_id: int, annotator, reason: str) -> Assignment:
    """Give an open item back; it is never offered to this annotator again."""
    if not reason.strip():
        raise JudgementInvalid({"skip_reason": "Say why you skip this item."})
    with transaction.atomic():
        assignment = (
            own_assignments(annotator)
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
            Item.objects.filter(pk=assignment.item_id).update(
                live_assignments=F("live_assignments") - 1
            )
        project_id = Item.objects.filter(pk=assignment.item_id).values_list(
            "project_id", flat=True
        )[0]
        signals.eligibility_changed.send(
            sender=Assignment, project_id=project_id, item_ids=[assignment.item_id]
        )
        return assignment


def can_revise(item: Item) -> bool:
    """Votes can be revised while the item still waits for the votes every
    item gets (the project's votes per item); once it has had them, the
    verdict is decided from them, and Revise stays gone even if the item is
    escalated for more votes: offering it again would tell the annotator
    that the others disagreed (votes are blind). `item.project` is loaded."""
    return item.n_votes < min(item.votes_needed, item.project.votes_per_item)


def revise_judgement(*, assignment_id: int, annotator, vote: Vote) -> Judgement:
    """Supersede the annotator's current judgement with a new revision.
    The old row stays (is_current=False): history is never lost."""
    with transaction.atomic():
        assignment = (
            own_assignments(annotator)
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
        validate_vote(vote, project=item.project, domain=item.domain)
        old = assignment.judgements.get(is_current=True)
        Judgement.objects.filter(pk=old.pk).update(is_current=False)
        judgement = Judgement.objects.create(
            assignment=assignment,
            revision=old.revision + 1,
            seconds_spent=old.seconds_spent,
            **_vote_fields(vote),
        )
        changes = _tally_changes(new=vote, old=old)
        if changes:
            Item.objects.filter(pk=item.pk).update(**changes)
        signals.judgement_recorded.send(
            sender=Judgement, judgement=judgement, item=item, revision=True
        )
        return judgement


_TALLY = {Choice.RESPONSE_1: "votes_1", Choice.RESPONSE_2: "votes_2", Choice.TIE: "votes_tie"}


def _tally_columns(vote: Vote | Judgement) -> list[str]:
    """The Item tally columns one vote counts in: its choice and each
    correctness label it gives (Item.correct_<response>_<label>)."""
    columns = [_TALLY[vote.choice]]
    for response, label in (("1", vote.correct_1), ("2", vote.correct_2)):
        if label:
            columns.append(f"correct_{response}_{label}")
    return columns


def _tally_changes(*, new: Vote, old: Judgement | None = None) -> dict:
    """F() updates moving the item's tallies from `old` (a revised judgement)
    to `new`, for one UPDATE statement; empty when nothing changes."""
    delta: Counter[str] = Counter(_tally_columns(new))
    if old is not None:
        delta.subtract(_tally_columns(old))
    return {column: F(column) + n for column, n in delta.items() if n}


_coin = random.SystemRandom()


def _vote_fields(vote: Vote) -> dict:
    return {
        "choice": vote.choice,
        "correct_1": vote.correct_1,
        "correct_2": vote.correct_2,
        "confidence": vote.confidence,
        "rationale": vote.rationale.strip(),
        "active_seconds": vote.active_seconds,
        "flagged_problem": vote.flagged_problem,
        "problem_reason": vote.problem_reason.strip()[:500],
    }
