"""What the generator makes: `DemoItem` (one finished item), `Draft` (what a
domain's builder returns), and `write_mrb_dataset`, which writes items as a
Multimodal RewardBench JSON array plus image files for the real importer."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from PIL import Image


@dataclass(frozen=True)
class DemoItem:
    external_id: str
    domain: str  # domain slug
    prompt: str
    image_path: str  # relative path written to the MRB `Image` field
    image_png: bytes
    response_1: str
    response_2: str
    better: str  # "1" or "2" (canonical)
    near_tie: bool
    gold: bool
    model_1: str
    model_2: str

    def mrb_record(self, category: str) -> dict[str, str]:
        return {
            "ID": self.external_id,
            "Text": self.prompt,
            "Image": self.image_path,
            "Output1": self.response_1,
            "Output2": self.response_2,
            "Better": f"Output{self.better}",
            "Category": category,
        }


@dataclass
class Draft:
    """What a content builder returns: one prompt, its image, and a good, a
    worse and an alternative good response (used for near-ties)."""

    prefix: str
    prompt: str
    image: Image.Image
    good: str
    bad: str
    alt: str


def write_mrb_dataset(items: list[DemoItem], folder: Path, categories: dict[str, str]) -> Path:
    """Write `items` as a Multimodal RewardBench JSON array and their images
    under `folder`. `categories` maps domain slug to export Category."""
    for item in items:
        path = folder / item.image_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(item.image_png)
    dataset = folder / "demo.json"
    records = [item.mrb_record(categories[item.domain]) for item in items]
    dataset.write_text(json.dumps(records, indent=1, ensure_ascii=False), encoding="utf-8")
    return dataset
