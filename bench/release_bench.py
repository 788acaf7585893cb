"""Release benchmark: building a benchmark release on PostgreSQL.

    .venv/bin/python bench/release_bench.py [--items 5211] [--big-items 100000]
                                            [--big-images 500] [--no-big] [--profile]
                                            [--keep]

Targets (from the issue): on PostgreSQL, a release of 5,211 items with images
builds in at most 15 s with peak memory at most 300 MB; a synthetic release of
100,000 items stays under 500 MB (the build streams, it never holds the
release in memory).

Two projects are made in the bench's own database, with the six Multimodal
RewardBench domains and its ID prefixes:

- ``mrb``: 5,211 items (``--items``), each with its own image (random-noise
  PNGs of 15-25 KB, about 20 KB on average, in a temporary MEDIA_ROOT);
- ``big``: 100,000 items (``--big-items``) sharing 500 images (``--big-images``)
  under distinct source paths, so the release still has one image file per
  item (and embeds one image per row in Parquet), as for a data set with an
  image per item.

Every item has 3 current votes (assignments and judgements, correctness
labels in the correctness domains) from 12 (``mrb``) or 60 (``big``)
annotators with pseudonyms, tallies that match them, and a verdict: agreed
(unanimous or majority) or resolved by a curator (adjudicated, with a
reason), all releasable; another 2 % of items are excluded and must stay out
of the release. Rows are written with COPY, then VACUUM ANALYZEd.

Measured: ``curation.releases.build.build_release`` of a release of every domain,
once per project, each in a fresh subprocess that does nothing else (Django
set up, the release row created, then the build): wall-clock time, CPU time,
peak memory (``ru_maxrss``, cross-checked with Linux's VmHWM), and the time
per phase (the functions of curation.releases.build/exporter/parquet are
wrapped with timers in that process). The parent never imports Django, numpy
or pyarrow: a child starts with its parent's peak RSS in ``ru_maxrss``.
``--profile`` also prints a cProfile of each build (slower; its figures are
then not checked).

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
    memory,
    migrate,
    next_ids,
    print_table,
    recreate_database,
    vm_hwm_kib,
)

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/bench_release"

# Targets (from the issue). Decimal megabytes: 300 MB is 286 MiB.
MRB_SECONDS = 15.0
MRB_PEAK_MB = 300
BIG_PEAK_MB = 500

# Multimodal RewardBench: domain slug, ID prefix and records per source (5,211).
MRB_SOURCES: tuple[tuple[str, str, int], ...] = (
    ("general_correctness", "vlfeedback", 623),
    ("general_preference", "wildvision", 654),
    ("knowledge", "mmmupro", 630),
    ("reasoning", "mathvista", 514),
    ("reasoning", "emmacoding", 582),
    ("safety", "pairs", 508),
    ("safety", "hatefulmemes", 500),
    ("vqa", "realworldqa", 1200),
)
VOTES_PER_ITEM = 3
EXCLUDED_SHARE = 0.02
WORDS = (
    "the", "image", "shows", "a", "chart", "with", "two", "bars", "red", "blue", "left",
    "right", "value", "answer", "because", "therefore", "step", "first", "second", "final",
    "total", "area", "angle", "triangle", "code", "function", "returns", "list", "error",
    "person", "holding", "sign", "text", "reads", "label", "count", "three", "four", "five",
    "object", "table", "graph", "axis", "increase", "decrease", "compare", "larger",
)  # fmt: skip


# --- Data (setup child) -------------------------------------------------------------------------


def scaled_sources(total: int) -> list[tuple[str, str, int]]:
    """MRB's per-source counts scaled to `total` (largest remainder)."""
    full = sum(n for _, _, n in MRB_SOURCES)
    shares = [n * total / full for _, _, n in MRB_SOURCES]
    counts = [int(s) for s in shares]
    for i in sorted(range(len(shares)), key=lambda i: counts[i] - shares[i])[: total - sum(counts)]:
        counts[i] += 1
    return [(d, p, n) for (d, p, _), n in zip(MRB_SOURCES, counts, strict=True)]


def noise_png(rng, side: int) -> bytes:
    """A distinct PNG of random pixels: about 3 * side**2 bytes (noise does not compress)."""
    import io

    from PIL import Image

    pixels = rng.integers(0, 256, (side, side, 3), dtype="uint8")
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, "PNG", compress_level=1)
    return out.getvalue()


def write_images(media: Path, n: int, seed: int) -> list[dict]:
    """`n` distinct images in the storage's layout (images/<sha[:2]>/<sha>.png)."""
    import hashlib

    import numpy as np

    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        side = int(rng.integers(71, 91))  # 15-25 KB, about 20 KB on average
        data = noise_png(rng, side)
        sha = hashlib.sha256(data).hexdigest()
        name = f"images/{sha[:2]}/{sha}.png"
        path = media / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        out.append({"sha256": sha, "file": name, "side": side, "size": len(data)})
    if len({i["sha256"] for i in out}) != n:
        raise SystemExit("generated images are not distinct")
    return out


def build_project(*, slug: str, n_items: int, n_images: int, n_annotators: int, seed: int) -> dict:
    """A project of `n_items` releasable items (+2 % excluded) with 3 votes each."""
    from datetime import UTC, datetime, timedelta

    import numpy as np
    from annotate_bench import MRB_PART_FIELDS, mrb_part_rows
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import transaction

    from annotate.models import (
        Assignment,
        ImageAsset,
        Item,
        ItemPart,
        Judgement,
        Membership,
        Project,
        shuffle_key,
    )
    from curation.models import Verdict

    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    corpus = " ".join(np.random.default_rng(seed + 1).choice(WORDS, 300_000))
    media = Path(settings.MEDIA_ROOT)
    images = write_images(media, n_images, seed)
    image_seconds = time.perf_counter() - start
    t0 = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)

    def words(low: int, high: int) -> str:
        length = int(rng.integers(low, high)) * 6
        at = int(rng.integers(0, len(corpus) - length))
        return corpus[at : at + length]

    n_excluded = round(n_items * EXCLUDED_SHARE)
    n_all = n_items + n_excluded
    user_model = get_user_model()
    with transaction.atomic():
        project = Project.objects.create(
            slug=slug, name=f"Release bench {slug}", votes_per_item=VOTES_PER_ITEM, seed=seed
        )
        domains = {d.slug: d for d in project.create_default_domains()}
        annotators = user_model.objects.bulk_create(
            [user_model(username=f"{slug}-a{n:02d}") for n in range(n_annotators)]
        )
        Membership.objects.bulk_create(
            [
                Membership(project=project, user=u, role="annotator", pseudonym=f"A{n:02d}")
                for n, u in enumerate(annotators)
            ]
        )
        assets = ImageAsset.objects.bulk_create(
            [
                ImageAsset(
                    sha256=i["sha256"],
                    file=i["file"],
                    format="PNG",
                    width=i["side"],
                    height=i["side"],
                    size_bytes=i["size"],
                )
                for i in images
            ],
            batch_size=2000,
        )

        # Per item: domain, external ID, the final choice and how it was reached.
        plan = []
        for domain, prefix, count in scaled_sources(n_all):
            plan += [(domains[domain], f"{prefix}_{n}") for n in range(count)]
        final = rng.integers(1, 3, n_all)  # canonical 1 / 2
        kind = rng.choice(4, n_all, p=[0.7, 0.2, 0.08, 0.02])  # unan., majority, adjud., tie-maj
        excluded = np.zeros(n_all, dtype=bool)
        excluded[rng.choice(n_all, n_excluded, replace=False)] = True
        # Votes (canonical choice codes 0: "1", 1: "2", 2: "tie") per item.
        win = final - 1
        lose = 1 - win
        votes = np.stack([win, win, win], axis=1)
        votes[kind == 1, 2] = lose[kind == 1]
        votes[kind == 2] = np.stack([win, lose, np.full(n_all, 2)], axis=1)[kind == 2]
        votes[kind == 3, 2] = 2
        votes[excluded] = np.stack([win, lose, np.full(n_all, 2)], axis=1)[excluded]
        tallies = np.stack([(votes == c).sum(axis=1) for c in range(3)], axis=1)
        # Correctness labels (response 1, response 2) that go with each choice,
        # and the item's label tallies (correct_1_yes/no/unsure, correct_2_...).
        labels = (("yes", "no"), ("no", "yes"), ("yes", "yes"))
        label_codes = np.array([[("yes", "no", "unsure").index(x) for x in p] for p in labels])
        labelled = [d.is_correctness for d, _ in plan]
        label_tallies = np.zeros((n_all, 6), dtype=np.int64)
        for response in range(2):
            for code in range(3):
                hits = (label_codes[votes, response] == code).sum(axis=1)
                label_tallies[:, 3 * response + code] = np.where(labelled, hits, 0)

        item_ids = next_ids(Item, n_all)
        # The items' parts (the content, issue 32), with the same texts as
        # the derived columns of the rows below.
        parts: list[tuple] = []

        def with_parts(row: tuple) -> tuple:
            parts.extend(mrb_part_rows(row[0], row[5], row[6], row[4], row[7], row[8]))
            return row

        copy_rows(
            Item,
            [
                "id", "project_id", "domain_id", "external_id", "prompt", "image_id",
                "image_path", "response_1", "response_2", "model_1", "model_2", "meta",
                "content_hash", "shuffle_key", "votes_needed", "live_assignments",
                "votes_1", "votes_2", "votes_tie", "correct_1_yes", "correct_1_no",
                "correct_1_unsure", "correct_2_yes", "correct_2_no", "correct_2_unsure",
            ],
            (
                with_parts((
                    item_id, project.pk, d.pk, ext_id, words(10, 60) + "?",
                    assets[i % len(assets)].pk,
                    f"images/{ext_id.rsplit('_', 1)[0]}/{ext_id}.png",
                    words(40, 400), words(40, 400), "bench-model-alpha", "bench-model-beta",
                    {"ID": ext_id}, f"{item_id:064x}", shuffle_key(project.seed, ext_id),
                    VOTES_PER_ITEM, VOTES_PER_ITEM, *tallies[i].tolist(),
                    *label_tallies[i].tolist(),
                ))
                for i, (item_id, (d, ext_id)) in enumerate(zip(item_ids, plan, strict=True))
            ),
        )  # fmt: skip
        copy_rows(ItemPart, MRB_PART_FIELDS, parts)
        parts.clear()

        n_votes = n_all * VOTES_PER_ITEM
        assignment_ids = next_ids(Assignment, n_votes)
        who = np.argsort(rng.random((n_all, n_annotators)), axis=1)[:, :VOTES_PER_ITEM].ravel()
        annotator_pk = np.array([u.pk for u in annotators])[who].tolist()
        swapped = (rng.random(n_votes) < 0.5).tolist()
        seconds = rng.gamma(4.0, 10.0, n_votes).tolist()
        claimed = [t0 + timedelta(seconds=40 * (j // n_annotators)) for j in range(n_votes)]
        copy_rows(
            Assignment,
            [
                "id", "item_id", "annotator_id", "status", "display_order", "claimed_at",
                "lease_expires_at", "submitted_at",
            ],
            (
                (
                    assignment_ids[j], item_ids[j // VOTES_PER_ITEM], annotator_pk[j],
                    "submitted", "21" if swapped[j] else "12", claimed[j],
                    claimed[j] + timedelta(minutes=30),
                    claimed[j] + timedelta(seconds=seconds[j]),
                )
                for j in range(n_votes)
            ),
        )  # fmt: skip
        choices = ("1", "2", "tie")
        flat = votes.ravel().tolist()
        confidence = rng.integers(1, 4, n_votes).tolist()
        copy_votes(
            [
                "assignment_id", "revision", "is_current", "choice", "correct_1", "correct_2",
                "confidence", "rationale", "seconds_spent", "active_seconds",
            ],
            (
                (
                    assignment_ids[j], 1, True, choices[flat[j]],
                    *(labels[flat[j]] if labelled[j // VOTES_PER_ITEM] else ("", "")),
                    confidence[j], "", seconds[j], 0.8 * seconds[j],
                )
                for j in range(n_votes)
            ),
        )  # fmt: skip

        def verdict(i: int, item_id: int) -> tuple:
            if excluded[i]:
                return (item_id, project.pk, "excluded", "", "", "Both answers are wrong.",
                        "both_bad")  # fmt: skip
            status, provenance, reason = {
                0: ("agreed", "unanimous", "3 of 3 votes"),
                1: ("agreed", "majority", "2 of 3 votes"),
                2: ("resolved", "adjudicated", "Response checked against the chart."),
                3: ("agreed", "majority", "2 of 3 votes, one tie"),
            }[int(kind[i])]
            return (item_id, project.pk, status, str(final[i]), provenance, reason, "")

        copy_rows(
            Verdict,
            ["item_id", "project_id", "status", "final_choice", "provenance", "reason",
             "exclusion_category"],
            (verdict(i, item_id) for i, item_id in enumerate(item_ids)),
        )  # fmt: skip

    from django.db import connection

    with connection.cursor() as cur:
        for model in (ImageAsset, Item, ItemPart, Assignment, Judgement, Verdict):
            cur.execute(f"VACUUM ANALYZE {model._meta.db_table}")
    sizes = [i["size"] for i in images]
    return {
        "project": project.pk,
        "items": n_all,
        "releasable": n_all - int(excluded.sum()),
        "excluded": int(excluded.sum()),
        "votes": n_votes,
        "images": len(images),
        "image_bytes": sum(sizes),
        "median_image_bytes": sorted(sizes)[len(sizes) // 2],
        "image_seconds": image_seconds,
        "seconds": time.perf_counter() - start,
    }


# --- The build, measured (build child) ------------------------------------------------------------


class Phases:
    """Wall time spent in wrapped functions (and in the items iterator)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def add(self, label: str, seconds: float) -> None:
        self.seconds[label] = self.seconds.get(label, 0.0) + seconds

    def wrap(self, owner, name: str, label: str) -> None:
        fn = getattr(owner, name)

        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.add(label, time.perf_counter() - start)

        setattr(owner, name, timed)

    def iterate(self, iterable, label: str):
        iterator = iter(iterable)
        while True:
            start = time.perf_counter()
            try:
                value = next(iterator)
            except StopIteration:
                self.add(label, time.perf_counter() - start)
                return
            self.add(label, time.perf_counter() - start)
            yield value


def measure_build(project_id: int, version: str, profile: bool) -> dict:
    from curation.models import Release, ReleaseItem, ReleaseStatus
    from curation.releases import build, exporter, manifest_sections, parquet

    phases = Phases()
    phases.wrap(manifest_sections, "agreement", "agreement (alpha, bootstrap CIs)")
    phases.wrap(manifest_sections, "extra", "decision rules per verdict (manifest)")
    phases.wrap(manifest_sections, "annotation", "annotation counts")
    phases.wrap(build, "_copy_image", "image files (link or copy)")
    phases.wrap(parquet.ParquetWriter, "write", "parquet rows")
    phases.wrap(parquet.ParquetWriter, "close", "parquet rows")
    phases.wrap(exporter, "file_checksums", "sha256 of every file (manifest)")
    phases.wrap(exporter, "write_zip", "zip")
    phases.wrap(build, "_publish", "publish (rename, ReleaseItem rows)")
    write_release = exporter.write_release

    def timed_write_release(folder, items, **kwargs):
        start = time.perf_counter()
        try:
            return write_release(
                folder, phases.iterate(items, "read items (queries, ExportItem)"), **kwargs
            )
        finally:
            phases.add("write_release", time.perf_counter() - start)

    exporter.write_release = timed_write_release
    sha256_file = exporter.sha256_file

    def timed_sha(path):
        if not str(path).endswith(".zip"):
            return sha256_file(path)
        start = time.perf_counter()
        try:
            return sha256_file(path)
        finally:
            phases.add("sha256 of the zip", time.perf_counter() - start)

    exporter.sha256_file = timed_sha

    from annotate.models import Domain

    slugs = Domain.objects.filter(project_id=project_id).values_list("slug", flat=True)
    release = Release.objects.create(
        project_id=project_id, version=version, domains=sorted(slugs), seed=2026
    )
    before = resource.getrusage(resource.RUSAGE_SELF)
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    start = time.perf_counter()
    built = build.build_release(release_id=release.pk)
    seconds = time.perf_counter() - start
    if profiler is not None:
        import io
        import pstats

        profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(40)
        sys.stderr.write(out.getvalue())
    after = resource.getrusage(resource.RUSAGE_SELF)
    hwm = vm_hwm_kib()

    # Checks (after the measurement: they do not count in the figures).
    from django.conf import settings

    folder = Path(settings.MEDIA_ROOT) / built.folder
    archive = Path(settings.MEDIA_ROOT) / built.archive
    import pyarrow.parquet as pq

    parquet_rows = sum(
        pq.ParquetFile(p).metadata.num_rows for p in (folder / "parquet").glob("*.parquet")
    )
    parquet_bytes = sum(p.stat().st_size for p in (folder / "parquet").glob("*.parquet"))
    n_images = sum(1 for p in (folder / "images").rglob("*") if p.is_file())
    s = phases.seconds
    inner = sum(
        s.get(k, 0.0)
        for k in (
            "read items (queries, ExportItem)",
            "image files (link or copy)",
            "parquet rows",
            "sha256 of every file (manifest)",
        )
    )
    s["JSON records, card (rest of write_release)"] = s.pop("write_release", 0.0) - inner
    s["other (ids, checks, cleanup)"] = seconds - sum(s.values())
    return {
        "seconds": seconds,
        "cpu_seconds": after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime,
        "maxrss_kib": after.ru_maxrss,
        "maxrss_before_kib": before.ru_maxrss,
        "vm_hwm_kib": hwm,
        "status": built.status,
        "ready": built.status == ReleaseStatus.READY,
        "total": built.manifest.get("total"),
        "release_items": ReleaseItem.objects.filter(release=built).count(),
        "parquet_rows": parquet_rows,
        "parquet_bytes": parquet_bytes,
        "release_images": n_images,
        "zip_bytes": archive.stat().st_size,
        "files": len(built.manifest.get("files", {})),
        "phases": s,
    }


# --- Subprocesses ---------------------------------------------------------------------------------


def child(mode: str, params: dict) -> None:
    import django

    django.setup()
    if mode == "migrate":
        migrate()
        result: dict = {}
    elif mode == "project":
        result = build_project(**params)
    elif mode == "build":
        from annotate.models import Project

        Project.objects.get(pk=params["project"])  # opens the connection
        result = measure_build(params["project"], params["version"], params["profile"])
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


def child_env(url: str, tmp: Path) -> dict[str, str]:
    return harness.child_env(
        url, tmp, STATIC_ROOT=str(tmp / "static"), CELERY_TASK_ALWAYS_EAGER="false"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=5211, help="items of the MRB-sized release")
    parser.add_argument("--big-items", type=int, default=100_000, help="items of the big one")
    parser.add_argument("--big-images", type=int, default=500, help="images the big one shares")
    parser.add_argument("--no-big", action="store_true", help="skip the big release")
    parser.add_argument("--profile", action="store_true", help="cProfile each build (stderr)")
    parser.add_argument("--keep", action="store_true", help="keep the temp folder and database")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], json.loads(args.child[1]))
        return 0
    if args.items < 1 or args.big_items < 1 or args.big_images < 1:
        parser.error("sizes must be at least 1")

    url = database_url(DEFAULT_DATABASE_URL)
    name, _ = bench_database(url)
    tmp = Path(tempfile.mkdtemp(prefix="release-bench-"))
    env = child_env(url, tmp)
    results = Results()
    rows, check = results.rows, results.check

    try:
        print(f"creating database {name} and migrating ...", file=sys.stderr)
        recreate_database(url)
        run_child("migrate", env)
        sizes = [("mrb", args.items, args.items, 12)]
        if not args.no_big:
            sizes.append(("big", args.big_items, args.big_images, 60))
        for slug, n_items, n_images, n_annotators in sizes:
            print(f"making project {slug}: {n_items:,} items, {n_images:,} images ...",
                  file=sys.stderr)  # fmt: skip
            made = run_child(
                "project",
                env,
                slug=slug,
                n_items=n_items,
                n_images=n_images,
                n_annotators=n_annotators,
                seed=7 if slug == "mrb" else 8,
            )
            print(f"building the {slug} release ...", file=sys.stderr)
            m = run_child("build", env, project=made["project"], version="v1",
                          profile=args.profile)  # fmt: skip
            n = made["releasable"]
            complete = (
                m["ready"]
                and m["total"] == n
                and m["release_items"] == n
                and m["parquet_rows"] == n
                and m["release_images"] == n  # one image file per item (distinct paths)
            )
            if not complete:
                print(f"unexpected release: {m} for {made}", file=sys.stderr)
            label = f"{n:,} items" + (f" ({n_images:,} shared images)" if slug == "big" else "")
            if slug == "mrb":
                time_target, mem_target = f"<= {MRB_SECONDS:.0f} s", MRB_PEAK_MB
                time_ok = m["seconds"] <= MRB_SECONDS
            else:
                time_target, mem_target, time_ok = "", BIG_PEAK_MB, True
            mem_ok = mb(m["maxrss_kib"]) <= mem_target
            if args.profile:  # the profiler's overhead: report, do not judge
                time_ok, time_target = True, "(profiled)"
            rows += [
                (
                    f"release of {label}: build (wall clock)",
                    f"{m['seconds']:.2f} s",
                    time_target,
                    check(time_ok and complete) if time_target else check(complete),
                ),
                ("  CPU time in the build (user + sys)", f"{m['cpu_seconds']:.2f} s", "", ""),
                (
                    "  peak memory (ru_maxrss of the process)",
                    memory(m),
                    f"<= {mem_target} MB",
                    check(mem_ok),
                ),
                (
                    "    of which Django + connection before the build",
                    f"{mb(m['maxrss_before_kib']):.0f} MB",
                    "",
                    "",
                ),
            ]
            for phase, seconds in sorted(m["phases"].items(), key=lambda kv: -kv[1]):
                rows.append((f"    {phase}", f"{seconds:.2f} s", "", ""))
            rows += [
                (
                    "  release",
                    f"{m['total']:,} records, {m['release_images']:,} image files, "
                    f"{m['files']:,} files; parquet {m['parquet_bytes'] / 1e6:.0f} MB; "
                    f"zip {m['zip_bytes'] / 1e6:.0f} MB",
                    "",
                    "",
                ),
                (
                    "  data (not measured)",
                    f"{made['items']:,} items ({made['excluded']:,} excluded), "
                    f"{made['votes']:,} votes, {made['images']:,} images "
                    f"(median {made['median_image_bytes'] / 1e3:.1f} kB); "
                    f"made in {made['seconds']:.1f} s",
                    "",
                    "",
                ),
            ]
        print(f"\nRelease bench, PostgreSQL database {name}, {os.cpu_count()} CPUs:\n")
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
