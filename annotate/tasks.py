"""Celery finds the app's tasks here (autodiscovery); each lives with its sub-domain."""

from annotate.importing.tasks import (
    make_thumbnails,
    render_part_html,
    requeue_missing_thumbnails,
)
from annotate.loop.tasks import expire_stale_leases_everywhere

__all__ = [
    "expire_stale_leases_everywhere",
    "make_thumbnails",
    "render_part_html",
    "requeue_missing_thumbnails",
]
