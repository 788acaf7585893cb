"""Workflows of the curation app that touch several models."""

from __future__ import annotations

from collections import defaultdict
from datetime import timedelta

from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from annotate.models import Item, Judgement, Project
from annotate.services import VoteRowLock

from .contested import RuleVote, Thresholds, decide
from .models import (
    AuditEvent,
    ContestKind,
    ExclusionCategory,
    Provenance,
    Verdict,
    VerdictStatus,
)

STALE_REQUEST = timedelta(minutes=10)

# Verdicts a curator decided; new votes never overturn them.
CURATOR_DECIDED = (VerdictStatus.RESOLVED, VerdictStatus.EXCLUDED)


def thresholds_for(project: Project) -> Thresholds:
    return Thresholds(
        votes_per_item=project.votes_per_item,
        agree_share=project.agree_share,
        escalation_votes=project.escalation_votes,
    )


def verdict_snapshot(verdict: Verdict) -> dict:
    return {
        "status": verdict.status,
        "final_choice": verdict.final_choice,
        "provenance": verdict.provenance,
        "escalations": verdict.escalations,
        "reason": verdict.reason,
        "contest_kind": verdict.contest_kind,
        "exclusion_category": verdict.exclusion_category,
        "decided_by": verdict.decided_by_id,
    }


def _rule_votes(item_ids) -> dict[int, list[RuleVote]]:
    votes: dict[int, list[RuleVote]] = defaultdict(list)
    rows = Judgement.objects.filter(assignment__item_id__in=item_ids, is_current=True).values_list(
        "assignment__item_id", "choice", "correct_1", "correct_2", "flagged_problem"
    )
    for item_id, choice, c1, c2, flagged in rows:
        votes[item_id].append(RuleVote(choice, c1, c2, flagged))
    return votes


def _apply(verdict: Verdict, item: Item, votes: list[RuleVote], thresholds: Thresholds) -> bool:
    """Move `verdict` to where the rule puts it. Returns True if it changed
    (the caller saves it). Escalation raises the item's votes_needed."""
    before = verdict_snapshot(verdict)
    outcome = decide(
        votes,
        votes_needed=item.votes_needed,
        escalations=verdict.escalations,
        thresholds=thresholds,
        gold=item.gold_choice,
    )
    if outcome.escalate_by:
        Item.objects.filter(pk=item.pk).update(votes_needed=F("votes_needed") + outcome.escalate_by)
        item.votes_needed += outcome.escalate_by
        verdict.escalations += 1
    verdict.status = outcome.status
    verdict.final_choice = outcome.final_choice
    verdict.provenance = outcome.provenance
    verdict.reason = outcome.reason
    verdict.contest_kind = outcome.kind
    after = verdict_snapshot(verdict)
    if after == before:
        return False
    verdict.version += 1
    if before["status"] != after["status"] or before["final_choice"] != after["final_choice"]:
        AuditEvent.objects.create(
            project_id=item.project_id,
            item_id=item.pk,
            actor=None,
            action="rule",
            before=before,
            after=after,
            reason=outcome.reason,
        )
    return True


_VERDICT_ATTNAMES = [f.attname for f in Verdict._meta.concrete_fields]
# What every vote's own statement locks and brings back for update_verdict()
# on PostgreSQL (curation.apps registers it with annotate): the verdict row,
# its columns in _VERDICT_ATTNAMES' order, the primary key first.
VERDICT_VOTE_LOCK = VoteRowLock(
    name="curation.verdict",
    table=Verdict._meta.db_table,
    item_column=Verdict._meta.get_field("item").column,
    columns=tuple(f.column for f in Verdict._meta.concrete_fields),
)
# The same lock in a statement of its own (SQLite, revisions, no row found).
_LOCK_VERDICT_SQL = (
    f"SELECT {', '.join(VERDICT_VOTE_LOCK.columns)} FROM {VERDICT_VOTE_LOCK.table} "
    f"WHERE {VERDICT_VOTE_LOCK.item_column} = %s"
    + (" FOR UPDATE" if connection.features.has_select_for_update else "")
)


def _lock_verdict_for_vote(item_id: int, locked: dict | None = None) -> Verdict | None:
    """The item's verdict, its row locked until the transaction ends: as the
    vote's statement locked it (`locked`, the judgement_recorded signal's),
    else read here. Raw SQL: it runs on every vote, and compiling a QuerySet
    (or a RawQuerySet's column mapping) cost more CPU than the database
    spends on it."""
    if locked and VERDICT_VOTE_LOCK.name in locked:
        row = locked[VERDICT_VOTE_LOCK.name]
    elif connection.vendor != "postgresql":  # SQLite's values need Django's converters
        return next(iter(Verdict.objects.raw(_LOCK_VERDICT_SQL, [item_id])), None)
    else:
        with connection.cursor() as cursor:
            cursor.execute(_LOCK_VERDICT_SQL, [item_id])
            row = cursor.fetchone()
    return None if row is None else Verdict.from_db(connection.alias, _VERDICT_ATTNAMES, row)


def update_verdict(*, item: Item, locked: dict | None = None) -> Verdict:
    """Re-apply the contested rule to one item after a vote. Runs inside the
    vote's transaction (called from the judgement_recorded receiver, which
    passes the rows the vote's statement locked, if any)."""
    # The verdict row lock serialises concurrent votes on the same item, so
    # each sees the other's judgement and the escalation happens once.
    verdict = _lock_verdict_for_vote(item.pk, locked)
    if verdict is None:
        verdict = Verdict.objects.create(item_id=item.pk, project_id=item.project_id)
    if verdict.status in CURATOR_DECIDED:
        return verdict
    # The sender's item carries its tallies with this vote counted. Below the
    # votes it needs, the rule looks at nothing but that count (needs_votes),
    # so the votes themselves need not be read.
    votes = [] if item.n_votes < item.votes_needed else _item_rule_votes(item.pk)
    if _apply(verdict, item, votes, thresholds_for(item.project)):
        # What verdict.save(update_fields=VOTE_FIELDS) writes, as plain SQL
        # (this too runs inside every vote that completes an item).
        verdict.updated_at = timezone.now()
        with connection.cursor() as cursor:
            cursor.execute(
                _SAVE_VERDICT_SQL,
                [
                    *(getattr(verdict, name) for name in VOTE_FIELDS[:-1]),
                    connection.ops.adapt_datetimefield_value(verdict.updated_at),
                    verdict.pk,
                ],
            )
    return verdict


# The verdict fields the rule's outcome changes, then updated_at (written by a
# vote's save; reevaluate_items' bulk update leaves it).
VOTE_FIELDS = (
    "status",
    "final_choice",
    "provenance",
    "reason",
    "escalations",
    "contest_kind",
    "version",
    "updated_at",
)
_SAVE_VERDICT_SQL = (
    "UPDATE curation_verdict SET "
    + ", ".join(f"{name} = %s" for name in VOTE_FIELDS)
    + " WHERE id = %s"
)
# _rule_votes() for one item, as plain SQL. On PostgreSQL the item's
# assignments go in as an array, so the judgements are read by index whatever
# the statistics say: with a join, a table not analysed since it was small
# (autovacuum off, or not yet run) got a hash join over every judgement, 2 ms
# at 13,000 of them and growing.
_ITEM_RULE_VOTES_SQL = """
    SELECT j.choice, j.correct_1, j.correct_2, j.flagged_problem
    FROM annotate_judgement j
    WHERE j.is_current AND j.assignment_id {}
"""
_ITEM_ASSIGNMENTS = "(SELECT a.id FROM annotate_assignment a WHERE a.item_id = %s)"


def _item_rule_votes(item_id: int) -> list[RuleVote]:
    assignments = _ITEM_ASSIGNMENTS
    if connection.vendor == "postgresql":
        sql = _ITEM_RULE_VOTES_SQL.format(f"= ANY(ARRAY{assignments})")
    else:
        sql = _ITEM_RULE_VOTES_SQL.format(f"IN {assignments}")
    with connection.cursor() as cursor:
        cursor.execute(sql, [item_id])
        return [RuleVote(choice, c1, c2, bool(flagged)) for choice, c1, c2, flagged in cursor]


def update_thresholds(
    *,
    project: Project,
    actor,
    votes_per_item: int,
    agree_share: float,
    escalation_votes: int,
) -> int:
    """Change a project's contested-rule thresholds and re-evaluate every item
    a curator has not decided. Returns the number of verdicts that changed."""
    with transaction.atomic():
        project = Project.objects.select_for_update().get(pk=project.pk)
        before = {
            "votes_per_item": project.votes_per_item,
            "agree_share": project.agree_share,
            "escalation_votes": project.escalation_votes,
        }
        after = {
            "votes_per_item": votes_per_item,
            "agree_share": agree_share,
            "escalation_votes": escalation_votes,
        }
        if before == after:
            return 0
        delta = votes_per_item - project.votes_per_item
        project.votes_per_item = votes_per_item
        project.agree_share = agree_share
        project.escalation_votes = escalation_votes
        project.save(update_fields=["votes_per_item", "agree_share", "escalation_votes"])
        AuditEvent.objects.create(
            project=project, actor=actor, action="thresholds", before=before, after=after
        )
        open_items = Item.objects.filter(project=project).exclude(
            verdict__status__in=CURATOR_DECIDED
        )
        if delta:
            # Keep each item's escalation extra; never go below its live claims.
            for item in open_items.only("pk", "votes_needed", "live_assignments"):
                needed = max(item.votes_needed + delta, item.live_assignments, 1)
                if needed != item.votes_needed:
                    Item.objects.filter(pk=item.pk).update(votes_needed=needed)
        return reevaluate_items(project=project, items=open_items)


def reevaluate_items(*, project: Project, items) -> int:
    """Apply the rule to many items at once (constant number of queries per
    batch). Returns how many verdicts changed."""
    thresholds = thresholds_for(project)
    changed = 0
    item_list = list(items.only("pk", "project_id", "votes_needed", "gold_choice"))
    for start in range(0, len(item_list), 2000):
        batch = item_list[start : start + 2000]
        ids = [i.pk for i in batch]
        verdicts = {
            v.item_id: v for v in Verdict.objects.select_for_update().filter(item_id__in=ids)
        }
        votes = _rule_votes(ids)
        dirty = []
        for item in batch:
            verdict = verdicts.get(item.pk) or Verdict(item_id=item.pk, project=project)
            if verdict.status in CURATOR_DECIDED:
                continue
            if _apply(verdict, item, votes.get(item.pk, []), thresholds) or verdict.pk is None:
                dirty.append(verdict)
        new = [v for v in dirty if v.pk is None]
        Verdict.objects.bulk_create(new)
        Verdict.objects.bulk_update([v for v in dirty if v.pk is not None], list(VOTE_FIELDS[:-1]))
        changed += len(dirty)
    return changed


def request_agreement_refresh(*, project: Project) -> bool:
    """Queue a recomputation of the project's expensive agreement figures
    unless one is already queued (the one-shot transition is a conditional
    update, so two clicks queue one task). Returns True if queued."""
    from config.celery import enqueue_on_commit

    from .models import AgreementCache
    from .tasks import refresh_agreement

    now = timezone.now()
    AgreementCache.objects.get_or_create(project=project)
    # A request older than STALE_REQUEST is taken as lost (worker died).
    queued = (
        AgreementCache.objects.filter(project=project)
        .filter(Q(requested_at__isnull=True) | Q(requested_at__lt=now - STALE_REQUEST))
        .update(requested_at=now)
    )
    if queued:
        enqueue_on_commit(refresh_agreement, project.pk)
    return bool(queued)


# --- Curator decisions ------------------------------------------------------------------


class CurationError(Exception):
    """A decision the rules refuse; the message is shown to the curator."""


class StaleDecision(CurationError):
    """Someone changed the item since the page was loaded."""


class ConflictOfInterest(CurationError):
    pass


def _locked_verdict(*, item_id: int, project: Project, version: int | None) -> Verdict:
    # The row lock serialises two curators deciding the same item; the version
    # check tells the loser exactly what happened instead of overwriting.
    verdict = (
        Verdict.objects.select_for_update(of=("self",))
        .select_related("item", "decided_by")
        .filter(item_id=item_id, project=project)
        .first()
    )
    if verdict is None:
        raise Verdict.DoesNotExist
    if version is not None and verdict.version != version:
        who = verdict.decided_by.get_username() if verdict.decided_by else "the agreement rule"
        raise StaleDecision(
            f"This item changed while you were looking at it: it is now "
            f"{verdict.get_status_display().lower()} (by {who}). Nothing was saved; "
            "review the current state and decide again."
        )
    return verdict


def voted_on(item_id: int, user) -> bool:
    return Judgement.objects.filter(
        assignment__item_id=item_id, assignment__annotator=user
    ).exists()


def _check_conflict(project: Project, item_id: int, curator) -> None:
    if not project.allow_self_adjudication and voted_on(item_id, curator):
        raise ConflictOfInterest(
            "You voted on this item, so another curator must decide it "
            "(an admin can relax this in the project settings for tiny teams)."
        )


def _record(verdict: Verdict, *, before: dict, actor, action: str, reason: str) -> Verdict:
    verdict.version += 1
    verdict.save()
    AuditEvent.objects.create(
        project_id=verdict.project_id,
        item_id=verdict.item_id,
        actor=actor,
        action=action,
        before=before,
        after=verdict_snapshot(verdict),
        reason=reason,
    )
    return verdict


def _require_reason(reason: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise CurationError("Give a reason: it goes into the audit trail and the release.")
    return reason


def resolve_item(
    *, project: Project, item_id: int, curator, choice: str, reason: str, version: int | None
) -> Verdict:
    """A curator decides which response is better."""
    if choice not in ("1", "2"):
        raise CurationError("Choose response 1 or response 2.")
    reason = _require_reason(reason)
    with transaction.atomic():
        verdict = _locked_verdict(item_id=item_id, project=project, version=version)
        _check_conflict(project, item_id, curator)
        if verdict.status == VerdictStatus.NEEDS_VOTES:
            raise CurationError("This item is still collecting votes.")
        before = verdict_snapshot(verdict)
        verdict.status = VerdictStatus.RESOLVED
        verdict.final_choice = choice
        verdict.provenance = Provenance.ADJUDICATED
        verdict.exclusion_category = ""
        verdict.decided_by = curator
        verdict.reason = reason
        return _record(verdict, before=before, actor=curator, action="resolve", reason=reason)


def exclude_item(
    *, project: Project, item_id: int, curator, category: str, reason: str, version: int | None
) -> Verdict:
    """Keep an item out of releases (it stays visible, with its votes)."""
    if category not in ExclusionCategory.values or not category:
        raise CurationError("Choose why the item is excluded.")
    reason = _require_reason(reason)
    with transaction.atomic():
        verdict = _locked_verdict(item_id=item_id, project=project, version=version)
        _check_conflict(project, item_id, curator)
        before = verdict_snapshot(verdict)
        verdict.status = VerdictStatus.EXCLUDED
        verdict.final_choice = ""
        verdict.provenance = ""
        verdict.exclusion_category = category
        verdict.decided_by = curator
        verdict.reason = reason
        return _record(verdict, before=before, actor=curator, action="exclude", reason=reason)


def request_more_votes(
    *, project: Project, item_id: int, curator, n: int, reason: str, version: int | None
) -> Verdict:
    """Ask for n more votes; the item goes back to the annotators' pool."""
    if not 1 <= n <= 20:
        raise CurationError("Ask for between 1 and 20 more votes.")
    reason = _require_reason(reason)
    with transaction.atomic():
        verdict = _locked_verdict(item_id=item_id, project=project, version=version)
        if verdict.status in CURATOR_DECIDED:
            raise CurationError("Reopen the item before asking for more votes.")
        Item.objects.filter(pk=item_id).update(votes_needed=F("votes_needed") + n)
        before = verdict_snapshot(verdict)
        verdict.status = VerdictStatus.NEEDS_VOTES
        verdict.final_choice = ""
        verdict.provenance = ""
        verdict.contest_kind = ""
        verdict.decided_by = None
        verdict.reason = f"{n} more vote(s) requested: {reason}"
        return _record(verdict, before=before, actor=curator, action="more_votes", reason=reason)


def reopen_item(*, project: Project, item_id: int, curator, reason: str, version: int | None):
    """Undo a curator decision: the item goes back to the contested queue."""
    reason = _require_reason(reason)
    with transaction.atomic():
        verdict = _locked_verdict(item_id=item_id, project=project, version=version)
        if verdict.status not in CURATOR_DECIDED and verdict.status != VerdictStatus.AGREED:
            raise CurationError("Only agreed, resolved or excluded items can be reopened.")
        before = verdict_snapshot(verdict)
        verdict.status = VerdictStatus.CONTESTED
        verdict.final_choice = ""
        verdict.provenance = ""
        verdict.exclusion_category = ""
        verdict.contest_kind = ContestKind.REOPENED
        verdict.decided_by = None
        verdict.reason = reason
        return _record(verdict, before=before, actor=curator, action="reopen", reason=reason)


def accept_agreed(*, project: Project, domain, curator) -> int:
    """Confirm every agreed item of a domain as resolved (keeping how it was
    agreed). One audit event per item. Returns how many were accepted."""
    with transaction.atomic():
        verdicts = list(
            Verdict.objects.select_for_update()
            .filter(project=project, item__domain=domain, status=VerdictStatus.AGREED)
            .order_by("pk")
        )
        events = []
        for v in verdicts:
            before = verdict_snapshot(v)
            v.status = VerdictStatus.RESOLVED
            v.decided_by = curator
            v.version += 1
            events.append(
                AuditEvent(
                    project=project,
                    item_id=v.item_id,
                    actor=curator,
                    action="accept",
                    before=before,
                    after=verdict_snapshot(v),
                    reason=f"bulk accept of agreed items in {domain.slug}",
                )
            )
        Verdict.objects.bulk_update(verdicts, ["status", "decided_by", "version"], batch_size=1000)
        AuditEvent.objects.bulk_create(events, batch_size=1000)
        return len(verdicts)
