"""Celery tasks of the curation app, found by the worker's autodiscovery
(curation.tasks). Each sub-domain keeps its own tasks beside its service;
they are imported here so the worker registers them, under the names
queued messages carry (pinned with name=, whatever module defines them).
The sweep that queues missed work again spans the sub-domains, so it lives
here."""

from celery import shared_task

from curation.agreement.tasks import refresh_agreement
from curation.evaluation.tasks import judge_release_task, refresh_calibration
from curation.quality.tasks import compute_label_quality_task, refit_adaptive_task
from curation.releases.mixes.tasks import build_mix_task
from curation.releases.tasks import build_release_task

__all__ = [
    "build_mix_task",
    "build_release_task",
    "compute_label_quality_task",
    "judge_release_task",
    "recover_stalled_builds",
    "refit_adaptive_task",
    "refresh_agreement",
    "refresh_calibration",
    "requeue_unsent_work",
]


@shared_task(name="curation.tasks.requeue_unsent_work", acks_late=True)
def requeue_unsent_work() -> int:
    """Queue again the work whose message may never have reached the broker
    (it was down when the change committed) or was lost with it: releases
    still pending or left building by a dead worker, and agreement refreshes
    requested but not finished. Every task guards on state, so a message
    sent twice does the work once. Sent by config.celery.RequeueMissedWork."""
    from django.db.models import Q
    from django.utils import timezone

    from curation.models import AgreementCache, Release, ReleaseStatus
    from curation.releases.build import STALE_BUILD
    from curation.releases.recovery import recover_stalled_builds as take_over_releases

    stale = timezone.now() - STALE_BUILD
    releases = list(
        Release.objects.filter(status=ReleaseStatus.PENDING).values_list("pk", flat=True)
    )
    for release_id in releases:
        build_release_task.delay(release_id)
    # Builds whose heartbeat stopped (also swept every RELEASE_SWEEP_SECONDS).
    releases += take_over_releases()[0]
    # Training mixes likewise.
    from curation.models import Mix

    mixes = list(
        Mix.objects.filter(
            Q(status=ReleaseStatus.PENDING) | Q(status=ReleaseStatus.BUILDING, started_at__lt=stale)
        ).values_list("pk", flat=True)
    )
    for mix_id in mixes:
        build_mix_task.delay(mix_id)
    projects = list(
        AgreementCache.objects.filter(requested_at__isnull=False).values_list(
            "project_id", flat=True
        )
    )
    for project_id in projects:
        refresh_agreement.delay(project_id)
    from curation.models import CalibrationCache

    calibrations = list(
        CalibrationCache.objects.filter(requested_at__isnull=False).values_list(
            "project_id", flat=True
        )
    )
    for project_id in calibrations:
        refresh_calibration.delay(project_id)
    # Judge runs never started, or whose loop stopped writing its heartbeat
    # (its worker died): take_over resumes those, sending only unanswered items.
    from curation.evaluation.judge_runs import stale_after
    from curation.models import JudgeRun, JudgeRunStatus

    runs = list(
        JudgeRun.objects.filter(
            Q(status=JudgeRunStatus.PENDING)
            | Q(status=JudgeRunStatus.RUNNING, heartbeat_at__lt=timezone.now() - stale_after())
        ).values_list("pk", flat=True)
    )
    for run_id in runs:
        judge_release_task.delay(run_id, take_over=True)
    # Label-quality analyses queued but never taken.
    from curation.models import LabelQualityRun, LabelQualityStatus

    quality = list(
        LabelQualityRun.objects.filter(status=LabelQualityStatus.PENDING).values_list(
            "project_id", flat=True
        )
    )
    for project_id in quality:
        compute_label_quality_task.delay(project_id)
    # Adaptive refits queued but never run.
    from annotate.models import AdaptiveFit

    refits = list(AdaptiveFit.objects.filter(queued=True).values_list("project_id", flat=True))
    for project_id in refits:
        refit_adaptive_task.delay(project_id)
    return (
        len(releases)
        + len(mixes)
        + len(projects)
        + len(calibrations)
        + len(runs)
        + len(quality)
        + len(refits)
    )


@shared_task(name="curation.tasks.recover_stalled_builds", acks_late=True)
def recover_stalled_builds() -> dict:
    """Take over release builds whose worker died (their heartbeat is older
    than RELEASE_STALE_SECONDS): queue them again, or fail those that died
    RELEASE_MAX_ATTEMPTS times. Sent every RELEASE_SWEEP_SECONDS by
    config.celery.RecoverStalledBuilds, on either broker."""
    from curation.releases.recovery import recover_stalled_builds as recover

    queued, failed = recover()
    return {"queued": queued, "failed": failed}
