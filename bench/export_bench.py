"""Raw-export benchmark: streaming a project's votes on PostgreSQL.

    .venv/bin/python bench/export_bench.py [--votes 1000000] [--runs 3]
                                           [--formats csv,jsonl,parquet] [--keep]

Target (issue 22): the raw-vote export of 1,000,000 votes streams in at most
30 s with RSS flat (the export never holds the votes in memory).

One project is made in the bench's own database: the six Multimodal
RewardBench domains, 60 annotators with pseudonyms, and `--votes` judgement
rows: 3 current votes per item (correctness labels in the correctness
domains, rationales of 60-240 characters, confidence, times) plus one
superseded revision for every 24th vote, so about 4 % of the rows are old
revisions. Rows are written with COPY, then VACUUM ANALYZEd.

Measured, per format and run, each in a fresh subprocess that does nothing
else: the export page's view (curation.exports.views.export_votes, called
with a RequestFactory request of a superuser, so the role check, the query,
the encoder and StreamingHttpResponse all run) and the whole of its
streaming_content read and counted: time to the first piece and to the last,
rows and bytes, RSS (VmRSS) sampled as the pieces arrive, and the peak
(ru_maxrss). "RSS flat" is judged on the samples: RSS after the whole file
exceeds RSS after its first tenth by at most FLAT_MB, which no export that
kept its rows (1M rows are hundreds of MB as Python objects) could meet.
Runs alternate formats (csv, jsonl, parquet, csv, ...) so that a slow minute
of a shared machine does not land on one format; the table gives the median
and the min-max over runs.

The script owns one database, named by DATABASE_URL (default below; the name
must start with ``bench``): dropped and created at the start, dropped at the
end unless --keep. Exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import harness
from harness import (
    Results,
    bench_database,
    copy_rows,
    copy_votes,
    database_url,
    mb,
    migrate,
    next_ids,
    print_table,
    recreate_database,
)

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/bench_export"

# Targets (from the issue): 1M votes in at most 30 s, RSS flat.
SECONDS = 30.0
# "Flat": RSS after the whole file at most this much above RSS after its first tenth.
FLAT_MB = 25
VOTES_PER_ITEM = 3
REVISED_EVERY = 24
N_ANNOTATORS = 60
DOMAINS = ("general_correctness", "general_preference", "knowledge", "reasoning", "safety", "vqa")
WORDS = (
    "the", "left", "answer", "reads", "chart", "wrong", "because", "counts", "bars", "correct",
    "response", "misses", "the", "label", "image", "shows", "two", "better", "clearer", "step",
)  # fmt: skip


# --- Data (setup child) ---------------------------------------------------------------------


def build_project(*, n_votes: int, seed: int) -> dict:
    """A project whose judgement table holds `n_votes` rows (see the module doc)."""
    from datetime import UTC, datetime, timedelta

    import numpy as np
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction

    from annotate.models import Assignment, ImageAsset, Item, Judgement, Membership, Project

    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    # Rows: current votes plus one old revision per REVISED_EVERY current votes.
    n_current = n_votes * REVISED_EVERY // (REVISED_EVERY + 1)
    n_items = -(-n_current // VOTES_PER_ITEM)
    n_current = n_items * VOTES_PER_ITEM
    n_old = n_votes - n_current
    t0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    corpus = " ".join(np.random.default_rng(seed + 1).choice(WORDS, 200_000))
    user_model = get_user_model()
    with transaction.atomic():
        project = Project.objects.create(
            slug="export", name="Export bench", votes_per_item=VOTES_PER_ITEM, seed=seed
        )
        domains = project.create_default_domains()
        correctness = {d.pk for d in domains if d.is_correctness}
        annotators = user_model.objects.bulk_create(
            [user_model(username=f"export-a{n:02d}") for n in range(N_ANNOTATORS)]
        )
        Membership.objects.bulk_create(
            [
                Membership(project=project, user=u, role="annotator", pseudonym=f"A{n:02d}")
                for n, u in enumerate(annotators)
            ]
        )
        image = ImageAsset.objects.create(
            sha256="0" * 64, file="images/00/bench.png", format="PNG", width=1, height=1,
            size_bytes=1,
        )  # fmt: skip
        item_ids = next_ids(Item, n_items)
        domain_of = [domains[i % len(domains)].pk for i in range(n_items)]
        copy_rows(
            Item,
            ["id", "project_id", "domain_id", "external_id", "prompt", "image_id", "image_path",
             "response_1", "response_2", "content_hash", "votes_needed", "live_assignments",
             "votes_1"],
            (
                (item_id, project.pk, domain_of[i], f"item_{i}", "Which is right?", image.pk,
                 f"img/{i}.png", "A.", "B.", f"{item_id:064x}", VOTES_PER_ITEM,
                 VOTES_PER_ITEM, VOTES_PER_ITEM)
                for i, item_id in enumerate(item_ids)
            ),
        )  # fmt: skip
        assignment_ids = next_ids(Assignment, n_current)
        who = np.argsort(rng.random((n_items, N_ANNOTATORS)), axis=1)[:, :VOTES_PER_ITEM].ravel()
        annotator_pk = np.array([u.pk for u in annotators])[who].tolist()
        swapped = (rng.random(n_current) < 0.5).tolist()
        seconds = rng.gamma(4.0, 10.0, n_current).tolist()
        claimed = [t0 + timedelta(seconds=20 * j) for j in range(n_current)]
        copy_rows(
            Assignment,
            ["id", "item_id", "annotator_id", "status", "display_order", "claimed_at",
             "lease_expires_at", "submitted_at"],
            (
                (assignment_ids[j], item_ids[j // VOTES_PER_ITEM], annotator_pk[j], "submitted",
                 "21" if swapped[j] else "12", claimed[j], claimed[j] + timedelta(minutes=30),
                 claimed[j] + timedelta(seconds=seconds[j]))
                for j in range(n_current)
            ),
        )  # fmt: skip
        choices = rng.choice(["1", "2", "tie"], n_current, p=[0.47, 0.47, 0.06]).tolist()
        labels = rng.choice(["yes", "no", "unsure"], (n_current, 2), p=[0.6, 0.3, 0.1]).tolist()
        confidence = rng.integers(1, 4, n_current).tolist()
        lengths = rng.integers(60, 240, n_current).tolist()
        starts = rng.integers(0, len(corpus) - 240, n_current).tolist()
        revised = set(range(0, n_current, REVISED_EVERY)[:n_old])

        def judgements():
            for j in range(n_current):
                labelled = domain_of[j // VOTES_PER_ITEM] in correctness
                c1, c2 = labels[j] if labelled else ("", "")
                text = corpus[starts[j] : starts[j] + lengths[j]]
                at = claimed[j] + timedelta(seconds=seconds[j])
                if j in revised:  # the first thought, superseded
                    yield (
                        assignment_ids[j],
                        1,
                        False,
                        "tie",
                        c2,
                        c1,
                        1,
                        "first: " + text,
                        seconds[j] / 2,
                        seconds[j] / 3,
                        at - timedelta(seconds=5),
                    )
                yield (assignment_ids[j], 2 if j in revised else 1, True, choices[j], c1, c2,
                       confidence[j], text, seconds[j], 0.8 * seconds[j], at)  # fmt: skip

        written = copy_votes(
            ["assignment_id", "revision", "is_current", "choice", "correct_1", "correct_2",
             "confidence", "rationale", "seconds_spent", "active_seconds", "created_at"],
            judgements(),
        )  # fmt: skip
        user_model.objects.create_superuser("export-admin", "", "pw")
    with connection.cursor() as cur:
        for model in (Item, Assignment, Judgement, Membership):
            cur.execute(f"VACUUM ANALYZE {model._meta.db_table}")
    return {
        "items": n_items,
        "votes": written,
        "old_revisions": n_old,
        "seconds": time.perf_counter() - start,
    }


# --- The export, measured (export child) --------------------------------------------------------


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def measure_export(file_format: str) -> dict:
    from django.contrib.auth import get_user_model
    from django.test import RequestFactory

    from curation.exports.views import export_votes

    user = get_user_model().objects.get(username="export-admin")
    request = RequestFactory().get("/p/export/exports/votes/", {"file_format": file_format})
    request.user = user
    rss_before = rss_kib()
    maxrss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    cpu_start = time.process_time()
    response = export_votes(request, "export")
    first = None
    n_bytes = 0
    samples = []  # (bytes so far, RSS KiB)
    last_sample = 0.0
    for piece in response.streaming_content:
        if first is None:
            first = time.perf_counter() - start
        n_bytes += len(piece)
        now = time.perf_counter()
        if now - last_sample >= 0.25:
            samples.append((n_bytes, rss_kib()))
            last_sample = now
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    samples.append((n_bytes, rss_kib()))
    response.close()
    # RSS after the first tenth of the file, at the middle, and at the end.
    at_tenth = next(r for b, r in samples if b >= n_bytes / 10)
    at_half = next(r for b, r in samples if b >= n_bytes / 2)
    return {
        "format": file_format,
        "seconds": seconds,
        "cpu_seconds": cpu,
        "first_piece_seconds": first,
        "bytes": n_bytes,
        "rss_before_kib": rss_before,
        "rss_tenth_kib": at_tenth,
        "rss_half_kib": at_half,
        "rss_end_kib": samples[-1][1],
        "samples": len(samples),
        "maxrss_before_kib": maxrss_before,
        "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }


def count_rows(file_format: str, path: str) -> int:
    """Rows of an exported file (a check that the file is whole)."""
    if file_format == "parquet":
        import pyarrow.parquet as pq

        return pq.ParquetFile(path).metadata.num_rows
    import csv

    with open(path, newline="", encoding="utf-8") as f:
        if file_format == "csv":
            return sum(1 for _ in csv.reader(f)) - 1
        return sum(1 for _ in f)


def save_export(file_format: str, path: str) -> dict:
    """Write one export to `path` (not timed): the whole-file check."""
    from django.contrib.auth import get_user_model
    from django.test import RequestFactory

    from curation.exports.views import export_votes

    request = RequestFactory().get("/p/export/exports/votes/", {"file_format": file_format})
    request.user = get_user_model().objects.get(username="export-admin")
    with open(path, "wb") as out:
        for piece in export_votes(request, "export").streaming_content:
            out.write(piece)
    return {"rows": count_rows(file_format, path)}


# --- Subprocesses ---------------------------------------------------------------------------


def child(mode: str, params: dict) -> None:
    import django

    django.setup()
    if mode == "migrate":
        migrate()
        result: dict = {}
    elif mode == "project":
        result = build_project(**params)
    elif mode == "export":
        from annotate.models import Project

        Project.objects.get(slug="export")  # opens the connection
        result = measure_export(params["format"])
    elif mode == "save":
        result = save_export(params["format"], params["path"])
    else:
        raise SystemExit(f"unknown mode {mode}")
    print(json.dumps(result, default=str))


def run_child(mode: str, env: dict[str, str], **params) -> dict:
    return harness.run_child(
        __file__,
        ["--child", mode, json.dumps(params)],
        env,
        failure=f"the {mode} step failed (exit {{returncode}})",
        stderr=False,
    )


def spread(values: list[float], unit: str, digits: int = 1) -> str:
    """The median and the min-max of `values`."""
    med = statistics.median(values)
    if len(values) == 1:
        return f"{med:.{digits}f} {unit}"
    return f"{med:.{digits}f} {unit} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--votes", type=int, default=1_000_000, help="judgement rows")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per format")
    parser.add_argument("--formats", default="csv,jsonl,parquet", help="comma-separated")
    parser.add_argument("--keep", action="store_true", help="keep the temp folder and database")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], json.loads(args.child[1]))
        return 0
    file_formats = [f for f in args.formats.split(",") if f]
    if args.votes < 100 or args.runs < 1 or not file_formats:
        parser.error("--votes at least 100, --runs at least 1, at least one format")
    if not set(file_formats) <= {"csv", "jsonl", "parquet"}:
        parser.error("formats are csv, jsonl and parquet")

    url = database_url(DEFAULT_DATABASE_URL)
    name, _ = bench_database(url)
    tmp = Path(tempfile.mkdtemp(prefix="export-bench-"))
    env = harness.child_env(url, tmp, CELERY_TASK_ALWAYS_EAGER="false")
    results = Results()
    try:
        print(f"creating database {name} and migrating ...", file=sys.stderr)
        recreate_database(url)
        run_child("migrate", env)
        print(f"making a project of {args.votes:,} votes ...", file=sys.stderr)
        made = run_child("project", env, n_votes=args.votes, seed=22)
        runs: dict[str, list[dict]] = {f: [] for f in file_formats}
        for n in range(args.runs):
            for file_format in file_formats:
                print(f"run {n + 1}/{args.runs}: {file_format} ...", file=sys.stderr)
                runs[file_format].append(run_child("export", env, format=file_format))
        for file_format in file_formats:
            path = str(tmp / f"votes.{file_format}")
            saved = run_child("save", env, format=file_format, path=path)
            measured = runs[file_format]
            seconds = [m["seconds"] for m in measured]
            growth = [mb(m["rss_end_kib"] - m["rss_tenth_kib"]) for m in measured]
            whole = saved["rows"] == made["votes"]
            label = f"{made['votes']:,} votes as {file_format}"
            results.add(
                f"{label}: streamed (wall clock)",
                spread(seconds, "s"),
                f"<= {SECONDS:.0f} s",
                max(seconds) <= SECONDS and whole,
            )
            cpu = [m["cpu_seconds"] for m in measured]
            results.add("  CPU time (user + sys)", spread(cpu, "s"))
            results.add(
                "  time to the first piece",
                spread([m["first_piece_seconds"] for m in measured], "s", 2),
            )
            results.add(
                "  RSS at 10 % / 50 % / 100 % of the file",
                " / ".join(
                    f"{statistics.median(mb(m[key]) for m in measured):.0f}"
                    for key in ("rss_tenth_kib", "rss_half_kib", "rss_end_kib")
                )
                + " MB (median)",
            )
            results.add(
                "  RSS growth, 10 % to 100 % of the file",
                spread(growth, "MB"),
                f"<= {FLAT_MB} MB (flat)",
                max(growth) <= FLAT_MB,
            )
            results.add(
                "  peak RSS (ru_maxrss); before the export",
                f"{spread([mb(m['maxrss_kib']) for m in measured], 'MB', 0)}; "
                f"{statistics.median(mb(m['maxrss_before_kib']) for m in measured):.0f} MB",
            )
            results.add(
                "  file",
                f"{statistics.median(m['bytes'] for m in measured) / 1e6:.0f} MB, "
                f"{saved['rows']:,} rows read back",
                f"{made['votes']:,} rows",
                whole,
            )
        results.add(
            "data (not measured)",
            f"{made['items']:,} items, {made['votes']:,} votes "
            f"({made['old_revisions']:,} superseded revisions), {N_ANNOTATORS} annotators; "
            f"made in {made['seconds']:.0f} s",
        )
        print(
            f"\nExport bench, PostgreSQL database {name}, {os.cpu_count()} CPUs, "
            f"{args.runs} run(s) per format (median, min-max):\n"
        )
        print_table(results.rows)
    finally:
        if args.keep:
            print(f"\nkept {tmp} and database {name}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
            recreate_database(url, create=False)
    return 1 if results.failed else 0


if __name__ == "__main__":
    sys.exit(main())
