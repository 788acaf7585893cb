"""Verdicts of items imported from a studio release
(annotate.importing.formats.release): the release already decided them.

Each such item's gold_choice holds the side the release chose; its verdict
becomes resolved on that side with provenance ``gold`` (not a vote of this
project's annotators: the release's decision), and an audit event
``release_imported`` names the release (project, version, seed, SHA-256 of
the zip and of all_data.json). The item stops collecting votes, as an item a
curator closed does: a curator can reopen it like any decided item. A
release cut from the project then holds these items with the same records.
"""

from __future__ import annotations

from annotate.models import Item
from curation.models import AuditEvent, Provenance, Verdict, VerdictStatus
from curation.verdicts.service import verdict_snapshot

CHUNK = 2000


def decide_imported_items(*, project, item_ids: list[int], release: dict) -> int:
    """Resolve the verdicts of items a release import created, in the
    import's transaction. Returns how many were decided."""
    reason = f"imported from release {release['project']} {release['version']}"
    decided = 0
    for start in range(0, len(item_ids), CHUNK):
        chunk = item_ids[start : start + CHUNK]
        gold = dict(
            Item.objects.filter(pk__in=chunk, gold_choice__in=("1", "2")).values_list(
                "pk", "gold_choice"
            )
        )
        verdicts = list(
            Verdict.objects.select_for_update().filter(
                item_id__in=list(gold), status=VerdictStatus.NEEDS_VOTES
            )
        )
        events = []
        for verdict in verdicts:
            before = verdict_snapshot(verdict)
            verdict.status = VerdictStatus.RESOLVED
            verdict.final_choice = gold[verdict.item_id]
            verdict.provenance = Provenance.GOLD
            verdict.reason = reason
            verdict.version += 1
            events.append(
                AuditEvent(
                    project=project,
                    item_id=verdict.item_id,
                    action="release_imported",
                    before=before,
                    after={**verdict_snapshot(verdict), "release": release},
                    reason=reason,
                )
            )
        Verdict.objects.bulk_update(
            verdicts, ["status", "final_choice", "provenance", "reason", "version"]
        )
        AuditEvent.objects.bulk_create(events)
        # Decided: no claim offers them (votes_needed = the votes they have,
        # none: they were created by this import).
        Item.objects.filter(pk__in=[v.item_id for v in verdicts]).update(votes_needed=0)
        decided += len(verdicts)
    return decided
