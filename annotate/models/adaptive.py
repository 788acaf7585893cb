"""Adaptive votes' state (issue 36; annotate.loop.adaptive has the rule):
each item's certainty, which the claim reads, and each project's refit
counter. Written only by the refit (curation.quality.adaptive)."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from annotate.loop import adaptive
from annotate.models.items import Item
from annotate.models.projects import Project


class CertaintyReason(models.TextChoices):
    """Why an item is open or settled (annotate.loop.adaptive.step)."""

    BASE = "base", "Collecting its base votes"
    OPEN = "open", "Uncertain: one more vote"
    CERTAIN = "certain", "Certain enough"
    AGREEMENT = "agreement", "Humans and judges agree"
    BUDGET = "budget", "Vote budget spent"


class ItemCertainty(models.Model):
    """An item's label certainty at the last refit, and whether the adaptive
    queue serves it (`open`)."""

    item = models.OneToOneField(
        Item, primary_key=True, on_delete=models.CASCADE, related_name="certainty"
    )
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    # The posterior probability that response 1 is better; `certainty` is
    # that of the most likely label, max(p1, 1 - p1).
    p1 = models.FloatField()
    certainty = models.FloatField()
    open = models.BooleanField()
    reason = models.CharField(max_length=9, choices=CertaintyReason.choices)
    human_votes = models.PositiveSmallIntegerField(help_text="Human votes at the refit.")

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(p1__gte=0, p1__lte=1, certainty__gte=0.5, certainty__lte=1),
                name="annotate_itemcertainty_range",
            ),
            models.CheckConstraint(
                condition=Q(reason__in=CertaintyReason.values),
                name="annotate_itemcertainty_reason_valid",
            ),
            models.CheckConstraint(
                condition=Q(open=False) | Q(reason=CertaintyReason.OPEN),
                name="annotate_itemcertainty_open_has_reason",
            ),
        ]
        indexes = [
            # The claim's adaptive pick (annotate.loop.postgres CLAIM_QUESTIONS
            # `adaptive`, orm.pick): a project's open items, least certain
            # first, then the id; the scan stops at the first it may take.
            models.Index(
                fields=["project", "certainty", "item"],
                condition=Q(open=True),
                name="annotate_certainty_queue_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.item_id}: {self.certainty:.3f} ({self.reason})"


class AdaptiveFit(models.Model):
    """A project's refit state: the votes since the last refit, and what
    that refit found (shown on the project page and in the API)."""

    project = models.OneToOneField(
        Project, primary_key=True, on_delete=models.CASCADE, related_name="adaptive_fit"
    )
    votes_since = models.PositiveIntegerField(default=0)
    # Votes the queue could still serve right after the refit: once as many
    # came in, every vote it offered is given, so the next refit is due
    # sooner than REFIT_EVERY (nothing waits for a refit that never comes).
    offered = models.PositiveIntegerField(default=0)
    queued = models.BooleanField(default=False)
    fitted_at = models.DateTimeField(null=True, blank=True)
    method = models.CharField(max_length=12, blank=True)
    # Items per CertaintyReason at the refit, and the judges counted.
    counts = models.JSONField(default=dict, blank=True)
    judges = models.PositiveSmallIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.project_id}: {self.votes_since} votes since {self.fitted_at}"


def adaptive_summary(project) -> dict:
    """What the page and the API say of a project's vote mode."""
    fit = AdaptiveFit.objects.filter(project=project).first()
    method = fit.method if fit and fit.method else ""
    expected = adaptive.DAWID_SKENE if adaptive.dawid_skene_available() else adaptive.ONE_COIN
    return {
        "vote_mode": project.vote_mode,
        "base_votes": project.adaptive_base_votes,
        "budget": project.adaptive_budget,
        "stop_certainty": project.adaptive_stop_certainty,
        "rule": project.adaptive_rule.describe() if project.is_adaptive else "",
        "posterior": adaptive.METHOD_NAMES[method or expected],
        "fallback": (method or expected) == adaptive.ONE_COIN,
        "refitted_at": fit.fitted_at if fit else None,
        "items": {
            reason.value: (fit.counts if fit else {}).get(reason.value, 0)
            for reason in CertaintyReason
        },
        "judges": fit.judges if fit else 0,
    }
