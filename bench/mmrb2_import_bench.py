"""MMRB2 import benchmark (issue 24): a text-to-image task file of N pairs,
two ~200 KB JPEG responses each, imported through
annotate.importing.formats.mmrb2.import_mmrb2_from_paths.

    .venv/bin/python bench/mmrb2_import_bench.py [--pairs N] [--data DIR]

Target (issue 24): 4,000 pairs with 8,000 images in <= 90 s, peak RSS
<= 500 MB. The import runs in a fresh subprocess (its ru_maxrss is the
import's alone) on the database DATABASE_URL names (default: a temporary
SQLite file, migrated first; a PostgreSQL URL must name a database this
script may drop and create, starting with "bench").
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_SECONDS = 90.0
TARGET_RSS_MB = 500.0
SIDE = 420  # noise JPEG of 420x420 at quality 95: about 210 KB


def make_data(folder: Path, pairs: int) -> None:
    from PIL import Image

    (folder / "images").mkdir(parents=True, exist_ok=True)
    records = []
    for n in range(pairs):
        pid = f"bench_{n}_model-a_model-b"
        content = []
        for k in range(2):
            img = Image.frombytes("RGB", (SIDE, SIDE), os.urandom(SIDE * SIDE * 3))
            img.save(folder / "images" / f"{pid}_{k}.jpg", format="JPEG", quality=95)
            content.append([["image", f"images/{pid}_{k}.jpg"]])
        records.append(
            {
                "id": pid,
                "response_a": {"model_name": "model-a", "response_content": content[0]},
                "response_b": {"model_name": "model-b", "response_content": content[1]},
                "chosen": "A",
                "human_annotations": [5, 4, 6],
                "prompt_source": "bench",
                "prompt_metadata": {"n": n},
                "prompt_content": [["text", f"Draw {n % 7 + 1} red apples."]],
            }
        )
    with (folder / "t2i.json").open("w") as fh:
        json.dump({"pairs": records}, fh, indent=2)


IMPORT = """
import json, resource, sys, time
import django
django.setup()
from pathlib import Path
from annotate.importing.formats.mmrb2 import import_mmrb2_from_paths
from annotate.models import Project
project = Project.objects.create(slug=f"bench-{time.time_ns()}", name="bench")
start = time.perf_counter()
result = import_mmrb2_from_paths(project=project, dataset=Path(sys.argv[1]))
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "created": result.created,
    "images": result.images_stored,
    "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=4000)
    parser.add_argument("--data", type=Path, help="reuse or keep the generated data here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mmrb2-bench-") as tmp:
        data = args.data or Path(tmp) / "data"
        if not (data / "t2i.json").exists():
            started = time.perf_counter()
            make_data(data, args.pairs)
            print(f"data: {args.pairs} pairs in {time.perf_counter() - started:.1f} s")
        env = dict(os.environ, DJANGO_SETTINGS_MODULE="config.settings")
        env.setdefault("DATABASE_URL", f"sqlite:///{tmp}/bench.sqlite3")
        env["MEDIA_ROOT"] = str(Path(tmp) / "media")
        env.setdefault("CELERY_TASK_ALWAYS_EAGER", "false")
        python = sys.executable
        if env["DATABASE_URL"].startswith(("postgres://", "postgresql://")):
            from harness import recreate_database  # refuses a name not starting "bench"

            recreate_database(env["DATABASE_URL"])
        subprocess.run([python, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
        out = subprocess.run(
            [python, "-c", IMPORT, str(data / "t2i.json")],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        figures = json.loads(out.strip().splitlines()[-1])
    size = sum(p.stat().st_size for p in (data / "images").iterdir()) if args.data else None
    print(json.dumps(figures | ({"image_bytes": size} if size else {})))
    ok = figures["seconds"] <= TARGET_SECONDS and figures["rss_mb"] <= TARGET_RSS_MB
    print(
        f"| {figures['created']} pairs | {figures['images']} images | "
        f"{figures['seconds']:.1f} s (target {TARGET_SECONDS:.0f}) | "
        f"peak RSS {figures['rss_mb']:.0f} MB (target {TARGET_RSS_MB:.0f}) | "
        f"{'ok' if ok else 'MISSED'} |"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
