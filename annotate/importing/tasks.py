"""Background work of an import: thumbnails and stored HTML."""

from celery import shared_task

from annotate.importing import service


@shared_task(name="annotate.tasks.make_thumbnails", acks_late=True)
def make_thumbnails(image_ids: list[int]) -> int:
    return service.make_thumbnails(image_ids=image_ids)


@shared_task(name="annotate.tasks.render_part_html", acks_late=True)
def render_part_html(item_ids: list[int]) -> int:
    from annotate.models.parts import render_parts_html

    return render_parts_html(item_ids=item_ids)


@shared_task(name="annotate.tasks.requeue_missing_thumbnails", acks_late=True)
def requeue_missing_thumbnails() -> int:
    """Queue thumbnails for every image still without one: their import's
    message may never have reached the broker (it was down) or may have been
    lost with it; and the derivatives of every video and audio file still
    without them. Sent by config.celery.RequeueMissedWork."""
    from annotate.models import ImageAsset

    ids = list(ImageAsset.objects.filter(thumbnail="").order_by("pk").values_list("pk", flat=True))
    for start in range(0, len(ids), 500):
        make_thumbnails.delay(ids[start : start + 500])
    # Videos and audio files still without their posters, strips or waveforms (issue 35).
    from annotate.models import MediaAsset

    media = list(
        MediaAsset.objects.filter(derived_at__isnull=True)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    for start in range(0, len(media), 100):
        derive_media.delay(media[start : start + 100])
    return len(ids) + len(media)


@shared_task(name="annotate.tasks.derive_media", acks_late=True)
def derive_media(media_ids: list[int]) -> int:
    """Posters, strips, waveforms and loudness of new videos and audio files
    (issue 35). A file that fails is logged and left without them: its
    player works, only the still is missing."""
    import logging

    from annotate.importing.media import derive_all
    from annotate.models import MediaAsset

    log = logging.getLogger(__name__)

    def failed(asset, exc) -> None:
        log.warning("media %s: no derivatives (%s)", asset.pk, exc)

    assets = MediaAsset.objects.filter(pk__in=media_ids, derived_at__isnull=True).order_by("pk")
    return derive_all(list(assets), failed)
