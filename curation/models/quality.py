"""Per-item results of evaluations and the label-quality cache. Re-exported by
curation.models so Django finds them in the curation app."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from annotate.models import Item, Project


class Side(models.TextChoices):
    NONE = "", "No pick"
    RESPONSE_1 = "1", "Response 1"
    RESPONSE_2 = "2", "Response 2"


class ItemPredictionQuerySet(models.QuerySet["ItemPrediction"]):
    def wrong(self):
        return self.filter(correct=False)


class ItemPrediction(models.Model):
    """How one leaderboard entry judged one item, in the project's canonical
    terms (response 1/2 of the item, whatever slot the release wrote it in).
    The first line per ID and order counts, as the strict accuracy does."""

    evaluation = models.ForeignKey(
        "curation.Evaluation", on_delete=models.CASCADE, related_name="item_predictions"
    )
    # No index of its own: the per-item drill-down uses (item, evaluation) below.
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+", db_index=False)
    external_id = models.CharField(max_length=200)
    category = models.CharField(max_length=80)
    sub_bucket = models.CharField(max_length=80)
    chosen = models.CharField(
        max_length=1, choices=Side.choices, help_text="The release's better side (canonical)."
    )
    choice = models.CharField(
        max_length=1, choices=Side.choices, blank=True, help_text="Original order's pick."
    )
    swapped_choice = models.CharField(
        max_length=1, choices=Side.choices, blank=True, help_text="Swapped order's pick."
    )
    has_swapped = models.BooleanField(default=False)
    correct = models.BooleanField(help_text="Official: the original order picked the release's.")
    random_verdict = models.BooleanField(
        default=False, help_text="Judge text without [[A]]/[[B]]: the official random draw."
    )
    p1 = models.FloatField(null=True, help_text="P(response 1 better); see probability.py.")
    raw = models.JSONField(default=dict, help_text="Scores or judge text per order.")

    objects = ItemPredictionQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["evaluation", "item"], name="curation_itemprediction_one_per_item"
            ),
            models.CheckConstraint(
                condition=Q(p1__isnull=True) | Q(p1__gte=0, p1__lte=1),
                name="curation_itemprediction_p1_range",
            ),
        ]
        indexes = [
            # Drill-down: an entry's wrong items, by category / sub-bucket.
            models.Index(
                fields=["evaluation", "correct", "category", "sub_bucket"],
                name="curation_itempred_wrong_idx",
            ),
            # Per-item view and the ensemble: every entry's row for an item.
            models.Index(fields=["item", "evaluation"], name="curation_itempred_item_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.evaluation_id}: {self.external_id} → {self.choice or '-'}"


class LabelQualityStatus(models.TextChoices):
    NEVER = "never", "Never computed"
    PENDING = "pending", "Queued"
    RUNNING = "running", "Computing"
    READY = "ready", "Ready"
    FAILED = "failed", "Failed"


class LabelQualityRun(models.Model):
    """The project's cached label-quality analysis (one per project),
    refreshed by a background job, like the agreement intervals."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="label_quality")
    status = models.CharField(
        max_length=10, choices=LabelQualityStatus.choices, default=LabelQualityStatus.NEVER
    )
    evaluations = models.JSONField(
        default=list, blank=True, help_text="Primary keys of the entries in the model ensemble."
    )
    # Issue 36: project judge runs whose votes join the audit as labellers.
    judge_runs = models.JSONField(
        default=list, blank=True, help_text="Primary keys of project judge runs labelling too."
    )
    payload = models.JSONField(default=dict, blank=True, help_text="Annotators and summary.")
    error = models.TextField(blank=True)
    requested_at = models.DateTimeField(null=True, blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    computed_at = models.DateTimeField(null=True, blank=True)
    seconds = models.FloatField(default=0)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=LabelQualityStatus.values),
                name="curation_labelqualityrun_status_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"label quality of {self.project_id}: {self.status}"


class ItemQuality(models.Model):
    """One item's CROWDLAB and Dawid-Skene result of the last analysis."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    item = models.OneToOneField(Item, on_delete=models.CASCADE, related_name="quality")
    n1 = models.PositiveIntegerField()
    n2 = models.PositiveIntegerField()
    n_tie = models.PositiveIntegerField(default=0)
    consensus = models.CharField(max_length=1, choices=Side.choices)
    consensus_quality = models.FloatField()
    annotator_agreement = models.FloatField()
    model_p1 = models.FloatField(null=True, help_text="Ensemble P(response 1 better).")
    ds_p1 = models.FloatField(help_text="Dawid-Skene posterior of response 1, votes alone.")
    label = models.CharField(
        max_length=3, blank=True, help_text="The verdict's final choice when computed."
    )
    label_quality = models.FloatField(
        null=True, help_text="CROWDLAB's probability of that label (the queue's sort key)."
    )
    mean_strength = models.FloatField(
        null=True, help_text="Graded votes: their mean signed strength, oriented to response 1."
    )
    unanimous = models.BooleanField(
        default=False, help_text="Two or more votes, none a tie, all on one side."
    )
    models_against = models.FloatField(
        null=True, help_text="The ensemble's probability that the label is wrong (no model: null)."
    )

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(consensus_quality__gte=0, consensus_quality__lte=1)
                & Q(ds_p1__gte=0, ds_p1__lte=1),
                name="curation_itemquality_ranges",
            ),
        ]
        indexes = [
            # Suspected-errors queue: a project's items, lowest label quality first.
            models.Index(
                fields=["project", "label_quality", "item"], name="curation_itemquality_queue_idx"
            ),
            # "Unanimous, but the models disagree": the models' confidence against first.
            models.Index(
                F("project"),
                F("models_against").desc(),
                F("item"),
                name="curation_itemquality_unan_idx",
                condition=Q(unanimous=True, models_against__gt=0.5),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.item_id}: {self.consensus} ({self.consensus_quality:.3f})"
