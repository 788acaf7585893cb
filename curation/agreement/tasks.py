"""Background work of the agreement dashboard."""

from celery import shared_task

from annotate.models import Project


@shared_task(name="curation.tasks.refresh_agreement", acks_late=True)
def refresh_agreement(project_id: int) -> int:
    """Recompute a project's bootstrap CIs and alpha deltas (idempotent)."""
    from curation.agreement import reports  # numpy: in the task's child only

    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        return 0
    return reports.refresh_cache(project=project).n_votes
