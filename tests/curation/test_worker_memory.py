"""The worker's memory stays flat: the agreement refresh keeps nothing
between runs, and every task ends by giving what it freed back to the
system (bench/worker_memory.py and bench/soak.py measure the same at scale)."""

from __future__ import annotations

import gc
import textwrap
import tracemalloc
from unittest import mock

import pytest
from celery.signals import task_postrun

from config import celery as celery_app
from curation.agreement import reports
from tests.curation.agreement.test_report_queries import voted_project
from tests.fresh_process import run_django


@pytest.mark.django_db
def test_refreshing_the_agreement_on_fixed_data_keeps_nothing_between_runs():
    project = voted_project()
    # Warm up: imports, numpy's and scipy's first use, and the test
    # database's per-statement caches (SQLite keeps up to 128 statements,
    # and every savepoint has a name of its own), which fill for a while.
    for _ in range(30):
        reports.refresh_cache(project=project)
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        for _ in range(10):
            reports.refresh_cache(project=project)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    # Measured here: about 15 kB over ten runs without a leak; keeping each
    # run's votes (a module-level cache of project_votes) adds about 130 kB,
    # keeping each payload about 100 kB.
    assert held < 64 * 1024, f"{held} bytes kept after 10 refreshes"


def test_every_task_a_worker_runs_ends_by_giving_freed_memory_back():
    with mock.patch.object(celery_app, "release_freed_memory") as release:
        # What a worker's tracer sends after each task (outside a task's own
        # request context, as in the pool child).
        task_postrun.send(
            sender=celery_app.ping,
            task_id="t1",
            task=celery_app.ping,
            args=("x",),
            kwargs={},
            retval="x",
            state="SUCCESS",
        )
    release.assert_called_once_with()


def test_a_task_run_eagerly_in_a_request_does_not_pay_for_the_collection():
    with mock.patch.object(celery_app, "release_freed_memory") as release:
        assert celery_app.ping.apply(args=("x",)).get() == "x"
    release.assert_not_called()


FREED = textwrap.dedent(
    """
    from config.celery import release_freed_memory

    def rss():
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) // 1024

    base = rss()
    # A task's garbage: many small rows, a few of which outlive it, scattered
    # through the heap so glibc can neither shrink it nor return the pages.
    rows = [b"x" * 2000 + bytes([i % 256]) for i in range(60_000)]
    survivors = rows[::50]
    del rows
    kept = rss()
    release_freed_memory()
    print(base, kept, rss())
    """
)


def test_what_a_task_freed_goes_back_to_the_system(tmp_path):
    if celery_app._MALLOC_TRIM is None:
        pytest.skip("not glibc: no malloc_trim")
    result = run_django(FREED, data_dir=tmp_path)
    assert result.returncode == 0, result.stderr
    base, kept, after = map(int, result.stdout.split())
    # Freed, but held by the allocator: the prefork child's high-water mark.
    assert kept - base > 80, (base, kept, after)
    assert after - base < 20, (base, kept, after)
