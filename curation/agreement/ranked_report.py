"""The agreement dashboard of a best-of-N or ranking project (issue 33,
deliverable 3): the current picks or rankings read from the database in
canonical slot terms, handed to the pure modules (curation.agreement.
ranking, ranking_bootstrap, ranking_diagnostics), nothing computed here.
The displayed order (Assignment.display_order) reaches one statistic only,
the per-annotator position bias.

Point figures are computed per page view (three queries and numpy); the
item-bootstrap intervals are the expensive part, computed with the pair
figures' background refresh (reports.compute_expensive, payload
"ranked_ci") with the same seed and resample count."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from annotate.models import ItemPurpose, Judgement, JudgementSlot, Membership, Project, Task
from curation.agreement import ranking
from curation.agreement.ranking_bootstrap import STATISTICS, ranking_intervals
from curation.agreement.ranking_diagnostics import (
    PositionBias,
    pick_position_bias,
    ranking_position_bias,
)

# Shown on the dashboard (escapes: alpha, times, tau).
LABELS = {
    "pick_alpha": "Krippendorff's \u03b1 over picks (nominal; unit = item)",
    "pairwise_alpha": "Krippendorff's \u03b1 over the pairwise preferences rankings imply "
    "(nominal; unit = item \u00d7 response pair)",
    "ordinal_alpha": "Krippendorff's \u03b1 over ranks (ordinal, mid-ranks; "
    "unit = item \u00d7 response)",
    "mean_w": "Kendall's W (mean over items with two or more complete rankings)",
    "mean_tau_b": "Kendall's \u03c4-b (mean over pairs of rankings of one item)",
}


def _shown(order: str) -> list[int]:
    """Assignment.display_order ("3142") as the pure modules' shown: the
    0-based canonical slot displayed at each position."""
    return [int(c) - 1 for c in order]


def project_table(project: Project):
    """The project's current picks (PickTable) or rankings (RankTable), one
    per item and annotator, in item then annotator order (two queries for
    rankings, one for picks); None for a pairwise project or no votes."""
    if project.task not in (Task.BEST_OF_N, Task.RANKING):
        return None
    rows = list(
        Judgement.objects.filter(
            assignment__item__project=project,
            assignment__item__purpose=ItemPurpose.BENCHMARK,
            is_current=True,
            task=project.task,
        )
        .order_by("assignment__item_id", "assignment__annotator_id")
        .values_list(
            "pk",
            "assignment__item_id",
            "assignment__annotator_id",
            "choice",
            "assignment__display_order",
        )
    )
    if not rows:
        return None
    if project.task == Task.BEST_OF_N:
        return ranking.PickTable.of(
            [
                ranking.Pick(
                    item=item,
                    annotator=annotator,
                    slot=None if choice == "none" else int(choice) - 1,
                    n_slots=len(order),
                    shown=_shown(order),
                )
                for _, item, annotator, choice, order in rows
            ]
        )
    ranks: dict[int, dict[int, int]] = defaultdict(dict)
    for judgement_id, slot, rank in JudgementSlot.objects.filter(
        judgement__assignment__item__project=project,
        judgement__assignment__item__purpose=ItemPurpose.BENCHMARK,
        judgement__is_current=True,
        judgement__task=Task.RANKING,
        rank__isnull=False,
    ).values_list("judgement_id", "slot", "rank"):
        ranks[judgement_id][slot] = rank
    return ranking.RankTable.of(
        [
            ranking.Ranking(
                item=item,
                annotator=annotator,
                ranks=[ranks[pk].get(s) for s in range(1, len(order) + 1)],
                shown=_shown(order),
            )
            for pk, item, annotator, _, order in rows
        ]
    )


@dataclass
class Figure:
    key: str
    label: str
    value: ranking.Stat
    ci: object = None  # Interval | Undefined | None (not computed yet)


@dataclass
class BiasRow:
    name: str
    bias: PositionBias


@dataclass
class RankedReport:
    task: str
    n_items: int = 0
    n_judgements: int = 0
    figures: list[Figure] = field(default_factory=list)
    bias: list[BiasRow] = field(default_factory=list)
    width: int = 0
    stale: bool = False  # the cached intervals were drawn from other votes
    detail: dict = field(default_factory=dict)


def point_figures(table) -> dict[str, ranking.Stat]:
    if isinstance(table, ranking.PickTable):
        return {"pick_alpha": ranking.pick_alpha(table)}
    point = ranking.ranking_reliability(table)
    return {name: getattr(point, name) for name in STATISTICS}


def intervals(table, *, n_resamples: int, seed: int) -> dict:
    """The item-bootstrap 95% intervals of point_figures' statistics."""
    if isinstance(table, ranking.PickTable):
        return {
            "pick_alpha": ranking.pick_alpha_interval(table, n_resamples=n_resamples, seed=seed)
        }
    return ranking_intervals(table, n_resamples=n_resamples, seed=seed)


def intervals_json(project: Project, *, n_resamples: int, seed: int, to_json) -> dict:
    """{"n": judgements read, "ci": {statistic: JSON interval}} ({} for a
    pairwise project or no votes)."""
    table = project_table(project)
    if table is None:
        return {}
    cis = intervals(table, n_resamples=n_resamples, seed=seed)
    return {"n": len(table.item), "ci": {name: to_json(ci) for name, ci in cis.items()}}


def build(project: Project, *, cached: dict | None, from_json) -> RankedReport:
    """The dashboard's ranking section: point figures now, intervals from
    the cache (None until the background refresh has run)."""
    report = RankedReport(task=project.task)
    table = project_table(project)
    if table is None:
        return report
    report.n_items, report.n_judgements = len(table.items), len(table.item)
    report.width = table.width
    cached = cached or {}
    report.stale = bool(cached) and cached.get("n") != report.n_judgements
    for key, value in point_figures(table).items():
        ci = from_json(cached.get("ci", {}).get(key))
        report.figures.append(Figure(key, LABELS[key], value, ci))
    if isinstance(table, ranking.RankTable):
        point = ranking.ranking_reliability(table)
        report.detail = {"n_w_items": point.n_w_items, "n_tau_pairs": point.n_tau_pairs}
        bias = ranking_position_bias(table)
    else:
        bias = pick_position_bias(table)
    names = dict(Membership.objects.filter(project=project).values_list("user_id", "pseudonym"))
    report.bias = sorted(
        (BiasRow(names.get(b.annotator) or f"annotator #{b.annotator}", b) for b in bias),
        key=lambda row: row.name,
    )
    return report
