"""Background work of training mixes: the build."""

from celery import shared_task


@shared_task(
    name="curation.tasks.build_mix_task", bind=True, acks_late=True, reject_on_worker_lost=True
)
def build_mix_task(self, mix_id: int) -> str:
    """Build a mix (idempotent: a ready mix is left as it is)."""
    from curation.releases.mixes.build import build_mix

    redelivered = bool((self.request.delivery_info or {}).get("redelivered"))
    return build_mix(mix_id=mix_id, take_over=redelivered).status
