"""Issue 32's memory script: the RSS of every process after a team's work.

    .venv/bin/python bench/memory_bench.py                 # the embedded default (make run)
    DATABASE_URL=postgres://…/bench_memory MEMORY_REDIS_URL=redis://…/N \\
        .venv/bin/python bench/memory_bench.py --production

Starts the stack on a loopback port the OS picks, then runs the script the
issue names, through HTTP as people do:

1. the demo (``seed_demo``) and a project of ``--items`` (5,211) items;
2. ``--votes`` (15,000) votes by ``--annotators`` (8) annotators with no
   think time, in three equal rounds; after each round a curator cuts a
   release and the script waits until the worker has built it (three builds);
3. the curator opens the agreement page, asks for its recomputation, waits
   for the worker to store it and opens the page again.

Then, after ``--settle`` seconds (3), it prints the RSS (VmRSS) of every
process the stack started (and their sum), its peak during the run, and
exits 1 when the sum is over the target.

The embedded default (no option) is what ``make run`` starts: gunicorn with
one gthread worker x 8 threads and a solo Celery worker, SQLite and the
filesystem broker in a fresh ``DATA_DIR``. Target ≤ 400 MB.

``--production`` is the Dockerfile's web command (gunicorn, 2 gthread workers
x 4 threads) and one Celery worker (prefork, concurrency 1) on PostgreSQL
(DATABASE_URL, a database named ``bench…``, dropped and created) and Redis
(MEMORY_REDIS_URL, default redis://127.0.0.1:6379/9; its Celery keys are
emptied). Target ≤ 600 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import annotate_bench
import harness
import soak
from annotate_bench import Browser, Gunicorn, phase_concurrent_until
from harness import ROOT, bench_database, database_url, print_table, recreate_database

TARGET_MB = {"embedded": 400.0, "production": 600.0}
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/bench_memory"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/9"


class Celery:
    """`celery -A config worker` as make run (solo) or production (prefork, 1 child) starts it."""

    def __init__(self, env: dict[str, str], log: Path, *, production: bool):
        pool = (
            ["--pool", "prefork", "--concurrency", "1", "--without-gossip", "--without-mingle"]
            if production
            else ["--pool=solo"]  # exactly make run's worker
        )
        with log.open("wb") as fh:
            self.proc = subprocess.Popen(
                [
                    *(str(Path(sys.executable).parent / "celery"), "-A", "config", "worker"),
                    *pool,
                    *("--loglevel", "WARNING"),
                ],
                cwd=ROOT,
                env=env,
                stdout=fh,
                stderr=fh,
                start_new_session=True,
            )

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)


def labelled(server: Gunicorn, worker: Celery) -> dict[str, int]:
    """Every process the stack runs now, by role."""
    labels = {"gunicorn master": server.proc.pid}
    for n, pid in enumerate(sorted(server.worker_pids()), 1):
        labels[f"gunicorn worker {n}"] = pid
    labels["celery worker (main)"] = worker.proc.pid
    todo = [(worker.proc.pid, "celery")]
    while todo:
        parent, name = todo.pop()
        for n, pid in enumerate(sorted(soak.children(parent)), 1):
            labels[f"{name} child {n}"] = pid
            todo.append((pid, f"{name} child {n}:"))
    return labels


class Peak(threading.Thread):
    """The peak of the summed RSS of the stack, sampled every half second."""

    def __init__(self, server: Gunicorn, worker: Celery):
        super().__init__(daemon=True)
        self.server, self.worker = server, worker
        self.peak = 0
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.wait(0.5):
            rss = [soak.rss_kib(pid) for pid in labelled(self.server, self.worker).values()]
            self.peak = max(self.peak, sum(r or 0 for r in rss))


class Database:
    """The few reads the script makes (SQLite file or PostgreSQL)."""

    def __init__(self, url: str, sqlite_path: Path):
        self.url, self.sqlite_path = url, sqlite_path

    def one(self, sql: str, *args):
        if self.url:
            import psycopg

            with psycopg.connect(self.url) as conn:
                return conn.execute(sql.replace("?", "%s"), args).fetchone()
        with sqlite3.connect(self.sqlite_path) as conn:
            return conn.execute(sql, args).fetchone()

    def wait(self, what: str, sql: str, *args, done, seconds: float = 600) -> object:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            row = self.one(sql, *args)
            if row is not None and done(row):
                return row
            time.sleep(0.5)
        raise SystemExit(f"{what}: not done after {seconds:.0f} s ({row})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--production", action="store_true", help="PostgreSQL + Redis, 2 workers")
    parser.add_argument("--items", type=int, default=5211, help="items in the project (5211)")
    parser.add_argument("--votes", type=int, default=15000, help="votes in all (15000)")
    parser.add_argument("--annotators", type=int, default=8, help="concurrent annotators (8)")
    parser.add_argument("--releases", type=int, default=3, help="release builds (3)")
    parser.add_argument("--settle", type=float, default=3.0, help="seconds before reading (3)")
    parser.add_argument("--keep", action="store_true", help="keep the temp folder (and database)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        import django

        django.setup()
        soak.child_setup(json.loads(args.child))
        return 0
    if args.items * 3 < args.votes + args.annotators or args.releases < 1:
        parser.error("--items must take --votes (3 votes an item); --releases at least 1")

    kind = "production" if args.production else "embedded"
    tmp = Path(tempfile.mkdtemp(prefix=f"memory-bench-{kind}-"))
    url = ""
    if args.production:
        url = database_url(DEFAULT_DATABASE_URL)
        bench_database(url)  # refuses a name not starting with "bench"
    env = annotate_bench.child_env(url, tmp)
    if args.production:
        env["REDIS_URL"] = os.environ.get("MEMORY_REDIS_URL", DEFAULT_REDIS_URL)
    else:  # the settings' own embedded SQLite and filesystem broker, as make run
        env.pop("DATABASE_URL", None)
    db = Database(url, tmp / "data" / "db.sqlite3")
    server = worker = peak = None
    try:
        print(f"{kind}: the demo and {args.items} items in {tmp} ...", file=sys.stderr)
        if args.production:
            recreate_database(url)
            soak.empty_queue(env["REDIS_URL"])
        load_before = os.getloadavg()
        params = {"items": args.items, "annotators": args.annotators, "curators": 1, "demo": True}
        setup = harness.run_child(
            __file__, ["--child", json.dumps(params)], env, failure="the setup failed"
        )
        worker = Celery(env, tmp / "celery.log", production=args.production)
        workers, threads = (2, 4) if args.production else (1, 8)
        server = Gunicorn(
            env, tmp / "gunicorn.log", workers=workers, worker_class="gthread", threads=threads
        )
        time.sleep(3)  # the worker imports the app
        idle = {label: soak.rss_kib(pid) or 0 for label, pid in labelled(server, worker).items()}
        peak = Peak(server, worker)
        peak.start()
        slug = setup["slug"]
        curator = soak.Curator(Browser(server.port), setup["curators"][0], slug, None)
        curator.login()
        load = soak.Load(deadline=time.monotonic() + 86400, max_requests=10**9)
        crowd = setup["users"][1 : args.annotators + 1]
        votes, errors = 0, []
        for n in range(1, args.releases + 1):
            target = args.votes * n // args.releases
            print(f"votes to {target:,}, then release {n} ...", file=sys.stderr)
            rounds = argparse.Namespace(
                votes=target - votes, duration=3600, think=0, api_separate=False
            )
            result = phase_concurrent_until(server.port, slug, crowd, rounds)
            errors += result.errors  # reported; an annotator starts again after one
            votes += len(result.completions)
            version = f"memory-{n}"
            if curator.cut_release(load, version=version) is None:
                raise SystemExit("nothing to release")
            status = db.wait(
                f"release {version}",
                "SELECT status, error FROM curation_release WHERE version = ?",
                version,
                done=lambda row: row[0] in ("ready", "failed"),
            )
            if status[0] != "ready":
                raise SystemExit(f"release {version} failed: {status[1]}")
        print("the agreement page, its recomputation, the page again ...", file=sys.stderr)
        page = curator.get(load, "agreement", f"/p/{slug}/agreement/")
        token = annotate_bench.CSRF_INPUT.search(page)
        resp = curator.post(
            load,
            "refresh",
            f"/p/{slug}/agreement/refresh/",
            {"csrfmiddlewaretoken": token.group(1)},
            f"/p/{slug}/agreement/",
        )
        if resp.status not in (302, 303):
            raise SystemExit(f"agreement refresh: {resp.status}")
        db.wait(
            "the agreement recomputation",
            "SELECT c.computed_at FROM curation_agreementcache c"
            " JOIN annotate_project p ON p.id = c.project_id"
            " WHERE p.slug = ? AND c.requested_at IS NULL",
            slug,
            done=lambda row: row[0] is not None,
        )
        curator.get(load, "agreement", f"/p/{slug}/agreement/")
        curator.browser.close()
        time.sleep(args.settle)
        peak.stopping.set()
        peak.join(timeout=5)
        end = {label: soak.rss_kib(pid) or 0 for label, pid in labelled(server, worker).items()}
        total = sum(end.values())
        target = TARGET_MB[kind]
        rows = [(f"{label}, RSS", f"{kib / 1024:.0f} MB", "", "") for label, kib in end.items()]
        rows += [
            ("sum, idle after the demo", f"{sum(idle.values()) / 1024:.0f} MB", "", ""),
            ("sum, peak during the script", f"{peak.peak / 1024:.0f} MB", "", ""),
            ("vote errors", str(len(errors)), "0", "ok" if not errors else "MISSED"),
            (
                f"sum after {votes:,} votes, {args.releases} releases, the agreement page",
                f"{total / 1024:.0f} MB",
                f"<= {target:.0f} MB",
                "ok" if total / 1024 <= target else "MISSED",
            ),
        ]
        print(
            f"\nMemory script, {kind}: {setup['items']:,} items + the demo; gunicorn "
            f"{workers} gthread worker(s) x {threads} threads; load average "
            f"{load_before[0]:.2f} before, {os.getloadavg()[0]:.2f} after; "
            f"{annotate_bench.interpreter()}\n"
        )
        print_table(rows, rstrip=True)
        for error in errors[:10]:
            print("vote error:", error[:300])
        return 0 if total / 1024 <= target and not errors else 1
    finally:
        if peak is not None:
            peak.stopping.set()
        if server is not None:
            server.stop()
        if worker is not None:
            worker.stop()
        if args.keep:
            print(f"kept {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
            if url:
                recreate_database(url, create=False)


if __name__ == "__main__":
    sys.exit(main())
