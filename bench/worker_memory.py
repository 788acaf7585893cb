"""Worker memory on fixed data: the agreement refresh run again and again.

bench/soak.py's Celery pool child grows while the soak adds votes (each
refresh works on more data). This separates growth with the data from a
leak: it builds one project (default 12,000 items x 3 votes, as many votes
as a 10-minute soak adds), then calls `curation.agreement.reports.refresh_cache` (the
task's whole work) repeatedly in one process and prints VmRSS after each.
A leak grows every round; a high-water mark stays level.

Each round also shows what Python itself still holds (tracemalloc, with
--tracemalloc: slower) and VmRSS after `config.celery.release_freed_memory`
(a collection and glibc's malloc_trim, what the worker now does after every
task): a leak keeps Python's share growing, an allocator high-water mark is
given back by the trim.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_worker_memory \\
        .venv/bin/python bench/worker_memory.py [--items 12000] [--rounds 12]
"""

import argparse
import sys
import tempfile
from pathlib import Path

import agreement_bench
from harness import bench_database, database_url, recreate_database, setup_django

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/bench_worker_memory"


def rss_mb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=12_000, help="items, 3 votes each")
    parser.add_argument("--rounds", type=int, default=12, help="refreshes")
    parser.add_argument("--tracemalloc", action="store_true", help="also trace Python's heap")
    args = parser.parse_args()
    url = database_url(DEFAULT_DATABASE_URL)
    bench_database(url)
    recreate_database(url)
    tmp = Path(tempfile.mkdtemp(prefix="worker-memory-"))
    setup_django(url, tmp, STATIC_ROOT=str(tmp / "static"))
    from django.contrib.auth import get_user_model

    from config.celery import release_freed_memory
    from curation.agreement import reports

    curator = get_user_model().objects.create(username="bench-curator")
    built = agreement_bench.build_project(
        slug="mem", n_items=args.items, per_item=3, n_annotators=32, seed=1,
        curator=curator, images=agreement_bench.make_images(),
    )  # fmt: skip
    release_freed_memory()
    if args.tracemalloc:
        import tracemalloc

        tracemalloc.start()
    print(f"{'round':>5} | RSS after refresh_cache | Python heap held | RSS after trim")
    print(f"{'-':>5} | {rss_mb()} MB (before)")
    sizes = []
    try:
        for n in range(args.rounds):
            reports.refresh_cache(project=built["project"])
            after = rss_mb()
            held = "-"
            if args.tracemalloc:
                import gc

                gc.collect()
                held = f"{tracemalloc.get_traced_memory()[0] / 2**20:.1f} MB"
            release_freed_memory()
            sizes.append(rss_mb())
            print(f"{n + 1:>5} | {after} MB | {held} | {sizes[-1]} MB")
    finally:
        from django.db import connections

        connections.close_all()
        recreate_database(url, create=False)
    # Level after the first round (allocator noise aside): no leak.
    grew = sizes[-1] - sizes[0]
    print(f"growth from round 1 to {args.rounds}: {grew} MB")
    return 0 if grew <= 8 else 1


if __name__ == "__main__":
    sys.exit(main())
