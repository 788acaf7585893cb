"""Who can still give an item a vote (DESIGN §6, "no item waits for votes
that cannot come").

An annotator is *eligible* for an item when they hold the annotator role in
its project (an active membership: annotate.setup can deactivate one), their
account is active, they are admitted where the project requires qualification
(issue 36), and they have never been assigned the item (a vote, a skip, an
expired lease or an open lease all take them out: the claim never offers an
item twice). Curators and admins may annotate too,
but are never counted: a split is never held open waiting for the people who
will decide it.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Count, F, IntegerField, Q, QuerySet, Value
from django.db.models.functions import Coalesce

from .models import Assignment, Item, Membership, Project, Role, item_votes


def eligible_members(project: Project) -> QuerySet[Membership]:
    members = Membership.objects.filter(
        project=project, role=Role.ANNOTATOR, is_active=True, user__is_active=True
    )
    if project.qualification_required:  # only the admitted get benchmark items (issue 36)
        members = members.filter(admitted_at__isnull=False)
    return members


def eligible_counts(*, project: Project, item_ids: Iterable[int]) -> dict[int, int]:
    """For each item, how many eligible annotators have not been assigned it.
    Two queries whatever the number of items."""
    item_ids = list(item_ids)
    pool = eligible_members(project).values("user_id")
    total = pool.count()
    taken = dict(
        Assignment.objects.filter(item_id__in=item_ids, annotator_id__in=pool)
        .values("item_id")
        .annotate(n=Count("pk"))
        .values_list("item_id", "n")
    )
    return {item_id: total - taken.get(item_id, 0) for item_id in item_ids}


def collecting(project: Project) -> QuerySet[Item]:
    """Items of the project with fewer current votes than they need."""
    return Item.objects.filter(project=project).filter(votes_needed__gt=item_votes())


def short_of_annotators(project: Project) -> QuerySet[Item]:
    """Items still collecting votes whose free slots (votes needed minus live
    assignments) outnumber the eligible annotators left for them: they would
    wait for votes that cannot come. Annotated with `eligible`. One query."""
    pool = eligible_members(project).values("user_id")
    total = pool.count()
    return (
        collecting(project)
        .annotate(
            taken=Coalesce(
                Count("assignments", filter=Q(assignments__annotator_id__in=pool)),
                Value(0),
                output_field=IntegerField(),
            )
        )
        .annotate(eligible=Value(total, output_field=IntegerField()) - F("taken"))
        .filter(votes_needed__gt=F("live_assignments") + F("eligible"))
    )
