"""Agreement reports: the project's votes from the database, fed to the pure
statistics in curation.agreement.stats, shaped into the dashboard's tables.

Point estimates are computed on every request from the items' vote and
label tallies (one query, grouped into distinct count patterns); the annotator
table from the current votes (one query); bootstrap intervals and each
annotator's change in alpha come from the AgreementCache that a Celery task
fills.
"""

from __future__ import annotations

import io
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from operator import attrgetter

import numpy as np
from django.db.models import Count, F, IntegerField, Q, Sum
from django.db.models.functions import Least
from django.utils import timezone

from annotate.models import (
    Domain,
    Item,
    ItemPurpose,
    Judgement,
    Membership,
    Project,
    item_votes,
)
from curation.agreement import diagnostics, ranked_report
from curation.agreement import stats as agreement
from curation.agreement.chart import alpha_chart
from curation.agreement.graded_report import graded_intervals, graded_rows
from curation.agreement.values import from_json, to_json
from curation.models import AgreementCache, Verdict, VerdictStatus
from curation.spreadsheet_cells import SafeWriter

BOOTSTRAP_RESAMPLES = 1000
ALL = "all"
# A refresh requested longer ago than this is taken as lost (its worker died).
STALE_REQUEST = timedelta(minutes=10)


def project_votes(project: Project) -> tuple[list[agreement.Vote], dict[int, int]]:
    """Every current judgement of the project in canonical terms, and the
    domain of each voted item. One query."""
    rows = (
        Judgement.objects.with_pair_answers()
        # Benchmark items only: qualification and check items measure the
        # annotators, not the benchmark (issue 36).
        .filter(
            assignment__item__project=project,
            assignment__item__purpose=ItemPurpose.BENCHMARK,
            is_current=True,
        )
        .values_list(
            "assignment__item_id",
            "assignment__item__domain_id",
            "assignment__annotator_id",
            "choice",
            "correct_1",
            "correct_2",
            "shown_swapped",
            "seconds_spent",
            "assignment__item__gold_choice",
        )
    )
    vote = agreement.Vote
    votes = []
    domain_of: dict[int, int] = {}
    for item_id, domain_id, annotator_id, choice, c1, c2, swapped, seconds, gold in rows:
        domain_of[item_id] = domain_id
        # Positional, in Vote's field order (item, annotator, choice, correct_1,
        # correct_2, shown_swapped, seconds, gold): half the cost of keywords.
        votes.append(vote(item_id, annotator_id, choice, c1, c2, swapped, seconds, gold))
    return votes, domain_of


# Item's tally columns (kept in the vote's transaction, see annotate.loop.service):
# choice counts in CHOICES order, then each response's label counts in LABELS order.
CHOICE_TALLIES = ["votes_1", "votes_2", "votes_tie"]
LABEL_TALLIES = [f"correct_{r}_{label}" for r in agreement.RESPONSES for label in agreement.LABELS]
_EMPTY = np.zeros((0, 3), dtype=np.int64)


@dataclass(frozen=True)
class TallyPatterns:
    """One domain's items grouped by their tallies: each distinct choice
    tally (votes_1, votes_2, votes_tie) and each distinct label tally (the six
    correct_<response>_<label> columns), with how many items have it. Items
    without any label are left out of `labels`.

    A few thousand patterns at most stand for any number of items, and every
    statistic of a count matrix ignores the order of its rows, so the point
    estimates are computed from the patterns directly; the matrices are
    expanded (in sorted pattern order, so a bootstrap of them is
    reproducible for a seed) only where a caller needs one row per unit.
    """

    choice: dict[tuple[int, ...], int] = field(default_factory=dict)
    labels: dict[tuple[int, ...], int] = field(default_factory=dict)

    @classmethod
    def merged(cls, many: Sequence[TallyPatterns]) -> TallyPatterns:
        choice: Counter[tuple[int, ...]] = Counter()
        labels: Counter[tuple[int, ...]] = Counter()
        for p in many:
            choice.update(p.choice)
            labels.update(p.labels)
        return cls(dict(choice), dict(labels))

    def choice_matrix(self) -> np.ndarray:
        """The item x [1, 2, tie] count matrix."""
        return _expand(self.choice)

    def label_matrix(self) -> np.ndarray:
        """The (item x response) x [yes, no, unsure] count matrix: each item's
        response 1 row, then its response 2 row."""
        return _expand(self.labels)

    def summary(self, *, offers_tie: bool = True) -> agreement.Summary:
        """The point estimates of choice and correctness (as summary_from_counts
        on the two matrices gives them); `offers_tie`: Project.offers_tie."""
        choice, choice_units = _arrays(self.choice, len(CHOICE_TALLIES))
        labels, label_units = _arrays(self.labels, len(LABEL_TALLIES))
        producible = agreement.choice_categories(offers_tie=offers_tie)
        # An item's label pattern holds two units: its response 1 and response 2 rows.
        return agreement.Summary(
            choice=agreement.reliability_of_patterns(
                choice, choice_units, agreement.CHOICES, producible=producible
            ),
            correctness=agreement.reliability_of_patterns(
                np.concatenate([labels[:, :3], labels[:, 3:]]),
                np.concatenate([label_units, label_units]),
                agreement.LABELS,
            ),
        )


def _arrays(patterns: dict[tuple[int, ...], int], width: int) -> tuple[np.ndarray, np.ndarray]:
    """The patterns as rows of `width` counts, and how many units have each."""
    rows = np.array(list(patterns), dtype=np.int64).reshape(len(patterns), width)
    return rows, np.array(list(patterns.values()), dtype=np.int64)


def _expand(patterns: dict[tuple[int, ...], int]) -> np.ndarray:
    """One row of 3 counts per unit, in sorted pattern order; a pattern may
    hold several units (an item's response 1 and 2)."""
    if not patterns:
        return _EMPTY
    ordered = sorted(patterns.items())
    units = np.array([unit for unit, _ in ordered], dtype=np.int64).reshape(len(ordered), -1)
    repeats = np.array([n for _, n in ordered], dtype=np.int64)
    return np.repeat(units, repeats, axis=0).reshape(-1, 3)


def tally_patterns(project: Project) -> dict[int, TallyPatterns]:
    """Per domain that has items: its TallyPatterns. One query whatever the
    size: the items grouped by domain and their nine tally columns (about
    7,000 rows at 100,000 items x 5 votes); no judgement is read."""
    choice: dict[int, Counter] = defaultdict(Counter)
    labels: dict[int, Counter] = defaultdict(Counter)
    # order_by(): Item's default ordering (project name, id) would join the
    # project table and sort every item before grouping. COUNT(*), not of the
    # primary key: then annotate_item_tally_idx alone answers (index-only scan).
    rows = (
        Item.objects.benchmark()
        .filter(project=project)
        .order_by()
        .values_list("domain_id", *CHOICE_TALLIES, *LABEL_TALLIES)
        .annotate(n=Count("*"))
    )
    for domain_id, v1, v2, vt, *label_counts, n in rows:
        choice[domain_id][(v1, v2, vt)] += n
        if any(label_counts):
            labels[domain_id][tuple(label_counts)] += n
    return {
        domain_id: TallyPatterns(dict(counts), dict(labels.get(domain_id, {})))
        for domain_id, counts in choice.items()
    }


def domain_summaries(project: Project) -> dict[int | str, agreement.Summary]:
    """The point estimates of every domain with items, and of all domains
    together (key ALL): what the dashboard's domain table shows. One query."""
    patterns, tie = tally_patterns(project), project.offers_tie
    summaries: dict[int | str, agreement.Summary] = {
        domain_id: p.summary(offers_tie=tie) for domain_id, p in patterns.items()
    }
    summaries[ALL] = TallyPatterns.merged(list(patterns.values())).summary(offers_tie=tie)
    return summaries


def domain_count_matrices(project: Project) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Per domain with items: the item x [1, 2, tie] count matrix and the
    (item x response) x [yes, no, unsure] matrix of correctness labels, from
    the items' tallies (one query)."""
    return {
        domain_id: (p.choice_matrix(), p.label_matrix())
        for domain_id, p in tally_patterns(project).items()
    }


def summary_from_counts(choice, labels, *, offers_tie: bool = True) -> agreement.Summary:
    producible = agreement.choice_categories(offers_tie=offers_tie)
    return agreement.Summary(
        choice=agreement.reliability(choice, agreement.CHOICES, producible=producible),
        correctness=agreement.reliability(labels, agreement.LABELS),
    )


def by_domain(votes: Sequence[agreement.Vote], domain_of: dict[int, int]) -> dict[int, list]:
    grouped: dict[int, list[agreement.Vote]] = defaultdict(list)
    for v in votes:
        grouped[domain_of[v.item]].append(v)
    return grouped


# --- expensive figures (Celery) ---------------------------------------------------


def bootstrap_seed(project: Project) -> int:
    """The one seed of the agreement bootstrap: the dashboard's intervals and
    the ones a release writes into its manifest are drawn with it (not with
    the release's own seed, which only shuffles Output1/Output2), so both
    show the same numbers for the same votes."""
    return project.seed


def alpha_intervals(
    project: Project,
    *,
    seed: int | None = None,
    kinds: tuple[str, ...] = ("choice", "correctness"),
    overall: bool = True,
) -> dict[str, dict[str, agreement.Interval | agreement.Undefined]]:
    """Item-bootstrap 95% intervals of alpha, choice and correctness, per
    domain slug with items and for ALL, for the dashboard and the release
    manifest alike. From the items' tallies in sorted pattern order, so the
    same tallies and seed give the same intervals whatever order the
    database returns rows in; leaving out `kinds` or the ALL row changes no
    other interval."""
    seed = bootstrap_seed(project) if seed is None else seed
    patterns = tally_patterns(project)
    slugs = dict(Domain.objects.filter(project=project).values_list("pk", "slug"))

    def intervals(p: TallyPatterns) -> dict:
        matrices = {"choice": p.choice_matrix, "correctness": p.label_matrix}
        return {
            name: agreement.bootstrap_alpha_ci(
                matrices[name](), n_resamples=BOOTSTRAP_RESAMPLES, seed=seed
            )
            for name in kinds
        }

    out = {ALL: intervals(TallyPatterns.merged(list(patterns.values())))} if overall else {}
    for domain_id, p in sorted(patterns.items()):
        out[slugs[domain_id]] = intervals(p)
    return out


def compute_expensive(project: Project, *, seed: int | None = None) -> dict:
    """Bootstrap 95% CIs of alpha (overall and per domain: choice and
    correctness, alpha_intervals; graded projects' ordinal and interval
    alpha, graded_intervals) and each annotator's change in alpha. JSON."""
    seed = bootstrap_seed(project) if seed is None else seed
    if project.task != "pairwise":
        # Best-of-N and ranking projects: their statistics' intervals only
        # (ranked_report); a pick or a ranking is no pair vote.
        ranked = ranked_report.intervals_json(
            project, n_resamples=BOOTSTRAP_RESAMPLES, seed=seed, to_json=to_json
        )
        return {
            "seed": seed,
            "n_resamples": BOOTSTRAP_RESAMPLES,
            "n_votes": ranked.get("n", 0),
            "ranked_ci": ranked,
        }
    votes, _ = project_votes(project)
    # Annotators in a fixed order whatever order the database returns the
    # rows in (PostgreSQL's parallel plans vary, run to run).
    votes.sort(key=attrgetter("item", "annotator"))
    payload: dict = {
        "seed": seed,
        "n_resamples": BOOTSTRAP_RESAMPLES,
        "n_votes": len(votes),
        "ci": {
            key: {name: to_json(ci) for name, ci in cis.items()}
            for key, cis in alpha_intervals(project, seed=seed).items()
        },
        "alpha_delta": {},
        "graded_ci": {  # ordinal and interval alpha of graded votes (graded_report)
            key: {level: to_json(ci) for level, ci in cis.items()}
            for key, cis in graded_intervals(
                project, seed=seed, n_resamples=BOOTSTRAP_RESAMPLES, all_key=ALL
            ).items()
        },
    }
    payload["annotators"] = {}
    for annotator, stats in diagnostics.annotator_stats(votes).items():
        # Shown next to each vote on the adjudication page.
        payload["annotators"][str(annotator)] = {
            "n_votes": stats.n_votes,
            "agreement": to_json(stats.choice.agreement),
            "kappa": to_json(stats.choice.kappa),
        }
        payload["alpha_delta"][str(annotator)] = {
            "choice": to_json(stats.choice.alpha_delta),
            "correctness": to_json(stats.correctness.alpha_delta),
        }
    return payload


def refresh_cache(*, project: Project) -> AgreementCache:
    payload = compute_expensive(project)
    cache, _ = AgreementCache.objects.update_or_create(
        project=project,
        defaults={
            "payload": payload,
            "computed_at": timezone.now(),
            "requested_at": None,
            "n_votes": payload["n_votes"],
        },
    )
    return cache


def request_agreement_refresh(*, project: Project) -> bool:
    """Queue a recomputation of the project's expensive agreement figures
    unless one is already queued (the one-shot transition is a conditional
    update, so two clicks queue one task). Returns True if queued."""
    from config.celery import enqueue_on_commit
    from curation.agreement.tasks import refresh_agreement

    now = timezone.now()
    AgreementCache.objects.get_or_create(project=project)
    queued = (
        AgreementCache.objects.filter(project=project)
        .filter(Q(requested_at__isnull=True) | Q(requested_at__lt=now - STALE_REQUEST))
        .update(requested_at=now)
    )
    if queued:
        enqueue_on_commit(refresh_agreement, project.pk)
    return bool(queued)


# --- the dashboard's tables ----------------------------------------------------------


@dataclass
class DomainRow:
    key: str
    title: str
    n_items: int
    n_votes: int
    percent_complete: float
    summary: agreement.Summary
    contested: int
    alpha_ci: object = None  # Interval | Undefined | None (not computed yet)
    correctness_ci: object = None
    kind: str = ""


@dataclass
class AnnotatorRow:
    annotator_id: int
    name: str
    stats: diagnostics.AnnotatorStats
    alpha_delta: object = None
    correctness_alpha_delta: object = None
    # CROWDLAB's annotator quality from the last label-quality analysis
    # (curation/quality/), set by the agreement page; None before one.
    crowdlab_quality: float | None = None

    @property
    def left_bias(self) -> bool:
        """The left-pick test is significant after Benjamini-Hochberg over the
        project's annotators (diagnostics.AnnotatorStats.side_bias)."""
        return self.stats.side_bias


@dataclass
class Report:
    project: Project
    domains: list[DomainRow]
    annotators: list[AnnotatorRow]
    cache: AgreementCache | None
    stale: bool = False
    chart: dict = field(default_factory=dict)
    # Graded projects: ordinal and interval alpha per domain (graded_report).
    graded: list = field(default_factory=list)


def build_report(project: Project) -> Report:
    votes, domain_of = project_votes(project)
    grouped = by_domain(votes, domain_of)
    # Point estimates from the items' tallies (one query), never from the votes.
    summaries = domain_summaries(project)
    no_items = TallyPatterns().summary(offers_tie=project.offers_tie)
    domains = list(Domain.objects.filter(project=project).order_by("position", "slug"))
    progress = {
        row["domain_id"]: row
        for row in Item.objects.benchmark()
        .filter(project=project)
        .values("domain_id")
        .annotate(
            n=Count("pk"),
            needed=Sum("votes_needed"),
            collected=Sum(
                Least(item_votes(), F("votes_needed")),
                output_field=IntegerField(),
            ),
        )
    }
    contested = dict(
        Verdict.objects.filter(project=project, status=VerdictStatus.CONTESTED)
        .values("item__domain_id")
        .annotate(n=Count("pk"))
        .values_list("item__domain_id", "n")
    )
    cache = AgreementCache.objects.filter(project=project).first()
    payload = cache.payload if cache and cache.computed_at else {}
    ci = payload.get("ci", {})

    rows = []
    for d in domains:
        p = progress.get(d.pk, {"n": 0, "needed": 0, "collected": 0})
        rows.append(
            DomainRow(
                key=d.slug,
                title=d.title,
                kind=d.kind,
                n_items=p["n"],
                n_votes=len(grouped.get(d.pk, [])),
                percent_complete=_percent(p["collected"], p["needed"]),
                summary=summaries.get(d.pk, no_items),
                contested=contested.get(d.pk, 0),
                alpha_ci=from_json(ci.get(d.slug, {}).get("choice")),
                correctness_ci=from_json(ci.get(d.slug, {}).get("correctness")),
            )
        )
    total_needed = sum(p["needed"] or 0 for p in progress.values())
    total_collected = sum(p["collected"] or 0 for p in progress.values())
    rows.append(
        DomainRow(
            key=ALL,
            title="All domains",
            n_items=sum(p["n"] for p in progress.values()),
            n_votes=len(votes),
            percent_complete=_percent(total_collected, total_needed),
            summary=summaries[ALL],
            contested=sum(contested.values()),
            alpha_ci=from_json(ci.get(ALL, {}).get("choice")),
            correctness_ci=from_json(ci.get(ALL, {}).get("correctness")),
        )
    )

    names = dict(Membership.objects.filter(project=project).values_list("user_id", "pseudonym"))
    deltas = payload.get("alpha_delta", {})
    annotators = [
        AnnotatorRow(
            annotator_id=annotator,
            name=names.get(annotator) or f"annotator #{annotator}",
            stats=stats,
            alpha_delta=from_json(deltas.get(str(annotator), {}).get("choice")),
            correctness_alpha_delta=from_json(deltas.get(str(annotator), {}).get("correctness")),
        )
        for annotator, stats in diagnostics.annotator_stats(votes).items()
    ]
    annotators.sort(key=lambda r: r.name)
    report = Report(
        project=project,
        domains=rows,
        annotators=annotators,
        cache=cache,
        stale=bool(cache and cache.computed_at and cache.n_votes != len(votes)),
    )
    report.chart = alpha_chart(rows)
    report.graded = graded_rows(
        project, rows, all_key=ALL, intervals=payload.get("graded_ci"), from_json=from_json
    )
    return report


def _percent(part, whole) -> float:
    return round(100 * (part or 0) / whole, 1) if whole else 0.0


# --- CSV -----------------------------------------------------------------------------------


def fmt(value, digits: int = 3) -> str:
    if value is None:
        return ""
    if isinstance(value, agreement.Undefined):
        return "undefined"
    if isinstance(value, agreement.Interval):
        return f"[{value.low:.{digits}f}, {value.high:.{digits}f}]"
    return f"{value:.{digits}f}"


DOMAIN_COLUMNS = [
    "domain", "items", "votes", "percent_complete", "alpha", "alpha_ci_low", "alpha_ci_high",
    "ac1", "pairwise_agreement", "tie_rate", "pairable_items", "contested",
    "correctness_alpha", "correctness_ac1", "correctness_pairwise_agreement",
]  # fmt: skip

ANNOTATOR_COLUMNS = [
    "annotator", "votes", "agreement_with_majority", "kappa_vs_majority", "alpha_delta",
    "gold_accuracy", "gold_items", "left_pick_rate", "left_pick_ci_low", "left_pick_ci_high",
    "left_pick_p", "left_pick_p_adjusted", "left_bias", "tie_rate", "median_seconds",
    "crowdlab_quality",
]  # fmt: skip


def _ci_parts(ci) -> tuple[str, str]:
    if isinstance(ci, agreement.Interval):
        return f"{ci.low:.6f}", f"{ci.high:.6f}"
    return ("undefined", "undefined") if isinstance(ci, agreement.Undefined) else ("", "")


def _num(value) -> str:
    return fmt(value, 6)


def _csv(columns: list[str], rows) -> str:
    out = io.StringIO()
    writer = SafeWriter(out)
    writer.writerow(columns)
    for row in rows:
        writer.writerow(row)
    return out.getvalue()


def domains_csv(report: Report) -> str:
    return _csv(DOMAIN_COLUMNS, (_domain_cells(r, r.summary) for r in report.domains))


def _domain_cells(r: DomainRow, s: agreement.Summary) -> list:
    return [
        r.key, r.n_items, r.n_votes, r.percent_complete, _num(s.choice.alpha),
        *_ci_parts(r.alpha_ci), _num(s.choice.ac1), _num(s.choice.pairwise_agreement),
        _num(s.tie_rate), s.choice.n_pairable, r.contested,
        _num(s.correctness.alpha), _num(s.correctness.ac1),
        _num(s.correctness.pairwise_agreement),
    ]  # fmt: skip


def annotators_csv(report: Report) -> str:
    return _csv(ANNOTATOR_COLUMNS, (_annotator_cells(r, r.stats) for r in report.annotators))


def _annotator_cells(r: AnnotatorRow, s: diagnostics.AnnotatorStats) -> list:
    return [
        r.name, s.n_votes, _num(s.choice.agreement), _num(s.choice.kappa),
        _num(r.alpha_delta), _num(s.gold_accuracy), s.n_gold, _num(s.left_pick_rate),
        *_ci_parts(s.left_pick_ci), _num(s.left_pick_p), _num(s.left_pick_p_adjusted),
        int(r.left_bias), _num(s.tie_rate),
        _num(s.median_seconds), _num(r.crowdlab_quality),
    ]  # fmt: skip
