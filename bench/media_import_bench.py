"""Import of video pairs (issue 35): 200 pairs of 720p 10-second H.264 clips
into PostgreSQL through the parts-jsonl format, then their posters and
thumbnail strips.

    .venv/bin/python bench/media_import_bench.py [--pairs N] [--keep]

Generates two 720p x 10 s x 25 fps H.264 clips with demo.clips (one with a
stutter) and writes 2 x N distinct files from them by remuxing without
re-encoding (each file's container carries its own comment, so each has its
own SHA-256 and is validated, stored and derived on its own; making 400
distinct clips by encoding would take half an hour). Then, each in a fresh
subprocess that does nothing else (so neither the generation nor an earlier
step inflates its peak memory): the import (validation with PyAV, hashing,
content-addressed storage, the rows), and the derivatives task (a poster and
a strip of eight thumbnails per file, loudness where there is sound). Targets
(from the issue): both together ≤ 120 s and ≤ 500 MB peak RSS.

The script owns one database named by DATABASE_URL (default below; its name
must start with ``bench``): dropped and created at the start, dropped at the
end. Exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

import harness
from harness import bench_database, database_url, migrate, print_table, recreate_database

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/bench_media"
TARGET_SECONDS = 120.0
TARGET_PEAK_MB = 500


def generate(folder: Path, pairs: int) -> dict:
    """Two base clips remuxed into 2 x `pairs` distinct files, and the dataset."""
    import io

    import av

    from demo.clips import video_bytes

    start = time.perf_counter()
    bases = [
        video_bytes(seconds=10, width=1280, height=720, fps=25),
        video_bytes(seconds=10, width=1280, height=720, fps=25, stutter=True),
    ]
    encoded = time.perf_counter() - start
    (folder / "clips").mkdir(parents=True, exist_ok=True)

    def remux(data: bytes, comment: str) -> bytes:
        out = io.BytesIO()
        with av.open(io.BytesIO(data)) as src, av.open(out, "w", format="mp4") as dst:
            dst.metadata["comment"] = comment
            stream = dst.add_stream_from_template(src.streams.video[0])
            for packet in src.demux(src.streams.video[0]):
                if packet.dts is None:
                    continue
                packet.stream = stream
                dst.mux(packet)
        return out.getvalue()

    lines, total = [], 0
    for n in range(pairs):
        names = []
        for side, base in (("a", bases[0]), ("b", bases[1])):
            name = f"clips/{n:04d}-{side}.mp4"
            data = remux(base, f"bench clip {n} {side}")
            (folder / name).write_bytes(data)
            total += len(data)
            names.append(name)
        lines.append(
            {
                "id": f"pair-{n:04d}",
                "domain": "Motion",
                "prompt": [{"text": f"Which clip plays smoothly? ({n})"}],
                "responses": [[{"video": names[0]}], [{"video": names[1]}]],
            }
        )
    (folder / "data.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return {
        "files": 2 * pairs,
        "bytes": total,
        "encode_seconds": encoded,
        "seconds": time.perf_counter() - start,
    }


def child(mode: str, params: dict) -> None:
    """Runs in the subprocess: do one thing, print JSON."""
    if mode == "generate":
        print(json.dumps(generate(Path(params["folder"]), params["pairs"])))
        return
    import django

    django.setup()
    from annotate.importing.service import import_items_from_paths
    from annotate.importing.tasks import derive_media
    from annotate.models import MediaAsset, Project

    if mode == "setup":
        migrate()
        project = Project.objects.create(slug="bench", name="Media import bench")
        print(json.dumps({"project": project.pk}))
        return
    before = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    if mode == "import":
        project = Project.objects.get(pk=params["project"])
        start = time.perf_counter()
        result = import_items_from_paths(project=project, dataset=Path(params["dataset"]))
        out = {"created": result.created, "media_stored": result.media_stored}
    else:  # derive: what the worker does after the import
        ids = list(MediaAsset.objects.order_by("pk").values_list("pk", flat=True))
        start = time.perf_counter()
        out = {"derived": derive_media(ids)}
        out["posters"] = MediaAsset.objects.exclude(poster="").exclude(strip="").count()
    after = resource.getrusage(resource.RUSAGE_SELF)
    out.update(
        seconds=time.perf_counter() - start,
        cpu_seconds=after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime,
        maxrss_kib=after.ru_maxrss,
    )
    print(json.dumps(out))


def run_child(mode: str, env: dict, **params) -> dict:
    return harness.run_child(
        __file__, ["--child", mode, json.dumps(params)], env,
        failure=f"the {mode} step failed (exit {{returncode}})",
    )  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--keep", action="store_true", help="keep the temp folder and database")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], json.loads(args.child[1]))
        return 0
    url = database_url(DEFAULT_DATABASE_URL)
    bench_database(url)
    tmp = Path(tempfile.mkdtemp(prefix="media-bench-"))
    recreate_database(url)
    env = harness.child_env(url, tmp, MEDIA_ROOT=str(tmp / "media"))
    try:
        made = run_child("generate", env, folder=str(tmp / "data"), pairs=args.pairs)
        project = run_child("setup", env)["project"]
        imported = run_child(
            "import", env, project=project, dataset=str(tmp / "data" / "data.jsonl")
        )
        derived = run_child("derive", env)
    finally:
        harness.finish(url, tmp, keep=args.keep)
    seconds = imported["seconds"] + derived["seconds"]
    peak_mb = max(imported["maxrss_kib"], derived["maxrss_kib"]) * 1024 / 1e6
    ok_time, ok_memory = seconds <= TARGET_SECONDS, peak_mb <= TARGET_PEAK_MB
    rows = [
        ("files (720p, 10 s, H.264)", f"{made['files']} ({made['bytes'] / 1e6:.1f} MB)", "", ""),
        ("import: validate, hash, store, rows", f"{imported['seconds']:.1f} s "
         f"({imported['cpu_seconds']:.1f} s CPU), peak {imported['maxrss_kib'] / 1e3:.0f} MB",
         "", ""),
        ("posters + strips (the task)", f"{derived['seconds']:.1f} s "
         f"({derived['cpu_seconds']:.1f} s CPU), peak {derived['maxrss_kib'] / 1e3:.0f} MB",
         "", ""),
        ("together: wall", f"{seconds:.1f} s", f"<= {TARGET_SECONDS:.0f} s",
         "yes" if ok_time else "NO"),
        ("together: peak RSS", f"{peak_mb:.0f} MB", f"<= {TARGET_PEAK_MB} MB",
         "yes" if ok_memory else "NO"),
    ]  # fmt: skip
    print_table(rows)
    ok = (
        imported["created"] == args.pairs
        and imported["media_stored"] == 2 * args.pairs
        and derived["posters"] == 2 * args.pairs
        and ok_time
        and ok_memory
    )
    if not ok:
        print("target missed", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
