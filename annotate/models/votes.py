"""Assignments (an annotator's lease on an item) and judgements (their votes)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import ExpressionWrapper, F, FilteredRelation, Q, Value
from django.db.models.functions import Coalesce, Length
from django.db.models.lookups import GreaterThanOrEqual, LessThan, LessThanOrEqual

from annotate.loop import rules
from annotate.models.items import Item
from annotate.models.projects import Task
from annotate.projects import AssignmentQuerySet


class AssignmentStatus(models.TextChoices):
    OPEN = "open", "Open"
    SUBMITTED = "submitted", "Submitted"
    SKIPPED = "skipped", "Skipped"
    EXPIRED = "expired", "Expired"


def _permutation_of_its_length(field: str) -> Q:
    """`field` is a permutation of the digits 1..N, N its length (2 to
    MAX_SLOTS): each digit d is there whenever the length reaches d."""
    length = Length(field)
    condition = Q(GreaterThanOrEqual(length, 2)) & Q(LessThanOrEqual(length, rules.MAX_SLOTS))
    for digit in range(1, rules.MAX_SLOTS + 1):
        condition &= Q(LessThan(length, digit)) | Q(**{f"{field}__contains": str(digit)})
    return condition


class Assignment(models.Model):
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
    # The item's response slots in the order they were displayed, first
    # (left) to last: a permutation of 1..N, one digit per slot ("12" or
    # "21" for a pair). Chosen on the server (annotate.loop.rules.draw_order).
    display_order = models.CharField(max_length=rules.MAX_SLOTS)
    claimed_at = models.DateTimeField()
    lease_expires_at = models.DateTimeField()
    submitted_at = models.DateTimeField(null=True, blank=True)
    skip_reason = models.CharField(max_length=500, blank=True)

    objects = AssignmentQuerySet.as_manager()

    class Meta:
        constraints = [
            # A permutation of the slots 1..N, N its length (2 to 9): every
            # digit up to the length is there, so no other character fits.
            models.CheckConstraint(
                condition=Q(display_order__in=rules.PAIR_ORDERS)  # the common case, decided at once
                | _permutation_of_its_length("display_order"),
                name="annotate_assignment_display_order_permutation",
            ),
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

    @property
    def shown_swapped(self) -> bool:
        """A pair's display order in left/right terms: True when response 2
        was displayed on the left (derived from display_order, not stored)."""
        return rules.is_swapped(self.display_order)


class Choice(models.TextChoices):
    RESPONSE_1 = "1", "Response 1"
    RESPONSE_2 = "2", "Response 2"
    TIE = "tie", "Tie"


class Correctness(models.TextChoices):
    NONE = "", "Not asked"
    YES = "yes", "Correct"
    NO = "no", "Incorrect"
    UNSURE = "unsure", "Unsure"


class Grade(models.TextChoices):
    """A response's letter grade (as Multimodal RewardBench 2's reasoning
    task), when its domain asks."""

    NONE = "", "Not asked"
    A = "A", "A"
    B = "B", "B"
    C = "C", "C"


class JudgementQuerySet(models.QuerySet):
    def with_pair_answers(self) -> JudgementQuerySet:
        """The one way to read a pair's vote in the terms readers have always
        used: each judgement with its per-slot answers as `correct_1`,
        `correct_2`, `grade_1`, `grade_2` ("" where the slot has no answer:
        not asked) and `shown_swapped` (its assignment's display order put as
        a pair's left/right: True when response 2 was on the left). Use the
        names in values()/values_list(), filters and templates like fields."""
        slots = {
            f"_slot_{n}": FilteredRelation("slots", condition=Q(slots__slot=n))
            for n in rules.PAIR_SLOTS
        }
        answers = {}
        for n in rules.PAIR_SLOTS:
            answers[f"correct_{n}"] = Coalesce(F(f"_slot_{n}__correctness"), Value(""))
            answers[f"grade_{n}"] = Coalesce(F(f"_slot_{n}__grade"), Value(""))
        return self.annotate(**slots).annotate(
            **answers,
            shown_swapped=ExpressionWrapper(
                Q(assignment__display_order=rules.PAIR_ORDERS[1]),
                output_field=models.BooleanField(),
            ),
        )


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
    task = models.CharField(max_length=9, choices=Task.choices, default=Task.PAIRWISE)
    # The answer in canonical slot terms, by task. Pairwise: the collapsed
    # choice on every scale ("1", "2", "tie"): what tallies, statistics,
    # verdicts and releases read. Best of N: the slot picked ("1".."9") or
    # "none". Ranking: "" (the ranks are on the slots).
    choice = models.CharField(max_length=4)
    # Graded projects only (else None): the signed strength oriented to
    # response 1 (+3 much better … -3 response 2 much better, 0 a tie on the
    # seven-point scale); never in displayed terms (annotate.loop.scales).
    strength = models.SmallIntegerField(null=True, blank=True)
    # Per-slot answers (correctness, grade, rank): JudgementSlot rows.
    confidence = models.PositiveSmallIntegerField(null=True, blank=True)
    rationale = models.TextField(blank=True)
    seconds_spent = models.FloatField(default=0, help_text="Claim to submit, wall clock.")
    active_seconds = models.FloatField(default=0, help_text="Active time reported by the page.")
    flagged_problem = models.BooleanField(default=False)
    # A published annotation cast as a vote by the import (issue 30), by a
    # pseudonymous imported annotator: shown as imported in every view and export.
    imported = models.BooleanField(default=False)
    problem_reason = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = JudgementQuerySet.as_manager()

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
                condition=Q(task__in=Task.values), name="annotate_judgement_task_valid"
            ),
            models.CheckConstraint(
                condition=Q(task=Task.PAIRWISE, choice__in=Choice.values)
                | Q(task=Task.BEST_OF_N, choice__in=rules.BEST_OF_N_CHOICES)
                | Q(task=Task.RANKING, choice="")
                # An unknown task is annotate_judgement_task_valid's to refuse.
                | ~Q(task__in=Task.values),
                name="annotate_judgement_choice_valid",
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
            # The collapsed choice is the strength's sign (pairwise only).
            models.CheckConstraint(
                condition=Q(strength__isnull=True)
                | Q(strength__gte=1, strength__lte=3, choice="1", task=Task.PAIRWISE)
                | Q(strength__gte=-3, strength__lte=-1, choice="2", task=Task.PAIRWISE)
                | Q(strength=0, choice="tie", task=Task.PAIRWISE),
                name="annotate_judgement_strength_matches_choice",
            ),
        ]
        indexes = [
            # curation.grid.filters (the data grid's "problem flagged" filter
            # and column): the few current votes that flag a problem, found
            # without reading every judgement of the project.
            models.Index(
                fields=["assignment"],
                condition=Q(flagged_problem=True, is_current=True),
                name="annotate_judgement_flagged_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.assignment_id} r{self.revision}: {self.choice}"


class JudgementSlot(models.Model):
    """One response slot's answers in a judgement, in canonical slot terms:
    its correctness label, its letter grade, its rank (rankings; ties share
    a rank). A row only for a slot that got an answer (no row: not asked).
    Written with its judgement and never changed (a revision is a new
    judgement with its own rows)."""

    # No index of its own: (judgement, slot) is unique.
    judgement = models.ForeignKey(
        Judgement, on_delete=models.CASCADE, related_name="slots", db_index=False
    )
    slot = models.PositiveSmallIntegerField()
    correctness = models.CharField(
        max_length=6, choices=Correctness.choices, blank=True, default=Correctness.NONE
    )
    grade = models.CharField(max_length=1, choices=Grade.choices, blank=True, default=Grade.NONE)
    rank = models.PositiveSmallIntegerField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["judgement", "slot"], name="annotate_judgementslot_one_per_slot"
            ),
            models.CheckConstraint(
                condition=Q(slot__gte=1, slot__lte=rules.MAX_SLOTS),
                name="annotate_judgementslot_slot_range",
            ),
            models.CheckConstraint(
                condition=Q(correctness__in=Correctness.values),
                name="annotate_judgementslot_correctness_valid",
            ),
            models.CheckConstraint(
                condition=Q(grade__in=Grade.values), name="annotate_judgementslot_grade_valid"
            ),
            models.CheckConstraint(
                condition=Q(rank__isnull=True) | Q(rank__gte=1, rank__lte=rules.MAX_SLOTS),
                name="annotate_judgementslot_rank_range",
            ),
            # No row for a slot without an answer.
            models.CheckConstraint(
                condition=~Q(correctness="", grade="", rank__isnull=True),
                name="annotate_judgementslot_answers_something",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.judgement_id} slot {self.slot}"


def submitted_count(*, project_id: int, user_id: int) -> int:
    """The user's submitted assignments in the project, counted from the rows
    (Membership.judged keeps the same number without counting)."""
    return Assignment.objects.filter(
        annotator_id=user_id, item__project_id=project_id, status=AssignmentStatus.SUBMITTED
    ).count()
