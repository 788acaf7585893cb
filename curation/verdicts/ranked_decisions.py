"""A curator's final ranking or best pick for a best-of-N or ranking item
(issue 33, deliverable 4): resolve_item's twin for ranked items, with the
same locks, version check, conflict-of-interest rule and audit event
(action "resolve", the final ranks in the snapshot)."""

from __future__ import annotations

from django.db import transaction

from annotate.loop.rules import is_competition_ranking
from annotate.models import Project, Task
from curation.models import Provenance, VerdictStatus
from curation.verdicts import ranked
from curation.verdicts.decisions import (
    CurationError,
    _check_conflict,
    _close,
    _locked_verdict,
    _record,
    _require_reason,
)
from curation.verdicts.service import verdict_snapshot


def item_slot_count(item_id: int) -> int:
    """How many response slots the item has (its parts' response slots)."""
    from annotate.models import ItemPart

    slots = (
        ItemPart.objects.filter(item_id=item_id, slot__startswith="response_")
        .values_list("slot", flat=True)
        .distinct()
    )
    return len(set(slots))


def check_final(project: Project, n_slots: int, *, pick: str = "", ranks=()) -> tuple:
    """The curator's answer validated for the project's task: (final_choice,
    final ranks). Raises CurationError with what to fix."""
    if project.task == Task.BEST_OF_N:
        if pick not in {str(s) for s in range(1, n_slots + 1)}:
            raise CurationError(f"Choose the best of the {n_slots} responses.")
        if ranks:
            raise CurationError("A best-of-N item takes a best response, not a ranking.")
        return pick, ()
    if project.task != Task.RANKING:
        raise CurationError("This project's items are pairs: resolve them with a side.")
    try:
        ranks = tuple(int(r) for r in ranks)
    except (TypeError, ValueError):
        raise CurationError("Ranks are whole numbers, 1 = best.") from None
    if len(ranks) != n_slots:
        raise CurationError(f"Give each of the {n_slots} responses a rank.")
    if not is_competition_ranking(ranks):
        raise CurationError("Ranks run from 1 with ties sharing one (e.g. 1, 2, 2, 4).")
    tops = [slot for slot, rank in enumerate(ranks, start=1) if rank == 1]
    return (str(tops[0]) if len(tops) == 1 else "tie"), ranks


def resolve_ranked(
    *,
    project: Project,
    item_id: int,
    curator,
    reason: str,
    version: int | None,
    pick: str = "",
    ranks=(),
):
    """Set a ranked item's final ranking (rankings) or best response
    (best-of-N), whatever state the item is in; it stops collecting votes.
    A final ranking with a tied first place is stored as final_choice "tie"
    (no single best response) with its ranks."""
    if not ranked.is_ranked(project):
        raise CurationError("This project's items are pairs: resolve them with a side.")
    reason = _require_reason(reason)
    n_slots = item_slot_count(item_id)
    final_choice, final_ranks = check_final(project, n_slots, pick=pick, ranks=ranks)
    with transaction.atomic():
        _close(project, item_id)
        verdict = _locked_verdict(item_id=item_id, project=project, version=version)
        _check_conflict(project, item_id, curator)
        ranked.load_final_ranks([verdict])
        before = verdict_snapshot(verdict)
        verdict.status = VerdictStatus.RESOLVED
        verdict.final_choice = final_choice
        verdict.ranked_final = final_ranks
        verdict.provenance = Provenance.ADJUDICATED
        verdict.exclusion_category = ""
        verdict.escalated_by = 0
        verdict.decided_by = curator
        verdict.reason = reason
        _record(verdict, before=before, actor=curator, action="resolve", reason=reason)
        ranked.write_final_ranks([verdict])
        return verdict
