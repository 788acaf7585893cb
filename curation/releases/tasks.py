"""Background work of releases: the build."""

from celery import shared_task


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
