"""The embedded SQLite default under a team's concurrent votes (issue 20).

SQLite has one writer at a time. With IMMEDIATE transactions a second
writer waits in SQLite's busy handler, which polls with sleeps of up to
100 ms and wakes in no order: under concurrent votes the median stayed low
but the 99th percentile reached a second. Two changes, both only in a web
process on SQLite:

- SerialWritesMiddleware: the threads of the process queue on a lock for
  the whole unsafe request, and each is woken the moment the previous one
  finishes: no polling, no sleep in the tail. Reads (GET, HEAD) run
  concurrently, as WAL allows.
- start_background_checkpoints (called by config.wsgi): the WAL is
  checkpointed by a background thread (PASSIVE: it waits for no reader or
  writer) instead of by whichever vote's COMMIT crosses SQLite's 1,000-page
  threshold, so no vote pays for copying the log back into the database and
  its fsync. Other processes (the Celery worker, a management command) keep
  SQLite's automatic checkpoints, so the log stays bounded even without
  this thread.

Only the writers of other processes still meet SQLite's busy handler; they
write rarely. Not used on PostgreSQL, where row locks let writers of
different items run at once.
"""

from __future__ import annotations

import logging
import threading

from django.core.exceptions import MiddlewareNotUsed
from django.db import close_old_connections, connection
from django.db.backends.signals import connection_created

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})
CHECKPOINT_SECONDS = 1.0

log = logging.getLogger(__name__)

# Shared by every thread of the process (gunicorn gthread: one per request).
_write_lock = threading.Lock()
_checkpointer: threading.Thread | None = None
_started = threading.Lock()


def _no_autocheckpoint(sender, connection, **kwargs) -> None:
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA wal_autocheckpoint = 0")


def _checkpoint_forever() -> None:
    stop = threading.Event()
    while not stop.wait(CHECKPOINT_SECONDS):
        try:
            with connection.cursor() as cursor:
                cursor.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except Exception:  # a checkpoint is retried on the next tick
            log.exception("WAL checkpoint failed")
            close_old_connections()


def start_background_checkpoints() -> None:
    """Called by config.wsgi (the web server's entry point, so never by tests
    or management commands): on an SQLite file, leave WAL checkpoints to one
    background thread of this process."""
    global _checkpointer
    name = str(connection.settings_dict["NAME"])
    if connection.vendor != "sqlite" or name == ":memory:" or "mode=memory" in name:
        return
    with _started:
        if _checkpointer is None:
            connection_created.connect(_no_autocheckpoint, dispatch_uid="sqlite_no_autocheckpoint")
            _checkpointer = threading.Thread(
                target=_checkpoint_forever, name="sqlite-checkpoint", daemon=True
            )
            _checkpointer.start()


class SerialWritesMiddleware:
    def __init__(self, get_response):
        if connection.vendor != "sqlite":
            raise MiddlewareNotUsed
        self.get_response = get_response

    def __call__(self, request):
        if request.method in SAFE_METHODS:
            return self.get_response(request)
        with _write_lock:
            return self.get_response(request)
