"""Data grid bench (issue 31): the grid's first page and filtered pages at
100,000 items on PostgreSQL.

    .venv/bin/python bench/grid_bench.py [--items 100000] [--votes 3]
                                         [--requests 20] [--runs 1] [--keep]

Builds, in its own database, a project of --items items over the six
Multimodal RewardBench domains with --votes current votes each (COPY,
simulated votes, verdicts from the contested rule: agreement_bench's
build_project), 15 % of them contested (curation_bench's shape_verdicts),
every 97th item's first vote flagging a problem and every 50th item with
gold; then a small project (300 items) to check that query counts do not
grow with the project.

Measured through django.test.Client as a logged-in curator, DEBUG off,
--requests requests per page after 3 warm-ups (median, p95, SQL queries of
one request):

1. GET /p/<slug>/items/ (the first page, import order);
2. status=contested, domain=reasoning, sort=-agreement;
3. votes_min=3, agreement_max=0.7, flagged=yes (the EXISTS filter);
4. text searches (q) over IDs and prompts, through the trigram indexes of
   annotate's migration 0016: an ID fragment; a selective phrase (every
   400th prompt has a sentence of its own, as real prompts have: 250
   matches); and, reported but not judged, a phrase of the bench's corpus
   (47 words drawn at random, so every trigram of it is in most prompts and
   the index narrows nothing: real text is not like that);
5. the API's first page, page_size=200.

--runs N repeats the timed requests N times (after one build) and reports
each page's median and p95 as the median of the runs with their range.

Target (issue 31): p95 <= 150 ms for each judged page (the median run's),
constant queries. Exits 1 on a miss. The database is named by DATABASE_URL
(default below; the name must start with ``bench``): dropped and created at
the start, dropped at the end unless --keep.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agreement_bench import vacuum_analyze
from curation_bench import build_queue_projects, measure
from harness import (
    Results,
    bench_database,
    database_url,
    finish,
    print_table,
    recreate_database,
    setup_django,
)

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/bench_grid"
PAGE_MS = 150.0  # target from the issue


# A sentence of its own in every 400th prompt (real prompts have their own
# words; the bench's are drawn from 47), and the search that finds them.
RARE_SENTENCE = "Is the pelican on the weathervane facing north?"
SELECTIVE_PHRASE = "pelican on the weathervane"
COMMON_PHRASE = "label axis triangle"


def decorate(project) -> None:
    """Problem flags on every 97th item's first vote; gold on every 50th
    item; RARE_SENTENCE in every 400th item's prompt."""
    from django.db import connection, transaction

    from annotate.models import Assignment, Item, Judgement

    j, a, i = Judgement._meta.db_table, Assignment._meta.db_table, Item._meta.db_table
    with transaction.atomic(), connection.cursor() as cur:
        cur.execute(
            f"UPDATE {j} SET flagged_problem = true, problem_reason = 'bench' WHERE id IN ("
            f"  SELECT min(j2.id) FROM {j} j2 JOIN {a} a2 ON a2.id = j2.assignment_id"
            f"  JOIN {i} i2 ON i2.id = a2.item_id"
            f"  WHERE i2.project_id = %s AND i2.id %% 97 = 0 GROUP BY a2.item_id)",
            [project.pk],
        )
        cur.execute(
            f"UPDATE {i} SET gold_choice = '1' WHERE project_id = %s AND id %% 50 = 0",
            [project.pk],
        )
        cur.execute(
            f"UPDATE {i} SET prompt = prompt || ' ' || %s WHERE project_id = %s AND id %% 400 = 0",
            [RARE_SENTENCE, project.pk],
        )


def pages(project) -> dict[str, str]:
    from urllib.parse import urlencode

    from django.urls import reverse

    grid = reverse("item_grid", args=[project.slug])
    api = reverse("api_items", args=[project.slug])
    return {
        "grid, first page": grid,
        "contested + domain + sort=-agreement": grid
        + "?"
        + urlencode({"status": "contested", "domain": "reasoning", "sort": "-agreement"}),
        "votes>=3 + share<=0.7 + flagged": grid
        + "?"
        + urlencode({"votes_min": 3, "agreement_max": 0.7, "flagged": "yes"}),
        "text search: an ID fragment": grid + "?" + urlencode({"q": "reasoning_123"}),
        "text search: a selective phrase": grid + "?" + urlencode({"q": SELECTIVE_PHRASE}),
        COMMON: grid + "?" + urlencode({"q": COMMON_PHRASE}),
        "API, 200 rows": api + "?page_size=200",
    }


# Reported, not judged: every trigram of a phrase of the bench's 47-word
# corpus is in most of the 100,000 prompts, so the trigram index narrows
# nothing and every prompt is matched; real prompts are not like that.
COMMON = "text search: a corpus phrase (not judged)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=100_000, help="items (100000)")
    parser.add_argument("--votes", type=int, default=3, help="votes per item (3)")
    parser.add_argument("--requests", type=int, default=20, help="requests timed per page (20)")
    parser.add_argument("--runs", type=int, default=1, help="timed rounds after one build (1)")
    parser.add_argument("--keep", action="store_true", help="keep the database")
    args = parser.parse_args()

    url = database_url(DEFAULT_DATABASE_URL)
    name, _ = bench_database(url)
    tmp = Path(tempfile.mkdtemp(prefix="grid-bench-"))
    table = Results()
    rows, check = table.rows, table.check
    started = time.perf_counter()
    try:
        print(f"creating database {name} and migrating ...", file=sys.stderr)
        recreate_database(url)
        setup_django(url, tmp, STATIC_ROOT=str(tmp / "static"))
        from django.test import Client

        t0 = time.perf_counter()
        curator, big, small, _ = build_queue_projects(
            slug="grid", items=args.items, votes=args.votes, seed=31, small_votes=args.votes
        )
        decorate(big["project"])
        decorate(small["project"])
        vacuum_analyze()
        build_seconds = time.perf_counter() - t0

        client = Client()
        client.force_login(curator)
        small_results = {k: measure(client, u, 3) for k, u in pages(small["project"]).items()}
        runs: dict[str, list[dict]] = {k: [] for k in small_results}
        load_before = os.getloadavg()[0]
        for run in range(args.runs):
            print(f"measuring (run {run + 1} of {args.runs}) ...", file=sys.stderr)
            for k, u in pages(big["project"]).items():
                runs[k].append(measure(client, u, args.requests))
        # Not more statements than any page of the small project (a page
        # with no rows skips the thumbnails and flags: fewer, not more).
        most = max(b["queries"] for b in small_results.values())
        for label, results in runs.items():
            base = small_results[label]
            medians = sorted(r["median"] * 1000 for r in results)
            p95s = sorted(r["p95"] * 1000 for r in results)
            p95 = statistics.median(p95s)
            spread = f" (runs {p95s[0]:.1f}-{p95s[-1]:.1f})" if len(results) > 1 else ""
            rows.append((f"{label}: median", f"{statistics.median(medians):.1f} ms"
                         + (f" (runs {medians[0]:.1f}-{medians[-1]:.1f})" if spread else ""),
                         "", ""))  # fmt: skip
            if label == COMMON:
                rows.append((f"  p95 of {args.requests}", f"{p95:.1f} ms{spread}", "", ""))
            else:
                rows.append((f"  p95 of {args.requests}", f"{p95:.1f} ms{spread}",
                             "<= 150 ms", check(p95 <= PAGE_MS)))  # fmt: skip
            sql = sorted(r["query_ms"] for r in results)
            queries = max(r["queries"] for r in results)
            rows.append((
                "  SQL queries (300 items -> this project)",
                f"{base['queries']} -> {queries} ({statistics.median(sql):.1f} ms in SQL)",
                f"<= {most}",
                check(queries <= most),
            ))  # fmt: skip
        rows.append((
            "data (not measured)",
            f"{args.items:,} items x {args.votes} votes ({big['votes']:,}); "
            f"made in {build_seconds:.1f} s",
            "",
            "",
        ))  # fmt: skip
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(
            f"\nGrid bench, PostgreSQL database {name}, {os.cpu_count()} CPUs (load average "
            f"{load_before:.1f} before measuring, {load} after), "
            f"{time.perf_counter() - started:.0f} s in all:\n"
        )
        print_table(rows)
    finally:
        finish(url, tmp, keep=args.keep)
    return 1 if table.failed else 0


if __name__ == "__main__":
    sys.exit(main())
