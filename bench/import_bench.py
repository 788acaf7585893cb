"""Import benchmark: a Multimodal RewardBench-sized data set into PostgreSQL.

    .venv/bin/python bench/import_bench.py [--items N] [--keep] [--data DIR]
                                           [--no-thumbnails] [--no-tracemalloc]
                                           [--parquet]

Generates N records (default 5,211, the size of Multimodal RewardBench) over
the six categories, each with its own ~20 KB image (mostly JPEG, one in eight
PNG), then imports them through ``annotate.importing.service.import_items_from_paths``
into a fresh database. Targets (from the issue): the import, image validation
and hashing included, under 10 s with peak memory under 500 MB; thumbnails are
left to the background task, which is timed separately.

With ``--parquet``: N (default 100,000) chosen/rejected pairs with their
~20 KB images in the rows of one Hugging Face parquet file
(``bench/parquet_data.py``), imported through the same function; targets
60 s and 500 MB.

Every measurement runs in a fresh subprocess that does nothing else, so neither
data generation nor an earlier measurement inflates its peak memory
(``ru_maxrss``). The script owns one database, named by DATABASE_URL (default
below, it must start with ``bench``): it is dropped and created at the start
and dropped at the end. Exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import random
import resource
import shutil
import sys
import tempfile
import time
from multiprocessing import Pool
from pathlib import Path

import harness
from harness import (
    Results,
    bench_database,
    database_url,
    mb,
    memory,
    migrate,
    print_table,
    recreate_database,
    vm_hwm_kib,
)

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/bench_import"
TARGET_SECONDS = 10.0
PARQUET_TARGET_SECONDS = 60.0
PARQUET_ITEMS = 100_000
TARGET_PEAK_MB = 500  # decimal megabytes: 500 MB is 476.8 MiB
IMAGE_TARGET_BYTES = 20 * 1024
IMAGE_SIDE = 256
PNG_EVERY = 8  # one image in eight is a PNG, the rest JPEG

# Multimodal RewardBench: export Category, and (ID prefix, records) per source.
# The counts are the benchmark's own (5,211 in all); --items scales them.
MRB_SOURCES: tuple[tuple[str, str, int], ...] = (
    ("open_generation/correctness_task", "vlfeedback", 623),
    ("open_generation/preference_task", "wildvision", 654),
    ("knowledge", "mmmupro", 630),
    ("reasoning", "mathvista", 514),  # reasoning/math: the ID starts with "math"
    ("reasoning", "emmacoding", 582),
    ("safety", "pairs", 508),  # safety/bias: the ID starts with "pairs"
    ("safety", "hatefulmemes", 500),
    ("vqa", "realworldqa", 1200),
)
VOCABULARY = (
    "the image shows a chart with two bars red blue left right value answer "
    "because therefore step first second final total area angle triangle code "
    "function returns list error person holding sign text reads label count "
    "three four five object table graph axis increase decrease compare larger"
)
WORDS = tuple(VOCABULARY.split())


# --- Data set generation (not measured) ---------------------------------------------


def source_counts(total: int) -> list[tuple[str, str, int]]:
    """Scale the benchmark's per-source counts to `total` (largest remainder)."""
    full = sum(n for _, _, n in MRB_SOURCES)
    shares = [(cat, prefix, n * total / full) for cat, prefix, n in MRB_SOURCES]
    counts = [int(share) for _, _, share in shares]
    order = sorted(range(len(shares)), key=lambda i: counts[i] - shares[i][2])
    for i in order[: total - sum(counts)]:
        counts[i] += 1
    return [(cat, prefix, n) for (cat, prefix, _), n in zip(shares, counts, strict=True)]


def render_image(seed: int, fmt: str, knob: float) -> bytes:
    """A distinct 256x256 picture: shapes plus noise. `knob` is the JPEG quality
    or the share of PNG pixels replaced by noise; both set the file size."""
    import numpy as np
    from PIL import Image, ImageDraw

    rng = np.random.default_rng(seed)
    side = IMAGE_SIDE
    if fmt == "JPEG":
        t = (np.add.outer(np.arange(side), np.arange(side)) / (2 * side - 2))[..., None]
        c0, c1 = rng.integers(0, 256, 3), rng.integers(0, 256, 3)
        img = Image.fromarray((c0 * (1 - t) + c1 * t).astype(np.uint8))
    else:
        img = Image.new("RGB", (side, side), tuple(int(v) for v in rng.integers(0, 256, 3)))
    draw = ImageDraw.Draw(img)
    for _ in range(int(rng.integers(4, 9))):
        x0, y0 = (int(v) for v in rng.integers(0, side - 20, 2))
        x1, y1 = x0 + int(rng.integers(10, 120)), y0 + int(rng.integers(10, 120))
        colour = tuple(int(v) for v in rng.integers(0, 256, 3))
        shape = draw.ellipse if rng.random() < 0.5 else draw.rectangle
        shape([x0, y0, x1, y1], fill=colour)
    out = io.BytesIO()
    if fmt == "JPEG":
        noisy = np.asarray(img).astype(np.int16) + rng.normal(0, 16, (side, side, 1)).astype(
            np.int16
        )
        Image.fromarray(np.clip(noisy, 0, 255).astype(np.uint8)).save(
            out, "JPEG", quality=int(knob)
        )
    else:
        pixels = np.array(img)
        mask = rng.random((side, side)) < knob
        pixels[mask] = rng.integers(0, 256, (int(mask.sum()), 3))
        Image.fromarray(pixels).save(out, "PNG")
    return out.getvalue()


def tune_knob(fmt: str, low: float, high: float, *, integer: bool) -> float:
    """Bisect the size knob so a sample of images averages IMAGE_TARGET_BYTES."""
    sample = range(10_000_000, 10_000_024)
    for _ in range(7 if integer else 10):
        mid = round((low + high) / 2) if integer else (low + high) / 2
        mean = sum(len(render_image(s, fmt, mid)) for s in sample) / len(sample)
        if mean < IMAGE_TARGET_BYTES:
            low = mid
        else:
            high = mid
        if integer and high - low <= 1:
            break
    return low


def _write_image(job: tuple[int, str, str, float, str]) -> tuple[int, str]:
    seed, fmt, rel, knob, root = job
    data = render_image(seed, fmt, knob)
    Path(root, rel).write_bytes(data)
    return len(data), hashlib.sha256(data).hexdigest()


def generate_dataset(folder: Path, items: int) -> dict:
    """Write mrb.json and its images under `folder`; return a summary."""
    rng = random.Random(5211)
    jpeg_quality = tune_knob("JPEG", 30, 95, integer=True)
    png_noise = tune_knob("PNG", 0.0, 0.1, integer=False)

    def words(low: int, high: int) -> str:
        return " ".join(rng.choices(WORDS, k=rng.randint(low, high)))

    records, jobs = [], []
    serial = 0
    for category, prefix, count in source_counts(items):
        (folder / "images" / prefix).mkdir(parents=True, exist_ok=True)
        for n in range(count):
            fmt = "PNG" if serial % PNG_EVERY == PNG_EVERY - 1 else "JPEG"
            rel = f"images/{prefix}/{n}.{'png' if fmt == 'PNG' else 'jpg'}"
            jobs.append((serial, fmt, rel, png_noise if fmt == "PNG" else jpeg_quality))
            records.append(
                {
                    "ID": f"{prefix}_{n}",
                    "Text": words(10, 60) + "?",
                    "Image": rel,
                    "Output1": words(40, 400),
                    "Output2": words(40, 400),
                    "Better": rng.choice(("Output1", "Output2")),
                    "Category": category,
                }
            )
            serial += 1
    with Pool(os.cpu_count() or 1) as pool:
        written = pool.map(_write_image, [(*job, str(folder)) for job in jobs], chunksize=64)
    digests = {sha for _, sha in written}
    if len(digests) != len(written):
        raise SystemExit(f"generated images are not distinct ({len(digests)} of {len(written)})")
    dataset = folder / "mrb.json"
    dataset.write_text(json.dumps(records, indent=1, ensure_ascii=False), encoding="utf-8")
    sizes = sorted(size for size, _ in written)
    return {
        "items": items,
        "json_bytes": dataset.stat().st_size,
        "image_bytes": sum(sizes),
        "median_image_bytes": sizes[len(sizes) // 2],
        "jpeg_quality": jpeg_quality,
        "png_noise": png_noise,
        "pngs": sum(1 for job in jobs if job[1] == "PNG"),
    }


# --- Measurements, each in a fresh subprocess ------------------------------------------------


def run_child(mode: str, env: dict[str, str], **params) -> dict:
    return harness.run_child(
        __file__,
        ["--child", mode, json.dumps(params)],
        env,
        failure=f"the {mode} step failed (exit {{returncode}})",
    )


def child(mode: str, params: dict) -> None:
    """Runs in the subprocess: set up Django, do one thing, print JSON."""
    import tracemalloc

    if mode == "generate":
        start = time.perf_counter()
        if params.get("parquet"):
            summary = generate_parquet_dataset(Path(params["folder"]), params["items"])
        else:
            summary = generate_dataset(Path(params["folder"]), params["items"])
        summary["seconds"] = time.perf_counter() - start
        print(json.dumps(summary, default=str))
        return

    import django

    django.setup()
    from annotate.importing.service import import_items_from_paths, make_thumbnails
    from annotate.models import ImageAsset, Project

    if mode == "setup":
        migrate()
        project = Project.objects.create(slug="bench", name="Import bench")
        project.create_default_domains()
        print(json.dumps({"project": project.pk}))
        return
    if mode == "thumbnails":
        ids = list(ImageAsset.objects.values_list("pk", flat=True))
        start = time.perf_counter()
        made = make_thumbnails(image_ids=ids)
        print(json.dumps({"seconds": time.perf_counter() - start, "made": made}))
        return
    project = Project.objects.get(pk=params["project"])  # also opens the connection
    before = resource.getrusage(resource.RUSAGE_SELF)
    if mode == "tracemalloc":
        tracemalloc.start()
    start = time.perf_counter()
    images = Path(params["images"]) if params["images"] else None
    result = import_items_from_paths(
        project=project, dataset=Path(params["dataset"]), images=images
    )
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    hwm_kib = vm_hwm_kib()
    traced = tracemalloc.get_traced_memory()[1] if mode == "tracemalloc" else None
    # Thumbnails must have been queued for a worker, not made during the import.
    inline_thumbnails = ImageAsset.objects.exclude(thumbnail="").count()
    broker = Path(os.environ["DATA_DIR"], "celery", "out")
    queued = sum(1 for _ in broker.iterdir()) if broker.is_dir() else 0
    print(
        json.dumps(
            {
                "seconds": seconds,
                "cpu_seconds": after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime,
                "maxrss_kib": after.ru_maxrss,
                "maxrss_before_kib": before.ru_maxrss,
                "vm_hwm_kib": hwm_kib,
                "tracemalloc_peak": traced,
                "created": result.created,
                "unchanged": result.unchanged,
                "images_stored": result.images_stored,
                "inline_thumbnails": inline_thumbnails,
                "queued_messages": queued,
            }
        )
    )


def generate_parquet_dataset(folder: Path, items: int) -> dict:
    from parquet_data import generate_parquet

    knobs = {
        "JPEG": tune_knob("JPEG", 30, 95, integer=True),
        "PNG": tune_knob("PNG", 0.0, 0.1, integer=False),
    }

    def words(rng: random.Random, low: int, high: int) -> str:
        return " ".join(rng.choices(WORDS, k=rng.randint(low, high)))

    return generate_parquet(
        folder,
        items,
        render=render_image,
        knobs=knobs,
        words=words,
        categories=source_counts(items),
    )


def child_env(url: str, tmp: Path, media: str) -> dict[str, str]:
    # A configured Redis could carry the thumbnail task to someone's worker,
    # pointing at ids in the wrong database: child_env drops REDIS_URL, so the
    # embedded filesystem broker is used.
    return harness.child_env(
        url,
        tmp,
        MEDIA_ROOT=str(tmp / media),
        CELERY_TASK_ALWAYS_EAGER="false",  # thumbnails are queued, not made inline
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--items", type=int, help="records to import (5211; 100,000 with --parquet)"
    )
    parser.add_argument(
        "--parquet", action="store_true", help="one Hugging Face parquet file, images in the rows"
    )
    parser.add_argument("--keep", action="store_true", help="keep the temp folder and database")
    parser.add_argument(
        "--no-tracemalloc", action="store_true", help="skip the extra tracemalloc import"
    )
    parser.add_argument(
        "--no-thumbnails", action="store_true", help="skip timing the thumbnail task"
    )
    parser.add_argument(
        "--data",
        type=Path,
        help="reuse the data set in DIR/dataset (from an earlier --keep run) instead of "
        "generating one; --items is then ignored",
    )
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], json.loads(args.child[1]))
        return 0
    if args.items is None:
        args.items = PARQUET_ITEMS if args.parquet else 5211
    if args.items < 1:
        parser.error("--items must be at least 1")
    target = PARQUET_TARGET_SECONDS if args.parquet else TARGET_SECONDS

    url = database_url(DEFAULT_DATABASE_URL)
    name, _ = bench_database(url)
    tmp = Path(tempfile.mkdtemp(prefix="import-bench-"))
    n = args.items
    results = Results()
    try:
        if args.data:
            folder = args.data.resolve() / "dataset"
            gen = json.loads((folder / "summary.json").read_text())
            n = gen["items"]
        else:
            folder = tmp / "dataset"
            print(f"generating {n} records and images in {folder} ...", file=sys.stderr)
            # In a subprocess too: a child inherits its parent's peak RSS at spawn
            # in ru_maxrss, so this process stays small (no numpy, no Pillow).
            gen = run_child(
                "generate", dict(os.environ), folder=str(folder), items=n, parquet=args.parquet
            )
            (folder / "summary.json").write_text(json.dumps(gen))
        if args.parquet:
            paths = {"dataset": str(folder / "pairs.parquet"), "images": ""}
        else:
            paths = {"dataset": str(folder / "mrb.json"), "images": str(folder)}

        print(f"creating database {name} and migrating ...", file=sys.stderr)
        recreate_database(url)
        env = child_env(url, tmp, "media")
        project = run_child("setup", env)["project"]

        print("measuring the import ...", file=sys.stderr)
        first = run_child("import", env, project=project, **paths)
        print("measuring the re-import ...", file=sys.stderr)
        again = run_child("import", env, project=project, **paths)
        thumbs = None
        if not args.no_thumbnails:
            print(
                "making thumbnails (the background task, run in the foreground) ...",
                file=sys.stderr,
            )
            thumbs = run_child("thumbnails", env)
        traced = None
        if not args.no_tracemalloc:
            print("measuring tracemalloc's peak on a fresh database ...", file=sys.stderr)
            recreate_database(url)
            env2 = child_env(url, tmp, "media-tracemalloc")
            project2 = run_child("setup", env2)["project"]
            traced = run_child("tracemalloc", env2, project=project2, **paths)

        rows, check = results.rows, results.check
        first_ok = first["created"] == n and first["images_stored"] == n
        again_ok = again["created"] == 0 and again["unchanged"] == n
        rows += [
            (
                f"import {n:,} items + {n:,} images (wall clock)",
                f"{first['seconds']:.2f} s",
                f"< {target:.0f} s",
                check(first["seconds"] < target and first_ok),
            ),
            (
                "  CPU time in the import (user + sys, all threads)",
                f"{first['cpu_seconds']:.2f} s",
                "",
                "",
            ),
            (
                "import peak memory (ru_maxrss of the process)",
                memory(first),
                f"< {TARGET_PEAK_MB} MB",
                check(mb(first["maxrss_kib"]) < TARGET_PEAK_MB),
            ),
            (
                "  of which Django + connection before import",
                f"{mb(first['maxrss_before_kib']):.0f} MB",
                "",
                "",
            ),
            (
                "thumbnails left to the background task",
                f"{first['inline_thumbnails']} made inline, "
                f"{first['queued_messages']} task messages queued (thumbnails, Markdown)",
                "0 inline",
                check(first["inline_thumbnails"] == 0),
            ),
            (
                "re-import, no-op (wall clock)",
                f"{again['seconds']:.2f} s",
                f"< {target:.0f} s",
                check(again["seconds"] < target and again_ok),
            ),
            (
                "re-import peak memory (ru_maxrss)",
                memory(again),
                f"< {TARGET_PEAK_MB} MB",
                check(mb(again["maxrss_kib"]) < TARGET_PEAK_MB),
            ),
        ]
        if traced is not None:
            rows.append(
                (
                    "import tracemalloc peak (Python heap)",
                    f"{traced['tracemalloc_peak'] / 1e6:.0f} MB",
                    "",
                    "",
                )
            )
        if thumbs is not None:
            rows.append(
                (
                    f"thumbnails, background task ({thumbs['made']:,} made)",
                    f"{thumbs['seconds']:.2f} s",
                    "",
                    "",
                )
            )
        rows += [
            (
                "data set (not measured)",
                (
                    f"{gen['parquet_bytes'] / 1e6:.0f} MB parquet"
                    if args.parquet
                    else f"{gen['json_bytes'] / 1e6:.1f} MB JSON"
                )
                + f"; {n:,} images "
                f"({gen['pngs']:,} PNG), {gen['image_bytes'] / 1e6:.0f} MB, "
                f"median {gen['median_image_bytes'] / 1e3:.1f} kB",
                "",
                "",
            ),
            ("data set generation (not measured)", f"{gen['seconds']:.1f} s", "", ""),
        ]
        if not (first_ok and again_ok):
            print(f"unexpected import results: {first} / {again}", file=sys.stderr)
        print(f"\nImport bench, PostgreSQL database {name}, {os.cpu_count()} CPUs:\n")
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
