"""Calibration page bench (issue 36 follow-up): the "Calibrated judges" page
and its API at 100,000 items x 3 votes on PostgreSQL, and the background
computation that now stores the report.

    DATABASE_URL=postgres://…/bench_calibcache .venv/bin/python bench/calibration_db_bench.py build
    .venv/bin/python bench/calibration_db_bench.py page [--requests 3]
    .venv/bin/python bench/calibration_db_bench.py drop

``build`` makes, in its own database (COPY: agreement_bench's build_project),
a project of --items items with --votes current votes each and one complete
project judge run with a JudgeVote per item and order (right 75 % of the
time per order, a confidence uniform in [0.5, 1]); the database is kept for
``page`` and for bench/refit_bench.py, and a copy of it as it was built
(<name>_template), which refit_bench.py restores before each refit.

``page`` measures, with the code of the tree this script sits in, the
curator's GET of the page and of the API (Django test client; wall, CPU of
this process, statements) --requests times each after one warm-up. When the
tree has the stored report (curation.evaluation.calibration_cache), the
background computation is run first, in a forked child as the worker runs
it (config.celery.run_in_child), and its wall, CPU, peak RSS and statements
are printed too. To measure the code before the change, copy this script
into an export of that commit (``git archive <commit> | tar -x -C DIR``) and
run it from there against the same database: farm-bench pairs the two.
One JSON line at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/bench_calibcache"
SLUG = "calibration"


def make_project_run(project) -> int:
    """A complete judge run on the project: a JudgeVote per item in both
    orders, right 75 % of the time per order, with a stated confidence (COPY)."""
    import numpy as np
    from harness import copy_rows

    from curation.models import JudgeRun, JudgeVote, Verdict

    run = JudgeRun.objects.create(
        project=project, name="project-judge", base_url="http://127.0.0.1:1/v1", model="m",
        max_tokens=16, timeout_seconds=1, swapped=True, status="complete",
    )  # fmt: skip
    rows = list(Verdict.objects.filter(project=project).values_list("item_id", "final_choice"))
    rng = np.random.default_rng(38)
    right = rng.random((len(rows), 2)) < 0.75
    confidence = np.round(rng.uniform(0.5, 1.0, (len(rows), 2)), 4)

    def votes():
        for (item_id, label), pair, conf in zip(
            rows, right.tolist(), confidence.tolist(), strict=True
        ):
            label = label if label in ("1", "2") else "1"
            other = "2" if label == "1" else "1"
            for order, r, c in zip(("original", "swapped"), pair, conf, strict=True):
                yield (run.pk, item_id, order, label if r else other, c)

    copy_rows(JudgeVote, ["run_id", "item_id", "order", "choice", "confidence"], votes())
    return run.pk


def build(args, url: str, tmp: Path) -> dict:
    from agreement_bench import build_project, make_images, vacuum_analyze
    from harness import recreate_database, setup_django

    print("creating database and migrating ...", file=sys.stderr)
    recreate_database(url)
    setup_django(url, tmp, STATIC_ROOT=str(tmp / "static"))
    from django.contrib.auth import get_user_model
    from django.db import connection

    t0 = time.perf_counter()
    curator = get_user_model().objects.create(username="bench-curator")
    print(f"building {args.items:,} items x {args.votes} votes ...", file=sys.stderr)
    big = build_project(
        slug=SLUG, n_items=args.items, per_item=args.votes, n_annotators=20, seed=36,
        curator=curator, images=make_images(),
    )  # fmt: skip
    make_project_run(big["project"])
    vacuum_analyze()
    with connection.cursor() as cur:
        cur.execute("VACUUM ANALYZE curation_judgevote")
    seconds = time.perf_counter() - t0
    connection.close()
    save_template(url)
    return {"mode": "build", "items": args.items, "seconds": seconds}


def _admin(url: str):
    import psycopg
    from harness import bench_database

    name, admin_url = bench_database(url)
    return name, psycopg.connect(admin_url, autocommit=True)


def save_template(url: str) -> None:
    """A copy of the built database (<name>_template), for restore()."""
    from psycopg import sql

    name, conn = _admin(url)
    with conn:
        template = sql.Identifier(f"{name}_template")
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(template))
        conn.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(template, sql.Identifier(name))
        )


def restore(url: str) -> None:
    """The database as built (from its template): a refit changes it."""
    from django.db import connections
    from psycopg import sql

    connections.close_all()
    name, conn = _admin(url)
    with conn:
        ident = sql.Identifier(name)
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(ident))
        conn.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                ident, sql.Identifier(f"{name}_template")
            )
        )


def setup_existing(url: str, tmp: Path) -> None:
    """Django against the built database, without migrating (the code
    measured may be older than the schema)."""
    from harness import ROOT, django_environ

    os.environ.pop("REDIS_URL", None)
    os.environ.update(django_environ(url, tmp, STATIC_ROOT=str(tmp / "static")))
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def _compute_in_child(project_id: int) -> dict:
    """The task's body in the child: its CPU, peak RSS and statements."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from curation.evaluation.tasks import refresh_calibration

    start, start_cpu = time.perf_counter(), time.process_time()
    with CaptureQueriesContext(connection) as queries:
        n_votes = refresh_calibration(project_id)
    return {
        "wall": time.perf_counter() - start,
        "cpu": time.process_time() - start_cpu,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "statements": len(queries.captured_queries),
        "votes": n_votes,
    }


def _requests(client, url: str, n: int) -> dict:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    response = client.get(url)  # warm-up
    assert response.status_code == 200, response.status_code
    walls, cpus, statements = [], [], 0
    for _ in range(n):
        start, start_cpu = time.perf_counter(), time.process_time()
        with CaptureQueriesContext(connection) as queries:
            response = client.get(url)
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - start_cpu)
        statements = len(queries.captured_queries)
    return {
        "wall_ms": round(statistics.median(walls) * 1000, 1),
        "cpu_ms": round(statistics.median(cpus) * 1000, 1),
        "statements": statements,
        "bytes": len(response.content),
    }


def page(args, url: str, tmp: Path) -> dict:
    setup_existing(url, tmp)
    from django.contrib.auth import get_user_model
    from django.test import Client

    from annotate.models import Project

    project = Project.objects.get(slug=SLUG)
    out: dict = {"mode": "page", "load": round(os.getloadavg()[0], 1)}
    try:
        from curation.evaluation import calibration_cache  # noqa: F401
    except ImportError:
        out["code"] = "before (computed per request)"
    else:
        from config.celery import run_in_child
        from curation.models import CalibrationCache

        out["code"] = "after (stored report)"
        CalibrationCache.objects.filter(project=project).update(requested_at=None)
        out["task"] = run_in_child(_compute_in_child, project.pk)
    client = Client()
    client.force_login(get_user_model().objects.get(username="bench-curator"))
    out["page"] = _requests(client, f"/p/{SLUG}/calibration/", args.requests)
    out["api"] = _requests(client, f"/api/v1/projects/{SLUG}/calibration/", args.requests)
    out["load_after"] = round(os.getloadavg()[0], 1)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["build", "page", "drop"])
    parser.add_argument("--items", type=int, default=100_000, help="items (100000)")
    parser.add_argument("--votes", type=int, default=3, help="votes per item (3)")
    parser.add_argument("--requests", type=int, default=3, help="timed GETs of each (3)")
    args = parser.parse_args()

    from harness import bench_database, database_url, recreate_database

    url = database_url(DEFAULT_DATABASE_URL)
    bench_database(url)
    if args.mode == "drop":
        recreate_database(url, create=False)
        name, _ = bench_database(url)
        recreate_database(url.rsplit("/", 1)[0] + f"/{name}_template", create=False)
        return 0
    tmp = Path(tempfile.mkdtemp(prefix="calibration-bench-"))
    try:
        result = build(args, url, tmp) if args.mode == "build" else page(args, url, tmp)
    finally:
        from django.db import connections

        connections.close_all()
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
