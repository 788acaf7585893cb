"""Adaptive refit bench (issue 36 item 5): curation.tasks.refit_adaptive_task
on a project of 100,000 items x 3 votes on PostgreSQL, in an isolated child
as the worker runs it, while a prober writes what a vote writes.

    DATABASE_URL=postgres://…/bench_calibcache .venv/bin/python bench/calibration_db_bench.py build
    .venv/bin/python bench/refit_bench.py [--runs 1] [--method dawid_skene|one_coin]

Uses the database bench/calibration_db_bench.py builds, restored from its
template before each run (its project, with
one complete project judge run whose both-order agreements are judge
labels), switched to adaptive votes with the default rule. Each run: the
refit in a forked child (config.celery.run_in_child, as ISOLATED_TASKS runs
it), its wall, CPU, peak RSS (the child's ru_maxrss, the parent's pages it
inherited included) and statements. Meanwhile a thread of this process, on
its own connection, every 20 ms in a transaction of its own updates a random
item of the project (the vote's tally update), its verdict and every
progress-counter stripe of the project (a vote's trigger takes its
session's one), as a vote would: its slowest transaction is how long a vote
can wait on the refit's locks.

Target (issue 36): <= 30 s and <= 1 GB, votes never held up for long.
One JSON line at the end per run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from calibration_db_bench import DEFAULT_DATABASE_URL, SLUG, restore, setup_existing

TARGET_S = 30.0
TARGET_MB = 1024


def _refit_in_child(project_id: int, method: str | None) -> dict:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from annotate.loop import adaptive
    from curation.quality.tasks import refit_adaptive_task

    if method:
        chosen = adaptive.DAWID_SKENE if method == "dawid_skene" else adaptive.ONE_COIN
        adaptive.dawid_skene_available = lambda: chosen == adaptive.DAWID_SKENE
    start, start_cpu = time.perf_counter(), time.process_time()
    with CaptureQueriesContext(connection) as queries:
        outcome = refit_adaptive_task(project_id)
    return {
        "wall": round(time.perf_counter() - start, 2),
        "cpu": round(time.process_time() - start_cpu, 2),
        "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "statements": len(queries.captured_queries),
        "outcome": outcome,
    }


class Prober(threading.Thread):
    """A vote's writes, every 20 ms, each in its own transaction."""

    def __init__(self, project_id: int, item_ids: list[int]):
        super().__init__(daemon=True)
        self.project_id, self.item_ids = project_id, item_ids
        self.stop = threading.Event()
        self.latencies: list[float] = []
        self.errors: list[str] = []

    def run(self) -> None:
        from django.db import DatabaseError, connection

        rng = random.Random(5)
        try:
            while not self.stop.is_set():
                item = rng.choice(self.item_ids)
                start = time.perf_counter()
                try:
                    self.probe(item)
                except DatabaseError as exc:  # a deadlock: counted, and never expected
                    self.errors.append(str(exc).splitlines()[0])
                self.latencies.append(time.perf_counter() - start)
                self.stop.wait(0.02)
        finally:
            connection.close()

    def probe(self, item: int) -> None:
        from django.db import connection, transaction

        with transaction.atomic(), connection.cursor() as cur:
            cur.execute("UPDATE annotate_item SET votes_1 = votes_1 WHERE id = %s", [item])
            cur.execute(
                "UPDATE curation_verdict SET escalations = escalations WHERE item_id = %s",
                [item],
            )
            cur.execute(
                "UPDATE annotate_progresscounter SET needed = needed WHERE project_id = %s",
                [self.project_id],
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--method", choices=["dawid_skene", "one_coin"], default=None)
    args = parser.parse_args()

    from harness import database_url

    url = database_url(DEFAULT_DATABASE_URL)
    tmp = Path(tempfile.mkdtemp(prefix="refit-bench-"))
    setup_existing(url, tmp)
    from annotate.models import AdaptiveFit, Item, Project, VoteMode
    from config.celery import run_in_child

    ok = True
    for _ in range(args.runs):
        restore(url)  # as built: every item at 3 votes needed, no refit yet
        project = Project.objects.get(slug=SLUG)
        Project.objects.filter(pk=project.pk).update(vote_mode=VoteMode.ADAPTIVE)
        AdaptiveFit.objects.update_or_create(project=project, defaults={"queued": True})
        items = list(Item.objects.filter(project=project).values_list("pk", flat=True))
        prober = Prober(project.pk, items)
        load = os.getloadavg()[0]
        prober.start()
        result = run_in_child(_refit_in_child, project.pk, args.method)
        prober.stop.set()
        prober.join()
        waits = sorted(prober.latencies)
        result.update(
            load=round(load, 1),
            load_after=round(os.getloadavg()[0], 1),
            probes=len(waits),
            probe_errors=prober.errors[:3],
            probe_max_ms=round(waits[-1] * 1000, 1),
            probe_p99_ms=round(waits[int(0.99 * (len(waits) - 1))] * 1000, 1),
            items=len(items),
        )
        ok = ok and result["wall"] <= TARGET_S and result["peak_mb"] <= TARGET_MB
        print(json.dumps(result), flush=True)
    from django.db import connections

    connections.close_all()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
