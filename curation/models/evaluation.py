"""Evaluations of a judge or reward model against a release, and the judge
runner: endpoints, runs and their raw outputs.
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from annotate.models import Project
from curation.models.releases import Release

# Which benchmark's rules scored an evaluation (or will score a judge run):
# the key of a benchmark of curation.benchmarks.registry. The registry, not
# the schema, knows the benchmarks (a new one needs no migration); the
# services refuse an unknown key, the database an empty one.
SCORING_HELP = "The key of the benchmark whose rules score it (curation.benchmarks)."
# The first benchmark's key: what rows made before the field existed hold,
# and what a row created without one (fixtures, the shell) gets.
FIRST_SCORING = "mrb"


class Evaluation(models.Model):
    """A judge's or reward model's predictions scored against a release."""

    release = models.ForeignKey(Release, on_delete=models.PROTECT, related_name="evaluations")
    name = models.CharField(max_length=120, help_text="The model or judge evaluated.")
    # The report's shape follows it (the benchmark's Scored.report); one
    # leaderboard table per benchmark.
    scoring = models.CharField(max_length=32, default=FIRST_SCORING, help_text=SCORING_HELP)
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
            models.CheckConstraint(
                condition=~Q(scoring=""),
                name="curation_evaluation_scoring_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} on {self.release}"


# --- Judge runner ---------------------------------------------------------------------


class JudgeEndpoint(models.Model):
    """An OpenAI-compatible chat-completions endpoint a project's curators may
    run as a judge. The API key is stored encrypted (see curation/evaluation/key_encryption.py)
    and never shown back: pages say only whether one is set."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="judge_endpoints")
    name = models.CharField(max_length=80, help_text="How curators pick it, e.g. gpt-4o.")
    base_url = models.URLField(
        max_length=500, help_text="Up to /v1; requests go to <base URL>/chat/completions."
    )
    model = models.CharField(max_length=200, help_text="The model field of each request.")
    api_key_encrypted = models.TextField(blank=True, editable=False)
    # None: the request carries no temperature (the server's default), as the
    # benchmark's judge script sends none.
    temperature = models.FloatField(
        null=True, blank=True, default=None, help_text="Sent only when set (0 to 2)."
    )
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
                condition=Q(temperature__isnull=True) | Q(temperature__gte=0, temperature__lte=2),
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


def new_judge_seed() -> int:
    """A run's seed: 53 random bits, so a JSON client reads it exactly."""
    return secrets.randbits(53)


class JudgeRunStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    COMPLETE = "complete", "Complete"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


class VideoAs(models.TextChoices):
    """How a run sends a video (curation.evaluation.media_content)."""

    FRAMES = "frames", "Sampled frames (images)"
    VIDEO = "video", "The video file (for endpoints that accept one)"


class JudgeRunQuerySet(models.QuerySet["JudgeRun"]):
    def active(self) -> JudgeRunQuerySet:
        return self.filter(status__in=[JudgeRunStatus.PENDING, JudgeRunStatus.RUNNING])


class JudgeRun(models.Model):
    """One judge's pass (or two, order swapped) over a ready release, or over
    a project's benchmark items (issue 36: its answers become JudgeVote rows
    for the calibration report and the label-error audit, never a
    leaderboard entry). The endpoint's non-secret settings are copied so the
    record says what ran."""

    release = models.ForeignKey(
        Release, null=True, blank=True, on_delete=models.PROTECT, related_name="judge_runs"
    )
    project = models.ForeignKey(
        Project, null=True, blank=True, on_delete=models.CASCADE, related_name="judge_runs"
    )
    endpoint = models.ForeignKey(
        JudgeEndpoint, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )
    name = models.CharField(max_length=120, help_text="Its name on the leaderboard.")
    base_url = models.CharField(max_length=500)
    model = models.CharField(max_length=200)
    temperature = models.FloatField(null=True, blank=True, help_text="None: not sent.")
    max_tokens = models.PositiveIntegerField()
    timeout_seconds = models.FloatField()
    swapped = models.BooleanField(default=False, help_text="Also judge with the order swapped.")
    # Drawn at creation; a benchmark draws a call's positions (a swap, a
    # permutation) from it (judge_calls / judge_call_request), so a resumed
    # run sends the same requests and the scorer re-derives the order.
    seed = models.BigIntegerField(
        default=new_judge_seed, help_text="Where a call's random positions are drawn from."
    )
    # The benchmark whose items are judged, with its prompt, and whose rules
    # score the answers (some always send both orders: Benchmark.judge_both_orders).
    scoring = models.CharField(max_length=32, default=FIRST_SCORING, help_text=SCORING_HELP)
    concurrency = models.PositiveSmallIntegerField(default=4)
    # How videos are sent (issue 35): frames at positions drawn from the seed, or the file.
    video_as = models.CharField(max_length=6, choices=VideoAs.choices, default=VideoAs.FRAMES)
    video_frames = models.PositiveSmallIntegerField(
        default=8, help_text="Frames sent per video when sent as frames (1 to 64)."
    )
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
            models.UniqueConstraint(
                fields=["project", "name"], name="curation_judgerun_name_per_project"
            ),
            # A run judges a release or a project's items, never both or neither.
            models.CheckConstraint(
                condition=Q(release__isnull=False, project__isnull=True)
                | Q(release__isnull=True, project__isnull=False),
                name="curation_judgerun_release_xor_project",
            ),
            models.CheckConstraint(
                condition=Q(status__in=JudgeRunStatus.values), name="curation_judgerun_status_valid"
            ),
            models.CheckConstraint(
                condition=~Q(scoring=""),
                name="curation_judgerun_scoring_valid",
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
                condition=Q(video_as__in=VideoAs.values), name="curation_judgerun_video_as_valid"
            ),
            models.CheckConstraint(
                condition=Q(video_frames__gte=1, video_frames__lte=64),
                name="curation_judgerun_video_frames_range",
            ),
            models.CheckConstraint(
                # A project's run ends in its votes, not a leaderboard entry.
                condition=~Q(status=JudgeRunStatus.COMPLETE)
                | Q(evaluation__isnull=False)
                | Q(project__isnull=False),
                name="curation_judgerun_complete_has_evaluation",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} on {self.release or self.project} ({self.status})"

    @property
    def on_project(self) -> bool:
        """A run over the project's items (votes), not over a release."""
        return self.project_id is not None

    @property
    def sends(self) -> str:
        """What the run sends per item, in words ("both orders", or the
        calls its benchmark decides: curation.evaluation.judge_calls.sends)."""
        from curation.benchmarks import registry
        from curation.benchmarks.base import EvaluationError
        from curation.evaluation.judge_calls import sends

        try:
            benchmark = registry.get(self.scoring)
        except EvaluationError:
            return "both orders" if self.swapped else "original order only"
        return sends(benchmark, self.swapped)

    @property
    def sends_videos(self) -> str:
        """How its videos go, in words (the run page)."""
        if self.video_as == VideoAs.VIDEO:
            return "videos as the video file"
        return f"videos as {self.video_frames} frame{'s' if self.video_frames != 1 else ''}"

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
    """The raw answer for one release item in one call, stored as soon as it
    arrives so a re-run after a crash sends only what is still missing. The
    call is a pass (JudgeOrder) or, for a benchmark with `judge_calls`, one
    of its call keys ("run1", "perm0", …)."""

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="outputs")
    external_id = models.CharField(max_length=200)
    order = models.CharField(max_length=16, help_text="The call: a pass or a benchmark's call key.")
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
            models.CheckConstraint(condition=~Q(order=""), name="curation_judgeoutput_order_valid"),
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
