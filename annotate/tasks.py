from celery import shared_task

from . import services


@shared_task(name="annotate.tasks.make_thumbnails", acks_late=True)
def make_thumbnails(image_ids: list[int]) -> int:
    return services.make_thumbnails(image_ids=image_ids)


@shared_task(name="annotate.tasks.render_item_html", acks_late=True)
def render_item_html(item_ids: list[int]) -> int:
    return services.render_item_html(item_ids=item_ids)


@shared_task(name="annotate.tasks.requeue_missing_thumbnails", acks_late=True)
def requeue_missing_thumbnails() -> int:
    """Queue thumbnails for every image still without one: their import's
    message may never have reached the broker (it was down) or may have been
    lost with it. Sent by config.celery.RequeueMissedWork."""
    from .models import ImageAsset

    ids = list(ImageAsset.objects.filter(thumbnail="").order_by("pk").values_list("pk", flat=True))
    for start in range(0, len(ids), 500):
        make_thumbnails.delay(ids[start : start + 500])
    return len(ids)


@shared_task(name="annotate.tasks.expire_stale_leases_everywhere", ignore_result=True)
def expire_stale_leases_everywhere() -> int:
    """Return every lease that ran out, in every project, and let curation
    recheck those items (a claim does this too, but once everybody has
    stopped claiming nothing would): sent by config.celery.ExpireLeases
    every LEASE_SWEEP_SECONDS."""
    from django.utils import timezone

    from .models import Assignment, AssignmentStatus, Project

    now = timezone.now()
    stale_in = (
        Assignment.objects.filter(status=AssignmentStatus.OPEN, lease_expires_at__lte=now)
        .values_list("item__project_id", flat=True)
        .distinct()
    )
    return sum(
        services.expire_stale_leases(project=project, now=now)
        for project in Project.objects.filter(pk__in=stale_in).order_by("pk")
    )
