"""The members page's figures, read in a constant number of queries."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Case, Count, F, IntegerField, Max, Q, Sum, Value, When
from django.db.models.functions import Coalesce

from ..models import ItemPurpose, Judgement, Membership, Project


@dataclass
class MemberRow:
    membership: Membership
    judged: int
    last_active: datetime | None
    # Current votes on items where the other votes have a strict plurality,
    # and how many of those agree with it (leave-one-out majority).
    comparable: int
    agreeing: int

    @property
    def agreement(self) -> float | None:
        return self.agreeing / self.comparable if self.comparable else None

    @property
    def agreement_percent(self) -> str:
        """As the agreement page writes it (curation's `stat:"pct"`): one
        definition, one way of showing it."""
        a = self.agreement
        return "—" if a is None else f"{100 * a:.1f}%"


def _others(choice: str, column: str):
    """The item's tally for `choice` without this vote (an expression)."""
    return Case(
        When(choice=choice, then=column - Value(1)),
        default=column,
        output_field=IntegerField(),
    )


def _count_where(condition: Q):
    return Coalesce(
        Sum(Case(When(condition, then=Value(1)), default=Value(0), output_field=IntegerField())),
        Value(0),
    )


def member_rows(project: Project) -> list[MemberRow]:
    """Every member of the project (active first, then by username) with
    judged count, last vote and agreement with the leave-one-out majority:
    two queries whatever the team's or project's size."""
    memberships = list(
        Membership.objects.filter(project=project)
        .select_related("user")
        .order_by("-is_active", "user__username")
    )
    o1 = _others("1", F("assignment__item__votes_1"))
    o2 = _others("2", F("assignment__item__votes_2"))
    ot = _others("tie", F("assignment__item__votes_tie"))
    wins = {
        "1": Q(o1__gt=F("o2")) & Q(o1__gt=F("ot")),
        "2": Q(o2__gt=F("o1")) & Q(o2__gt=F("ot")),
        "tie": Q(ot__gt=F("o1")) & Q(ot__gt=F("o2")),
    }
    stats = (
        # Benchmark items' votes: checks measure the annotator (issue 36).
        Judgement.objects.filter(
            assignment__item__project=project,
            assignment__item__purpose=ItemPurpose.BENCHMARK,
            is_current=True,
        )
        .annotate(o1=o1, o2=o2, ot=ot)
        .values("assignment__annotator_id")
        .annotate(
            n=Count("pk"),
            last=Max("created_at"),
            comparable=_count_where(wins["1"] | wins["2"] | wins["tie"]),
            agreeing=_count_where(
                (Q(choice="1") & wins["1"])
                | (Q(choice="2") & wins["2"])
                | (Q(choice="tie") & wins["tie"])
            ),
        )
        .order_by()
    )
    by_user = {row["assignment__annotator_id"]: row for row in stats}
    rows = []
    for m in memberships:
        s = by_user.get(m.user_id, {})
        rows.append(
            MemberRow(
                membership=m,
                judged=m.judged,
                last_active=s.get("last"),
                comparable=s.get("comparable", 0),
                agreeing=s.get("agreeing", 0),
            )
        )
    return rows
