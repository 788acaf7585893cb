from celery import shared_task

from annotate.models import Project
from curation.agreement import reports


@shared_task(name="curation.tasks.refresh_agreement", acks_late=True)
def refresh_agreement(project_id: int) -> int:
    """Recompute a project's bootstrap CIs and alpha deltas (idempotent)."""
    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        return 0
    return reports.refresh_cache(project=project).n_votes


@shared_task(
    name="curation.tasks.build_release_task", bind=True, acks_late=True, reject_on_worker_lost=True
)
def build_release_task(self, release_id: int) -> str:
    """Build a release (idempotent: a ready release is left as it is)."""
    from curation.releases.build import build_release

    # A redelivered message was taken by a worker that died before
    # acknowledging it (the broker's visibility timeout exceeds any build), so
    # a release it left `building` is taken over instead of waiting for
    # STALE_BUILD. See docs/decisions.md.
    redelivered = bool((self.request.delivery_info or {}).get("redelivered"))
    return build_release(release_id=release_id, take_over=redelivered).status


@shared_task(name="curation.tasks.requeue_unsent_work", acks_late=True)
def requeue_unsent_work() -> int:
    """Queue again the work whose message may never have reached the broker
    (it was down when the change committed) or was lost with it: releases
    still pending or left building by a dead worker, and agreement refreshes
    requested but not finished. Every task guards on state, so a message
    sent twice does the work once. Sent by config.celery.RequeueMissedWork."""
    from django.db.models import Q
    from django.utils import timezone

    from curation.releases.build import STALE_BUILD

    from .models import AgreementCache, Release, ReleaseStatus

    stale = timezone.now() - STALE_BUILD
    releases = list(
        Release.objects.filter(
            Q(status=ReleaseStatus.PENDING) | Q(status=ReleaseStatus.BUILDING, started_at__lt=stale)
        ).values_list("pk", flat=True)
    )
    for release_id in releases:
        build_release_task.delay(release_id)
    projects = list(
        AgreementCache.objects.filter(requested_at__isnull=False).values_list(
            "project_id", flat=True
        )
    )
    for project_id in projects:
        refresh_agreement.delay(project_id)
    # Judge runs never started, or whose loop stopped writing its heartbeat
    # (its worker died): take_over resumes those, sending only unanswered items.
    from curation.evaluation.judge_runs import stale_after

    from .models import JudgeRun, JudgeRunStatus

    runs = list(
        JudgeRun.objects.filter(
            Q(status=JudgeRunStatus.PENDING)
            | Q(status=JudgeRunStatus.RUNNING, heartbeat_at__lt=timezone.now() - stale_after())
        ).values_list("pk", flat=True)
    )
    for run_id in runs:
        judge_release_task.delay(run_id, take_over=True)
    # Label-quality analyses queued but never taken.
    from .models import LabelQualityRun, LabelQualityStatus

    quality = list(
        LabelQualityRun.objects.filter(status=LabelQualityStatus.PENDING).values_list(
            "project_id", flat=True
        )
    )
    for project_id in quality:
        compute_label_quality_task.delay(project_id)
    return len(releases) + len(projects) + len(runs) + len(quality)


@shared_task(
    name="curation.tasks.judge_release_task", bind=True, acks_late=True, reject_on_worker_lost=True
)
def judge_release_task(self, run_id: int, take_over: bool = False) -> str:
    """Run a judge over a release (idempotent: answers already stored are not
    sent again; a run that is not pending is left alone)."""
    from curation.evaluation.judge_runs import run_judge

    # Redelivered: the worker that took it died. Its run (like any with
    # take_over) is taken over only once its heartbeat is stale, which a live
    # loop's never is.
    redelivered = bool((self.request.delivery_info or {}).get("redelivered"))
    return run_judge(run_id=run_id, take_over=take_over or redelivered).status


@shared_task(name="curation.tasks.compute_label_quality_task", acks_late=True)
def compute_label_quality_task(project_id: int) -> str:
    """CROWDLAB + Dawid-Skene for a project (idempotent: guards on status)."""
    from .quality.service import compute_label_quality

    return compute_label_quality(project_id=project_id)
