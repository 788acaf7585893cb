"""Background work of evaluation: judge runs."""

from celery import shared_task


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


@shared_task(name="curation.tasks.refresh_calibration", acks_late=True)
def refresh_calibration(project_id: int) -> int:
    """Compute and store a project's calibration report (idempotent); runs in
    an isolated child (config.celery.ISOLATED_TASKS). Returns the votes read."""
    from annotate.models import Project
    from curation.evaluation.calibration_cache import refresh

    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        return 0
    return refresh(project=project).n_votes
