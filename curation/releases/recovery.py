"""Builds whose worker died (issue 29): the periodic sweep that takes them
over, and the retry a curator asks for on the release page or the API.

A building release's worker writes its heartbeat every
RELEASE_HEARTBEAT_SECONDS (curation.releases.heartbeat). One silent for
RELEASE_STALE_SECONDS is stalled (Release.objects.stalled): every
RELEASE_SWEEP_SECONDS each worker queues `recover_stalled_builds`, which
queues its build again (the task takes it over: build._take) or, after
RELEASE_MAX_ATTEMPTS builds that all died, fails it with a message saying so,
so a release that kills its worker every time does not loop forever.
"""

from __future__ import annotations

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from curation.models import AuditEvent, Release, ReleaseStatus
from curation.models.releases import stale_after

GAVE_UP = (
    "The build was started {attempts} times and its worker stopped each time "
    "(no heartbeat for {seconds} s); nothing was published. Retry once the "
    "cause is fixed (see the worker's log)."
)


def recover_stalled_builds(*, now=None) -> tuple[list[int], list[int]]:
    """Queue stalled builds again, or fail those that used up their attempts.
    Returns (queued, failed) release ids."""
    from config.celery import enqueue_on_commit
    from curation.releases.tasks import build_release_task

    now = now or timezone.now()
    queued, failed = [], []
    stalled = Release.objects.stalled(now).values_list("pk", "attempts")
    for release_id, attempts in stalled:
        if attempts >= settings.RELEASE_MAX_ATTEMPTS:
            message = GAVE_UP.format(attempts=attempts, seconds=settings.RELEASE_STALE_SECONDS)
            # Only if still stalled: a build that wrote its heartbeat since lives.
            if (
                Release.objects.stalled(now)
                .filter(pk=release_id)
                .update(status=ReleaseStatus.FAILED, error=message, finished_at=now)
            ):
                failed.append(release_id)
        else:
            enqueue_on_commit(build_release_task, release_id)
            queued.append(release_id)
    return queued, failed


class NotRetryable(Exception):
    pass


def retry_release(*, release: Release, actor, enqueue: bool = True) -> Release:
    """Build a failed or stalled release again from scratch (curators and
    admins; the caller checks the role), audited. Raises NotRetryable for a
    release that is pending, ready or building with a live heartbeat."""
    from config.celery import enqueue_on_commit
    from curation.releases.tasks import build_release_task

    with transaction.atomic():
        # The row lock orders two retries (and a sweep failing it) one after
        # the other: the second sees pending and is refused.
        current = Release.objects.select_for_update().get(pk=release.pk)
        if not current.can_retry:
            raise NotRetryable(
                f"This release is {current.get_status_display().lower()}: only a failed "
                f"build, or one silent for {int(stale_after().total_seconds())} s, can be retried."
            )
        before = {
            "status": current.status,
            "stalled": current.is_stalled,
            "error": current.error,
            "attempts": current.attempts,
            "heartbeat_at": current.heartbeat_at.isoformat() if current.heartbeat_at else None,
        }
        Release.objects.filter(pk=release.pk).update(
            status=ReleaseStatus.PENDING,
            error="",
            attempts=0,
            progress_done=0,
            heartbeat_at=None,
            finished_at=None,
        )
        AuditEvent.objects.create(
            project_id=current.project_id,
            actor=actor,
            action="release_retried",
            before=before,
            after={
                "status": ReleaseStatus.PENDING,
                "release": current.pk,
                "version": current.version,
            },
        )
        if enqueue:
            enqueue_on_commit(build_release_task, release.pk)
    return Release.objects.get(pk=release.pk)
