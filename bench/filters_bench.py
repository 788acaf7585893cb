"""Release filters bench (issue 36 item 4): every benchmark-construction
filter and the length balancing at 100,000 items on PostgreSQL.

    .venv/bin/python bench/filters_bench.py [--items 100000] [--votes 3] [--keep]

Builds, in its own database (COPY: agreement_bench's build_project, simulated
votes and verdicts from the rule), a project of --items items with --votes
current votes each, one release and three ensemble entries: two evaluations
with a prediction per item in both orders and one complete project-level
judge run with a JudgeVote per item and order (each right 85 % of the time
per order).

Then the filter pass a release build runs (curation.releases.filters and
filter_outputs), timed, with its SQL statement count:

1. every matched pair with its filter (too easy + low consensus 0.7 +
   disagreement 0.8 / 0.8): the verdicts, the vote tallies and the
   ensemble (predictions UNION ALL the run's votes) read once each (three
   queries), decided in Python
   (curation.releases.filter_rules);
2. the counts per filter and domain (the manifest's), from those rows;
3. the length balancing (tolerance 0.02, seeded) of the pairs left (the
   matched ones left out by id, one array on PostgreSQL): one query and the
   seeded sampling;
4. the balance report's lengths of the released pairs: one query.

Target (issue 36): all filters on 100,000 items in <= 30 s. Exits 1 on a miss.
The database is named by DATABASE_URL (default below; the name must start with
``bench``): dropped and created at the start, dropped at the end unless --keep.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agreement_bench import build_project, make_images, vacuum_analyze
from harness import (
    Results,
    bench_database,
    copy_rows,
    database_url,
    finish,
    print_table,
    recreate_database,
    setup_django,
)

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/bench_filters"
TARGET_S = 30.0


def make_ensemble(project) -> list[int]:
    """A release and two evaluations, each with a prediction of every item in
    both orders, right 85 % of the time per order (COPY)."""
    import numpy as np

    from curation.models import Evaluation, ItemPrediction, Release, Verdict

    release = Release.objects.create(project=project, version="v0", domains=[], seed=1)
    rows = list(Verdict.objects.filter(project=project).values_list("item_id", "final_choice"))
    rng = np.random.default_rng(36)
    ids = []
    for name in ("judge-a", "judge-b"):
        ev = Evaluation.objects.create(release=release, name=name, predictions="p.jsonl")
        ids.append(ev.pk)
        right = rng.random((len(rows), 2)) < 0.85

        def predictions(ev=ev, right=right):
            for (item_id, label), (r1, r2) in zip(rows, right.tolist(), strict=True):
                label = label if label in ("1", "2") else "1"
                other = "2" if label == "1" else "1"
                yield (
                    ev.pk, item_id, f"i{item_id}", "c", "s", label,
                    label if r1 else other, label if r2 else other, True, r1,
                )  # fmt: skip

        copy_rows(
            ItemPrediction,
            ["evaluation_id", "item_id", "external_id", "category", "sub_bucket", "chosen",
             "choice", "swapped_choice", "has_swapped", "correct"],
            predictions(),
        )  # fmt: skip
    return ids


def make_project_run(project) -> int:
    """A complete judge run on the project: a JudgeVote per item in both
    orders, right 85 % of the time per order (COPY)."""
    import numpy as np

    from curation.models import JudgeRun, JudgeVote, Verdict

    run = JudgeRun.objects.create(
        project=project, name="project-judge", base_url="http://127.0.0.1:1/v1", model="m",
        max_tokens=16, timeout_seconds=1, swapped=True, status="complete",
    )  # fmt: skip
    rows = list(Verdict.objects.filter(project=project).values_list("item_id", "final_choice"))
    right = np.random.default_rng(37).random((len(rows), 2)) < 0.85

    def votes():
        for (item_id, label), pair in zip(rows, right.tolist(), strict=True):
            label = label if label in ("1", "2") else "1"
            other = "2" if label == "1" else "1"
            for order, r in zip(("original", "swapped"), pair, strict=True):
                yield (run.pk, item_id, order, label if r else other)

    copy_rows(JudgeVote, ["run_id", "item_id", "order", "choice"], votes())
    return run.pk


def timed(fn):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as ctx:
        t0 = time.perf_counter()
        value = fn()
        seconds = time.perf_counter() - t0
    return value, seconds, len(ctx.captured_queries)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=100_000, help="items (100000)")
    parser.add_argument("--votes", type=int, default=3, help="votes per item (3)")
    parser.add_argument("--keep", action="store_true", help="keep the database")
    args = parser.parse_args()

    url = database_url(DEFAULT_DATABASE_URL)
    name, _ = bench_database(url)
    tmp = Path(tempfile.mkdtemp(prefix="filters-bench-"))
    table = Results()
    try:
        print(f"creating database {name} and migrating ...", file=sys.stderr)
        recreate_database(url)
        setup_django(url, tmp, STATIC_ROOT=str(tmp / "static"))
        from django.contrib.auth import get_user_model

        t0 = time.perf_counter()
        curator = get_user_model().objects.create(username="bench-curator")
        print(f"building {args.items:,} items x {args.votes} votes ...", file=sys.stderr)
        big = build_project(
            slug="filters", n_items=args.items, per_item=args.votes, n_annotators=20, seed=36,
            curator=curator, images=make_images(),
        )  # fmt: skip
        project = big["project"]
        ids = make_ensemble(project)
        runs = [make_project_run(project)]
        vacuum_analyze()
        build_seconds = time.perf_counter() - t0

        from curation.releases import balance, filter_outputs, filters
        from curation.releases.service import included_verdicts

        domains = list(project.domains.values_list("slug", flat=True))
        spec = filters.check_filters(
            project=project, seed=7, too_easy_ensemble=ids, too_easy_judge_runs=runs,
            low_consensus=0.7, disagreement_ensemble=ids, disagreement_judge_runs=runs,
            disagreement_human=0.8, disagreement_share=0.8, balance_tolerance=0.02,
        )  # fmt: skip
        release = type("Release", (), {"filters": spec})()
        before = included_verdicts(project, domains)
        n_before = before.count()
        print("measuring ...", file=sys.stderr)
        load = os.getloadavg()[0]
        rows, s1, q1 = timed(lambda: filter_outputs.filtered_rows(release, before))
        counts, s2, q2 = timed(lambda: filter_outputs.counts_of(rows))
        (kept, drops, _), s3, q3 = timed(
            lambda: filter_outputs.balanced(release, filter_outputs.without_filtered(before, rows))
        )
        (pairs, _), s4, q4 = timed(lambda: filter_outputs.pair_lengths(kept))
        report = balance.length_report(pairs)
        total = s1 + s2 + s3 + s4
        add = table.add
        add("included pairs before the filters", f"{n_before:,} ({len(rows):,} matched)")
        per = {k: sum(v.values()) for k, v in counts.items()}
        add("matched: too easy / low consensus / disagreement",
            f"{per.get('too_easy', 0):,} / {per.get('low_consensus', 0):,} / "
            f"{per.get('disagreement', 0):,}")  # fmt: skip
        add("1. matched pairs with their filter", f"{s1:.2f} s, {q1} queries", "3 queries",
            q1 == 3)  # fmt: skip
        add("2. counts per filter and domain", f"{s2:.2f} s, {q2} queries", "0", q2 == 0)
        dropped = sum(len(v) for v in drops.values())
        add("3. length balancing (tolerance 0.02)",
            f"{s3:.2f} s, {q3} queries, {dropped:,} dropped", "1 query", q3 == 1)  # fmt: skip
        add("4. balance report lengths", f"{s4:.2f} s, {q4} queries", "1 query", q4 == 1)
        worst = max(abs(r["longer_share"] - 0.5) for r in report.values())
        add("   longest-chosen share after balancing, worst domain", f"0.5 ± {worst:.4f}",
            "<= 0.02", worst <= 0.02 + 1e-12)  # fmt: skip
        add("all filters (1-4)", f"{total:.2f} s", f"<= {TARGET_S:g} s", total <= TARGET_S)
        add("data (not measured)",
            f"{args.items:,} items x {args.votes} votes; made in {build_seconds:.1f} s; "
            f"load {load:.1f}")  # fmt: skip
        print_table(table.rows)
    finally:
        finish(url, tmp, keep=args.keep)
    return 1 if table.failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
