"""Verdicts (one per item: where the contested rule or a curator put it) and
the audit trail of every change.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

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
    CONSENSUS = "consensus", "Short of consensus (graded)"


# Statuses whose items go into a release (with a side: see RELEASABLE).
RELEASABLE_STATUSES = (VerdictStatus.AGREED, VerdictStatus.RESOLVED)
SIDES = (FinalChoice.RESPONSE_1, FinalChoice.RESPONSE_2)
# The best slot a best-of-N or ranked item's verdict names (issue 33):
# canonical slots "1".."8" (annotate.models.parts.ITEM_MAX_RESPONSES).
MAX_VERDICT_SLOTS = 8
SLOT_CHOICES = [str(slot) for slot in range(1, MAX_VERDICT_SLOTS + 1)]
# What a release holds: agreed or resolved with a better response (a tie a
# curator resolved has none to write as `Better`).
RELEASABLE = Q(status__in=RELEASABLE_STATUSES, final_choice__in=SIDES)
# What a release's members are: agreed or resolved with a best response, a
# pair's side or the best of N (slots "3".."8" only ever name a best-of-N or
# ranked item's; each benchmark's files take the members of their shape).
RELEASABLE_ANY_SLOT = Q(status__in=RELEASABLE_STATUSES, final_choice__in=SLOT_CHOICES)


class VerdictQuerySet(models.QuerySet["Verdict"]):
    def contested(self) -> VerdictQuerySet:
        return self.filter(status=VerdictStatus.CONTESTED)

    def releasable(self) -> VerdictQuerySet:
        return self.filter(RELEASABLE_ANY_SLOT)

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
    # (No index of its own: the composite indexes below start with it.)
    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="verdicts", db_index=False
    )
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
            # A decided item (agreed or resolved) has a side (a best-of-N or
            # ranked item: its best slot, 1..8), or a curator's tie; nothing
            # else has one.
            models.CheckConstraint(
                condition=(
                    Q(status__in=RELEASABLE_STATUSES, final_choice__in=SLOT_CHOICES)
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
            # Curation queue and dashboard counts: verdicts of a project by
            # status. The item id makes it cover the data grid's status
            # filters (curation.grid.filters.matching): counted, and merged
            # or hashed with the items' grid index, from the index alone.
            models.Index(fields=["project", "status", "item"], name="curation_verdict_status_idx"),
            # The data grid's default order (a project's items in import
            # order): its first page reads 50 entries, whatever the other
            # projects hold.
            models.Index(fields=["project", "item"], name="curation_verdict_grid_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.item_id}: {self.status}"


class VerdictRank(models.Model):
    """A ranked item's final ranking (issue 33), one row per canonical slot:
    the Kemeny-Young order when the rule agreed it, the curator's when one
    set it. rank 1 = best; ties share a rank (1, 2, 2, 4). Rows exist only
    while the verdict is agreed or resolved with a ranking (curation.
    verdicts.ranked writes and clears them with the verdict)."""

    verdict = models.ForeignKey(Verdict, on_delete=models.CASCADE, related_name="final_ranks")
    slot = models.PositiveSmallIntegerField()
    rank = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["verdict", "slot"]
        constraints = [
            models.UniqueConstraint(
                fields=["verdict", "slot"], name="curation_verdictrank_one_per_slot"
            ),
            models.CheckConstraint(
                condition=Q(slot__gte=1, slot__lte=MAX_VERDICT_SLOTS),
                name="curation_verdictrank_slot_range",
            ),
            models.CheckConstraint(
                condition=Q(rank__gte=1, rank__lte=MAX_VERDICT_SLOTS),
                name="curation_verdictrank_rank_range",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.verdict_id}: slot {self.slot} rank {self.rank}"


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
