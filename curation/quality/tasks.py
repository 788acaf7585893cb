"""Background work of the label-quality audit."""

from celery import shared_task


@shared_task(name="curation.tasks.compute_label_quality_task", acks_late=True)
def compute_label_quality_task(project_id: int) -> str:
    """CROWDLAB + Dawid-Skene for a project (idempotent: guards on status)."""
    from curation.quality.service import compute_label_quality

    return compute_label_quality(project_id=project_id)


@shared_task(name="curation.tasks.refit_adaptive_task", acks_late=True)
def refit_adaptive_task(project_id: int) -> str:
    """Adaptive votes' posterior and rule for a project (curation.quality.adaptive)."""
    from curation.quality.adaptive import refit

    return refit(project_id=project_id)
