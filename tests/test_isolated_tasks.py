"""Heavy jobs run in a child process of the worker that exits afterwards
(config.celery.IsolatingTask, issue 32): their memory goes back to the system
instead of staying in the worker. Called directly or eagerly (tests, a
management command) they run in place."""

import asyncio
import os

import pytest

import config.celery as celery_config
from config.celery import ChildTaskError, IsolatingTask, app, run_in_child
from tests.conftest import requires_redis


def _pid_and_heap(megabytes: int) -> list[int]:
    block = bytearray(megabytes * 1024 * 1024)  # touched: counted in the RSS
    return [os.getpid(), len(block)]


def _fails():
    raise ValueError("no such release")


def test_run_in_child_returns_the_value_from_another_process_and_keeps_no_memory():
    def rss_kib() -> int:
        with open("/proc/self/status") as status:
            return int(status.read().split("VmRSS:")[1].split()[0])

    before = rss_kib()
    pid, size = run_in_child(_pid_and_heap, 200)
    assert pid != os.getpid()
    assert size == 200 * 1024 * 1024
    # The 200 MB lived and died in the child.
    assert rss_kib() - before < 20 * 1024


def test_run_in_child_raises_the_childs_error_with_its_type_and_message():
    with pytest.raises(ChildTaskError, match="ValueError: no such release"):
        run_in_child(_fails)


def test_the_heavy_tasks_run_in_a_child_only_in_a_worker(monkeypatch):
    # The app's ping task, made heavy and answering with its process id.
    _whoami = app.tasks["triplet_studio.ping"]
    assert isinstance(_whoami, IsolatingTask)
    monkeypatch.setattr(_whoami, "run", os.getpid)
    monkeypatch.setattr(
        celery_config, "ISOLATED_TASKS", celery_config.ISOLATED_TASKS | {_whoami.name}
    )
    # Called as a function (tests, commands): in place.
    assert _whoami() == os.getpid()
    # Run by a worker (the tracer pushes the delivered request): in a child.
    monkeypatch.setattr(celery_config, "_in_worker", True)
    _whoami.push_request(called_directly=False, is_eager=False, args=(), kwargs={})
    try:
        assert _whoami() != os.getpid()
    finally:
        _whoami.pop_request()
    # Eager (CELERY_TASK_ALWAYS_EAGER) stays in place even in a worker.
    assert _whoami.apply().get() == os.getpid()


def test_the_release_build_agreement_and_label_quality_tasks_are_isolated():
    app.loader.import_default_modules()
    for name in celery_config.ISOLATED_TASKS:
        assert name in app.tasks, name
        assert isinstance(app.tasks[name], IsolatingTask)


# --- what the child inherits (issue 32): no connection of the parent is used in it -----------


def _database_connection_in_child() -> list:
    from django.db import connection

    inherited = connection.connection is not None
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_backend_pid()" if connection.vendor == "postgresql" else "SELECT 1"
        )
        return [inherited, cursor.fetchone()[0]]


def _backend() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_backend_pid()" if connection.vendor == "postgresql" else "SELECT 1"
        )
        return cursor.fetchone()[0]


def _kept_in_child() -> bool:
    """Whether the child keeps its parent's connection: only an in-memory
    SQLite database (the tests' own), which is the child's own copy and
    cannot be opened again (config.celery._forget_inherited_connections)."""
    from django.db import connection

    return connection.vendor == "sqlite" and connection.is_in_memory_db()


@pytest.mark.django_db(transaction=True)
def test_the_child_opens_its_own_database_connection_and_the_parent_keeps_working():
    from django.db import connection

    _backend()
    inherited, child_backend = run_in_child(_database_connection_in_child)
    # The child starts with no connection of its parent's (a shared socket
    # would interleave two processes' protocol messages).
    assert inherited is _kept_in_child()
    after = _backend()  # the parent reconnects by itself
    if connection.vendor == "postgresql":
        assert child_backend != after


@pytest.mark.django_db(transaction=True)
def test_a_connection_the_parents_close_all_misses_is_not_used_in_the_child(monkeypatch):
    """While an event loop runs in a thread (Playwright's sync API leaves one
    marked as running: tests/e2e/conftest.py), Django keeps the thread's
    connections apart from those it made without one, and close_all() sees
    only the loop's. The child of a fork has no loop: it would have used the
    parent's other connection, still open, on the same socket (CI, session
    15), and closing it at its end would have ended the parent's session."""
    from django.db import connection

    parent_backend = _backend()  # opened with no loop running
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

    async def beside_a_loop() -> list:
        return run_in_child(_database_connection_in_child)

    inherited, child_backend = asyncio.run(beside_a_loop())
    assert inherited is _kept_in_child()
    # The parent's connection was neither used nor ended by the child: the
    # same server process still answers it.
    assert _backend() == parent_backend
    if connection.vendor == "postgresql":
        assert child_backend != parent_backend


@requires_redis
def test_the_child_opens_its_own_redis_connections_and_the_parent_keeps_working():
    # redis-py's pools are per process (they compare os.getpid() on every use
    # and start afresh in a child): the Django cache, the broker's producer
    # and the result backend all reach Redis through them.
    import redis
    from django.core.cache.backends.redis import RedisCache

    url = os.environ["REDIS_URL"]
    client = redis.Redis.from_url(url)
    cache = RedisCache(url, {})
    cache.set("isolated-task-probe", "parent")
    parent_id = client.client_id()

    def in_child() -> list:
        cache.set("isolated-task-probe", "child")
        return [client.client_id(), cache.get("isolated-task-probe")]

    child_id, seen = run_in_child(in_child)
    assert child_id != parent_id and seen == "child"
    # The parent's connection was not touched by the child: same server-side
    # client, and it still answers.
    assert client.client_id() == parent_id
    assert cache.get("isolated-task-probe") == "child"
    cache.delete("isolated-task-probe")
    client.close()
