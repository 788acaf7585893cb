"""Pauses of annotators whose accuracy on the project's check items fell
below its threshold (issue 36, annotate.checks)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class ProjectPauseQuerySet(models.QuerySet["ProjectPause"]):
    def open(self) -> ProjectPauseQuerySet:
        """Pauses no curator has lifted yet."""
        return self.filter(reinstated_at__isnull=True)


class ProjectPause(models.Model):
    """An annotator stopped from claiming in one project: who, when, why and
    the accuracy figures that made it; lifted by a curator (reinstated_by/at).
    Kept after reinstatement, so the history of pauses stays."""

    project = models.ForeignKey("annotate.Project", on_delete=models.CASCADE, related_name="pauses")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="project_pauses"
    )
    paused_at = models.DateTimeField()
    reason = models.TextField()
    # The figures the rule saw: right of total checks, the Wilson interval,
    # and the project's threshold and minimum at the time.
    right = models.PositiveIntegerField()
    total = models.PositiveIntegerField()
    low = models.FloatField()
    high = models.FloatField()
    threshold = models.FloatField()
    minimum = models.PositiveSmallIntegerField()
    reinstated_at = models.DateTimeField(null=True, blank=True)
    reinstated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )

    objects = ProjectPauseQuerySet.as_manager()

    class Meta:
        ordering = ["-paused_at", "-id"]
        constraints = [
            # One open pause per annotator and project: pausing twice is a no-op.
            models.UniqueConstraint(
                fields=["project", "annotator"],
                condition=Q(reinstated_at__isnull=True),
                name="annotate_projectpause_one_open",
            ),
            models.CheckConstraint(
                condition=Q(right__lte=models.F("total")),
                name="annotate_projectpause_right_within_total",
            ),
        ]
        # The claim's and the annotator table's question (is this annotator
        # paused here?) is answered by one_open's unique index.

    def __str__(self) -> str:
        return f"{self.annotator_id} paused in {self.project_id} at {self.paused_at:%Y-%m-%d %H:%M}"

    @property
    def is_open(self) -> bool:
        return self.reinstated_at is None
