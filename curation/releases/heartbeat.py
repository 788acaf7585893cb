"""A building release's heartbeat and progress, written where others see
them at once (issue 29).

The build reads inside one snapshot transaction (curation.releases.snapshot)
that is read-only and, until it ends, would hide any write it made. So the
heartbeat and progress are written by a small thread of the build: Django
keeps one database connection per thread, so each of its UPDATEs commits on
its own (autocommit) while the build's connection stays in its snapshot.
The thread writes the heartbeat every RELEASE_HEARTBEAT_SECONDS while the
build runs (also while it zips and publishes, which report no items), and
the progress the build reports as soon as it is told. Every write touches
only a release still `building`: one that finished, failed or was retried
is left alone.

Inside a caller's transaction (an eager task in a request, a test) there is
no snapshot, and another connection could not see the release row the
caller may not have committed: the writes then go inline, as before.
"""

from __future__ import annotations

import logging
import threading

from django.conf import settings
from django.db import DatabaseError, connection
from django.utils import timezone

from curation.models import Release, ReleaseStatus

log = logging.getLogger(__name__)


class BuildHeartbeat:
    """`with BuildHeartbeat(release_id, threaded=...) as beat:` ... call
    `beat.report(progress_done=n)` (any Release field) as the build goes."""

    def __init__(self, release_id: int, *, threaded: bool):
        self.release_id = release_id
        self.threaded = threaded
        self.every = float(settings.RELEASE_HEARTBEAT_SECONDS)
        self._pending: dict = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> BuildHeartbeat:
        if self.threaded:
            self._thread = threading.Thread(
                target=self._run, name=f"release-{self.release_id}-heartbeat", daemon=True
            )
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._thread is not None:
            self._done.set()
            self._wake.set()
            self._thread.join(timeout=30)

    def report(self, **fields) -> None:
        """Record progress (written with the next heartbeat, at once)."""
        if not self.threaded:
            self._write(fields)
            return
        with self._lock:
            self._pending.update(fields)
        self._wake.set()

    def _run(self) -> None:
        try:
            while True:
                self._wake.wait(self.every)
                self._wake.clear()
                with self._lock:
                    fields, self._pending = self._pending, {}
                if self._done.is_set():
                    if fields:  # the last progress; no heartbeat after the build
                        self._write(fields)
                    return
                self._write(fields)
        finally:
            connection.close()  # this thread's own connection

    def _write(self, fields: dict) -> None:
        try:
            Release.objects.filter(pk=self.release_id, status=ReleaseStatus.BUILDING).update(
                heartbeat_at=timezone.now(), **fields
            )
        except DatabaseError:
            if not self.threaded:
                raise
            # A dropped connection or a busy SQLite: the next beat tries again
            # on a new connection; a build is never failed by its heartbeat.
            log.exception("release %s: could not write the heartbeat", self.release_id)
            connection.close()
