import ctypes
import ctypes.util
import gc
import json
import logging
import os
import signal
import traceback

from celery import Celery, Task, bootsteps
from celery.signals import task_postrun, worker_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

# The heavy jobs: each runs in a child process of the worker that exits when
# it is done, so the memory it took (pandas, pyarrow, scipy, the rows of a
# whole project) goes back to the system instead of staying in the worker
# for its lifetime (issue 32: ~290 MB kept after release builds and the
# agreement refresh). The light tasks (thumbnails, rendering, lease sweeps)
# run in the worker itself.
ISOLATED_TASKS = frozenset(
    {
        "curation.tasks.build_release_task",
        "curation.tasks.build_mix_task",
        "curation.tasks.refresh_agreement",
        "curation.tasks.compute_label_quality_task",
        "curation.tasks.refresh_calibration",
        "curation.tasks.refit_adaptive_task",
    }
)
_in_worker = False


@worker_init.connect(weak=False)
def _mark_worker(**kwargs) -> None:
    # Set in the worker's main process before its pool starts (prefork
    # children inherit it): tasks called as plain functions, run eagerly or
    # in tests never fork.
    global _in_worker
    _in_worker = True


class ChildTaskError(RuntimeError):
    """An isolated task failed in its child process (the child's exception
    type, message and traceback in the text), or the child died."""


def run_in_child(call, *args, **kwargs):
    """`call(*args, **kwargs)` in a forked child that exits afterwards; its
    return value (JSON) back to the caller, its exception as ChildTaskError.
    The parent's database connections are closed first, and the child
    forgets any it still inherits (_forget_inherited_connections), so it
    opens its own: a connection is never shared across a fork."""
    from django.db import connections

    connections.close_all()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read_end)
        code = 0
        try:
            _forget_inherited_connections()
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            try:
                payload = {"value": call(*args, **kwargs)}
            except BaseException as exc:  # reported to the parent, which raises
                payload = {"error": f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"}
                code = 1
            try:
                data = json.dumps(payload).encode()
            except (TypeError, ValueError) as exc:
                data, code = json.dumps({"error": f"result not JSON: {exc}"}).encode(), 1
            with os.fdopen(write_end, "wb") as out:
                out.write(data)
            connections.close_all()
        finally:
            os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as incoming:
        data = incoming.read()
    _, status = os.waitpid(pid, 0)
    payload = json.loads(data) if data else {}
    if "value" in payload and os.waitstatus_to_exitcode(status) == 0:
        return payload["value"]
    raise ChildTaskError(
        payload.get("error") or f"the task's child process ended with status {status}"
    )


# The database connections a forked child inherited open, kept referenced
# until the child leaves with os._exit (which runs no finalizer): closing one,
# or letting it be collected, would end the parent's session on the server
# (libpq sends Terminate on the socket both processes hold).
_inherited_connections: list = []


def _forget_inherited_connections() -> None:
    """In a forked child: every database connection still open from the
    parent is set aside unused, and the next query opens the child's own.
    The parent's connections.close_all() does not reach all of them: Django
    keeps a thread's connections apart while an event loop runs in it
    (tests/e2e/conftest.py), and a connection closed inside an atomic block
    keeps its object. As Celery's Django fixup for its pool's children,
    without closing anything. An in-memory SQLite database (the tests') is
    the child's own copy, and cannot be opened again: it stays."""
    from django.db import connections

    for conn in connections.all(initialized_only=True):
        if conn.connection is None:
            continue
        if conn.vendor == "sqlite" and conn.is_in_memory_db():
            continue
        _inherited_connections.append(conn)
        del connections[conn.alias]


class IsolatingTask(Task):
    """The app's task class: a task named in ISOLATED_TASKS, run by a worker
    (not called directly, not eager), runs in a child process
    (run_in_child)."""

    def __call__(self, *args, **kwargs):
        request = self.request
        if (
            _in_worker
            and self.name in ISOLATED_TASKS
            and not request.called_directly
            and not request.is_eager
        ):
            return run_in_child(super().__call__, *args, **kwargs)
        return super().__call__(*args, **kwargs)


app = Celery("triplet_studio", task_cls=IsolatingTask)
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


class RepeatingStep(bootsteps.StartStopStep):
    """A worker consumer step that calls `tick` every `seconds()` while the
    consumer runs (started whenever it (re)connects to the broker)."""

    requires = {"celery.worker.consumer.tasks:Tasks"}

    def __init__(self, parent, **kwargs):
        super().__init__(parent, **kwargs)
        self.timer_ref = None

    def enabled(self) -> bool:
        return True

    def seconds(self) -> float:
        raise NotImplementedError

    def tick(self) -> None:
        raise NotImplementedError

    def start(self, parent):
        if not self.enabled():
            return
        self.at_start()
        if parent.timer is not None and self.timer_ref is None:
            self.timer_ref = parent.timer.call_repeatedly(self.seconds(), self.tick)

    def at_start(self) -> None:
        pass

    def shutdown(self, parent):
        if self.timer_ref is not None:
            self.timer_ref.cancel()
            self.timer_ref = None


class RequeueMissedWork(RepeatingStep):
    """requeue_missed_work() at every (re)connection and every
    BACKGROUND_SWEEP_SECONDS, on Redis only: the embedded broker is a local
    folder, where sending cannot fail for an outage and nothing is lost with a
    server."""

    def enabled(self) -> bool:
        from django.conf import settings

        return bool(settings.REDIS_URL)

    def seconds(self) -> float:
        from django.conf import settings

        return settings.BACKGROUND_SWEEP_SECONDS

    def at_start(self) -> None:
        requeue_missed_work()

    def tick(self) -> None:
        requeue_missed_work()


class ExpireLeases(RepeatingStep):
    """Every LEASE_SWEEP_SECONDS, on either broker, queue the return of every
    lease that ran out (annotate.tasks.expire_stale_leases_everywhere), so an
    item never waits on an abandoned lease once nobody claims any more."""

    def seconds(self) -> float:
        from django.conf import settings

        return settings.LEASE_SWEEP_SECONDS

    def tick(self) -> None:
        try:
            app.send_task("annotate.tasks.expire_stale_leases_everywhere")
        except Exception:  # the broker is gone: the next tick tries again
            log.exception("could not queue the lease sweep")


class RecoverStalledBuilds(RepeatingStep):
    """Every RELEASE_SWEEP_SECONDS, on either broker, queue the sweep that
    takes over release builds whose worker stopped writing their heartbeat
    (curation.releases.recovery): minutes after a worker dies, not after the
    broker's hour-long visibility timeout, and on the embedded broker too,
    which never redelivers."""

    def seconds(self) -> float:
        from django.conf import settings

        return settings.RELEASE_SWEEP_SECONDS

    def tick(self) -> None:
        try:
            app.send_task("curation.tasks.recover_stalled_builds")
        except Exception:  # the broker is gone: the next tick tries again
            log.exception("could not queue the sweep of stalled release builds")


app.steps["consumer"].add(RequeueMissedWork)
app.steps["consumer"].add(ExpireLeases)
app.steps["consumer"].add(RecoverStalledBuilds)


def _malloc_trim():
    """glibc's malloc_trim, or None elsewhere (musl, macOS)."""
    name = ctypes.util.find_library("c")
    try:
        trim = ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        return None
    if trim is not None:
        trim.argtypes = [ctypes.c_size_t]
        trim.restype = ctypes.c_int
    return trim


_MALLOC_TRIM = _malloc_trim()


def release_freed_memory() -> None:
    """Give the memory a finished task freed back to the operating system.

    The agreement refresh and the release build allocate and free hundreds
    of megabytes of small objects (query rows, per-vote tuples, numpy
    scratch). Python frees them, but glibc keeps the freed pages in its
    arenas (most of them below the heap top or in per-thread arenas it never
    shrinks on its own), so the prefork child's RSS stayed at the highest
    task's peak, and rose with the data (bench/worker_memory.py shows it is
    not a leak: on fixed data it is level). A collection and malloc_trim(0)
    after each task return those pages. The trim itself takes about a
    millisecond, the collection 0.1-0.5 s on this 2-core machine."""
    gc.collect()
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


@task_postrun.connect(weak=False)
def _release_after_task(task=None, **kwargs) -> None:
    # In a worker only: a task run eagerly (tests, CELERY_TASK_ALWAYS_EAGER)
    # runs inside a web request, where a full collection (0.1-0.5 s on a
    # busy machine) would be latency for the user and the heap is not a
    # pool child's.
    if task is not None and getattr(task.request, "is_eager", False):
        return
    release_freed_memory()


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
