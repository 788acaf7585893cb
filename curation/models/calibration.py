"""A judge's votes on a project's benchmark items (issue 36 item 3): what a
judge run over a project stores per item and order, for the calibration
report (curation.evaluation.calibration) and the label-error audit. Never a
Judgement: annotators, verdicts, tallies and releases never see them."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from annotate.models import Item

JUDGE_VOTE_ORDERS = ("original", "swapped")  # curation.models.JudgeOrder's passes
JUDGE_VOTE_CHOICES = ("1", "2", "")  # canonical response; "": no verdict in the answer


class JudgeVote(models.Model):
    """A project judge run's answer on one item in one order, in canonical
    terms (response 1/2 of the item, whichever was shown as assistant A)."""

    run = models.ForeignKey("curation.JudgeRun", on_delete=models.CASCADE, related_name="votes")
    # No index of its own: the audit and the report read a run's votes through
    # (run, item, order) below; an item's deletion cascades.
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+", db_index=False)
    order = models.CharField(max_length=8)
    choice = models.CharField(max_length=1, blank=True, help_text='"" when no verdict was found.')
    confidence = models.FloatField(
        null=True, blank=True, help_text="The judge's stated confidence in its pick (0 to 1)."
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["run", "item", "order"], name="curation_judgevote_once_per_order"
            ),
            models.CheckConstraint(
                condition=Q(order__in=JUDGE_VOTE_ORDERS), name="curation_judgevote_order_valid"
            ),
            models.CheckConstraint(
                condition=Q(choice__in=JUDGE_VOTE_CHOICES), name="curation_judgevote_choice_valid"
            ),
            models.CheckConstraint(
                condition=Q(confidence__isnull=True) | Q(confidence__gte=0, confidence__lte=1),
                name="curation_judgevote_confidence_range",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.run_id}: {self.item_id} {self.order} → {self.choice or '-'}"


class CalibrationCache(models.Model):
    """A project's stored calibration report (curation.evaluation.calibration_cache):
    computed by a background task when a project judge run completes, when
    enough votes changed, or on a curator's Recompute; the page and the API
    serve it as stored. One row per project, shared by every web process."""

    project = models.OneToOneField(
        "annotate.Project", on_delete=models.CASCADE, related_name="calibration_cache"
    )
    # {"runs": [{"run": pk, "rows": [{"domain": ..., figures...}, ...]}, ...]}
    payload = models.JSONField(default=dict, blank=True)
    computed_at = models.DateTimeField(null=True, blank=True)
    # The human votes the payload was built from: how many, and the newest
    # vote's id (votes given or revised since have a larger one).
    n_votes = models.PositiveIntegerField(default=0)
    last_vote_id = models.BigIntegerField(default=0)
    # Set when a computation is queued, cleared when it has finished: the
    # page shows the progress meanwhile and never waits.
    requested_at = models.DateTimeField(null=True, blank=True)
    # Asked again while one ran: the task queues one more when it ends.
    again = models.BooleanField(default=False)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True, help_text="Why the last computation failed.")

    def __str__(self) -> str:
        return f"calibration report of {self.project_id} at {self.computed_at}"

    @property
    def progress_percent(self) -> int:
        total = self.progress_total
        return int(100 * self.progress_done / total) if total else 0
