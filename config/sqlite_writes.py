"""One write request at a time per process on the embedded SQLite default.

SQLite has one writer at a time. With IMMEDIATE transactions a second
writer waits in SQLite's busy handler, which polls with sleeps of up to
100 ms and wakes in no order: under a team's concurrent votes the median
stayed low but the 99th percentile reached a second (issue 20). Here the
threads of a process queue on a lock for the whole unsafe request instead,
and each is woken the moment the previous one finishes: no polling, no
sleep in the tail. Reads (GET, HEAD) run concurrently, as WAL allows.

Only the writers of other processes (the Celery worker, a management
command) still meet SQLite's busy handler; they write rarely. Not used on
PostgreSQL, where row locks let writers of different items run at once.
"""

from __future__ import annotations

import threading

from django.core.exceptions import MiddlewareNotUsed
from django.db import connection

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})

# Shared by every thread of the process (gunicorn gthread: one per request).
_write_lock = threading.Lock()


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
