"""Curator decisions on a verdict: resolve, exclude, ask for more votes,
reopen, accept a domain's agreed items, and the label-quality review's
confirm and overturn. Each is audited, refused on a stale version, and
refused to a curator who voted on the item unless the project allows it.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import F

from annotate.loop.leases import stop_collecting_votes
from annotate.models import Item, Judgement, Project
from curation.models import (
    AuditEvent,
    ContestKind,
    ExclusionCategory,
    Provenance,
    Verdict,
    VerdictRank,
    VerdictStatus,
)
from curation.verdicts import ranked
from curation.verdicts.service import CURATOR_DECIDED, verdict_snapshot


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


def _drop_final_ranks(project: Project, verdict: Verdict, before: dict) -> None:
    """A ranked item's verdict leaving agreed/resolved loses its final
    ranking: the rows are deleted with the decision, the audit's before has
    them and its after has none."""
    if ranked.is_ranked(project):
        ranked.load_final_ranks([verdict])
        before["final_ranks"] = list(verdict.ranked_final)
        VerdictRank.objects.filter(verdict=verdict).delete()
        verdict.ranked_final = ()


def _require_reason(reason: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise CurationError("Give a reason: it goes into the audit trail and the release.")
    return reason


def _close(project: Project, item_id: int) -> None:
    """A curator's decision ends the item's vote collection (open leases end,
    nothing more is claimed). Called before the verdict is locked: it locks
    the item's assignments and row first, as a vote does."""
    if not Item.objects.filter(pk=item_id, project=project).exists():
        raise Verdict.DoesNotExist
    stop_collecting_votes(item_id=item_id)


def resolve_item(
    *, project: Project, item_id: int, curator, choice: str, reason: str, version: int | None
) -> Verdict:
    """A curator decides which response is better, or that neither is (a tie,
    in projects that allow ties), whatever state the item is in: a split
    nobody is left to break, an item still collecting votes, a contested or
    agreed one. An item still collecting votes stops collecting."""
    if ranked.is_ranked(project):
        raise CurationError("Set this item's final ranking or best response instead of a side.")
    allowed = ("1", "2", "tie") if project.allow_tie else ("1", "2")
    if choice not in allowed:
        raise CurationError(
            "Choose response 1, response 2 or a tie."
            if project.allow_tie
            else "Choose response 1 or response 2."
        )
    reason = _require_reason(reason)
    with transaction.atomic():
        _close(project, item_id)
        verdict = _locked_verdict(item_id=item_id, project=project, version=version)
        _check_conflict(project, item_id, curator)
        before = verdict_snapshot(verdict)
        verdict.status = VerdictStatus.RESOLVED
        verdict.final_choice = choice
        verdict.provenance = Provenance.ADJUDICATED
        verdict.exclusion_category = ""
        verdict.escalated_by = 0
        verdict.decided_by = curator
        verdict.reason = reason
        return _record(verdict, before=before, actor=curator, action="resolve", reason=reason)


def exclude_item(
    *, project: Project, item_id: int, curator, category: str, reason: str, version: int | None
) -> Verdict:
    """Keep an item out of releases (it stays visible, with its votes),
    whatever state it is in; an item still collecting votes stops collecting."""
    if category not in ExclusionCategory.values or not category:
        raise CurationError("Choose why the item is excluded.")
    reason = _require_reason(reason)
    with transaction.atomic():
        _close(project, item_id)
        verdict = _locked_verdict(item_id=item_id, project=project, version=version)
        _check_conflict(project, item_id, curator)
        before = verdict_snapshot(verdict)
        verdict.status = VerdictStatus.EXCLUDED
        verdict.final_choice = ""
        verdict.provenance = ""
        verdict.exclusion_category = category
        verdict.escalated_by = 0
        verdict.decided_by = curator
        verdict.reason = reason
        _drop_final_ranks(project, verdict, before)
        return _record(verdict, before=before, actor=curator, action="exclude", reason=reason)


def request_more_votes(
    *, project: Project, item_id: int, curator, n: int, reason: str, version: int | None
) -> Verdict:
    """Ask for n more votes; the item goes back to the annotators' pool. (Ask
    eligible_counts() first to warn when fewer annotators are left than
    asked: the item is then reported stuck until a curator closes it.)"""
    if not 1 <= n <= 20:
        raise CurationError("Ask for between 1 and 20 more votes.")
    reason = _require_reason(reason)
    with transaction.atomic():
        Item.objects.select_for_update().filter(pk=item_id, project=project).first()
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
        _drop_final_ranks(project, verdict, before)
        return _record(verdict, before=before, actor=curator, action="more_votes", reason=reason)


def reopen_item(*, project: Project, item_id: int, curator, reason: str, version: int | None):
    """Undo a curator decision or an agreement: the item goes to the contested
    queue. An item still collecting votes goes there at once (it stops
    collecting: the curators decide it on the votes it has)."""
    reason = _require_reason(reason)
    with transaction.atomic():
        current = Verdict.objects.filter(item_id=item_id, project=project).values_list(
            "status", flat=True
        )
        closed = VerdictStatus.NEEDS_VOTES in current
        if closed:
            _close(project, item_id)
        verdict = _locked_verdict(item_id=item_id, project=project, version=version)
        if verdict.status == VerdictStatus.CONTESTED:
            raise CurationError("This item is already in the contested queue.")
        if verdict.status == VerdictStatus.NEEDS_VOTES and not closed:
            # It went back to collecting votes since it was read (a version
            # given with the decision would have said so already).
            raise StaleDecision("This item is collecting votes again; reload it and decide.")
        before = verdict_snapshot(verdict)
        verdict.status = VerdictStatus.CONTESTED
        verdict.final_choice = ""
        verdict.provenance = ""
        verdict.exclusion_category = ""
        verdict.contest_kind = ContestKind.REOPENED
        verdict.escalated_by = 0
        verdict.decided_by = None
        verdict.reason = reason
        _drop_final_ranks(project, verdict, before)
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


def confirm_label(
    *, project: Project, item_id: int, curator, reason: str = "", version: int | None
) -> Verdict:
    """A curator confirms an agreed or resolved item's side after the
    label-quality review flagged it: it becomes resolved with provenance
    `reviewed` (audited, same conflict-of-interest rule as any decision).
    Overturning is resolve_item with the other side."""
    reason = (reason or "").strip() or "Confirmed in the label-quality review."
    with transaction.atomic():
        verdict = _locked_verdict(item_id=item_id, project=project, version=version)
        if verdict.status not in (
            VerdictStatus.AGREED,
            VerdictStatus.RESOLVED,
        ) or verdict.final_choice not in ("1", "2"):
            raise CurationError("Only an agreed or resolved item with a side can be confirmed.")
        _check_conflict(project, item_id, curator)
        before = verdict_snapshot(verdict)
        verdict.status = VerdictStatus.RESOLVED
        verdict.provenance = Provenance.REVIEWED
        verdict.decided_by = curator
        verdict.reason = reason
        return _record(verdict, before=before, actor=curator, action="confirm", reason=reason)


def overturn_label(
    *, project: Project, item_id: int, curator, reason: str, version: int | None
) -> Verdict:
    """The label-quality review's overturn: resolve the item for the other
    response than its current side (reason, audit, version and
    conflict-of-interest rule as resolve_item)."""
    current = Verdict.objects.filter(project=project, item_id=item_id).first()
    if current is None:
        raise Verdict.DoesNotExist
    if current.final_choice not in ("1", "2"):
        raise CurationError("Only an item with a side can be overturned.")
    other = "2" if current.final_choice == "1" else "1"
    return resolve_item(
        project=project,
        item_id=item_id,
        curator=curator,
        choice=other,
        reason=reason,
        version=version,
    )
