"""/healthz: what a container orchestrator asks before sending traffic."""

import logging

from django.db import connection
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from config.celery import app

logger = logging.getLogger(__name__)

BROKER_TIMEOUT_SECONDS = 2


def database_reachable() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            return cursor.fetchone() == (1,)
    except Exception:
        logger.exception("health check: database unreachable")
        return False


def broker_reachable() -> bool:
    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=0, timeout=BROKER_TIMEOUT_SECONDS)
        return True
    except Exception:
        logger.warning("health check: broker unreachable", exc_info=True)
        return False


@never_cache
@require_GET
def healthz(request):
    """200 while the database answers, else 503. The broker is reported but
    does not fail the check: votes and pages work without it (background
    work waits), so restarting web processes would only make things worse.
    Anonymous, so it says "ok"/"unreachable" and never why."""
    database = database_reachable()
    broker = broker_reachable()
    return JsonResponse(
        {
            "status": "ok" if database else "unavailable",
            "database": "ok" if database else "unreachable",
            "broker": "ok" if broker else "unreachable",
        },
        status=200 if database else 503,
    )
