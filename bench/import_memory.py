"""Peak memory of parsing and validating a large dataset file.

    .venv/bin/python bench/import_memory.py --mb 50 [--mb 500] [--keep DIR]

Writes a Multimodal RewardBench JSON of about N MB (realistic records of a
few kB, non-ASCII letters, one em dash; one image), then in a fresh process
opens it as annotate.importing.service does (mapped from disk, pages given back as
the passes move on) and runs annotate.importing.parse.parse_dataset (everything
before the database: UTF-8 check, two streaming passes, record validation,
images), then decodes the records again one at a time as the write does
(ParsedDataset.iter_records, content hashes), and prints the growth of peak
RSS (ru_maxrss, mapped file pages included) over the process's baseline.
Since issue 21c only a small RecordRef is kept per record, so the figure
grows with the number of records, not the texts (before: about 1.2x the
file, every record's text held until written; before issue 21b about twice
the file).

    DATABASE_URL=postgres://…/bench_… .venv/bin/python bench/import_memory.py --hostile

refuses issue 29's hostile uploads (HOSTILE_SHAPES) through the whole import
against PostgreSQL, three times each, in fresh processes, and prints the
peak RSS growth and wall time of each refusal (min / median / max).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

MEASURE = """
import gc, resource, sys, time
import django
django.setup()
from pathlib import Path
from annotate.importing.sources import DirectoryImageSource
from annotate.importing.records import ImageLimits
from annotate.importing.parse import PairsOptions, content_hash, parse_dataset
from annotate.importing.jsonscan import open_dataset_file
path = Path(sys.argv[1])
gc.collect()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
with open_dataset_file(path) as data:  # as annotate.importing.service reads it
    parsed = parse_dataset(
        data, filename=path.name, fmt=None, pairs_options=PairsOptions(),
        known_categories={"vqa": "vqa"}, images=DirectoryImageSource(path.parent),
        limits=ImageLimits(),
    )
    # What annotate.importing.service does next, less the database: decode again,
    # one record at a time, and fingerprint each.
    for record in parsed.iter_records():
        content_hash(record, parsed.images[record.image_ref].sha256)
seconds = time.perf_counter() - started
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(len(parsed.records), (after - before) // 1024, round(seconds, 1))
"""


# --- Hostile uploads (issue 29) -------------------------------------------------------
# Each shape is refused; what counts is what refusing it costs the web worker.
# Written and measured in children so the parent stays small (a child starts
# with its parent's peak in ru_maxrss; VmHWM is the child's own).

HOSTILE_SHAPES = {
    "parquet-256x4MiB": "parquet of 256 rows x a 4 MiB string (one, through the dictionary), zstd",
    "parquet-300MB-cell": "parquet of one row with a 300 MB string, zstd",
    "mmrb2-empty-pairs": 'zip of an MMRB2 task file {"pairs": [{},{},...]} (~100 kB)',
}

HOSTILE_MAKE = """
import json, sys, zipfile
from pathlib import Path
import pyarrow as pa, pyarrow.parquet as pq
root = Path(sys.argv[1])
def row(n, chosen):
    return {"id": str(n), "prompt": "p", "chosen": chosen, "rejected": "r", "category": "vqa"}
big = "x" * (4 * 1024 * 1024)
pq.write_table(pa.Table.from_pylist([row(n, big) for n in range(256)]),
               root / "parquet-256x4MiB.parquet", compression="zstd")
del big
pq.write_table(pa.Table.from_pylist([row(0, "y" * 300_000_000)]),
               root / "parquet-300MB-cell.parquet", compression="zstd")
body = '{"pairs": [' + ",".join(["{}"] * 34_000_000) + "]}"
zipped = root / "mmrb2-empty-pairs.zip"
with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
    z.writestr("t2i.json", body)
"""

HOSTILE_MEASURE = """
import gc, json, resource, sys, time
import django
django.setup()
from pathlib import Path
from django.core.management import call_command
from annotate.importing.records import ImportFailed
from annotate.importing.service import import_items_from_paths
from annotate.models import Item, Project
from bench.harness import vm_hwm_kib
if sys.argv[1] == "migrate":
    call_command("migrate", verbosity=0, interactive=False)
    project, _ = Project.objects.get_or_create(slug="hostile", defaults={"name": "Hostile"})
    project.create_default_domains()
    raise SystemExit
path = Path(sys.argv[1])
project = Project.objects.get(slug="hostile")
list(project.domains.all())
# A worker that has read parquet before: the modules' own memory (~70 MB,
# once per process) is not what an upload costs.
import pyarrow.parquet  # (and numpy with it)
gc.collect()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
cpu = time.process_time()
try:
    import_items_from_paths(project=project, dataset=path)
    problem = "ACCEPTED"
except ImportFailed as exc:
    problem = str(exc.problems[-1])[:160]
seconds = time.perf_counter() - started
cpu = time.process_time() - cpu
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"grew_mb": (after - before) / 1024, "seconds": seconds, "cpu": cpu,
                  "problem": problem,
                  "items": Item.objects.filter(project=project).count(), "hwm_kib": vm_hwm_kib()}))
"""


def hostile(runs: int, keep: Path | None) -> None:
    """Refuse each hostile shape `runs` times against the bench database (a
    PostgreSQL DATABASE_URL named bench...); print min / median / max of the
    peak RSS growth and of the wall time of each refusal."""
    import statistics

    from bench.harness import child_env, database_url, recreate_database

    url = database_url("postgres://postgres@127.0.0.1:5432/bench_import_memory")
    recreate_database(url)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = keep or Path(tmp)
            root.mkdir(parents=True, exist_ok=True)
            env = child_env(url, Path(tmp))
            subprocess.run([sys.executable, "-c", HOSTILE_MAKE, str(root)], check=True, env=env)
            run = [sys.executable, "-c", HOSTILE_MEASURE]
            subprocess.run([*run, "migrate"], cwd=REPO, env=env, check=True)
            for shape, what in HOSTILE_SHAPES.items():
                (path,) = root.glob(f"{shape}.*")
                grew, took, cpu = [], [], []
                for _ in range(runs):
                    out = subprocess.run(
                        [*run, str(path)], cwd=REPO, env=env, capture_output=True, text=True
                    )
                    if out.returncode != 0:
                        raise SystemExit(out.stderr)
                    measured = json.loads(out.stdout.strip().splitlines()[-1])
                    assert measured["items"] == 0, "a refused upload wrote items"
                    grew.append(measured["grew_mb"])
                    took.append(measured["seconds"])
                    cpu.append(measured["cpu"])
                print(f"{shape}: {what}; {path.stat().st_size} bytes")
                print(f"  refused: {measured['problem']}")
                for name, values, unit in (
                    ("peak RSS growth", grew, "MB"),
                    ("wall time", took, "s"),
                    ("CPU time", cpu, "s"),
                ):
                    low, mid, high = min(values), statistics.median(values), max(values)
                    print(f"  {name}: {low:.1f} / {mid:.1f} / {high:.1f} {unit} (min/median/max)")
    finally:
        recreate_database(url, create=False)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, action="append")
    parser.add_argument("--keep", type=Path, help="write the files here and keep them")
    parser.add_argument(
        "--hostile",
        action="store_true",
        help="refuse the hostile parquet and MMRB2 uploads of issue 29 (PostgreSQL)",
    )
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if args.hostile:
        hostile(args.runs, args.keep)
        return
    if not args.mb:
        parser.error("give --mb N (or --hostile)")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from tests.annotate.importing.test_import_limits import write_big_mrb

    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        for mb in args.mb:
            path = write_big_mrb(root / f"mb{mb}", mb)
            size = path.stat().st_size / 2**20
            env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
            env.setdefault("DATA_DIR", str(root))
            out = subprocess.run(
                [sys.executable, "-c", MEASURE, str(path)],
                cwd=REPO,
                env=env,
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split()
            records, grew, seconds = out
            print(
                f"{size:7.1f} MB file, {records} records: peak RSS +{grew} MB "
                f"({int(grew) / size:.2f}x the file), {seconds} s"
            )


if __name__ == "__main__":
    main()
