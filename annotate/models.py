"""Projects, domains, items, assignments and judgements.

Canonical order: `response_1`/`response_2` are stored in import order and every
judgement stores its choice in those canonical terms. What the annotator saw on
the left is a display detail kept on the Assignment (`shown_swapped`).
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from config.reversing import reverse_one

from . import rendering

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


class Role(models.TextChoices):
    ANNOTATOR = "annotator", "Annotator"
    CURATOR = "curator", "Curator"
    ADMIN = "admin", "Admin"


class ProjectQuerySet(models.QuerySet["Project"]):
    def visible_to(self, user) -> ProjectQuerySet:
        """Projects the user is an active member of (superusers see all)."""
        if not user.is_authenticated:
            return self.none()
        if user.is_superuser:
            return self.all()
        return self.filter(memberships__user=user, memberships__is_active=True).distinct()

    def with_role(self, user, roles: tuple[str, ...]) -> ProjectQuerySet:
        """Projects where the user holds one of `roles` (superusers: all)."""
        if not user.is_authenticated:
            return self.none()
        if user.is_superuser:
            return self.all()
        return self.filter(
            memberships__user=user, memberships__is_active=True, memberships__role__in=roles
        ).distinct()


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
    require_rationale = models.BooleanField(default=False)
    lease_minutes = models.PositiveIntegerField(default=30)
    allow_self_adjudication = models.BooleanField(
        default=False,
        help_text="Let curators resolve items they voted on (tiny teams only; flagged in the UI).",
    )
    seed = models.IntegerField(default=0, help_text="Seeds shuffles (claim order, import order).")
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
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("project", args=[self.slug])

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

    def role_of(self, user) -> str | None:
        if not user.is_authenticated:
            return None
        if user.is_superuser:
            return Role.ADMIN
        # (Not .only("role") on the related manager: Django then reads the
        # deferred project_id back to attach the project, a second query.)
        return (
            Membership.objects.filter(project_id=self.pk, user_id=user.pk, is_active=True)
            .values_list("role", flat=True)
            .first()
        )


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
        if self._state.adding and self.user_id and self.project_id:
            self.judged = submitted_count(project_id=self.project_id, user_id=self.user_id)
        super().save(*args, **kwargs)


def submitted_count(*, project_id: int, user_id: int) -> int:
    """The user's submitted assignments in the project, counted from the rows
    (Membership.judged keeps the same number without counting)."""
    return Assignment.objects.filter(
        annotator_id=user_id, item__project_id=project_id, status=AssignmentStatus.SUBMITTED
    ).count()


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


class ImageAsset(models.Model):
    """An image stored once, named by the SHA-256 of its stored bytes."""

    sha256 = models.CharField(max_length=64, unique=True)
    file = models.CharField(max_length=200, help_text="Path in the default storage.")
    format = models.CharField(max_length=10)
    width = models.PositiveIntegerField()
    height = models.PositiveIntegerField()
    size_bytes = models.PositiveBigIntegerField()
    thumbnail = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            # \A and \Z, not ^ and $: SQLite's REGEXP is Python's re.search,
            # where $ also matches before a trailing newline.
            models.CheckConstraint(
                condition=Q(sha256__regex=r"\A[0-9a-f]{64}\Z"), name="annotate_image_sha256_hex"
            ),
            models.CheckConstraint(
                condition=Q(width__gt=0, height__gt=0), name="annotate_image_dimensions_positive"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.sha256[:12]} {self.format} {self.width}x{self.height}"

    # Through the `media` view, never the storage's own URL: on object storage
    # that would be a presigned link to the bucket, bypassing the sign-in and
    # the view's safety headers.
    @property
    def url(self) -> str:
        return reverse_one("media", self.file)

    @property
    def thumbnail_url(self) -> str:
        return reverse_one("media", self.thumbnail or self.file)


class GoldChoice(models.TextChoices):
    NONE = "", "None"
    RESPONSE_1 = "1", "Response 1"
    RESPONSE_2 = "2", "Response 2"


def shuffle_key(seed: int, external_id: str) -> int:
    """A stable pseudo-random 63-bit key from the project seed and the item ID."""
    digest = hashlib.sha256(f"{seed}:{external_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


class ItemQuerySet(models.QuerySet["Item"]):
    def needing_votes(self) -> ItemQuerySet:
        """Items with fewer live assignments than they need."""
        return self.filter(live_assignments__lt=F("votes_needed"))


# Item's text fields shown as HTML, and the columns that store that HTML.
RENDERED_SOURCES = frozenset({"prompt", "response_1", "response_2"})
RENDERED_FIELDS = ("prompt_html", "response_1_html", "response_2_html", "rendered_version")


class Item(models.Model):
    # No index of its own: every composite index below starts with project_id,
    # and each index is written again by every claim and vote (non-HOT updates).
    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="items", db_index=False
    )
    domain = models.ForeignKey(Domain, on_delete=models.PROTECT, related_name="items")
    external_id = models.CharField(max_length=200)
    prompt = models.TextField()
    image = models.ForeignKey(ImageAsset, on_delete=models.PROTECT, related_name="items")
    image_path = models.CharField(
        max_length=500, help_text="The image's path in the source dataset, kept for export."
    )
    response_1 = models.TextField()
    response_2 = models.TextField()
    model_1 = models.CharField(max_length=200, blank=True)
    model_2 = models.CharField(max_length=200, blank=True)
    gold_choice = models.CharField(
        max_length=1, choices=GoldChoice.choices, blank=True, default=GoldChoice.NONE
    )
    reference_answer = models.TextField(blank=True)
    meta = models.JSONField(default=dict, blank=True, help_text="Source fields, verbatim.")
    content_hash = models.CharField(
        max_length=64, help_text="SHA-256 of the imported content; makes re-import a no-op."
    )
    # Position in the project's seeded shuffle (see shuffle_key()); claim order
    # among items equally close to completion.
    shuffle_key = models.BigIntegerField(default=0)
    # How many votes this item collects in all (base count plus escalations
    # and curators' requests); a curator's decision lowers it to the votes it
    # has (0 for an item closed before any vote), so nothing more is claimed.
    votes_needed = models.PositiveSmallIntegerField()
    # Assignments that count towards votes_needed: open (leased) or submitted.
    live_assignments = models.PositiveSmallIntegerField(default=0)
    # Tallies of current judgements in canonical terms; updated with each vote.
    votes_1 = models.PositiveSmallIntegerField(default=0)
    votes_2 = models.PositiveSmallIntegerField(default=0)
    votes_tie = models.PositiveSmallIntegerField(default=0)
    # Tallies of the current judgements' correctness labels per response,
    # updated in the vote's own UPDATE, so the agreement dashboard reads label
    # counts from items instead of grouping every judgement. Plain integers:
    # the named CHECK below is the one that guards them.
    correct_1_yes = models.SmallIntegerField(default=0)
    correct_1_no = models.SmallIntegerField(default=0)
    correct_1_unsure = models.SmallIntegerField(default=0)
    correct_2_yes = models.SmallIntegerField(default=0)
    correct_2_no = models.SmallIntegerField(default=0)
    correct_2_unsure = models.SmallIntegerField(default=0)
    # The compare page's sanitised HTML of prompt and responses, rendered once
    # (annotate.rendering costs more CPU than the rest of the page). Valid only
    # while rendered_version equals RENDERER_VERSION; 0 means not rendered yet
    # (import leaves it to a task, the first view fills it otherwise).
    prompt_html = models.TextField(blank=True, default="", editable=False)
    response_1_html = models.TextField(blank=True, default="", editable=False)
    response_2_html = models.TextField(blank=True, default="", editable=False)
    rendered_version = models.PositiveSmallIntegerField(default=0, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ItemQuerySet.as_manager()

    class Meta:
        ordering = ["project", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "external_id"], name="annotate_item_external_id_per_project"
            ),
            models.CheckConstraint(
                condition=Q(gold_choice__in=GoldChoice.values), name="annotate_item_gold_valid"
            ),
            # The overlap guarantee: never more live assignments than needed.
            models.CheckConstraint(
                condition=Q(live_assignments__lte=F("votes_needed")),
                name="annotate_item_live_within_needed",
            ),
            # A label tally below zero means a revision took back a label that
            # was never counted: fail the vote rather than let the counts drift.
            models.CheckConstraint(
                condition=Q(
                    correct_1_yes__gte=0,
                    correct_1_no__gte=0,
                    correct_1_unsure__gte=0,
                    correct_2_yes__gte=0,
                    correct_2_no__gte=0,
                    correct_2_unsure__gte=0,
                ),
                name="annotate_item_label_tallies_nonnegative",
            ),
        ]
        indexes = [
            # claim_next_item: items of one project that still need votes,
            # fewest missing votes first, then the seeded shuffle, then the id
            # (the claim's whole ORDER BY, so its LIMIT 1 stops at the first
            # item it may take instead of sorting a batch of equal keys).
            models.Index(
                F("project"),
                F("votes_needed") - F("live_assignments"),
                F("shuffle_key"),
                F("id"),
                name="annotate_item_claim_order_idx",
                condition=Q(live_assignments__lt=F("votes_needed")),
            ),
            # curation.agreement.reports.tally_patterns (the agreement dashboard's point
            # estimates): items grouped by domain and tallies, read from this
            # small index alone (index-only scan, already in group order)
            # instead of the wide item rows. Its (project, domain) prefix also
            # serves per-domain listings and counts (dashboards, exports).
            models.Index(
                fields=[
                    "project",
                    "domain",
                    "votes_1",
                    "votes_2",
                    "votes_tie",
                    "correct_1_yes",
                    "correct_1_no",
                    "correct_1_unsure",
                    "correct_2_yes",
                    "correct_2_no",
                    "correct_2_unsure",
                ],
                name="annotate_item_tally_idx",
            ),
        ]

    def __str__(self) -> str:
        return self.external_id

    def save(self, *args, **kwargs) -> None:
        # A saved prompt or response gets its HTML with it; bulk_create and
        # QuerySet.update() bypass this (the importer renders in a task).
        update_fields = kwargs.get("update_fields")
        if update_fields is None or not RENDERED_SOURCES.isdisjoint(update_fields):
            self.render_html()
            if update_fields is not None:
                kwargs["update_fields"] = {*update_fields, *RENDERED_FIELDS}
        super().save(*args, **kwargs)

    def render_html(self) -> None:
        """Set the stored HTML from the current text (not saved), within one
        time budget for the three (a text past it is stored plain, with a
        note saying why)."""
        with rendering.render_budget():
            self.prompt_html = rendering.render_markdown(self.prompt)
            self.response_1_html = rendering.render_markdown(self.response_1)
            self.response_2_html = rendering.render_markdown(self.response_2)
        self.rendered_version = rendering.RENDERER_VERSION

    def rendered(self) -> dict[str, SafeString]:
        """Sanitised HTML of prompt and responses; renders and stores it
        first if it is missing or from another renderer version."""
        if self.rendered_version != rendering.RENDERER_VERSION:
            # Sources a raw read left deferred: one query for all of them.
            deferred = self.get_deferred_fields() & RENDERED_SOURCES
            if deferred:
                self.refresh_from_db(fields=sorted(deferred))
            self.render_html()
            # Only these columns: the row's tallies may have moved meanwhile.
            Item.objects.filter(pk=self.pk).update(
                **{name: getattr(self, name) for name in RENDERED_FIELDS}
            )
        # Only render_html() writes these columns, and its output is sanitised.
        return {
            "prompt": mark_safe(self.prompt_html),
            "response_1": mark_safe(self.response_1_html),
            "response_2": mark_safe(self.response_2_html),
        }

    @property
    def n_votes(self) -> int:
        return self.votes_1 + self.votes_2 + self.votes_tie


class AssignmentStatus(models.TextChoices):
    OPEN = "open", "Open"
    SUBMITTED = "submitted", "Submitted"
    SKIPPED = "skipped", "Skipped"
    EXPIRED = "expired", "Expired"


# Statuses that count towards an item's votes_needed.
LIVE_ASSIGNMENT_STATUSES = (AssignmentStatus.OPEN, AssignmentStatus.SUBMITTED)


class Assignment(models.Model):
    # Not a column: set by PostgreSQL's claim_next_item() to the annotator's
    # Membership.judged, read in the claim's statement (absent otherwise).
    judged_in_project: int | None

    # No single-column indexes: (item, annotator) is unique and
    # annotate_assignment_user_idx starts with annotator; fewer indexes to
    # write on every claim and vote.
    item = models.ForeignKey(
        Item, on_delete=models.CASCADE, related_name="assignments", db_index=False
    )
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="assignments",
        db_index=False,
    )
    status = models.CharField(
        max_length=16, choices=AssignmentStatus.choices, default=AssignmentStatus.OPEN
    )
    # True when response 2 was displayed on the left. Chosen on the server.
    shown_swapped = models.BooleanField()
    claimed_at = models.DateTimeField()
    lease_expires_at = models.DateTimeField()
    submitted_at = models.DateTimeField(null=True, blank=True)
    skip_reason = models.CharField(max_length=500, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["item", "annotator"], name="annotate_assignment_one_per_annotator"
            ),
            models.CheckConstraint(
                condition=Q(status__in=AssignmentStatus.values),
                name="annotate_assignment_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(lease_expires_at__gt=F("claimed_at")),
                name="annotate_assignment_lease_after_claim",
            ),
            models.CheckConstraint(
                condition=~Q(status=AssignmentStatus.SUBMITTED) | Q(submitted_at__isnull=False),
                name="annotate_assignment_submitted_has_time",
            ),
        ]
        indexes = [
            # An annotator's open assignment (resume) and history pages.
            models.Index(fields=["annotator", "status"], name="annotate_assignment_user_idx"),
            # Expiring stale leases: open assignments past their lease.
            models.Index(
                fields=["lease_expires_at"],
                name="annotate_assignment_lease_idx",
                condition=Q(status="open"),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.item} → {self.annotator} ({self.status})"

    def displayed_to_canonical(self, side: str) -> str:
        """Map a displayed side ("left"/"right") to a canonical response ("1"/"2")."""
        if side not in ("left", "right"):
            raise ValueError(f"unknown side {side!r}")
        left, right = ("2", "1") if self.shown_swapped else ("1", "2")
        return left if side == "left" else right


class Choice(models.TextChoices):
    RESPONSE_1 = "1", "Response 1"
    RESPONSE_2 = "2", "Response 2"
    TIE = "tie", "Tie"


class Correctness(models.TextChoices):
    NONE = "", "Not asked"
    YES = "yes", "Correct"
    NO = "no", "Incorrect"
    UNSURE = "unsure", "Unsure"


class Judgement(models.Model):
    """One annotator's vote on one assignment, in canonical terms.

    Append-only: a revision adds a new row with revision+1 and clears
    `is_current` on the old one; nothing is ever deleted."""

    # Not a column: set by submit_judgement() (True when the assignment had
    # been judged before and the stored judgement came back unchanged).
    already_submitted: bool

    # No index of its own: (assignment, revision) is unique.
    assignment = models.ForeignKey(
        Assignment, on_delete=models.PROTECT, related_name="judgements", db_index=False
    )
    revision = models.PositiveSmallIntegerField(default=1)
    is_current = models.BooleanField(default=True)
    choice = models.CharField(max_length=3, choices=Choice.choices)
    correct_1 = models.CharField(
        max_length=6, choices=Correctness.choices, blank=True, default=Correctness.NONE
    )
    correct_2 = models.CharField(
        max_length=6, choices=Correctness.choices, blank=True, default=Correctness.NONE
    )
    confidence = models.PositiveSmallIntegerField(null=True, blank=True)
    rationale = models.TextField(blank=True)
    seconds_spent = models.FloatField(default=0, help_text="Claim to submit, wall clock.")
    active_seconds = models.FloatField(default=0, help_text="Active time reported by the page.")
    flagged_problem = models.BooleanField(default=False)
    problem_reason = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["assignment", "revision"], name="annotate_judgement_revision_unique"
            ),
            models.UniqueConstraint(
                fields=["assignment"],
                condition=Q(is_current=True),
                name="annotate_judgement_one_current_per_assignment",
            ),
            models.CheckConstraint(
                condition=Q(choice__in=Choice.values), name="annotate_judgement_choice_valid"
            ),
            models.CheckConstraint(
                condition=Q(correct_1__in=Correctness.values) & Q(correct_2__in=Correctness.values),
                name="annotate_judgement_correctness_valid",
            ),
            models.CheckConstraint(
                condition=Q(confidence__isnull=True) | Q(confidence__gte=1, confidence__lte=3),
                name="annotate_judgement_confidence_range",
            ),
            models.CheckConstraint(
                condition=Q(seconds_spent__gte=0, active_seconds__gte=0),
                name="annotate_judgement_time_nonnegative",
            ),
            models.CheckConstraint(
                condition=Q(revision__gte=1), name="annotate_judgement_revision_positive"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.assignment_id} r{self.revision}: {self.choice}"


# Invitations and the setup audit trail live in annotate.setup (the models
# module Django reads is this one).
from .setup.models import Invitation, SetupEvent  # noqa: E402, F401
