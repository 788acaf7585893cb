"""Qualification and check items made from the project's own items (issue
36 follow-up): a curator picks benchmark items whose answer is settled (an
agreed or resolved verdict with a side) and makes each a qualification or a
check item, retires one, or edits its explanation. Every change is audited.

The benchmark item is never changed: its votes are append-only, and its
verdict and release membership must not move. A copy is made instead, with
the same parts (the same stored images and media), the verdict's side as
gold, votes_needed 0 (annotate_item_gate_needs_no_votes) and no verdict of
its own, so no curation page, statistic, release or export sees it; it
remembers its source (Item.copied_from). A source has at most one live
copy. Annotators who voted on the source are never served its copy
(annotate.checks, annotate.qualification). Pairwise projects only: the
qualification and check answers are judged as a pair's side.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from annotate.models import (
    Item,
    ItemPart,
    ItemPurpose,
    Project,
    Task,
    derive_item_text,
    shuffle_key,
)
from annotate.models.parts import group_by_slot
from curation.models import AuditEvent, Verdict, VerdictStatus
from curation.models.verdicts import SIDES
from curation.verdicts.decisions import CurationError

# What a curator may make of a settled item (the bulk actions' and the API's names).
GOLD_PURPOSES = {"check": ItemPurpose.CHECK, "qualification": ItemPurpose.QUALIFICATION}
# An explanation is shown under one answer: a page of Markdown at most.
EXPLANATION_MAX = 10_000


class GoldRefused(CurationError):
    """A qualification or check item the rules do not allow (message shown)."""


def refuse_unless_pairwise(project: Project) -> None:
    if project.task != Task.PAIRWISE:
        raise GoldRefused(
            "Qualification and check items are pairwise only (an answer is judged as a "
            f"pair's side), and this project's task is {project.get_task_display().lower()}."
        )


def require_reason(reason: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise GoldRefused("Give a reason: it goes into the audit log.")
    return reason


def clean_explanation(explanation) -> str:
    if not isinstance(explanation, str):
        raise GoldRefused("The explanation must be text (Markdown).")
    explanation = explanation.strip()
    if len(explanation) > EXPLANATION_MAX:
        raise GoldRefused(
            f"The explanation is {len(explanation)} characters long; at most "
            f"{EXPLANATION_MAX} are kept."
        )
    return explanation


def settled_side(verdict: Verdict) -> str:
    """The side an item's closed verdict names ("1" or "2"), or GoldRefused
    saying why the item cannot give gold."""
    if verdict.status not in (VerdictStatus.AGREED, VerdictStatus.RESOLVED):
        raise GoldRefused(
            f"its answer is not settled (the verdict is "
            f"{verdict.get_status_display().lower()}): agree or resolve it first."
        )
    if verdict.final_choice not in SIDES:
        raise GoldRefused("it was resolved as a tie, which has no right answer to check.")
    return verdict.final_choice


def live_copy(source_id: int) -> Item | None:
    return Item.objects.filter(copied_from_id=source_id, retired_at__isnull=True).first()


def _copy_external_id(source: Item, purpose: str) -> str:
    base = f"{source.external_id[:180]}~{purpose}"
    taken = set(
        Item.objects.filter(project_id=source.project_id, external_id__startswith=base).values_list(
            "external_id", flat=True
        )
    )
    candidate, n = base, 1
    while candidate in taken:
        n += 1
        candidate = f"{base}-{n}"
    return candidate


def _copy(source: Item, *, purpose: str, gold: str, explanation: str, attention: bool) -> Item:
    """A new gate item with the source's content (parts copied, derived
    columns made by the one rule) and `gold`."""
    external_id = _copy_external_id(source, purpose)
    copy = Item.objects.create(
        project_id=source.project_id,
        domain_id=source.domain_id,
        external_id=external_id,
        model_1=source.model_1,
        model_2=source.model_2,
        gold_choice=gold,
        reference_answer=source.reference_answer,
        criterion=source.criterion,
        meta=source.meta,
        purpose=purpose,
        is_attention=attention,
        explanation=explanation,
        content_hash=source.content_hash,
        shuffle_key=shuffle_key(source.project.seed, external_id),
        votes_needed=0,
        copied_from=source,
    )
    parts = list(ItemPart.objects.filter(item_id=source.pk))
    for part in parts:
        part.pk, part.item_id = None, copy.pk
    ItemPart.objects.bulk_create(parts)
    derive_item_text(copy, group_by_slot(parts))
    return copy


def gold_snapshot(item: Item) -> dict:
    return {
        "item": item.pk,
        "external_id": item.external_id,
        "purpose": item.purpose,
        "gold": item.gold_choice,
        "is_attention": item.is_attention,
        "explanation": item.explanation,
        "retired": item.retired_at is not None,
    }


def make_gold_item(
    *,
    project: Project,
    item_id: int,
    curator,
    purpose: str,
    reason: str,
    explanation: str = "",
    is_attention: bool = False,
) -> Item:
    """Make a qualification or check item (`purpose`: "qualification" or
    "check") from benchmark item `item_id`, whose verdict must be settled.
    Returns the copy; raises GoldRefused (or Verdict.DoesNotExist for an
    item that is not one of the project's benchmark items)."""
    if purpose not in GOLD_PURPOSES:
        raise GoldRefused(f"Make a {' or a '.join(GOLD_PURPOSES)} item, not {purpose!r}.")
    refuse_unless_pairwise(project)
    reason = require_reason(reason)
    explanation = clean_explanation(explanation)
    with transaction.atomic():
        # The verdict's row lock: a reopen or a second curator making the
        # same copy waits, so the gold read is the verdict's current side
        # and the one-live-copy rule holds.
        verdict = (
            Verdict.objects.select_for_update(of=("self",))
            .select_related("item__project")
            .filter(item_id=item_id, project=project)
            .first()
        )
        if verdict is None:
            raise Verdict.DoesNotExist
        gold = settled_side(verdict)
        existing = live_copy(item_id)
        if existing is not None:
            raise GoldRefused(
                f"it already has a live {existing.get_purpose_display().lower()} item "
                "made from it: retire that first."
            )
        copy = _copy(
            verdict.item,
            purpose=GOLD_PURPOSES[purpose],
            gold=gold,
            explanation=explanation,
            attention=bool(is_attention),
        )
        AuditEvent.objects.create(
            project=project,
            item_id=item_id,
            actor=curator,
            action=f"make_{purpose}",
            before={"status": verdict.status, "final_choice": verdict.final_choice},
            after=gold_snapshot(copy),
            reason=reason,
        )
    return copy


def _locked_gate(project: Project, item_id: int) -> Item:
    item = (
        Item.objects.select_for_update()
        .filter(pk=item_id, project=project)
        .exclude(purpose=ItemPurpose.BENCHMARK)
        .first()
    )
    if item is None:
        raise Item.DoesNotExist
    return item


def retire_gold_item(*, project: Project, item_id: int, curator, reason: str) -> Item:
    """Stop serving a qualification or check item (made here or imported):
    never served again, its answers no longer count in check accuracy.
    Attempts already running keep their fixed list. Audited."""
    reason = require_reason(reason)
    with transaction.atomic():
        item = _locked_gate(project, item_id)
        if item.retired_at is not None:
            raise GoldRefused(f"{item.external_id} is already retired.")
        before = gold_snapshot(item)
        item.retired_at = timezone.now()
        Item.objects.filter(pk=item.pk).update(retired_at=item.retired_at)
        AuditEvent.objects.create(
            project=project,
            item=item,
            actor=curator,
            action="retire_gold",
            before=before,
            after=gold_snapshot(item),
            reason=reason,
        )
    return item


def edit_explanation(
    *, project: Project, item_id: int, curator, explanation: str, reason: str = ""
) -> Item:
    """Replace a qualification or check item's explanation (Markdown,
    sanitised when shown). Audited with the text before and after."""
    explanation = clean_explanation(explanation)
    with transaction.atomic():
        item = _locked_gate(project, item_id)
        if item.explanation == explanation:
            raise GoldRefused("The explanation is unchanged.")
        before = gold_snapshot(item)
        item.explanation = explanation
        Item.objects.filter(pk=item.pk).update(explanation=explanation)
        AuditEvent.objects.create(
            project=project,
            item=item,
            actor=curator,
            action="edit_explanation",
            before=before,
            after=gold_snapshot(item),
            reason=(reason or "").strip(),
        )
    return item


@dataclass(frozen=True)
class GoldRow:
    item: Item
    # The source's verdict no longer names the copy's gold (reopened,
    # overturned, excluded since): the curator should look again.
    drifted: bool


def gold_items(project: Project) -> QuerySet[Item]:
    """The project's qualification and check items, live first, then by
    purpose and id, with their source and its verdict (one query)."""
    return (
        Item.objects.filter(project=project)
        .exclude(purpose=ItemPurpose.BENCHMARK)
        .select_related("copied_from__verdict")
        .order_by(F("retired_at").asc(nulls_first=True), "purpose", "pk")
    )


def gold_rows(items) -> list[GoldRow]:
    rows = []
    for item in items:
        source = item.copied_from
        verdict = getattr(source, "verdict", None) if source else None
        drifted = source is not None and (
            verdict is None
            or verdict.status not in (VerdictStatus.AGREED, VerdictStatus.RESOLVED)
            or verdict.final_choice != item.gold_choice
        )
        rows.append(GoldRow(item, drifted))
    return rows
