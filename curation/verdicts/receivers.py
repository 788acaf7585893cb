"""Receivers of annotate's signals. They run inside the sender's transaction."""

from annotate.models import ItemPurpose, Project, Role
from common.bulk import insert_per_key
from curation.models import AuditEvent, Verdict
from curation.verdicts.service import recheck_waiting_items, update_verdict


def create_verdicts_for_imported_items(sender, *, project, item_ids, **kwargs) -> None:
    """Every benchmark item gets a Verdict (needs_votes) in the import's
    transaction; qualification and check items (issue 36) get none, so no
    curation page, release or export sees them. (The project's few such
    items are read, not the import's list: it may hold 100,000 ids.)"""
    from annotate.models import Item

    gates = set(
        Item.objects.filter(project=project)
        .exclude(purpose=ItemPurpose.BENCHMARK)
        .values_list("pk", flat=True)
    )
    if gates:
        item_ids = [pk for pk in item_ids if pk not in gates]
    insert_per_key(Verdict, "item_id", item_ids, {"project_id": project.pk})


def decide_items_imported_from_a_release(sender, *, project, item_ids, release, **kwargs) -> None:
    """A studio release was imported: its labels decide the new items' verdicts."""
    from curation.verdicts.imported import decide_imported_items

    decide_imported_items(project=project, item_ids=item_ids, release=release)


def decide_items_with_imported_votes(sender, *, project, item_ids, **kwargs) -> None:
    """Published annotations became votes: apply the contested rule to those
    items at once, in the import's transaction."""
    from annotate.models import Item
    from curation.verdicts.service import reevaluate_items

    reevaluate_items(project=project, items=Item.objects.filter(pk__in=item_ids))


def audit_import(sender, *, project, actor, details, summary, **kwargs) -> None:
    """An import is in the audit log beside curators' decisions (no item)."""
    AuditEvent.objects.create(
        project=project, item=None, actor=actor, action="import", after=details, reason=summary
    )


def _pause_figures(pause) -> dict:
    return {
        "annotator": pause.annotator_id,
        "right": pause.right,
        "total": pause.total,
        "low": pause.low,
        "high": pause.high,
        "threshold": pause.threshold,
        "minimum": pause.minimum,
    }


def audit_pause(sender, *, pause, **kwargs) -> None:
    """An annotator was paused by the check rule (annotate.checks): in the
    audit log beside curators' decisions, with the figures (no actor)."""
    AuditEvent.objects.create(
        project_id=pause.project_id,
        item=None,
        actor=None,
        action="pause",
        after={"paused": True, **_pause_figures(pause)},
        reason=pause.reason,
    )


def audit_reinstatement(sender, *, pause, actor, **kwargs) -> None:
    """A curator reinstated a paused annotator."""
    AuditEvent.objects.create(
        project_id=pause.project_id,
        item=None,
        actor=actor,
        action="reinstate",
        before={"paused": True, **_pause_figures(pause)},
        after={"paused": False, "annotator": pause.annotator_id},
        reason=f"Reinstated after the pause of {pause.paused_at:%Y-%m-%d %H:%M} UTC.",
    )


def update_verdict_on_vote(sender, *, item, **kwargs) -> None:
    """Move the item's verdict through the contested rule, atomically with the
    vote (update_verdict locks the verdict row first). Qualification and
    check items (issue 36) measure the annotator: their votes decide nothing."""
    if item.purpose != ItemPurpose.BENCHMARK:
        return
    update_verdict(item=item)


def recheck_on_eligibility_change(sender, *, project_id, item_ids, **kwargs) -> None:
    """Leases ran out or an item was skipped: those annotators can no longer
    vote on those items, so take back escalation votes nobody can give."""
    project = Project.objects.filter(pk=project_id).first()
    if project is not None:
        recheck_waiting_items(project=project, item_ids=item_ids)


def recheck_on_membership_change(sender, *, instance, **kwargs) -> None:
    """A member was added, removed or changed role: recheck every item of the
    project still collecting votes (a removed annotator is no longer
    eligible). A new member only adds eligible annotators, which never makes
    an item short, and costs one query here."""
    project = Project.objects.filter(pk=instance.project_id).first()
    if project is not None:
        recheck_waiting_items(project=project)


def recheck_on_account_change(sender, *, instance, update_fields=None, **kwargs) -> None:
    """An account was deactivated (or reactivated): recheck the projects it
    annotates in. Saves that leave is_active alone (log-ins write last_login
    with update_fields) are skipped."""
    if update_fields is not None and "is_active" not in update_fields:
        return
    if instance.is_active and not kwargs.get("created", False):
        return  # reactivation only adds eligibility
    for project in Project.objects.filter(
        memberships__user=instance, memberships__role=Role.ANNOTATOR
    ):
        recheck_waiting_items(project=project)
