"""The contested rule in force when each released verdict was decided, for
the release manifest (`decision_rules`).

A verdict stores where it stands, not the thresholds it was decided under;
the audit trail has both. Every change of a project's thresholds is an
AuditEvent "thresholds" (curation.verdicts.service.update_thresholds, with
the values before and after), and every decision is an AuditEvent on its
item: "rule" when the contested rule moved it, "resolve", "accept" or
"confirm" when a curator did. So the thresholds in force at a decision are
the `after` of the last change at or before it; before the first change they
are that change's `before`; with no change at all, the project's current
thresholds. A verdict with no decision event (made before the audit trail
existed, or written directly) is dated by its last update instead.

Two queries whatever the release's size: the changes, and the verdicts
with their last decision event each.
"""

from __future__ import annotations

from bisect import bisect_right
from datetime import datetime

from django.db.models import OuterRef, QuerySet, Subquery

from annotate.models import Project
from curation.models import AuditEvent, Verdict

RULE = "contested rule (DESIGN §6; curation/verdicts/rule.py)"
THRESHOLDS = ("votes_per_item", "agree_share", "escalation_votes")
# The audit actions that decide a verdict (put it where a release takes it).
DECISION_ACTIONS = ("rule", "resolve", "accept", "confirm")


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def rule_versions(project: Project) -> tuple[list[datetime], list[dict]]:
    """The times the thresholds changed, and the thresholds in force in each
    period (one more than the changes): period i runs from change i-1 to
    change i."""
    changes = list(
        AuditEvent.objects.filter(project=project, action="thresholds", item=None)
        .order_by("created_at", "pk")
        .values_list("created_at", "before", "after")
    )
    current = {name: getattr(project, name) for name in THRESHOLDS}
    if not changes:
        return [], [current]
    first_before = changes[0][1]
    periods = [{name: first_before.get(name, current[name]) for name in THRESHOLDS}]
    periods += [
        {name: after.get(name, current[name]) for name in THRESHOLDS} for *_, after in changes
    ]
    return [at for at, _, _ in changes], periods


def decision_rules(project: Project, verdicts: QuerySet[Verdict]) -> dict:
    """The manifest's `decision_rules`: each rule version (its thresholds,
    the period it was in force, how many released verdicts it decided) with
    the record IDs it decided, split by who decided: the rule itself
    (`decided_by_rule`) or a curator under it (`decided_by_curator`). Every
    released ID is in exactly one list. Lists of IDs, not an object per
    verdict: a 100,000-item release's manifest (also kept in the database)
    stays a few MB larger, not tens."""
    times, periods = rule_versions(project)
    # The item's last decision (audit_item_idx: the item's events by time).
    last = AuditEvent.objects.filter(
        item_id=OuterRef("item_id"), action__in=DECISION_ACTIONS
    ).order_by("-created_at", "-pk")
    rows = (
        verdicts.order_by("item__external_id")
        .annotate(
            decided_at=Subquery(last.values("created_at")[:1]),
            decision=Subquery(last.values("action")[:1]),
        )
        .values_list("item__external_id", "decided_at", "decision", "decided_by_id", "updated_at")
    )
    by_rule: list[list[str]] = [[] for _ in periods]
    by_curator: list[list[str]] = [[] for _ in periods]
    for external_id, at, action, curator, updated_at in rows.iterator(chunk_size=5000):
        version = bisect_right(times, at or updated_at)  # the changes at or before it
        rule = action == "rule" if action else curator is None
        (by_rule if rule else by_curator)[version].append(external_id)
    versions = [
        {
            "version": i,
            **thresholds,
            "in_force_from": _iso(times[i - 1]) if i else None,
            "in_force_until": _iso(times[i]) if i < len(times) else None,
            "verdicts": len(by_rule[i]) + len(by_curator[i]),
            "decided_by_rule": by_rule[i],
            "decided_by_curator": by_curator[i],
        }
        for i, thresholds in enumerate(periods)
    ]
    return {"rule": RULE, "versions": versions}
