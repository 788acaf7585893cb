"""Heavy jobs run in a child process of the worker that exits afterwards
(config.celery.IsolatingTask, issue 32): their memory goes back to the system
instead of staying in the worker. Called directly or eagerly (tests, a
management command) they run in place."""

import os

import pytest

import config.celery as celery_config
from config.celery import ChildTaskError, IsolatingTask, app, run_in_child


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
