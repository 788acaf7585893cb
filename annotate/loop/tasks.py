"""The lease sweep."""

from celery import shared_task

from annotate.loop import leases


@shared_task(name="annotate.tasks.expire_stale_leases_everywhere", ignore_result=True)
def expire_stale_leases_everywhere() -> int:
    """Return every lease that ran out, in every project, and let curation
    recheck those items (a claim does this too, but once everybody has
    stopped claiming nothing would): sent by config.celery.ExpireLeases
    every LEASE_SWEEP_SECONDS."""
    from django.utils import timezone

    from annotate.models import Assignment, AssignmentStatus, Project

    now = timezone.now()
    stale_in = (
        Assignment.objects.filter(status=AssignmentStatus.OPEN, lease_expires_at__lte=now)
        .values_list("item__project_id", flat=True)
        .distinct()
    )
    return sum(
        leases.expire_stale_leases(project=project, now=now)
        for project in Project.objects.filter(pk__in=stale_in).order_by("pk")
    )
