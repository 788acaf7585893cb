"""Curation bench: the contested queue and the adjudication page on PostgreSQL.

    .venv/bin/python bench/curation_bench.py [--items 5211] [--votes 5]
                                             [--requests 20] [--keep]

Builds, in its own database, a project of 5,211 items over the six
Multimodal RewardBench domains with 5 current votes each from 20 annotators
(with pseudonyms), using agreement_bench.build_project (COPY, simulated votes,
correctness labels in the correctness domains, verdicts from the contested
rule). Then every judgement gets a rationale, and exactly 15 % of the
verdicts are made contested with a contest_kind (the rest stay agreed or
needs_votes), their updated_at spread over weeks. The agreement cache is
filled (reports.refresh_cache: the adjudication page reads its "annotators"
payload). A second, small project (300 items x 3 votes) is built the same
way to check that the query counts do not depend on the numbers of items and
votes.

Measured through django.test.Client as a logged-in curator (force_login),
DEBUG off, --requests requests each after 3 warm-ups (median, p95, and the
SQL queries of one request with CaptureQueriesContext):

1. the contested queue, default (GET /p/<slug>/curation/);
2. the queue with a domain filter, sort=split and a text search (q);
3. the adjudication page of a contested item.

Target (from the issue): each page runs a constant number of queries
whatever the number of items and votes (the same as on the small project)
and renders in <= 150 ms (median and p95 here). Exits 1 on a miss.

The script owns one database, named by DATABASE_URL (default below; the name
must start with ``bench``): dropped and created at the start, dropped at the
end unless --keep.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agreement_bench import T0, build_project, make_images, percentile, vacuum_analyze
from harness import (
    Results,
    bench_database,
    database_url,
    finish,
    print_table,
    recreate_database,
    setup_django,
)

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/bench_curation"
PAGE_MS = 150.0  # target from the issue
CONTESTED_SHARE = 0.15
KINDS = ("split", "tie_majority", "no_majority", "problem", "contradiction", "gold")
RATIONALES = (
    "Response {c} reads the chart correctly; the other one miscounts the bars.",
    "The left answer skips a step of the reasoning, so I picked response {c}.",
    "Both are close, but response {c} names the label on the sign exactly.",
    "Response {c} is safer and still answers the question in the image.",
)


def shape_verdicts(project, seed: int) -> int:
    """Every judgement gets a rationale; exactly CONTESTED_SHARE of the
    verdicts contested (with a kind), the others agreed or needs_votes."""
    from django.db import connection, transaction

    from annotate.models import Assignment, Item, Judgement
    from curation.models import Verdict, VerdictStatus

    rng = np.random.default_rng(seed)
    item_ids = np.array(sorted(Item.objects.filter(project=project).values_list("pk", flat=True)))
    n_contested = round(CONTESTED_SHARE * len(item_ids))
    chosen = rng.choice(item_ids, n_contested, replace=False)
    kinds = rng.choice(len(KINDS), n_contested)
    j_table, a_table = Judgement._meta.db_table, Assignment._meta.db_table
    v_table = Verdict._meta.db_table
    with transaction.atomic(), connection.cursor() as cur:
        cases = " ".join(
            f"WHEN {i} THEN replace(%s, '{{c}}', j.choice)" for i in range(len(RATIONALES))
        )
        cur.execute(
            f"UPDATE {j_table} j SET rationale = CASE (j.id %% {len(RATIONALES)}) {cases} END "
            f"FROM {a_table} a, {Item._meta.db_table} i "
            "WHERE a.id = j.assignment_id AND i.id = a.item_id AND i.project_id = %s",
            [*RATIONALES, project.pk],
        )
        # Those the rule contested but not chosen wait for votes instead.
        Verdict.objects.filter(project=project, status=VerdictStatus.CONTESTED).exclude(
            item_id__in=chosen.tolist()
        ).update(status=VerdictStatus.NEEDS_VOTES, contest_kind="", reason="")
        for k, kind in enumerate(KINDS):
            ids = chosen[kinds == k].tolist()
            Verdict.objects.filter(item_id__in=ids).update(
                status=VerdictStatus.CONTESTED,
                contest_kind=kind,
                final_choice="",
                provenance="",
                reason=f"bench: {kind}",
            )
        # Spread updated_at (the queue's order) over about six weeks.
        cur.execute(
            f"UPDATE {v_table} SET updated_at = %s + (random() * interval '42 days') "
            "WHERE project_id = %s",
            [T0, project.pk],
        )
    return n_contested


def build_queue_projects(
    *, slug: str, items: int, votes: int, seed: int, small_votes: int = 3
) -> tuple:
    """A bench curator, a project of `items` x `votes` with 15 % contested
    (shape_verdicts) and a small one of 300 items to compare query counts
    with: (curator, big, small, contested), build_project's dicts."""
    from django.contrib.auth import get_user_model

    curator = get_user_model().objects.create(username="bench-curator")
    images = make_images()
    print(f"building {items:,} items x {votes} votes ...", file=sys.stderr)
    big = build_project(
        slug=slug, n_items=items, per_item=votes, n_annotators=20, seed=seed,
        curator=curator, images=images,
    )  # fmt: skip
    contested = shape_verdicts(big["project"], seed=1)
    print(f"building the small project (300 items x {small_votes} votes) ...", file=sys.stderr)
    small = build_project(
        slug="small", n_items=300, per_item=small_votes, n_annotators=8, seed=300,
        curator=curator, images=images,
    )  # fmt: skip
    shape_verdicts(small["project"], seed=2)
    return curator, big, small, contested


def measure(client, url: str, requests: int) -> dict:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    for _ in range(3):  # warm-up: templates, connection, caches
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    n_queries = len(queries.captured_queries)
    query_ms = sum(float(q["time"]) for q in queries.captured_queries) * 1000
    times = []
    for _ in range(requests):
        start = time.perf_counter()
        client.get(url)
        times.append(time.perf_counter() - start)
    return {
        "times": times,
        "median": statistics.median(times),
        "p95": percentile(times, 95),
        "queries": n_queries,
        "query_ms": query_ms,
        "bytes": len(response.content),
        "body": response.content.decode(),
    }


def pages(project, params: dict) -> dict[str, str]:
    from urllib.parse import urlencode

    from django.urls import reverse

    from curation.models import Verdict, VerdictStatus

    queue = reverse("curation_queue", args=[project.slug])
    item_id = (
        Verdict.objects.filter(project=project, status=VerdictStatus.CONTESTED)
        .order_by("updated_at", "pk")
        .values_list("item_id", flat=True)
        .first()
    )
    return {
        "queue (default)": queue,
        "queue (domain + sort=split + q)": f"{queue}?{urlencode(params)}",
        "adjudication of a contested item": reverse("adjudicate", args=[project.slug, item_id]),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=5211, help="items (5211)")
    parser.add_argument("--votes", type=int, default=5, help="votes per item (5)")
    parser.add_argument("--requests", type=int, default=20, help="requests timed per page (20)")
    parser.add_argument("--keep", action="store_true", help="keep the database")
    args = parser.parse_args()

    url = database_url(DEFAULT_DATABASE_URL)
    name, _ = bench_database(url)  # refuses a name not starting with "bench"
    tmp = Path(tempfile.mkdtemp(prefix="curation-bench-"))
    table = Results()
    rows, check = table.rows, table.check

    started = time.perf_counter()
    try:
        print(f"creating database {name} and migrating ...", file=sys.stderr)
        recreate_database(url)
        setup_django(url, tmp, STATIC_ROOT=str(tmp / "static"))
        from django.db.models import Q
        from django.test import Client

        from curation.agreement import reports
        from curation.models import Verdict, VerdictStatus

        t0 = time.perf_counter()
        curator, big, small, n_contested = build_queue_projects(
            slug="mrb", items=args.items, votes=args.votes, seed=5211
        )
        vacuum_analyze()
        print("filling the agreement caches (refresh_cache) ...", file=sys.stderr)
        reports.refresh_cache(project=big["project"])
        reports.refresh_cache(project=small["project"])
        build_seconds = time.perf_counter() - t0

        client = Client()
        client.force_login(curator)
        params = {"domain": "reasoning", "sort": "split", "q": "triangle"}
        print("measuring the small project ...", file=sys.stderr)
        small_results = {
            label: measure(client, page, 3)
            for label, page in pages(small["project"], params).items()
        }
        print("measuring the large project ...", file=sys.stderr)
        results = {
            label: measure(client, page, args.requests)
            for label, page in pages(big["project"], params).items()
        }

        project = big["project"]
        statuses = dict(
            (s, Verdict.objects.filter(project=project, status=s).count())
            for s in VerdictStatus.values
        )
        filtered = (
            Verdict.objects.filter(
                project=project,
                status=VerdictStatus.CONTESTED,
                item__domain__slug=params["domain"],
            )
            .filter(
                Q(item__external_id__icontains=params["q"]) | Q(item__prompt__icontains=params["q"])
            )
            .count()
        )
        for label, r in results.items():
            base = small_results[label]
            rows.append((f"{label}: median", f"{r['median'] * 1000:.1f} ms", "<= 150 ms",
                         check(r["median"] * 1000 <= PAGE_MS)))  # fmt: skip
            rows.append((f"  p95 of {len(r['times'])}", f"{r['p95'] * 1000:.1f} ms",
                         "<= 150 ms", check(r["p95"] * 1000 <= PAGE_MS)))  # fmt: skip
            rows.append((
                "  SQL queries (300 items x 3 votes -> this project)",
                f"{base['queries']} -> {r['queries']} ({r['query_ms']:.1f} ms in SQL)",
                "constant",
                check(base["queries"] == r["queries"]),
            ))  # fmt: skip
            rows.append(("  response size", f"{r['bytes'] / 1024:.0f} KB", "", ""))
        counts = ", ".join(f"{s} {n:,}" for s, n in statuses.items() if n)
        rows.append((
            "data (not measured)",
            f"{args.items:,} items x {args.votes} votes ({big['votes']:,}); {counts}; "
            f"{n_contested:,} contested ({filtered} match the filtered queue); "
            f"made in {build_seconds:.1f} s",
            "",
            "",
        ))  # fmt: skip
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(
            f"\nCuration bench, PostgreSQL database {name}, {os.cpu_count()} CPUs "
            f"(load average {load}), {time.perf_counter() - started:.0f} s in all:\n"
        )
        print_table(rows)
    finally:
        finish(url, tmp, keep=args.keep)
    return 1 if table.failed else 0


if __name__ == "__main__":
    sys.exit(main())
