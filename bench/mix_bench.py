"""Training-mix benchmark: a mix of 3 sources x 5,000 items on PostgreSQL.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_mix \\
        .venv/bin/python bench/mix_bench.py [--items 5000] [--runs 3] [--keep]

Target (issue 22): a mix of 3 sources x 5,000 items in at most 15 s.

Three projects are made with release_bench's generator (``build_project``:
one ~20 KB noise PNG per item, 3 votes per item, 2 % excluded); the third
project's first 10 % of items are then made duplicates of the first
project's (same image, same prompt upper-cased with extra white space), so
deduplication has work to do. A release of the first project is built (not
measured). The mix's sources: that release, the whole second project, the
whole third project capped at 4,000; every provenance, dedup on.

Measured: ``curation.releases.mixes.build.build_mix`` in a fresh subprocess per
run (Django set up, the mix recorded, then the build): wall-clock time, CPU
time, peak memory. ``--runs`` runs (each a new version of the mix) give the
run-to-run spread (min / median / max). Exits 1 when the median misses the
target. The database's name must start with ``bench``; it is dropped at the
end unless --keep.
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
import release_bench
from harness import Results, bench_database, database_url, mb, print_table, recreate_database

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/bench_mix"
TARGET_SECONDS = 15.0
DUPLICATE_SHARE = 0.10
CAP = 4000


def make_duplicates(first: int, third: int) -> int:
    """Give the third project's first 10 % of items the image and (differently
    written) prompt of the first project's items."""
    from django.db import transaction

    from annotate.models import Item

    ours = list(Item.objects.filter(project_id=first).order_by("pk").values_list(
        "image_id", "prompt"))  # fmt: skip
    theirs = list(Item.objects.filter(project_id=third).order_by("pk"))
    n = int(len(theirs) * DUPLICATE_SHARE)
    with transaction.atomic():
        for item, (image_id, prompt) in zip(theirs[:n], ours[:n], strict=True):
            item.image_id = image_id
            item.prompt = "  " + prompt.upper().replace(" ", "   ") + "\n"
        Item.objects.bulk_update(theirs[:n], ["image_id", "prompt"], batch_size=1000)
    return n


def build_release_of(project_id: int) -> None:
    from annotate.models import Domain
    from curation.models import Release
    from curation.releases.build import build_release

    slugs = Domain.objects.filter(project_id=project_id).values_list("slug", flat=True)
    release = Release.objects.create(project_id=project_id, version="v1", domains=sorted(slugs))
    assert build_release(release_id=release.pk).status == "ready"


def measure(version: str, slugs: list[str]) -> dict:
    from django.contrib.auth import get_user_model

    from curation.models import Mix
    from curation.releases import exporter, trl
    from curation.releases.mixes import build as mix_build
    from curation.releases.mixes import files as mix_files
    from curation.releases.mixes.build import build_mix
    from curation.releases.mixes.service import PROVENANCES, STATUSES, SourceChoice, create_mix

    phases = release_bench.Phases()
    phases.wrap(mix_build, "read_candidates", "read sources (one query each)")
    phases.wrap(mix_build, "select", "filters, limits, dedup (pure)")
    phases.wrap(mix_files, "write_mix", "write files (JSONL, parquet, images, card, sha256)")
    phases.wrap(exporter, "file_checksums", "  of which sha256 of every file")
    phases.wrap(trl.TrlWriter, "write_row", "  of which parquet rows")
    phases.wrap(mix_build, "_copy_image", "  of which image files (link)")
    phases.wrap(exporter, "write_zip", "zip")
    phases.wrap(mix_build, "_publish", "publish (rename, ready row)")
    user, _ = get_user_model().objects.get_or_create(username="bench-mixer", is_superuser=True)
    mix = create_mix(
        user=user, name="bench", version=version, statuses=list(STATUSES),
        provenances=list(PROVENANCES), seed=2026, enqueue=False,
        sources=[SourceChoice(slugs[0], "v1"), SourceChoice(slugs[1]),
                 SourceChoice(slugs[2], cap=CAP)],
    )  # fmt: skip
    before = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    built = build_mix(mix_id=mix.pk)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    assert isinstance(built, Mix)
    return {
        "seconds": seconds,
        "cpu_seconds": after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime,
        "maxrss_kib": after.ru_maxrss,
        "status": built.status,
        "error": built.error,
        "total": built.manifest.get("total"),
        "report": built.report.get("sources", []),
        "zip_bytes": built.size_bytes,
        "files": len(built.manifest.get("files", {})),
        "phases": phases.seconds,
    }


def child(mode: str, params: dict) -> None:
    import django

    django.setup()
    if mode == "migrate":
        harness.migrate()
        result: dict = {}
    elif mode == "project":
        result = release_bench.build_project(**params)
    elif mode == "prepare":
        result = {"duplicates": make_duplicates(params["first"], params["third"])}
        build_release_of(params["first"])
    elif mode == "measure":
        result = measure(params["version"], params["slugs"])
    else:
        raise SystemExit(f"unknown mode {mode}")
    print(json.dumps(result, default=str))


def run_child(mode: str, env: dict[str, str], **params) -> dict:
    return harness.run_child(__file__, ["--child", mode, json.dumps(params)], env,
                             failure=f"the {mode} step failed (exit {{returncode}})",
                             stderr=False)  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=5000, help="releasable items per source")
    parser.add_argument("--runs", type=int, default=3, help="measured builds (spread)")
    parser.add_argument("--keep", action="store_true", help="keep the temp folder and database")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], json.loads(args.child[1]))
        return 0
    url = database_url(DEFAULT_DATABASE_URL)
    name, _ = bench_database(url)
    tmp = Path(tempfile.mkdtemp(prefix="mix-bench-"))
    env = release_bench.child_env(url, tmp)
    results = Results()
    rows, check = results.rows, results.check
    try:
        print(f"creating database {name} and migrating ...", file=sys.stderr)
        recreate_database(url)
        run_child("migrate", env)
        slugs, made = ["src-a", "src-b", "src-c"], []
        # build_project adds 2 % excluded items to the releasable ones asked for.
        for n, slug in enumerate(slugs):
            print(f"making project {slug}: {args.items:,} items ...", file=sys.stderr)
            made.append(run_child("project", env, slug=slug, n_items=args.items,
                                  n_images=args.items, n_annotators=12, seed=11 + n))  # fmt: skip
        prepared = run_child("prepare", env, first=made[0]["project"], third=made[2]["project"])
        runs = []
        for n in range(args.runs):
            print(f"building mix run {n + 1} of {args.runs} ...", file=sys.stderr)
            runs.append(run_child("measure", env, version=f"v{n + 1}", slugs=slugs))
        bad = [r for r in runs if r["status"] != "ready"]
        if bad:
            print(f"failed builds: {bad}", file=sys.stderr)
        seconds = sorted(r["seconds"] for r in runs)
        median = statistics.median(seconds)
        last = runs[-1]
        candidates = sum(m["releasable"] for m in made)
        rows += [
            (f"mix of 3 sources ({candidates:,} candidate pairs): build, median of {len(runs)}",
             f"{median:.2f} s", f"<= {TARGET_SECONDS:.0f} s",
             check(median <= TARGET_SECONDS and not bad)),
            ("  runs (min / median / max)",
             " / ".join(f"{s:.2f}" for s in (seconds[0], median, seconds[-1])) + " s",
             "", ""),
            ("  spread (max - min) / median", f"{(seconds[-1] - seconds[0]) / median:.0%}", "", ""),
            ("  CPU time (median)", f"{statistics.median(r['cpu_seconds'] for r in runs):.2f} s",
             "", ""),
            ("  peak memory (max ru_maxrss)", f"{max(mb(r['maxrss_kib']) for r in runs):.0f} MB",
             "", ""),
            ("  mix", f"{last['total']:,} records, {last['files']:,} files, zip "
             f"{last['zip_bytes'] / 1e6:.0f} MB", "", ""),
        ]  # fmt: skip
        for rep in last["report"]:
            rows.append((f"    {rep['source']}", f"{rep['candidates']:,} candidates, "
                         f"{rep['duplicates']:,} duplicates, {rep['over_limit']:,} over cap, "
                         f"{rep['kept']:,} kept", "", ""))  # fmt: skip
        for phase in last["phases"]:
            values = sorted(r["phases"].get(phase, 0.0) for r in runs)
            rows.append((f"    {phase}", f"{statistics.median(values):.2f} s (median)", "", ""))
        rows.append(("  duplicates planted in src-c", f"{prepared['duplicates']:,}", "", ""))
        print(f"\nMix bench, PostgreSQL database {name}, {os.cpu_count()} CPUs, "
              f"load average {os.getloadavg()[0]:.1f}:\n")  # fmt: skip
        print_table(rows)
    finally:
        if args.keep:
            print(f"\nkept {tmp} and database {name}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
            recreate_database(url, create=False)
    return 1 if results.failed else 0


if __name__ == "__main__":
    sys.exit(main())
