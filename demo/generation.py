"""The generation demo: Multimodal RewardBench 2-style pairs whose responses
are pictures (text-to-image, editing) or text and pictures in turn
(interleaved), drawn with Pillow, one response of each pair visibly worse.

`build_generation_pairs(seed)` makes them; `write_mmrb2_tasks()` writes them
in the published MMRB2 layout (`t2i.json`, `edit.json`, `interleaved.json`
as `json.dump(indent=2)` of `{"pairs": [...]}`, response images
`images/{id}_{k}.png`, prompt images `input_images/{id}_{k}.png`), so
`manage.py seed_demo` brings them in through the real MMRB2 import.

Each pair's `human_annotations` are the three demo annotators' graded
opinions (MMRB2's 1-6, 6 = A much better), stronger the more obvious the
defect; `prompt_metadata` records what each response drew (`response_a`,
`response_b`: counts, colours, the probed pixel of an edit, step pictures)
and the defect of the worse one, so a test can check the pixels.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from demo.drawing import png_bytes

GENERATION_SEED = 2412
TASKS = ("t2i", "edit", "interleaved")
IMAGE_MODELS = ("pixelforge-xl", "lumen-diffusion-2", "canvas-gen-8b", "brushwork-1.5")
EDIT_MODELS = ("retouch-edit-3b", "pixelforge-edit", "lumen-diffusion-2-edit", "brushwork-1.5")
INTERLEAVED_MODELS = ("weave-omni-7b", "storyboard-vl-13b", "lumen-omni-8b", "quill-agent")
MODELS = {"t2i": IMAGE_MODELS, "edit": EDIT_MODELS, "interleaved": INTERLEAVED_MODELS}
SAME_MODEL_SHARE = 0.4  # MMRB2: about half the pairs have one model on both sides

# A part: ("text", markdown) or ("image", a Pillow image while drawn, its path after).
Part = tuple[str, Any]

# The three annotators' strengths (1 slightly … 3 much better for the
# better response; negative: they preferred the worse one, as annotators now
# and then do), by how obvious the defect is; one of each list is picked per
# pair. A dissent makes the pair contested in the demo's curation queue.
STRENGTHS = {
    "obvious": ((3, 3, 3), (3, 3, 2), (3, 2, 3), (2, 3, 3)),
    "clear": ((2, 3, 2), (3, 2, 2), (2, 2, 1), (3, 2, -1)),
    "subtle": ((1, 2, 1), (2, 1, -1), (1, 1, -1), (2, 2, -1)),
}
# Letter grades (interleaved only) of the better and the worse response.
GRADES = {"obvious": ("A", "C"), "clear": ("A", "B"), "subtle": ("B", "B")}


@dataclass
class GenDraft:
    """What a builder returns: the prompt's parts, the better and the worse
    response's parts, what each drew, and how obvious the defect is."""

    source: str  # prompt_source: the builder's sub-bucket
    prompt: list[Part]
    good: list[Part]
    bad: list[Part]
    facts: dict[str, Any]  # about the prompt
    good_facts: dict[str, Any]
    bad_facts: dict[str, Any]
    defect: str
    clarity: str  # obvious / clear / subtle


@dataclass
class GenPair:
    task: str
    external_id: str
    prompt: list[Part]
    response_a: list[Part]
    response_b: list[Part]
    model_a: str
    model_b: str
    chosen: str  # "A" or "B": the better response
    human_annotations: list[int]
    prompt_source: str
    prompt_metadata: dict[str, Any]
    images: dict[str, bytes] = field(default_factory=dict)  # path -> PNG

    def record(self) -> dict[str, Any]:
        """The pair as the task file holds it (keys in the published order)."""

        def content(parts: list[Part]) -> list[list[str]]:
            return [[kind, value] for kind, value in parts]

        return {
            "id": self.external_id,
            "response_a": {
                "model_name": self.model_a,
                "response_content": content(self.response_a),
            },
            "response_b": {
                "model_name": self.model_b,
                "response_content": content(self.response_b),
            },
            "chosen": self.chosen,
            "human_annotations": self.human_annotations,
            "prompt_source": self.prompt_source,
            "prompt_metadata": self.prompt_metadata,
            "prompt_content": content(self.prompt),
        }


def annotations_for(better: str, strengths: tuple[int, ...]) -> list[int]:
    """MMRB2's 1-6 values (6 = A much better) of strengths oriented to the
    better response."""
    value = {3: 6, 2: 5, 1: 4, -1: 3, -2: 2, -3: 1}
    return [value[s if better == "A" else -s] for s in strengths]


def assemble(
    task: str, number: int, draft: GenDraft, rng: random.Random, encode: Callable
) -> GenPair:
    """A finished pair: sides shuffled, models, annotations, images encoded."""
    external_id = f"{task}_demo_{number}"
    better = "A" if rng.random() < 0.5 else "B"
    strengths = rng.choice(STRENGTHS[draft.clarity])
    annotations = annotations_for(better, strengths)
    chosen = "A" if sum(annotations) / 3 > 3.5 else "B"
    assert chosen == better, (external_id, annotations)
    model_a = rng.choice(MODELS[task])
    model_b = model_a if rng.random() < SAME_MODEL_SHARE else rng.choice(MODELS[task])
    a, b = (draft.good, draft.bad) if better == "A" else (draft.bad, draft.good)
    fa, fb = (
        (draft.good_facts, draft.bad_facts)
        if better == "A"
        else (draft.bad_facts, draft.good_facts)
    )
    metadata: dict[str, Any] = {
        **draft.facts,
        "defect": draft.defect,
        "worse": "B" if better == "A" else "A",
        "response_a": fa,
        "response_b": fb,
    }
    if task == "interleaved":
        good, bad = GRADES[draft.clarity]
        metadata["grades"] = [[good, bad] if better == "A" else [bad, good] for _ in range(3)]
    images: dict[str, bytes] = {}

    def named(parts: list[Part], folder: str, counter: list[int]) -> list[Part]:
        # Each picture encoded and replaced by its path in the published layout.
        out: list[Part] = []
        for kind, value in parts:
            if kind == "image":
                path = f"{folder}/{external_id}_{counter[0]}.png"
                counter[0] += 1
                images[path] = encode(value)
                value = path
            out.append((kind, value))
        return out

    prompt = named(draft.prompt, "input_images", [0])
    responses = [0]  # response pictures count on from 0 through A into B
    a, b = named(a, "images", responses), named(b, "images", responses)
    return GenPair(
        task=task,
        external_id=external_id,
        prompt=prompt,
        response_a=a,
        response_b=b,
        model_a=model_a,
        model_b=model_b,
        chosen=chosen,
        human_annotations=annotations,
        prompt_source=draft.source,
        prompt_metadata=metadata,
        images=images,
    )


def build_generation_pairs(seed: int = GENERATION_SEED) -> dict[str, list[GenPair]]:
    """Every pair of the generation demo by task, in a stable order."""
    from demo.interleaved import INTERLEAVED_PLAN
    from demo.t2i import EDIT_PLAN, T2I_PLAN

    rng = random.Random(seed)
    cache: dict[bytes, bytes] = {}

    def encode(img: Image.Image) -> bytes:
        # Repeated pictures (the interleaved demo's repeated step) encoded once.
        key = hashlib.sha256(img.tobytes()).digest()
        if key not in cache:
            cache[key] = png_bytes(img)
        return cache[key]

    pairs: dict[str, list[GenPair]] = {}
    for task, plan in (("t2i", T2I_PLAN), ("edit", EDIT_PLAN), ("interleaved", INTERLEAVED_PLAN)):
        pairs[task] = []
        for builder, count in plan:
            for variant in range(count):
                draft = builder(rng, variant)
                pairs[task].append(assemble(task, len(pairs[task]) + 1, draft, rng, encode))
    return pairs


def write_mmrb2_tasks(pairs: dict[str, list[GenPair]], folder: Path) -> dict[str, Path]:
    """Write each task's file and images under `folder` (the published layout)."""
    files = {}
    for task, task_pairs in pairs.items():
        for pair in task_pairs:
            for path, data in pair.images.items():
                target = folder / path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
        files[task] = folder / f"{task}.json"
        with files[task].open("w", encoding="utf-8") as fh:
            json.dump({"pairs": [pair.record() for pair in task_pairs]}, fh, indent=2)
    return files
