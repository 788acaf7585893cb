"""The agreement dashboard's graded table (issue 24): per domain and for the
whole project, Krippendorff's alpha of the canonical strengths at the
ordinal and interval levels (curation.agreement.graded) beside the binary
collapse (the nominal alpha of choices 1 / 2 / tie the dashboard already
shows), each with its item-bootstrap 95% interval once the background
refresh has computed them (`graded_intervals`, cached with the nominal ones
in AgreementCache). One query, only for a graded project."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from annotate.models import ItemPurpose, Judgement, Project
from curation.agreement import graded
from curation.agreement import stats as agreement


@dataclass(frozen=True)
class GradedRow:
    key: str  # domain slug, or "all"
    title: str
    reliability: graded.GradedReliability
    binary_alpha: agreement.Stat  # nominal alpha of the collapsed choice
    # Item-bootstrap 95% intervals: Interval | Undefined, None until computed.
    ordinal_ci: object = None
    interval_ci: object = None
    binary_ci: object = None


def strengths_by_domain(project: Project) -> dict[str, list[tuple[int, int]]]:
    """(item, canonical strength) of every current graded vote, by domain
    slug. One query."""
    rows = (
        Judgement.objects.filter(
            assignment__item__project=project,
            assignment__item__purpose=ItemPurpose.BENCHMARK,
            is_current=True,
            strength__isnull=False,
        )
        .order_by()
        .values_list("assignment__item__domain__slug", "assignment__item_id", "strength")
    )
    by_domain: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for slug, item_id, strength in rows:
        by_domain[slug].append((item_id, strength))
    return by_domain


def graded_intervals(
    project: Project, *, seed: int, n_resamples: int, all_key: str | None = None
) -> dict[str, dict[str, agreement.Interval | agreement.Undefined]]:
    """Item-bootstrap 95% intervals of ordinal and interval alpha per domain
    slug with graded votes (and for all of them under `all_key` if given),
    drawn with `seed`. Empty for an A/B project."""
    if not project.is_graded:
        return {}
    scale = project.preference_scale
    by_domain = strengths_by_domain(project)
    groups = dict(sorted(by_domain.items()))
    if all_key is not None:
        groups[all_key] = [vote for votes in by_domain.values() for vote in votes]
    out = {}
    for key, votes in groups.items():
        _, counts = graded.value_matrix(votes, scale)
        out[key] = {
            level: graded.bootstrap_graded_ci(
                counts, scale, level, n_resamples=n_resamples, seed=seed
            )
            for level in graded.LEVELS
        }
    return out


def graded_rows(
    project: Project,
    domain_rows: Sequence,
    *,
    all_key: str,
    intervals: dict[str, dict] | None = None,
    from_json=None,
) -> list[GradedRow]:
    """One row per row of the dashboard's domain table (`domain_rows`, their
    `key` the domain slug or `all_key`, `alpha_ci` the cached interval of the
    binary collapse), empty for an A/B project. `intervals`: the cached
    graded intervals (JSON, read back with `from_json`)."""
    if not project.is_graded:
        return []
    scale = project.preference_scale
    by_domain = strengths_by_domain(project)
    everything = [vote for votes in by_domain.values() for vote in votes]
    intervals = intervals or {}

    def cached(key: str, level: str):
        value = intervals.get(key, {}).get(level)
        return from_json(value) if from_json is not None else value

    return [
        GradedRow(
            key=row.key,
            title=row.title,
            reliability=graded.graded_reliability(
                everything if row.key == all_key else by_domain.get(row.key, []), scale
            ),
            binary_alpha=row.summary.choice.alpha,
            ordinal_ci=cached(row.key, "ordinal"),
            interval_ci=cached(row.key, "interval"),
            binary_ci=row.alpha_ci,
        )
        for row in domain_rows
    ]
