"""Demo content: a small Multimodal RewardBench-style dataset drawn with Pillow.

`build_demo_items(seed)` makes 20 items per domain (120 in all): a prompt, a
PNG image drawn from the same parameters the prompt and responses talk about
(the bar heights in the chart are the numbers the correct answer quotes; the
wrong answer misreads one), and two responses, one better than the other
except for about one item in ten where both are about equally good.
`write_mrb_dataset()` writes them as a Multimodal RewardBench JSON array plus
image files, so the demo goes through the real importer.

Pure Python + Pillow, no Django. Deterministic: the same seed gives the same
text and byte-identical images (only Pillow's embedded font is used, never a
system font), so re-importing the demo is a no-op.

Modules: `build` (the plan per domain and `build_demo_items`), `items` (what it
makes and the MRB writer), `project` (the demo project's text), `drawing` and
`subjects` (pictures and subjects the domains share), and one module per
domain: `general_correctness`, `general_preference`, `knowledge`,
`reasoning_math`, `reasoning_coding`, `safety`, `vqa`.

The generation demo (issue 24): `generation` (Multimodal RewardBench 2-style
pairs whose responses are pictures or text and pictures in turn, one of each
pair visibly worse, written in the published MMRB2 layout), `t2i`
(text-to-image and editing pairs), `interleaved` (step-by-step answers) and
`pictures` (their drawings).
"""

from demo.build import DEMO_SEED, ITEMS_PER_DOMAIN, build_demo_items
from demo.generation import GENERATION_SEED, build_generation_pairs, write_mmrb2_tasks
from demo.items import DemoItem, write_mrb_dataset
from demo.project import (
    DOMAIN_GUIDELINES,
    PROJECT_DESCRIPTION,
    PROJECT_GUIDELINES,
    PROJECT_NAME,
)

__all__ = [
    "DEMO_SEED",
    "DOMAIN_GUIDELINES",
    "GENERATION_SEED",
    "ITEMS_PER_DOMAIN",
    "PROJECT_DESCRIPTION",
    "PROJECT_GUIDELINES",
    "PROJECT_NAME",
    "DemoItem",
    "build_demo_items",
    "build_generation_pairs",
    "write_mmrb2_tasks",
    "write_mrb_dataset",
]
