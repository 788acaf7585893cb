"""VideoRewardBench-style files (issue 35 item 5; the studio's layout of the
paper's facts, annotate.importing.formats.videorb): one JSONL line per
sample, ``id, video, prompt, chosen, rejected, dimension`` and a kept extra
field, with real clips (demo.clips) beside the file. Two samples share a
video (the benchmark has fewer videos than samples)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from annotate.importing.formats.videorb import DIMENSIONS


@cache
def clip(n: int) -> bytes:
    from demo import clips

    colours = ((40, 110, 200), (200, 60, 40), (30, 160, 90))
    return clips.video_bytes(seconds=0.4, width=64, height=48, fps=10, colour=colours[n % 3])


def rows() -> list[dict]:
    out = []
    for n in range(7):
        dimension = DIMENSIONS[n % len(DIMENSIONS)]
        out.append(
            {"id": f"vrb_{n:04d}" if n != 2 else 2,  # one integer id
             "video": f"videos/{min(n, 5):03d}.mp4",  # samples 5 and 6 share a video
             "prompt": f"Question {n} about the clip. “quoted” ✓",
             "chosen": f"The better answer to {n}.", "rejected": f"A worse answer to {n}.",
             "dimension": dimension, "source": f"set-{n % 2}"}
        )  # fmt: skip
    return out


def write(folder: Path, data: list[dict] | None = None, name="videorb.jsonl", **dumps) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    data = rows() if data is None else data
    for row in data:
        video = row.get("video")
        if isinstance(video, str) and video.startswith("videos/"):
            path = folder / video
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(clip(int(video[7:10])))
    path = folder / name
    path.write_text("".join(json.dumps(r, **dumps) + "\n" for r in data), encoding="utf-8")
    return path
