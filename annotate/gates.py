"""Qualification and gold checks (issue 36): an annotator's accuracy on the
project's check items, with a Wilson score interval, and whether it is
below the project's threshold.

Only current, non-imported judgements on items of purpose "check" count; a
vote is right when its choice equals the item's gold choice."""

from __future__ import annotations

import math
from dataclasses import dataclass

from django.db.models import Count, F, Q

from annotate.models import ItemPurpose, Judgement

# 95 % two-sided: the normal quantile statsmodels uses for alpha=0.05.
Z_95 = 1.959963984540054


@dataclass(frozen=True)
class CheckAccuracy:
    right: int
    total: int
    low: float
    high: float

    @property
    def point(self) -> float | None:
        return self.right / self.total if self.total else None


def wilson_interval(right: int, total: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of right/total (0, 1 for no trials), equal to
    statsmodels' proportion_confint(method="wilson")."""
    if total <= 0:
        return 0.0, 1.0
    p = right / total
    z2 = z * z
    denom = 1 + z2 / total
    centre = (p + z2 / (2 * total)) / denom
    half = z * math.sqrt(p * (1 - p) / total + z2 / (4 * total * total)) / denom
    return centre - half, centre + half


def check_accuracy(project, annotator, *, since=None) -> CheckAccuracy:
    """The annotator's accuracy on the project's gold check items (one query);
    with `since`, only the judgements made after it (annotate.checks: the
    checks answered since a reinstatement)."""
    judgements = Judgement.objects.filter(created_at__gt=since) if since else Judgement.objects
    counts = judgements.filter(
        is_current=True,
        imported=False,
        assignment__annotator=annotator,
        assignment__item__project=project,
        assignment__item__purpose=ItemPurpose.CHECK,
        # A check a curator retired (curation.gold) no longer counts.
        assignment__item__retired_at__isnull=True,
    ).aggregate(
        total=Count("pk"),
        right=Count("pk", filter=Q(choice=F("assignment__item__gold_choice"))),
    )
    low, high = wilson_interval(counts["right"], counts["total"])
    return CheckAccuracy(right=counts["right"], total=counts["total"], low=low, high=high)


def below_threshold(acc: CheckAccuracy, *, threshold: float, minimum: int) -> bool:
    """Pause when, after at least `minimum` checks, even the interval's upper
    bound is below the threshold: a short unlucky run does not pause anyone."""
    return acc.total >= max(minimum, 1) and acc.high < threshold
