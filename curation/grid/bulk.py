"""Bulk curator actions from the data grid: exclude, reopen, ask for more
votes, move to another domain, make check or qualification items
(curation.gold).

Each item goes through the same service a single decision uses
(curation.verdicts.decisions), in its own transaction, so each gets exactly
one audit entry and the same refusals (a curator who voted on it, an item
already in that state). An item the rules refuse is skipped and counted by
reason; the others are done. Nothing is all-or-nothing on purpose: a
curator excluding 200 broken items should not lose 199 because one was
already excluded.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from django.db import transaction

from annotate.models import Domain, Item, Project
from curation.gold.service import clean_explanation, make_gold_item, refuse_unless_pairwise
from curation.models import AuditEvent, ExclusionCategory, Verdict
from curation.verdicts.decisions import (
    CurationError,
    _check_conflict,
    _require_reason,
    exclude_item,
    reopen_item,
    request_more_votes,
)

# The most items one bulk action touches (each is a transaction of its own:
# ~5-10 ms each, so this bounds a request to a few seconds).
MAX_BULK_ITEMS = 1000

ACTIONS = {
    "exclude": "Exclude",
    "reopen": "Reopen (to the contested queue)",
    "more_votes": "Ask for more votes",
    "move_domain": "Move to domain",
    "make_check": "Make check items (copies, gold from the verdict)",
    "make_qualification": "Make qualification items (copies, gold from the verdict)",
}


@dataclass
class BulkOutcome:
    action: str
    done: int = 0
    skipped: Counter = field(default_factory=Counter)  # message -> count

    def summary(self) -> str:
        verb = {
            "exclude": "excluded",
            "reopen": "reopened",
            "more_votes": "sent back for more votes",
            "move_domain": "moved",
            "make_check": "made check items",
            "make_qualification": "made qualification items",
        }[self.action]
        text = f"{self.done} item{'s' if self.done != 1 else ''} {verb}."
        for message, n in self.skipped.most_common():
            text += f" {n} skipped: {message}"
        return text


def move_to_domain(*, project: Project, item_id: int, curator, domain: Domain, reason: str):
    """Move one item to another domain of its project (its release Category
    and per-domain statistics follow); audited. The verdict does not change:
    the contested rule does not depend on the domain."""
    if domain.project_id != project.pk:
        raise CurationError("That domain belongs to another project.")
    reason = _require_reason(reason)
    with transaction.atomic():
        item = (
            Item.objects.select_for_update()
            .select_related("domain")
            .filter(pk=item_id, project=project)
            .first()
        )
        if item is None:
            raise Verdict.DoesNotExist
        _check_conflict(project, item_id, curator)
        if item.domain_id == domain.pk:
            raise CurationError(f"already in {domain.slug}.")
        before = {"domain": item.domain.slug}
        Item.objects.filter(pk=item.pk).update(domain=domain)
        AuditEvent.objects.create(
            project=project,
            item_id=item.pk,
            actor=curator,
            action="move_domain",
            before=before,
            after={"domain": domain.slug},
            reason=reason,
        )


def apply_bulk(
    *,
    project: Project,
    curator,
    action: str,
    item_ids: list[int],
    reason: str,
    category: str = "",
    n: int = 1,
    domain: Domain | None = None,
    explanation: str = "",
    is_attention: bool = False,
) -> BulkOutcome:
    """Apply `action` to each of `item_ids` (items of `project`; others are
    skipped as unknown). Raises CurationError before touching anything when
    the request itself is wrong (unknown action, no reason, too many items)."""
    if action not in ACTIONS:
        raise CurationError(f"Unknown action {action!r}.")
    reason = _require_reason(reason)
    if not item_ids:
        raise CurationError("Select at least one item.")
    if len(item_ids) > MAX_BULK_ITEMS:
        raise CurationError(
            f"{len(item_ids)} items selected; one bulk action takes at most {MAX_BULK_ITEMS}. "
            "Narrow the filter."
        )
    if action == "move_domain" and domain is None:
        raise CurationError("Choose the domain to move the items to.")
    if action == "exclude" and (not category or category not in ExclusionCategory.values):
        raise CurationError("Choose why the items are excluded.")
    if action == "more_votes" and not 1 <= n <= 20:
        raise CurationError("Ask for between 1 and 20 more votes.")
    gold = action.removeprefix("make_") if action.startswith("make_") else ""
    if gold:
        refuse_unless_pairwise(project)
        explanation = clean_explanation(explanation)
    outcome = BulkOutcome(action=action)
    known = set(
        Verdict.objects.filter(project=project, item_id__in=item_ids).values_list(
            "item_id", flat=True
        )
    )
    for item_id in dict.fromkeys(item_ids):  # (in the order given, once each)
        if item_id not in known:
            outcome.skipped["not an item of this project."] += 1
            continue
        decision = {"project": project, "item_id": item_id, "curator": curator, "reason": reason}
        try:
            if action == "exclude":
                exclude_item(category=category, version=None, **decision)
            elif action == "reopen":
                reopen_item(version=None, **decision)
            elif action == "more_votes":
                request_more_votes(n=n, version=None, **decision)
            elif gold:
                make_gold_item(
                    purpose=gold, explanation=explanation, is_attention=is_attention, **decision
                )
            else:
                move_to_domain(domain=domain, **decision)
        except CurationError as refused:
            outcome.skipped[str(refused)] += 1
        else:
            outcome.done += 1
    return outcome
