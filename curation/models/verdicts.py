"""Verdicts (one per item) and the audit trail."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from annotate.eligibility import short_of_annotators
from annotate.models import Item, Project


class VerdictStatus(models.TextChoices):
    NEEDS_VOTES = "needs_votes", "Needs votes"
    AGREED = "agreed", "Agreed"
    CONTESTED = "contested", "Contested"
    RESOLVED = "resolved", "Resolved"
    EXCLUDED = "excluded", "Excluded"


class FinalChoice(models.TextChoices):
    NONE = "", "None"
    RESPONSE_1 = "1", "Response 1"
    RESPONSE_2 = "2", "Response 2"
    # A curator's decision that neither response is better (projects that
    # allow ties). Closed, but not in an MRB release: its format has no tie.
    TIE = "tie", "Tie"


class Provenance(models.TextChoices):
    NONE = "", "None"
    UNANIMOUS = "unanimous", "Unanimous"
    MAJORITY = "majority", "Majority"
    ADJUDICATED = "adjudicated", "Adjudicated"
    GOLD = "gold", "Gold"
    # A curator confirmed the label in the label-quality review (curation/quality/).
    REVIEWED = "reviewed", "Reviewed"


class ExclusionCategory(models.TextChoices):
    NONE = "", "None"
    AMBIGUOUS = "ambiguous", "Ambiguous"
    BOTH_BAD = "both_bad", "Both bad"
    BROKEN = "broken", "Broken item"
    UNSAFE = "unsafe", "Unsafe"
    OTHER = "other", "Other"


class ContestKind(models.TextChoices):
    """Why the rule sent an item to the curators (filterable in the queue)."""

    NONE = "", "None"
    SPLIT = "split", "Still split after escalation"
    TIE_MAJORITY = "tie_majority", "Tie majority"
    NO_MAJORITY = "no_majority", "No strict majority"
    PROBLEM = "problem", "Problem flagged"
    CONTRADICTION = "contradiction", "Correctness contradicts preference"
    GOLD = "gold", "Disagrees with gold"
    REOPENED = "reopened", "Reopened by a curator"


# Statuses whose items go into a release (with a side: see RELEASABLE).
RELEASABLE_STATUSES = (VerdictStatus.AGREED, VerdictStatus.RESOLVED)
SIDES = (FinalChoice.RESPONSE_1, FinalChoice.RESPONSE_2)
# What a release holds: agreed or resolved with a better response (a tie a
# curator resolved has none to write as `Better`).
RELEASABLE = Q(status__in=RELEASABLE_STATUSES, final_choice__in=SIDES)


class VerdictQuerySet(models.QuerySet["Verdict"]):
    def contested(self) -> VerdictQuerySet:
        return self.filter(status=VerdictStatus.CONTESTED)

    def releasable(self) -> VerdictQuerySet:
        return self.filter(RELEASABLE)

    def stuck(self, project: Project) -> VerdictQuerySet:
        """Verdicts of items waiting for votes no eligible annotator can give
        (annotate.eligibility.short_of_annotators)."""
        return self.filter(
            project=project,
            status=VerdictStatus.NEEDS_VOTES,
            item_id__in=short_of_annotators(project).values("pk"),
        )


class Verdict(models.Model):
    item = models.OneToOneField(Item, on_delete=models.CASCADE, related_name="verdict")
    # Denormalised from item so the curation queue filters on one table.
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="verdicts")
    status = models.CharField(
        max_length=16, choices=VerdictStatus.choices, default=VerdictStatus.NEEDS_VOTES
    )
    final_choice = models.CharField(
        max_length=3, choices=FinalChoice.choices, blank=True, default=FinalChoice.NONE
    )
    provenance = models.CharField(
        max_length=16, choices=Provenance.choices, blank=True, default=Provenance.NONE
    )
    # Why the rule or a curator put the item where it is (e.g. "tie majority").
    reason = models.TextField(blank=True)
    exclusion_category = models.CharField(
        max_length=16, choices=ExclusionCategory.choices, blank=True, default=""
    )
    contest_kind = models.CharField(
        max_length=16, choices=ContestKind.choices, blank=True, default=ContestKind.NONE
    )
    escalations = models.PositiveSmallIntegerField(default=0)
    # Extra votes the rule's escalation adds to the item's votes_needed now
    # (at most the project's escalation_votes, fewer when fewer eligible
    # annotators were left): what a rule change or a departing annotator
    # takes back.
    escalated_by = models.PositiveSmallIntegerField(default=0)
    # Bumped on every change: a curator's decision names the version it was
    # made on, so a decision on a stale page is refused instead of overwriting.
    version = models.PositiveIntegerField(default=0)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    objects = VerdictQuerySet.as_manager()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=VerdictStatus.values), name="curation_verdict_status_valid"
            ),
            # A decided item (agreed or resolved) has a side, or a curator's
            # tie; nothing else has one.
            models.CheckConstraint(
                condition=(
                    Q(status__in=RELEASABLE_STATUSES, final_choice__in=["1", "2"])
                    | Q(status=VerdictStatus.RESOLVED, final_choice="tie")
                    | (~Q(status__in=RELEASABLE_STATUSES) & Q(final_choice=""))
                ),
                name="curation_verdict_final_choice_iff_decided",
            ),
            models.CheckConstraint(
                condition=(
                    Q(status__in=RELEASABLE_STATUSES) & ~Q(provenance="")
                    | (~Q(status__in=RELEASABLE_STATUSES) & Q(provenance=""))
                ),
                name="curation_verdict_provenance_iff_decided",
            ),
            models.CheckConstraint(
                condition=Q(status=VerdictStatus.EXCLUDED) | Q(exclusion_category=""),
                name="curation_verdict_exclusion_only_when_excluded",
            ),
            models.CheckConstraint(
                condition=Q(contest_kind__in=ContestKind.values),
                name="curation_verdict_contest_kind_valid",
            ),
            models.CheckConstraint(
                condition=Q(provenance__in=Provenance.values),
                name="curation_verdict_provenance_valid",
            ),
            models.CheckConstraint(
                condition=Q(exclusion_category__in=ExclusionCategory.values),
                name="curation_verdict_exclusion_category_valid",
            ),
        ]
        indexes = [
            # Curation queue and dashboard counts: verdicts of a project by status.
            models.Index(fields=["project", "status"], name="curation_verdict_status_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.item_id}: {self.status}"


class AuditEvent(models.Model):
    """Who did what to which item, when, with the state before and after.
    Append-only: never updated or deleted by the application."""

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="audit_events")
    item = models.ForeignKey(
        Item, null=True, blank=True, on_delete=models.PROTECT, related_name="audit_events"
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    action = models.CharField(max_length=40)
    before = models.JSONField(default=dict, blank=True)
    after = models.JSONField(default=dict, blank=True)
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            # Project-wide audit log, newest first.
            models.Index(fields=["project", "-created_at"], name="curation_audit_project_idx"),
            # Per-item history on the adjudication page.
            models.Index(fields=["item", "created_at"], name="curation_audit_item_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.action} {self.item_id}"


class AgreementCache(models.Model):
    """The expensive agreement figures of a project (bootstrap CIs, change in
    alpha without each annotator), computed by a Celery task. Kept in the
    database so every web process and the embedded setup share them."""

    project = models.OneToOneField(
        Project, on_delete=models.CASCADE, related_name="agreement_cache"
    )
    payload = models.JSONField(default=dict, blank=True)
    computed_at = models.DateTimeField(null=True, blank=True)
    # Set when a refresh is queued, cleared when it finishes: the page shows
    # "computing…" meanwhile and never waits.
    requested_at = models.DateTimeField(null=True, blank=True)
    n_votes = models.PositiveIntegerField(default=0, help_text="Votes the payload was built from.")

    def __str__(self) -> str:
        return f"agreement cache of {self.project_id} at {self.computed_at}"


class ReleaseStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    BUILDING = "building", "Building"
    READY = "ready", "Ready"
    FAILED = "failed", "Failed"


class ReleaseQuerySet(models.QuerySet["Release"]):
    def ready(self) -> ReleaseQuerySet:
        return self.filter(status=ReleaseStatus.READY)


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
    def percent(self) -> int:
        return round(100 * self.progress_done / self.progress_total) if self.progress_total else 0


class ReleaseItem(models.Model):
    """Frozen membership of a release: which item, and which side was chosen."""

    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="release_items")
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="+")
    external_id = models.CharField(max_length=200)
    domain = models.CharField(max_length=80)
    chosen = models.CharField(max_length=1)
    better = models.CharField(max_length=7)
    provenance = models.CharField(max_length=16, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["release", "item"], name="curation_releaseitem_once"),
            models.CheckConstraint(
                condition=Q(chosen__in=["1", "2"]), name="curation_releaseitem_chosen_valid"
            ),
            models.CheckConstraint(
                condition=Q(better__in=["Output1", "Output2"]),
                name="curation_releaseitem_better_valid",
            ),
        ]
        indexes = [
            # Release diff: one release's members by external ID.
            models.Index(fields=["release", "external_id"], name="curation_relitem_diff_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.release_id}: {self.external_id} → {self.better}"


class Evaluation(models.Model):
    """A judge's or reward model's predictions scored against a release."""

    release = models.ForeignKey(Release, on_delete=models.PROTECT, related_name="evaluations")
    name = models.CharField(max_length=120, help_text="The model or judge evaluated.")
    predictions = models.CharField(max_length=300, help_text="Stored predictions file.")
    swapped_predictions = models.CharField(max_length=300, blank=True)
    report = models.JSONField(default=dict)
    accuracy = models.FloatField(null=True, help_text="Official overall (micro) accuracy.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-accuracy", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["release", "name"], name="curation_evaluation_name_per_release"
            ),
            models.CheckConstraint(
                condition=Q(accuracy__isnull=True) | Q(accuracy__gte=0, accuracy__lte=1),
                name="curation_evaluation_accuracy_range",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} on {self.release}"


# --- Judge runner ---------------------------------------------------------------------


class JudgeEndpoint(models.Model):
    """An OpenAI-compatible chat-completions endpoint a project's curators may
    run as a judge. The API key is stored encrypted (see key_encryption.py)
    and never shown back: pages say only whether one is set."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="judge_endpoints")
    name = models.CharField(max_length=80, help_text="How curators pick it, e.g. gpt-4o.")
    base_url = models.URLField(
        max_length=500, help_text="Up to /v1; requests go to <base URL>/chat/completions."
    )
    model = models.CharField(max_length=200, help_text="The model field of each request.")
    api_key_encrypted = models.TextField(blank=True, editable=False)
    temperature = models.FloatField(default=0.0)
    max_tokens = models.PositiveIntegerField(default=1024)
    timeout_seconds = models.FloatField(default=120.0, help_text="Per request.")
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "name"], name="curation_judgeendpoint_name_per_project"
            ),
            models.CheckConstraint(
                condition=Q(temperature__gte=0, temperature__lte=2),
                name="curation_judgeendpoint_temperature_range",
            ),
            models.CheckConstraint(
                condition=Q(max_tokens__gte=1), name="curation_judgeendpoint_max_tokens_positive"
            ),
            models.CheckConstraint(
                condition=Q(timeout_seconds__gt=0), name="curation_judgeendpoint_timeout_positive"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.model})"

    def __repr__(self) -> str:
        return f"<JudgeEndpoint {self.pk} {self.name!r}>"

    @property
    def has_api_key(self) -> bool:
        return bool(self.api_key_encrypted)

    def set_api_key(self, key: str) -> None:
        """Store `key` encrypted under the current SECRET_KEY, sealed for the
        origin of the current base URL ("" clears it)."""
        from curation.evaluation.key_encryption import origin_of, seal

        self.api_key_encrypted = seal(key, origin_of(self.base_url), _secrets()) if key else ""

    def api_key(self) -> str:
        """The plain key, for the Authorization header only. Raises
        key_encryption.UndecryptableKey after a SECRET_KEY change, and its
        KeyForAnotherOrigin when the base URL's origin is not the one the key
        was entered for."""
        from curation.evaluation.key_encryption import origin_of, unseal

        if not self.api_key_encrypted:
            return ""
        return unseal(self.api_key_encrypted, origin_of(self.base_url), _secrets())


def _secrets() -> list[str]:
    return [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", [])]


class JudgeRunStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    COMPLETE = "complete", "Complete"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


class JudgeRunQuerySet(models.QuerySet["JudgeRun"]):
    def active(self) -> JudgeRunQuerySet:
        return self.filter(status__in=[JudgeRunStatus.PENDING, JudgeRunStatus.RUNNING])


class JudgeRun(models.Model):
    """One judge's pass (or two, order swapped) over a ready release. The
    endpoint's non-secret settings are copied so the record says what ran."""

    release = models.ForeignKey(Release, on_delete=models.PROTECT, related_name="judge_runs")
    endpoint = models.ForeignKey(
        JudgeEndpoint, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )
    name = models.CharField(max_length=120, help_text="Its name on the leaderboard.")
    base_url = models.CharField(max_length=500)
    model = models.CharField(max_length=200)
    temperature = models.FloatField()
    max_tokens = models.PositiveIntegerField()
    timeout_seconds = models.FloatField()
    swapped = models.BooleanField(default=False, help_text="Also judge with the order swapped.")
    concurrency = models.PositiveSmallIntegerField(default=4)
    status = models.CharField(
        max_length=10, choices=JudgeRunStatus.choices, default=JudgeRunStatus.PENDING
    )
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    n_errors = models.PositiveIntegerField(default=0, help_text="Requests that failed for good.")
    error = models.TextField(blank=True, help_text="Why the run stopped (never holds the key).")
    evaluation = models.OneToOneField(
        Evaluation, null=True, blank=True, on_delete=models.PROTECT, related_name="judge_run"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = JudgeRunQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["release", "name"], name="curation_judgerun_name_per_release"
            ),
            models.CheckConstraint(
                condition=Q(status__in=JudgeRunStatus.values), name="curation_judgerun_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(progress_done__lte=F("progress_total")),
                name="curation_judgerun_progress_within_total",
            ),
            models.CheckConstraint(
                condition=Q(concurrency__gte=1, concurrency__lte=64),
                name="curation_judgerun_concurrency_range",
            ),
            models.CheckConstraint(
                condition=~Q(status=JudgeRunStatus.COMPLETE) | Q(evaluation__isnull=False),
                name="curation_judgerun_complete_has_evaluation",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} on {self.release} ({self.status})"

    @property
    def percent(self) -> int:
        return round(100 * self.progress_done / self.progress_total) if self.progress_total else 0

    @property
    def passes(self) -> tuple[str, ...]:
        return ("original", "swapped") if self.swapped else ("original",)


class JudgeOrder(models.TextChoices):
    ORIGINAL = "original", "Original order"
    SWAPPED = "swapped", "Output1/Output2 swapped"


class JudgeOutput(models.Model):
    """The raw answer for one release item in one pass, stored as soon as it
    arrives so a re-run after a crash sends only what is still missing."""

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="outputs")
    external_id = models.CharField(max_length=200)
    order = models.CharField(max_length=8, choices=JudgeOrder.choices)
    output = models.TextField(blank=True)
    error = models.TextField(blank=True, help_text="Set when every attempt failed.")
    attempts = models.PositiveSmallIntegerField(default=1)
    seconds = models.FloatField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["run", "external_id", "order"], name="curation_judgeoutput_once_per_pass"
            ),
            models.CheckConstraint(
                condition=Q(order__in=JudgeOrder.values), name="curation_judgeoutput_order_valid"
            ),
        ]
        indexes = [
            # Run page: the failed requests of one run.
            models.Index(
                fields=["run", "external_id"],
                condition=~Q(error=""),
                name="curation_judgeoutput_err_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.run_id}: {self.external_id} ({self.order})"
