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
"""

from __future__ import annotations

import argparse
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, action="append", required=True)
    parser.add_argument("--keep", type=Path, help="write the files here and keep them")
    args = parser.parse_args()
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
