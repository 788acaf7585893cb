import logging
import os

from celery import Celery, bootsteps

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("triplet_studio")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

log = logging.getLogger(__name__)

# Tasks that find background work whose message never reached the broker (it
# was down when the change committed; enqueue_on_commit only logs that) or
# was lost with it, and queue it again. Every worker sends them when it
# connects to the broker (at start and after each reconnection, so work
# missed during a broker outage catches up when the broker returns) and every
# BACKGROUND_SWEEP_SECONDS. Their targets are idempotent; see docs/decisions.md.
REQUEUE_TASKS = ("annotate.tasks.requeue_missing_thumbnails", "curation.tasks.requeue_unsent_work")


def requeue_missed_work() -> None:
    for name in REQUEUE_TASKS:
        try:
            app.send_task(name)
        except Exception:  # the broker is gone again: the next connection sweeps
            log.exception("could not queue %s", name)


class RequeueMissedWork(bootsteps.StartStopStep):
    """A worker consumer step: started whenever the consumer (re)connects."""

    requires = {"celery.worker.consumer.tasks:Tasks"}

    def __init__(self, parent, **kwargs):
        super().__init__(parent, **kwargs)
        self.timer_ref = None

    def start(self, parent):
        from django.conf import settings

        if not settings.REDIS_URL:
            # The embedded broker is a local folder: sending cannot fail for
            # an outage, and nothing there is lost with a server.
            return
        requeue_missed_work()
        if parent.timer is not None and self.timer_ref is None:
            self.timer_ref = parent.timer.call_repeatedly(
                settings.BACKGROUND_SWEEP_SECONDS, requeue_missed_work
            )

    def shutdown(self, parent):
        if self.timer_ref is not None:
            self.timer_ref.cancel()
            self.timer_ref = None


app.steps["consumer"].add(RequeueMissedWork)


class ExpireLeases(bootsteps.StartStopStep):
    """A worker consumer step: every LEASE_SWEEP_SECONDS, queue the return of
    every lease that ran out (annotate.tasks.expire_stale_leases_everywhere),
    on either broker, so an item never waits on an abandoned lease once
    nobody claims any more."""

    requires = {"celery.worker.consumer.tasks:Tasks"}

    def __init__(self, parent, **kwargs):
        super().__init__(parent, **kwargs)
        self.timer_ref = None

    def start(self, parent):
        from django.conf import settings

        if parent.timer is not None and self.timer_ref is None:
            self.timer_ref = parent.timer.call_repeatedly(
                settings.LEASE_SWEEP_SECONDS, send_lease_sweep
            )

    def shutdown(self, parent):
        if self.timer_ref is not None:
            self.timer_ref.cancel()
            self.timer_ref = None


def send_lease_sweep() -> None:
    try:
        app.send_task("annotate.tasks.expire_stale_leases_everywhere")
    except Exception:  # the broker is gone: the next tick tries again
        log.exception("could not queue the lease sweep")


app.steps["consumer"].add(ExpireLeases)


def enqueue_on_commit(task, *args, **kwargs) -> None:
    """Queue `task` once the current transaction commits.

    Unlike `task.delay_on_commit`, a broker outage is logged rather than
    raised (robust=True): the data change already committed and must not
    look failed to the user; the work can be re-queued later (see the
    management commands that backfill derived data)."""
    from django.db import transaction

    transaction.on_commit(lambda: task.delay(*args, **kwargs), robust=True)


@app.task(name="triplet_studio.ping", ignore_result=False)
def ping(value):
    """Echo `value`: a worker consuming from the configured broker answers."""
    return value
