"""Benchmark releases and their frozen membership."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from annotate.models import Item, Project
from curation.models.verdicts import MAX_VERDICT_SLOTS


class ReleaseStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    BUILDING = "building", "Building"
    READY = "ready", "Ready"
    FAILED = "failed", "Failed"


class PairwiseMode(models.TextChoices):
    """How a release decomposes its ranked items into training pairs
    (curation.releases.pairwise)."""

    NONE = "", "No pairwise decomposition"
    BEST = "best", "Best vs each other"
    ALL = "all", "Every ordered pair"


class ReleaseQuerySet(models.QuerySet["Release"]):
    def ready(self) -> ReleaseQuerySet:
        return self.filter(status=ReleaseStatus.READY)

    def stalled(self, now=None) -> ReleaseQuerySet:
        """Builds whose worker stopped writing their heartbeat for
        RELEASE_STALE_SECONDS: it died (curation.releases.recovery). A build
        from before heartbeats counts from its start."""
        since = (now or timezone.now()) - stale_after()
        return self.filter(status=ReleaseStatus.BUILDING).filter(
            Q(heartbeat_at__lt=since) | Q(heartbeat_at__isnull=True, started_at__lt=since)
        )


def stale_after() -> timedelta:
    """How long a building release may go without a heartbeat before it is
    taken to have lost its worker."""
    return timedelta(seconds=settings.RELEASE_STALE_SECONDS)


class Release(models.Model):
    """A versioned, checksummed benchmark release. Immutable once ready."""

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="releases")
    version = models.CharField(max_length=40)
    notes = models.TextField(blank=True)
    seed = models.IntegerField(default=0)
    domains = models.JSONField(default=list, help_text="Slugs of the domains included.")
    min_label_quality = models.FloatField(
        null=True,
        blank=True,
        help_text="Leave out rule-agreed items whose CROWDLAB probability of their label "
        "is below this (curation/quality/); None: no filter.",
    )
    # Benchmark-construction filters (curation.releases.filters), e.g.
    # {"too_easy": {"evaluations": [ids]}}; empty: none.
    filters = models.JSONField(default=dict, blank=True)
    # Non-empty: the release's IDs are re-keyed (curation.releases.rekey)
    # with this secret salt, taken over from the project's previous
    # re-keyed release so an item keeps its new ID. Never published.
    rekey_salt = models.CharField(max_length=64, blank=True, default="", editable=False)
    # Ranked and best-of-N members also as TRL pairs (pairwise/<domain>.parquet).
    pairwise = models.CharField(
        max_length=4, choices=PairwiseMode.choices, blank=True, default=PairwiseMode.NONE
    )
    status = models.CharField(
        max_length=10, choices=ReleaseStatus.choices, default=ReleaseStatus.PENDING
    )
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    counts = models.JSONField(default=dict, blank=True)
    manifest = models.JSONField(default=dict, blank=True)
    warnings = models.JSONField(default=list, blank=True)
    folder = models.CharField(max_length=300, blank=True, help_text="Published folder.")
    archive = models.CharField(max_length=300, blank=True, help_text="Published zip.")
    sha256 = models.CharField(max_length=64, blank=True, help_text="SHA-256 of the zip.")
    size_bytes = models.PositiveBigIntegerField(default=0)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Written every RELEASE_HEARTBEAT_SECONDS while a worker builds the
    # release (curation.releases.heartbeat): older than RELEASE_STALE_SECONDS,
    # the worker died and the build is taken over or failed.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # Builds started since it was cut or last retried by hand: the sweep
    # stops re-queuing one whose worker keeps dying (RELEASE_MAX_ATTEMPTS).
    attempts = models.PositiveSmallIntegerField(default=0)

    objects = ReleaseQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "version"], name="curation_release_version_per_project"
            ),
            models.CheckConstraint(
                condition=Q(status__in=ReleaseStatus.values), name="curation_release_status_valid"
            ),
            models.CheckConstraint(
                condition=~Q(status=ReleaseStatus.READY)
                | (~Q(sha256="") & ~Q(archive="") & ~Q(folder="")),
                name="curation_release_ready_is_published",
            ),
            models.CheckConstraint(
                condition=Q(progress_done__lte=F("progress_total")),
                name="curation_release_progress_within_total",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.project.slug} {self.version} ({self.status})"

    @property
    def rekeyed(self) -> bool:
        return bool(self.rekey_salt)

    @property
    def percent(self) -> int:
        return round(100 * self.progress_done / self.progress_total) if self.progress_total else 0

    @property
    def is_stalled(self) -> bool:
        """Building, but its worker stopped writing the heartbeat."""
        if self.status != ReleaseStatus.BUILDING:
            return False
        beat = self.heartbeat_at or self.started_at
        return beat is not None and beat < timezone.now() - stale_after()

    @property
    def can_retry(self) -> bool:
        return self.status == ReleaseStatus.FAILED or self.is_stalled


class ReleaseItemQuerySet(models.QuerySet["ReleaseItem"]):
    def mrb_records(self) -> ReleaseItemQuerySet:
        """Members that are records of the release's pair layout
        (all_data.json); the others are only in another benchmark's files
        (e.g. Multimodal RewardBench 2 task files, `better` "A"/"B")."""
        return self.filter(better__in=MRB_SLOTS)


MRB_SLOTS = ("Output1", "Output2")
# ReleaseItem.better of a member only in a ranked file (its rankings are the label).
RANKED = "ranked"
RELEASE_SLOTS = [str(n) for n in range(1, MAX_VERDICT_SLOTS + 1)]


class ReleaseItem(models.Model):
    """Frozen membership of a release: which item, and which side was chosen.

    `better` is the label as the release writes it: the MRB record's slot
    (Output1/Output2), or for a pair only in another benchmark's files (a
    Multimodal RewardBench 2 task file: image or interleaved responses) that
    file's `chosen` (A/B); "A" for a RewardBench 2 record (its chosen
    completion first), "ranked" for a record of a ranked file (its rankings).
    `chosen` is the canonical slot chosen: "1"/"2" for a pair, up to "8" for
    the best of N responses."""

    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="release_items")
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="+")
    external_id = models.CharField(max_length=200)
    # The ID the release's files use when it re-keyed them, else "" (the
    # external ID): the mapping, shown to the project's curators only.
    released_id = models.CharField(max_length=200, blank=True, default="")
    domain = models.CharField(max_length=80)
    chosen = models.CharField(max_length=1)
    better = models.CharField(max_length=7)
    provenance = models.CharField(max_length=16, blank=True)
    # A ranked member's final ranking as the release decomposed it, frozen
    # ("1,2,2,4": rank per canonical slot; curation.releases.pairwise_files);
    # "" for a pair or a release without a pairwise decomposition.
    ranks = models.CharField(max_length=32, blank=True, default="")
    # The item's group key when the release was built (Item.group_key, ""
    # for none), frozen: Acc+ counts a group right when all its members are
    # (curation.releases.groups).
    group_key = models.CharField(max_length=200, blank=True, default="")

    objects = ReleaseItemQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["release", "item"], name="curation_releaseitem_once"),
            # A slot: a pair's side, or the best of N (RewardBench 2's chosen, the
            # first slot a ranked file ranks first).
            models.CheckConstraint(
                condition=Q(chosen__in=RELEASE_SLOTS), name="curation_releaseitem_chosen_valid"
            ),
            models.CheckConstraint(
                condition=Q(better__in=[*MRB_SLOTS, "A", "B", RANKED]),
                name="curation_releaseitem_better_valid",
            ),
            # A record of the pair layout chose one of its two responses.
            models.CheckConstraint(
                condition=~Q(better__in=MRB_SLOTS) | Q(chosen__in=["1", "2"]),
                name="curation_releaseitem_pair_chosen",
            ),
        ]
        indexes = [
            # Release diff: one release's members by external ID.
            models.Index(fields=["release", "external_id"], name="curation_relitem_diff_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.release_id}: {self.external_id} → {self.better}"

    @property
    def public_id(self) -> str:
        """The ID the release's files use."""
        return self.released_id or self.external_id
