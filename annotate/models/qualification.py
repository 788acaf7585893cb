"""Qualification (issue 36 item 1): a newcomer's attempts at the project's
qualification items and their answers.

A qualification answer is never a Judgement: it lives in its attempt's own
rows, so no statistic, verdict, release, export, progress count or agreement
figure (which all read Judgement and the item tallies) can ever count it.
Admission is on the member's Membership (admitted_at), set by a passed
attempt or by a curator (audited as a SetupEvent).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from annotate.models.items import Item
from annotate.models.projects import Project


class QualificationAttempt(models.Model):
    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="qualification_attempts"
    )
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="qualification_attempts"
    )
    started_at = models.DateTimeField()
    # Null while the attempt is open (its items not all answered).
    finished_at = models.DateTimeField(null=True, blank=True)
    # The qualification items the attempt serves, in order (item pks), fixed
    # when it starts: items imported meanwhile do not change a running attempt.
    item_ids = models.JSONField(default=list)
    right = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    # The project's pass mark when the attempt finished (it may change later).
    pass_mark = models.FloatField(default=0.8)
    passed = models.BooleanField(default=False)

    class Meta:
        ordering = ["-started_at", "-id"]
        constraints = [
            # One attempt at a time: a second "start" resumes the open one.
            models.UniqueConstraint(
                fields=["project", "annotator"],
                condition=Q(finished_at__isnull=True),
                name="annotate_qualification_one_open_attempt",
            ),
            models.CheckConstraint(
                condition=Q(right__lte=F("total")), name="annotate_qualification_right_within_total"
            ),
            models.CheckConstraint(
                condition=Q(passed=False) | Q(finished_at__isnull=False),
                name="annotate_qualification_passed_when_finished",
            ),
        ]
        indexes = [
            # An annotator's attempts in a project, newest first (the
            # qualification page, the retry rule, the members page).
            models.Index(
                fields=["project", "annotator", "-started_at"], name="annotate_qual_attempt_idx"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.annotator} in {self.project}: {self.right}/{self.total}"

    @property
    def score(self) -> float | None:
        return self.right / self.total if self.total else None


class QualificationAnswer(models.Model):
    """One answer of an attempt, in canonical terms, and whether it was right."""

    attempt = models.ForeignKey(
        QualificationAttempt, on_delete=models.CASCADE, related_name="answers"
    )
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="qualification_answers")
    # The response order shown ("12" or "21"), and the answer mapped back.
    display_order = models.CharField(max_length=8)
    choice = models.CharField(max_length=3)
    correct = models.BooleanField()
    answered_at = models.DateTimeField()

    class Meta:
        ordering = ["attempt", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["attempt", "item"], name="annotate_qualification_one_answer_per_item"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.attempt_id}/{self.item_id}: {self.choice}"
