"""Projects, their members and roles, and their domains."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q
from django.urls import reverse

from annotate.loop import adaptive, scales
from annotate.projects import ProjectQuerySet, Role

# --- The built-in Multimodal RewardBench taxonomy --------------------------------


class DomainKind(models.TextChoices):
    CORRECTNESS = "correctness", "Correctness"
    PREFERENCE = "preference", "Preference"


# slug, title, export Category string (written verbatim into releases), kind
MULTIMODAL_REWARDBENCH_DOMAINS: tuple[tuple[str, str, str, str], ...] = (
    (
        "general_correctness",
        "General correctness",
        "open_generation/correctness_task",
        DomainKind.CORRECTNESS,
    ),
    (
        "general_preference",
        "General preference",
        "open_generation/preference_task",
        DomainKind.PREFERENCE,
    ),
    ("knowledge", "Knowledge", "knowledge", DomainKind.CORRECTNESS),
    ("reasoning", "Reasoning", "reasoning", DomainKind.CORRECTNESS),
    ("safety", "Safety", "safety", DomainKind.CORRECTNESS),
    ("vqa", "VQA", "vqa", DomainKind.CORRECTNESS),
)

# Correctness wording other than "Is A correct? Correct / Incorrect": safety
# items are refusals and insults, of which "correct" reads wrong.
DOMAIN_WORDING: dict[str, dict[str, str]] = {
    "safety": {
        "correctness_question": "Is {response} safe?",
        "yes_label": "Safe",
        "no_label": "Unsafe",
    },
}


class PreferenceScale(models.TextChoices):
    """How annotators say which response is better (annotate.loop.scales)."""

    AB = scales.AB, scales.SCALE_NAMES[scales.AB]
    GRADED6 = scales.GRADED6, scales.SCALE_NAMES[scales.GRADED6]
    GRADED7 = scales.GRADED7, scales.SCALE_NAMES[scales.GRADED7]


class Task(models.TextChoices):
    """What a vote answers: a project's task, and each judgement's (the
    answer's shape). A pairwise project's items have exactly two responses;
    best-of-N and ranking items have 2 to parts.ITEM_MAX_RESPONSES."""

    PAIRWISE = "pairwise", "Pairwise"  # choice 1 / 2 / tie, maybe a signed strength
    BEST_OF_N = "best_of_n", "Best of N"  # choice: the slot picked, or "none"
    RANKING = "ranking", "Ranking"  # no choice; a rank per slot (ties share one)


class VoteMode(models.TextChoices):
    """How many votes an item gets (annotate.loop.adaptive)."""

    FIXED = "fixed", "Fixed votes per item"
    ADAPTIVE = "adaptive", "Adaptive: more votes where the label is uncertain"


class Project(models.Model):
    slug = models.SlugField(max_length=80, unique=True)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    guidelines = models.TextField(blank=True, help_text="Markdown, shown to annotators.")
    licence = models.CharField(max_length=200, blank=True, help_text="Licence of releases.")
    votes_per_item = models.PositiveSmallIntegerField(default=3)
    escalation_votes = models.PositiveSmallIntegerField(
        default=2, help_text="Extra votes asked for an A-vs-B split before it is contested."
    )
    agree_share = models.FloatField(
        default=0.8, help_text="Winner share at or above which an item is agreed."
    )
    allow_tie = models.BooleanField(default=True)
    # A/B(/tie) or a graded scale; changeable only while the project has no
    # votes (annotate.setup.service.update_project).
    preference_scale = models.CharField(
        max_length=8,
        choices=PreferenceScale.choices,
        default=PreferenceScale.AB,
        help_text="How annotators say which response is better. Fixed once votes exist.",
    )
    # What a vote answers (Task). Pairwise items have exactly two responses
    # (the import refuses others); best-of-N and ranking items may have more.
    # The pages and the API vote on pairs only until issue 33.
    task = models.CharField(
        max_length=9,
        choices=Task.choices,
        default=Task.PAIRWISE,
        help_text="What a vote answers: pairwise (two responses), best of N or a ranking.",
    )
    # Best of N: whether "none is acceptable" is an answer (the compare page's
    # choice and key 0; the vote service refuses it when off).
    allow_none_pick = models.BooleanField(
        default=True,
        verbose_name="Allow \u201cnone is acceptable\u201d",
        help_text="Best-of-N projects: annotators may answer that no response is acceptable "
        "(key 0 on the compare page).",
    )
    # The contested rule for rankings (curation.verdicts.ranking_rule): the
    # Kendall's W an item's rankings need, beside agree_share on the top.
    ranking_least_w = models.FloatField(
        default=0.5,
        verbose_name="Least Kendall's W",
        help_text="Ranking projects: an item is agreed only when Kendall's W of its rankings "
        "is at least this (0 to 1), besides the share agreeing on the top response.",
    )
    # The contested rule's optional "consensus" filter (graded projects): an
    # item is agreed only if every vote is on one side and their mean
    # strength (1 slightly … 3 much better) is at least this; None: off.
    consensus_strength = models.FloatField(
        null=True,
        blank=True,
        help_text="Graded projects: agreed only when every vote is on one side with mean "
        "strength at least this (1 slightly, 2 better, 3 much better); empty: off.",
    )
    # Adaptive votes (issue 36; annotate.loop.adaptive): after the base votes,
    # the least certain items get one more vote at a time up to the budget,
    # and stop early once certain or when humans and judges agree.
    vote_mode = models.CharField(
        max_length=8,
        choices=VoteMode.choices,
        default=VoteMode.FIXED,
        help_text="Fixed: every item gets the votes per item. Adaptive: votes go where the "
        "label is least certain.",
    )
    adaptive_base_votes = models.PositiveSmallIntegerField(
        default=1, help_text="Adaptive mode: votes every item gets first."
    )
    adaptive_budget = models.PositiveSmallIntegerField(
        default=5, help_text="Adaptive mode: most votes an item gets."
    )
    adaptive_stop_certainty = models.FloatField(
        default=0.9,
        help_text="Adaptive mode: an item stops once its label is at least this certain "
        "(above 0.5, below 1).",
    )
    require_rationale = models.BooleanField(default=False)
    lease_minutes = models.PositiveIntegerField(default=30)
    allow_self_adjudication = models.BooleanField(
        default=False,
        help_text="Let curators resolve items they voted on (tiny teams only; flagged in the UI).",
    )
    # Ongoing checks (issue 36): the share of an annotator's claims that are
    # check items (gold and attention checks, purpose "check"), and the pause
    # rule on their accuracy (annotate.gates.below_threshold). 0: no checks.
    check_rate = models.FloatField(
        default=0.0,
        help_text="Share of each annotator's items that are check items (0 to 1; 0: off).",
    )
    check_threshold = models.FloatField(
        default=0.7,
        help_text="Pause an annotator when even the upper end of their check accuracy's "
        "95 % interval is below this (0 to 1).",
    )
    check_minimum = models.PositiveSmallIntegerField(
        default=10, help_text="Checks answered before anyone can be paused."
    )
    seed = models.IntegerField(default=0, help_text="Seeds shuffles (claim order, import order).")
    # Which of the site's IMPORT_ROOTS the project's admins may import from by
    # server path, chosen by a site admin (annotate.setup.service.set_import_roots);
    # none for a new project (docs/decisions.md, issue 29).
    import_roots = models.JSONField(
        default=list,
        blank=True,
        help_text="Server folders (IMPORT_ROOTS entries) this project may import from.",
    )
    # Qualification (issue 36): newcomers (annotators) answer the project's
    # qualification items and are admitted at the pass mark before they get
    # benchmark items; a failed attempt may be retried after the wait.
    qualification_required = models.BooleanField(
        default=False,
        help_text="Annotators pass the qualification before they get benchmark items.",
    )
    qualification_pass_mark = models.FloatField(
        default=0.8,
        validators=[MinValueValidator(0), MaxValueValidator(1)],
        help_text="Share of qualification items answered right to be admitted (0 to 1).",
    )
    qualification_retry_hours = models.PositiveIntegerField(
        default=24, help_text="Hours a failed qualification waits before a retry (0: at once)."
    )
    # Set when an admin archives the project: read-only from then on (no
    # claims, imports or setup changes); its votes and releases stay.
    archived_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    objects = ProjectQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(check_rate__gte=0, check_rate__lte=1),
                name="annotate_project_check_rate_range",
            ),
            models.CheckConstraint(
                condition=Q(check_threshold__gte=0, check_threshold__lte=1),
                name="annotate_project_check_threshold_range",
            ),
            models.CheckConstraint(
                condition=Q(votes_per_item__gte=1, votes_per_item__lte=50),
                name="annotate_project_votes_per_item_range",
            ),
            models.CheckConstraint(
                condition=Q(agree_share__gt=0.5, agree_share__lte=1.0),
                name="annotate_project_agree_share_range",
            ),
            models.CheckConstraint(
                condition=Q(lease_minutes__gte=1), name="annotate_project_lease_positive"
            ),
            models.CheckConstraint(
                condition=Q(ranking_least_w__gte=0, ranking_least_w__lte=1),
                name="annotate_project_ranking_least_w_range",
            ),
            models.CheckConstraint(
                condition=Q(preference_scale__in=PreferenceScale.values),
                name="annotate_project_preference_scale_valid",
            ),
            models.CheckConstraint(
                condition=Q(task__in=Task.values), name="annotate_project_task_valid"
            ),
            models.CheckConstraint(
                condition=Q(consensus_strength__isnull=True)
                | Q(consensus_strength__gte=0, consensus_strength__lte=scales.MAX_STRENGTH),
                name="annotate_project_consensus_strength_range",
            ),
            models.CheckConstraint(
                condition=Q(vote_mode__in=VoteMode.values), name="annotate_project_vote_mode_valid"
            ),
            models.CheckConstraint(
                condition=Q(
                    adaptive_base_votes__gte=1,
                    adaptive_budget__gte=F("adaptive_base_votes"),
                    adaptive_budget__lte=50,
                ),
                name="annotate_project_adaptive_votes_range",
            ),
            models.CheckConstraint(
                condition=Q(adaptive_stop_certainty__gt=0.5, adaptive_stop_certainty__lt=1),
                name="annotate_project_adaptive_stop_range",
            ),
            models.CheckConstraint(
                condition=Q(qualification_pass_mark__gte=0, qualification_pass_mark__lte=1),
                name="annotate_project_qualification_pass_mark_range",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("project", args=[self.slug])

    @property
    def votes_open(self) -> bool:
        """Whether annotators may claim and vote: every task has its vote
        page and API vote (pairwise, best of N, ranking; issue 33)."""
        return self.task in Task.values

    @property
    def votes_closed_reason(self) -> str:
        return (
            f"This project's task ({self.get_task_display()}) has no vote page yet: "
            "its items can be imported and reviewed, not voted on."
        )

    @property
    def is_adaptive(self) -> bool:
        return self.vote_mode == VoteMode.ADAPTIVE

    @property
    def adaptive_rule(self) -> adaptive.Rule:
        """The adaptive rule's parameters."""
        return adaptive.Rule(
            base_votes=self.adaptive_base_votes,
            budget=self.adaptive_budget,
            stop_certainty=self.adaptive_stop_certainty,
        )

    @property
    def adaptive_settings(self) -> dict:
        """The adaptive rule's parameters and, in adaptive mode, its plain words (the API)."""
        rule = self.adaptive_rule
        return {
            "base_votes": rule.base_votes,
            "budget": rule.budget,
            "stop_certainty": rule.stop_certainty,
            "rule": rule.describe() if self.is_adaptive else "",
        }

    @property
    def is_graded(self) -> bool:
        return scales.is_graded(self.preference_scale)

    @property
    def offers_tie(self) -> bool:
        """Whether a vote can be a tie: the 7-point scale's midpoint, or A/B
        with ties allowed (the 6-point scale has none)."""
        if self.is_graded:
            return 0 in scales.POINTS[self.preference_scale]
        return self.allow_tie

    def create_default_domains(self) -> list[Domain]:
        """Give the project the six Multimodal RewardBench domains (idempotent)."""
        existing = set(self.domains.values_list("slug", flat=True))
        new = [
            Domain(
                project=self,
                slug=slug,
                title=title,
                export_category=category,
                kind=kind,
                position=position,
                **DOMAIN_WORDING.get(slug, {}),
            )
            for position, (slug, title, category, kind) in enumerate(MULTIMODAL_REWARDBENCH_DOMAINS)
            if slug not in existing
        ]
        return Domain.objects.bulk_create(new)


class Membership(models.Model):
    """A user's role in one project. Roles are per project: the same person
    can annotate one benchmark and curate another."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.ANNOTATOR)
    # Stable, non-identifying name shown to curators and written to releases.
    pseudonym = models.CharField(max_length=40, blank=True)
    # How many of the project's items this member has judged (submitted
    # assignments): the "You: N judged" of the compare page, kept by
    # submit_judgement in the vote's own transaction so the page never counts
    # the annotator's whole history. Filled from the assignments when the
    # membership is created (a re-added member keeps their count).
    judged = models.PositiveIntegerField(default=0, editable=False)
    # A deactivated member keeps their row (pseudonym, count) and their votes
    # but has no access to the project (annotate.setup.service).
    is_active = models.BooleanField(default=True)
    # Qualification (issue 36): when the member was admitted to the project's
    # benchmark items (a passed attempt, or a curator: admitted_by), or null.
    # Only asked of annotators of a project that requires qualification.
    admitted_at = models.DateTimeField(null=True, blank=True)
    admitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(null=True, blank=True, auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project", "user"], name="annotate_membership_one_per_user"
            ),
            models.CheckConstraint(
                condition=Q(role__in=Role.values), name="annotate_membership_role_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.project} as {self.role}"

    def save(self, *args, **kwargs) -> None:
        # A new row (no primary key yet: every creator goes through
        # objects.create or get_or_create) starts from the member's judged
        # assignments. bulk_create skips save(): it leaves 0, right only for
        # a project nobody has judged in yet (the benches' fresh projects).
        if self.pk is None and self.user_id and self.project_id:
            from annotate.models.votes import submitted_count

            self.judged = submitted_count(project_id=self.project_id, user_id=self.user_id)
        super().save(*args, **kwargs)


class Domain(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="domains")
    slug = models.SlugField(max_length=80)
    title = models.CharField(max_length=200)
    export_category = models.CharField(
        max_length=200, help_text="Exact string written to the release's Category field."
    )
    kind = models.CharField(max_length=16, choices=DomainKind.choices)
    guidelines = models.TextField(blank=True)
    position = models.PositiveSmallIntegerField(default=0)
    # The correctness question of a correctness domain, as the compare page
    # asks it of each response ("{response}" becomes "A" or "B"), and the
    # words for its yes/no answers (stored as yes/no whatever they say).
    correctness_question = models.CharField(
        max_length=200,
        default="Is {response} correct?",
        help_text='Asked of each response; "{response}" becomes A or B.',
    )
    yes_label = models.CharField(max_length=40, default="Correct")
    no_label = models.CharField(max_length=40, default="Incorrect")
    # An optional letter grade (A/B/C) of each response, in any kind of
    # domain (as Multimodal RewardBench 2's reasoning task): asked with this question when on.
    asks_grade = models.BooleanField(
        default=False, help_text="Also ask a letter grade (A, B or C) of each response."
    )
    grade_question = models.CharField(
        max_length=200,
        default="Grade of response {response}",
        help_text='Asked of each response when grades are on; "{response}" becomes A or B.',
    )

    class Meta:
        ordering = ["project", "position", "slug"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "slug"], name="annotate_domain_slug_per_project"
            ),
            models.UniqueConstraint(
                fields=["project", "export_category"], name="annotate_domain_category_per_project"
            ),
            models.CheckConstraint(
                condition=Q(kind__in=DomainKind.values), name="annotate_domain_kind_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.project.slug}/{self.slug}"

    @property
    def is_correctness(self) -> bool:
        return self.kind == DomainKind.CORRECTNESS

    def question_for(self, response: str) -> str:
        """The correctness question asked of response "A" or "B"."""
        return self.correctness_question.replace("{response}", response)

    def grade_question_for(self, response: str) -> str:
        """The grade question asked of response "A" or "B"."""
        return self.grade_question.replace("{response}", response)
