"""Training mixes (issue 22 item 3): preference pairs from several sources
(published releases or whole projects), filtered, capped or weighted and
deduplicated across sources, built in the background like a release into a
versioned, checksummed, immutable TRL-ready data set.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from annotate.models import Project
from annotate.projects import CURATOR_ROLES
from curation.models.releases import Release, ReleaseStatus


class MixQuerySet(models.QuerySet["Mix"]):
    def visible_to(self, user) -> MixQuerySet:
        """Mixes every source of which comes from a project `user` curates or
        administers (a superuser sees all): a mix never shows a project's
        data to someone who may not curate that project."""
        if not user.is_authenticated:
            return self.none()
        if user.is_superuser:
            return self
        curated = Project.objects.visible_to(user).filter(
            member_role__in=CURATOR_ROLES  # type: ignore[misc]  # (visible_to's annotation)
        )
        # exclude() over a multi-valued relation: no source outside `curated`.
        return self.exclude(
            sources__project__in=Project.objects.exclude(pk__in=curated.values("pk"))
        )


def scope_of(project_ids) -> str:
    """A mix's scope (Mix.scope): its source projects, as one key."""
    key = ",".join(str(pk) for pk in sorted(set(project_ids)))
    return hashlib.sha256(key.encode()).hexdigest()


class Mix(models.Model):
    """A versioned training mix. Immutable once ready (like a Release)."""

    class Mode(models.TextChoices):
        CAPS = "caps", "Per-source caps"
        WEIGHTS = "weights", "Per-source weights"

    name = models.SlugField(max_length=80, help_text="Names the published folder.")
    version = models.CharField(max_length=40)
    # A name and version are unique among the mixes of one set of source
    # projects, the only ones whoever creates such a mix can see: a taken
    # name never reveals a mix of projects the creator does not curate
    # (issue 29). SHA-256 of the sorted project ids (scope_of).
    scope = models.CharField(max_length=64, default="", editable=False)
    notes = models.TextField(blank=True)
    seed = models.IntegerField(default=0)
    mode = models.CharField(max_length=8, choices=Mode.choices, default=Mode.CAPS)
    size = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Weights mode: total records (None: the largest mix the weights allow).",
    )
    # {"statuses": [...], "provenances": [...], "min_share": float|None, "domains": [...]}
    filters = models.JSONField(default=dict, blank=True)
    dedup = models.BooleanField(default=True)
    status = models.CharField(
        max_length=10, choices=ReleaseStatus.choices, default=ReleaseStatus.PENDING
    )
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    counts = models.JSONField(default=dict, blank=True)
    report = models.JSONField(default=dict, blank=True, help_text="Per source: kept and dropped.")
    manifest = models.JSONField(default=dict, blank=True)
    folder = models.CharField(max_length=300, blank=True)
    archive = models.CharField(max_length=300, blank=True)
    sha256 = models.CharField(max_length=64, blank=True, help_text="SHA-256 of the zip.")
    size_bytes = models.PositiveBigIntegerField(default=0)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = MixQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["name", "version", "scope"], name="curation_mix_version_once_per_scope"
            ),
            models.CheckConstraint(
                condition=Q(status__in=ReleaseStatus.values), name="curation_mix_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(mode__in=["caps", "weights"]), name="curation_mix_mode_valid"
            ),
            models.CheckConstraint(
                condition=~Q(status=ReleaseStatus.READY)
                | (~Q(sha256="") & ~Q(archive="") & ~Q(folder="")),
                name="curation_mix_ready_is_published",
            ),
            models.CheckConstraint(
                condition=Q(progress_done__lte=F("progress_total")),
                name="curation_mix_progress_within_total",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} {self.version} ({self.status})"

    @property
    def percent(self) -> int:
        return round(100 * self.progress_done / self.progress_total) if self.progress_total else 0


class MixSource(models.Model):
    """One source of a mix: a ready release, or a whole project's decided
    items (read when the mix is built)."""

    mix = models.ForeignKey(Mix, on_delete=models.CASCADE, related_name="sources")
    position = models.PositiveSmallIntegerField(help_text="Earlier sources win duplicates.")
    # Always set (a release's project too): who may see the mix is decided on it.
    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="+")
    release = models.ForeignKey(
        Release, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    cap = models.PositiveIntegerField(null=True, blank=True)
    weight = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["mix", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["mix", "position"], name="curation_mixsource_position_once"
            ),
            models.CheckConstraint(
                condition=Q(weight__isnull=True) | Q(weight__gt=0),
                name="curation_mixsource_weight_positive",
            ),
        ]

    def __str__(self) -> str:
        return self.label

    @property
    def label(self) -> str:
        """How the mix's files name this source (and prefix its row IDs)."""
        if self.release is not None:
            return f"{self.project.slug}@{self.release.version}"
        return self.project.slug
