"""The demo's video and audio projects (issue 35): synthetic clips made on
the fly with PyAV (demo.clips), written as a parts-jsonl dataset with its
files, so `manage.py seed_demo` brings them in through the real import.

In each pair one response is visibly or audibly worse: a stutter, a colour
that goes wrong half way, a frozen picture; a dropped beat, a take 9 dB
quieter with a dropped beat, a dragging tempo. Which response is worse is
the item's gold, the side it is shown on the page's seeded shuffle."""

from __future__ import annotations

import json
from pathlib import Path

from demo.clips import audio_bytes, video_bytes

VIDEO_PROJECT = {
    "slug": "demo-video",
    "name": "Demo: which clip plays right? (video)",
    "description": (
        "Synthetic video pairs: one clip of each pair stutters, changes colour or freezes."
    ),
    "guidelines": (
        "Play both clips together (Space), step frame by frame (`,` `.`) and flicker them in "
        "one place (`t`). Prefer the clip whose bar sweeps smoothly and whose colour stays "
        "the same from start to end."
    ),
}
AUDIO_PROJECT = {
    "slug": "demo-audio",
    "name": "Demo: which take keeps the beat? (audio)",
    "description": "Synthetic beats: one take of each pair drops a beat, drags or is much quieter.",
    "guidelines": (
        "Both takes play together; `t` switches which one you hear at the same moment. Prefer "
        "the take with every beat, at an even tempo, at a comfortable level."
    ),
}
# (id, domain, prompt, good clip's arguments, bad clip's arguments)
VIDEO_PAIRS = (
    ("motion-1", "Motion", "A white bar sweeps across a blue field once a second.", {},
     {"stutter": True}),
    ("colour-1", "Colour", "The field stays blue for the whole clip.", {}, {"wrong_colour": True}),
    ("motion-2", "Motion", "The bar keeps moving until the end.", {"colour": (40, 150, 90)},
     {"colour": (40, 150, 90), "frozen": True}),
    ("colour-2", "Colour", "An orange field with a sweeping bar.", {"colour": (220, 120, 40)},
     {"colour": (220, 120, 40), "wrong_colour": True}),
)  # fmt: skip
AUDIO_PAIRS = (
    ("beat-1", "Rhythm", "Eight even beats at 120 bpm.", {}, {"dropped_beat": 3}),
    ("beat-2", "Rhythm", "Eight even beats, none missing.", {}, {"dropped_beat": 5, "gain_db": -9}),
    ("tempo-1", "Tempo", "Beats at 120 bpm.", {}, {"bpm": 100}),
    ("level-1", "Level", "A beat at a comfortable level.", {"gain_db": -3}, {"gain_db": -20}),
)


def write_media_datasets(folder: Path) -> dict[str, Path]:
    """Each demo project's parts-jsonl file (its clips beside it), by slug."""
    out = {}
    for slug, pairs, kind in (
        (VIDEO_PROJECT["slug"], VIDEO_PAIRS, "video"),
        (AUDIO_PROJECT["slug"], AUDIO_PAIRS, "audio"),
    ):
        root = folder / slug
        (root / "clips").mkdir(parents=True, exist_ok=True)
        lines = []
        for n, (pair_id, domain, prompt, good, bad) in enumerate(pairs):
            make = video_bytes if kind == "video" else audio_bytes
            suffix = "mp4" if kind == "video" else "wav"
            files = []
            for side, args in (("good", good), ("bad", bad)):
                name = f"clips/{pair_id}-{side}.{suffix}"
                (root / name).write_bytes(make(**args))
                files.append(name)
            # The worse take first in every other pair, so gold is not always 1.
            flip = n % 2 == 1
            order = (files[1], files[0]) if flip else (files[0], files[1])
            responses = [[{kind: name}] for name in order]
            lines.append(
                {
                    "id": pair_id,
                    "domain": domain,
                    "prompt": [{"text": prompt}],
                    "responses": responses,
                    "gold": "2" if flip else "1",
                    "models": ["synthetic-bad", "synthetic-good"]
                    if flip
                    else ["synthetic-good", "synthetic-bad"],
                }
            )
        path = root / "data.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        out[slug] = path
    return out
