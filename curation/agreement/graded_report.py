"""The agreement dashboard's graded table (issue 24): per domain and for the
whole project, Krippendorff's alpha of the canonical strengths at the
ordinal and interval levels (curation.agreement.graded) beside the binary
collapse (the nominal alpha of choices 1 / 2 / tie the dashboard already
shows). One query, only for a graded project."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from annotate.models import Judgement, Project
from curation.agreement import graded
from curation.agreement import stats as agreement


@dataclass(frozen=True)
class GradedRow:
    key: str  # domain slug, or "all"
    title: str
    reliability: graded.GradedReliability
    binary_alpha: agreement.Stat  # nominal alpha of the collapsed choice


def graded_rows(project: Project, domain_rows: Sequence, *, all_key: str) -> list[GradedRow]:
    """One row per row of the dashboard's domain table (`domain_rows`, their
    `key` the domain slug or `all_key`), empty for an A/B project."""
    if not project.is_graded:
        return []
    scale = project.preference_scale
    strengths = (
        Judgement.objects.filter(
            assignment__item__project=project, is_current=True, strength__isnull=False
        )
        .order_by()
        .values_list("assignment__item__domain__slug", "assignment__item_id", "strength")
    )
    by_domain: dict[str, list[tuple[int, int]]] = defaultdict(list)
    everything: list[tuple[int, int]] = []
    for slug, item_id, strength in strengths:
        by_domain[slug].append((item_id, strength))
        everything.append((item_id, strength))
    return [
        GradedRow(
            key=row.key,
            title=row.title,
            reliability=graded.graded_reliability(
                everything if row.key == all_key else by_domain.get(row.key, []), scale
            ),
            binary_alpha=row.summary.choice.alpha,
        )
        for row in domain_rows
    ]
