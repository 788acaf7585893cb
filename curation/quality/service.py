"""The label-quality job: CROWDLAB and Dawid-Skene over a project's current
votes with the model ensemble the curators selected, cached per project."""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from itertools import islice

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from annotate.models import ItemPurpose, Judgement, Project
from curation.evaluation.service import EvaluationError
from curation.models import (
    Evaluation,
    ItemPrediction,
    ItemQuality,
    JudgeRun,
    JudgeVote,
    LabelQualityRun,
    LabelQualityStatus,
    Verdict,
)
from curation.quality.libraries import libraries_available

log = logging.getLogger(__name__)

WRITE_BATCH = 5000
PLAIN_MODEL = "CROWDLAB (cleanlab), one column per annotator"
GRADED_MODEL = (
    "CROWDLAB (cleanlab) on the collapsed label, one column per (annotator, strength level): "
    "graded votes weigh by how strongly they were given"
)
INSTALL_HINT = 'Label quality needs the optional "quality" extra: pip install -e ".[quality]".'


class LabelQualityError(Exception):
    """A request the rules refuse; the message is shown to the curator."""


def project_entries(project: Project):
    """The project's leaderboard entries (every release, every benchmark's
    scoring: judges' lines, reward-model scores, judgements in both
    orders), newest release first."""
    return (
        Evaluation.objects.filter(release__project=project)
        .select_related("release")
        .order_by("-release__created_at", "name")
    )


def project_judges(project: Project):
    """The project's finished judge runs (issue 36), offered as labellers."""
    return JudgeRun.objects.filter(project=project, status="complete").order_by("name")


def request_label_quality(
    *, project: Project, evaluations: list[int], user=None, judge_runs: list[int] | None = None
) -> bool:
    """Queue a recomputation with these entries as the model ensemble and
    these project judge runs as extra labellers (issue 36), unless one is
    already queued or running (a conditional update: two clicks queue one
    task). Returns True if queued."""
    from config.celery import enqueue_on_commit
    from curation.agreement.reports import STALE_REQUEST
    from curation.quality.tasks import compute_label_quality_task

    if not libraries_available():
        raise LabelQualityError(INSTALL_HINT)
    chosen = sorted(set(evaluations))
    known = set(project_entries(project).filter(pk__in=chosen).values_list("pk", flat=True))
    if unknown := [pk for pk in chosen if pk not in known]:
        raise LabelQualityError(f"No such leaderboard entries in this project: {unknown}")
    judges = sorted(set(judge_runs or []))
    known_runs = set(
        JudgeRun.objects.filter(project=project, pk__in=judges).values_list("pk", flat=True)
    )
    if unknown := [pk for pk in judges if pk not in known_runs]:
        raise LabelQualityError(f"No such judge runs of this project: {unknown}")
    # Entries scored before their per-item results were kept get them now.
    from curation.benchmarks import registry

    for evaluation in Evaluation.objects.filter(pk__in=chosen).select_related("release"):
        try:
            registry.get(evaluation.scoring).ensure_item_predictions(evaluation)
        except (OSError, ValueError, EvaluationError) as exc:  # the file is gone or unreadable
            raise LabelQualityError(
                f"{evaluation.name}: its predictions file cannot be read again ({exc})."
            ) from None
    now = timezone.now()
    LabelQualityRun.objects.get_or_create(project=project)
    busy = Q(status__in=[LabelQualityStatus.PENDING, LabelQualityStatus.RUNNING])
    queued = (
        LabelQualityRun.objects.filter(project=project)
        # A request older than STALE_REQUEST is taken as lost (worker died).
        .exclude(busy & Q(requested_at__gte=now - STALE_REQUEST))
        .update(
            status=LabelQualityStatus.PENDING,
            requested_at=now,
            requested_by=user,
            evaluations=chosen,
            judge_runs=judges,
            error="",
        )
    )
    if queued:
        enqueue_on_commit(compute_label_quality_task, project.pk)
    return bool(queued)


def ensemble_probabilities(project: Project, evaluations: list[int]) -> dict[int, float]:
    """Item -> mean P(response 1 better) over the selected entries that have one."""
    sums: dict[int, float] = defaultdict(float)
    counts: dict[int, int] = defaultdict(int)
    rows = ItemPrediction.objects.filter(
        evaluation_id__in=evaluations,
        evaluation__release__project=project,
        p1__isnull=False,
    ).values_list("item_id", "p1")
    for item_id, p1 in rows.iterator(chunk_size=10_000):
        if p1 is None:  # excluded by the filter; says so to the type checker
            continue
        sums[item_id] += p1
        counts[item_id] += 1
    return {i: sums[i] / counts[i] for i in sums}


def current_votes(project: Project):
    """(item, annotator, choice, signed strength or None) of every current
    vote, streamed; graded votes carry their strength into the analysis."""
    return (
        Judgement.objects.filter(
            is_current=True,
            assignment__item__project=project,
            assignment__item__purpose=ItemPurpose.BENCHMARK,
        )
        .values_list("assignment__item_id", "assignment__annotator_id", "choice", "strength")
        .iterator(chunk_size=20_000)
    )


def judge_labels(project: Project, runs: list[int]):
    """(item, labeller, "1"/"2") of each selected project judge run: its
    labeller id is minus the run's id (never an annotator's), its label the
    side it picked in every order it answered; an item whose orders
    disagree gets no label from it (the answer is the position's, not the
    pair's)."""
    picks: dict[tuple[int, int], set[str]] = defaultdict(set)
    rows = JudgeVote.objects.filter(run_id__in=runs, run__project=project).exclude(choice="")
    for run_id, item_id, choice in rows.values_list("run_id", "item_id", "choice").iterator(
        chunk_size=20_000
    ):
        picks[(run_id, item_id)].add(choice)
    for (run_id, item_id), choices in picks.items():
        if len(choices) == 1:
            yield item_id, -run_id, next(iter(choices))


def compute_label_quality(*, project_id: int) -> str:
    """Run the analysis if one is queued (idempotent: a run that is not
    pending, or was taken by another worker, is left alone)."""
    # numpy (and cleanlab, crowd-kit): in the worker's child that runs this.
    from curation.quality.label_quality import (
        QualityUnavailable,
        analyse,
        label_quality,
        models_against,
    )

    taken = LabelQualityRun.objects.filter(
        project_id=project_id, status=LabelQualityStatus.PENDING
    ).update(status=LabelQualityStatus.RUNNING)
    if not taken:
        return "skipped"
    run = LabelQualityRun.objects.select_related("project").get(project_id=project_id)
    project = run.project
    start = time.perf_counter()
    try:
        model = ensemble_probabilities(project, run.evaluations)
        analysis = analyse(current_votes(project), model, judge_labels(project, run.judge_runs))
    except (QualityUnavailable, ValueError) as exc:
        log.exception("label quality failed for project %s", project_id)
        LabelQualityRun.objects.filter(pk=run.pk).update(
            status=LabelQualityStatus.FAILED,
            error=INSTALL_HINT if isinstance(exc, QualityUnavailable) else str(exc)[:2000],
        )
        return LabelQualityStatus.FAILED
    labels = dict(
        Verdict.objects.filter(project=project).values_list("item_id", "final_choice").iterator()
    )

    def rows():
        for r in analysis.items:
            label = labels.get(r.item, "")
            yield ItemQuality(
                project=project,
                item_id=r.item,
                n1=r.n1,
                n2=r.n2,
                n_tie=r.n_tie,
                consensus=r.consensus,
                consensus_quality=r.consensus_quality,
                annotator_agreement=r.annotator_agreement,
                model_p1=r.model_p1,
                ds_p1=r.ds_p1,
                label=label,
                label_quality=label_quality(r, label) if label in ("1", "2") else None,
                mean_strength=r.mean_strength,
                unanimous=r.unanimous,
                models_against=models_against(r.model_p1, label),
            )

    judge_names = dict(JudgeRun.objects.filter(pk__in=run.judge_runs).values_list("pk", "name"))
    payload = {
        "annotators": {
            str(a.annotator): {
                "quality": a.quality,
                "agreement_with_consensus": a.agreement_with_consensus,
                "n_labels": a.n_labels,
            }
            for a in analysis.annotators
            if a.annotator > 0
        },
        # The project judge runs that labelled too, by name (issue 36).
        "judges": {
            judge_names.get(-a.annotator, str(-a.annotator)): {
                "quality": a.quality,
                "agreement_with_consensus": a.agreement_with_consensus,
                "n_labels": a.n_labels,
            }
            for a in analysis.annotators
            if a.annotator < 0
        },
        "model_weight": analysis.model_weight,
        "graded": analysis.graded,
        "model": GRADED_MODEL if analysis.graded else PLAIN_MODEL,
        "n_items": len(analysis.items),
        "n_votes": analysis.n_votes,
        "n_ties_left_out": analysis.n_ties_left_out,
        "n_with_model": sum(1 for r in analysis.items if r.model_p1 is not None),
        "entries": list(
            Evaluation.objects.filter(pk__in=run.evaluations).values_list("name", flat=True)
        ),
    }
    with transaction.atomic():
        ItemQuality.objects.filter(project=project).delete()
        # In batches, so 100,000 unsaved instances never sit in memory at once.
        batch = list(islice(pending := rows(), WRITE_BATCH))
        while batch:
            ItemQuality.objects.bulk_create(batch)
            batch = list(islice(pending, WRITE_BATCH))
        LabelQualityRun.objects.filter(pk=run.pk).update(
            status=LabelQualityStatus.READY,
            payload=payload,
            computed_at=timezone.now(),
            seconds=time.perf_counter() - start,
            error="",
        )
    return LabelQualityStatus.READY


def annotator_quality(project: Project) -> tuple[dict[int, float], object]:
    """CROWDLAB's annotator quality per annotator from the last analysis, and
    when it was computed (one query; empty before the first analysis)."""
    run = (
        LabelQualityRun.objects.filter(project=project, status=LabelQualityStatus.READY)
        .only("payload", "computed_at")
        .first()
    )
    if run is None:
        return {}, None
    annotators = run.payload.get("annotators", {})
    return {int(k): v["quality"] for k, v in annotators.items()}, run.computed_at
