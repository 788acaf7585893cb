"""The compare page's progress counters: per project, the votes needed and
collected and the items still short of leases, summed over its items.

The database keeps them, in the same transaction as every change to an item
(triggers on annotate_item, migration 0022_progresscounter): a vote, a claim, an
expired lease, an escalation, an import or a curator's decision moves them
whatever code path writes the item, so the progress line reads a few rows
instead of aggregating every item of the project on every page (issue 32).
annotate.loop.page.reference_progress is the aggregate they are held equal
to (tests/annotate/loop/test_progress_counters.py).

Each project's sums are split over STRIPES rows, so concurrent votes rarely
wait on one counter row; a reader adds them up. SQLite (one writer at a
time): the stripe of the item (id mod STRIPES). PostgreSQL: the stripe of
the database session (pg_backend_pid() mod STRIPES, migration 0025), so a
transaction that writes several items (a vote, then the next claim) holds
one counter row per project and two such transactions cannot deadlock.
"""

from __future__ import annotations

from django.db import models

STRIPES = 16


class ProgressCounter(models.Model):
    """One stripe of a project's sums over its items (see the module's
    docstring for which stripe a change moves): votes_needed; min(votes, votes_needed); items whose
    live_assignments are below votes_needed. Written by triggers only."""

    project = models.ForeignKey(
        "annotate.Project", on_delete=models.CASCADE, related_name="progress_counters"
    )
    stripe = models.PositiveSmallIntegerField()
    needed = models.BigIntegerField(default=0)
    collected = models.BigIntegerField(default=0)
    unfilled = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project", "stripe"], name="annotate_progresscounter_stripe_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"progress of project {self.project_id}, stripe {self.stripe}"
