"""MM-RLHF-RewardBench files written from the published facts (issue 34; no
download): one JSONL line per ranked pair of the same prompt ``id``, with
``id, prompt, chosen, rejected, image`` (or ``video``, a folder of frames),
``chosen_reason, rejected_reason``; the media path's first folder is the
category (mcq, long, short, safety, video). Groups hold 2 to 6 pairs."""

from __future__ import annotations

import json
from pathlib import Path

from tests.factories import png_bytes

CATEGORIES = ("mcq", "long", "short", "safety")
# Pairs per prompt id: every size from 2 to 6, then the video group.
GROUP_SIZES = (2, 3, 4, 5, 6, 2, 3)
VIDEO_FRAMES = ("frame_1.jpg", "frame_2.jpg", "frame_10.jpg")


def rows() -> list[dict]:
    out = []
    for n, size in enumerate(GROUP_SIZES):
        category = CATEGORIES[n % len(CATEGORIES)]
        for k in range(size):
            out.append(
                {"id": f"{category}_{n:03d}" if n != 1 else n,  # one integer id
                 "prompt": f"Task {n}: answer about the image. “quoted” ✓",
                 "chosen": f"Response ranked {k + 1} for task {n}.",
                 "rejected": f"Response ranked {k + 2} for task {n}.",
                 "image": f"{category}/{73700 + n:06d}.png",
                 "chosen_reason": f"rank {k + 1}", "rejected_reason": f"rank {k + 2}"}
            )  # fmt: skip
    for k in range(2):
        out.append(
            {"id": "video_007", "prompt": "What happens in the clip?",
             "chosen": f"Clip answer {k + 1}.", "rejected": f"Clip answer {k + 2}.",
             "video": "video/clip_007", "chosen_reason": "", "rejected_reason": "worse"}
        )  # fmt: skip
    return out


def write(folder: Path, data: list[dict] | None = None, name="mm_rlhf.jsonl", **dumps) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    data = rows() if data is None else data
    for n, row in enumerate(data):
        if "image" in row and isinstance(row["image"], str):
            path = folder / row["image"]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(png_bytes(size=(16, 12), color=(n * 37 % 256, 40, 90)))
        if "video" in row:
            for m, frame in enumerate(VIDEO_FRAMES):
                path = folder / row["video"] / frame
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(png_bytes(size=(16, 12), color=(m * 60, 200, 9), fmt="JPEG"))
    path = folder / name
    path.write_text("".join(json.dumps(r, **dumps) + "\n" for r in data), encoding="utf-8")
    return path
