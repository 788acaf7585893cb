"""Files shaped like the published VL-RewardBench and MM-RLHF-RewardBench
JSONL files, written by the tests from what is known of them (no download):

* both are JSONL with `id, prompt, chosen, rejected, image, chosen_reason,
  rejected_reason`, `image` a relative path (`vl_reward/img/image_0.jpg`,
  `mcq/073712.png`), no category;
* VL-RewardBench repeats 25 IDs with different content, and its ID prefixes
  name the source (`hallucination_pair-…`, `wildvision…`, `mathverse…`,
  `mmmu…`, `RLAIF-V…`);
* MM-RLHF-RewardBench has 36 IDs over 145 rows (one row per ranked pair of
  the same prompt), its image folder (`mcq`, `short`, `long`, `safety`)
  names the task, and a few (prompt, responses) pairs occur twice under
  different IDs.
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from tests.factories import png_bytes

VL_SOURCES = ("hallucination_pair-", "wildvision_battle_", "mathverse_", "mmmu_pro_", "RLAIF-V_")
VL_DISTINCT_IDS = 80
VL_REPEATED_IDS = 25
# What a curator maps them to: the longest key an ID starts with wins.
VL_DOMAIN_MAP = (
    "hallucination=vqa,wildvision=general_preference,mathverse=reasoning,mmmu=knowledge,RLAIF-V=vqa"
)
MM_FOLDERS = ("mcq", "short", "long", "safety")
MM_IDS = 36
MM_ROWS = 145
MM_CONTENT_COPIES = 3  # IDs whose one row repeats another ID's (prompt, responses)
# `safety` is a domain slug itself: it needs no entry.
MM_DOMAIN_MAP = "long=general_correctness,short=general_preference,mcq=knowledge"


@dataclass
class PublicSet:
    rows: list[dict]
    images: dict[str, bytes] = field(default_factory=dict)

    def jsonl(self) -> bytes:
        return "".join(json.dumps(row) + "\n" for row in self.rows).encode()

    def images_zip(self) -> bytes:
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as archive:
            for name, data in self.images.items():
                archive.writestr(name, data)
        return out.getvalue()

    def write(self, folder: Path, name: str) -> Path:
        for ref, data in self.images.items():
            path = folder / ref
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        path = folder / name
        path.write_bytes(self.jsonl())
        return path

    @property
    def ids(self) -> list[str]:
        return [row["id"] for row in self.rows]


def _image(n: int, fmt: str = "PNG") -> bytes:
    return png_bytes(size=(16, 12), color=(n * 37 % 256, n * 11 % 256, 90), fmt=fmt)


def vl_rewardbench() -> PublicSet:
    rows, images = [], {}
    for n in range(VL_DISTINCT_IDS):
        ref = f"vl_reward/img/image_{n}.jpg"
        images[ref] = _image(n, "JPEG")
        rows.append(
            {
                "id": f"{VL_SOURCES[n % len(VL_SOURCES)]}{n}",
                "prompt": f"Question {n}: what does the picture show?",
                "chosen": f"A faithful description of picture {n}.",
                "rejected": f"A description of picture {n} with a hallucinated object.",
                "image": ref,
                "chosen_reason": "",
                "rejected_reason": f"mentions an object not in picture {n}",
            }
        )
    # The same IDs again with other content (other questions on other images).
    for n in range(VL_REPEATED_IDS):
        ref = f"vl_reward/img/image_{VL_DISTINCT_IDS + n}.jpg"
        images[ref] = _image(VL_DISTINCT_IDS + n, "JPEG")
        rows.append(
            {
                **rows[n],
                "prompt": f"Another question {n} on another picture.",
                "chosen": f"The right answer to question {n}.",
                "image": ref,
            }
        )
    return PublicSet(rows, images)


def mm_rlhf_rewardbench() -> PublicSet:
    rows, images = [], {}
    per_id = [4] * (MM_IDS - MM_CONTENT_COPIES)
    per_id[-1] = MM_ROWS - MM_CONTENT_COPIES - 4 * (len(per_id) - 1)  # 145 rows in all
    for n, pairs in enumerate(per_id):
        ref = f"{MM_FOLDERS[n % len(MM_FOLDERS)]}/{73700 + n:06d}.png"
        images[ref] = _image(n)
        for rank in range(pairs):
            rows.append(
                {
                    "id": f"mm_{n:03d}",
                    "prompt": f"Task {n}: answer about the image.",
                    "chosen": f"Response ranked {rank + 1} for task {n}.",
                    "rejected": f"Response ranked {rank + 2} for task {n}.",
                    "image": ref,
                    "chosen_reason": f"rank {rank + 1}",
                    "rejected_reason": f"rank {rank + 2}",
                }
            )
    # A few (prompt, responses) pairs occur again under another ID.
    for k in range(MM_CONTENT_COPIES):
        rows.append({**rows[k * 4], "id": f"mm_copy_{k}"})
    assert len(rows) == MM_ROWS and len(set(r["id"] for r in rows)) == MM_IDS
    return PublicSet(rows, images)
