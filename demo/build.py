"""Assembly: which builders make each domain's 20 items, and
`build_demo_items(seed)`, which draws them in a stable order, marks near-ties
and gold items, and shuffles which response comes first."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable

from demo.drawing import png_bytes
from demo.general_correctness import gc_bar_chart, gc_pie, gc_receipt, gc_scene, gc_sign
from demo.general_preference import (
    gp_bill_split,
    gp_chart_tips,
    gp_sign_rewrite,
    gp_story,
    gp_workout,
)
from demo.items import DemoItem, Draft
from demo.knowledge import kn_element, kn_equation, kn_flag, kn_planet
from demo.reasoning_coding import rs_code_fix, rs_code_output, rs_code_table
from demo.reasoning_math import (
    rs_bar_total,
    rs_circle,
    rs_line_change,
    rs_lshape_area,
    rs_pie_count,
    rs_right_triangle,
    rs_triangle_angle,
)
from demo.safety import sf_pairs, sf_toxicity
from demo.vqa import vqa_clock, vqa_count, vqa_receipt, vqa_sign, vqa_table

DEMO_SEED = 2026
ITEMS_PER_DOMAIN = 20
# The MRB format has no model field; the demo gives each item two of these.
MODEL_NAMES = (
    "vlm-alpha-7b",
    "vlm-beta-13b",
    "vlm-gamma-34b",
    "lumen-vl-8b",
    "kestrel-vision-2b",
    "pictor-72b-chat",
)
TIES_PER_DOMAIN = 2  # near-equal pairs, about 10%
GOLD_PER_DOMAIN = 2  # gold items (never a near-tie), about 10%


Builder = Callable[..., Draft]

# Per domain: (builder, how many items). Builders that take `pick` draw their
# subject without replacement (five different flags, not five Frances).
PLAN: dict[str, list[tuple[Builder, int]]] = {
    "general_correctness": [
        (gc_bar_chart, 4),
        (gc_scene, 4),
        (gc_receipt, 4),
        (gc_sign, 4),
        (gc_pie, 4),
    ],
    "general_preference": [
        (gp_story, 4),
        (gp_chart_tips, 4),
        (gp_bill_split, 4),
        (gp_sign_rewrite, 4),
        (gp_workout, 4),
    ],
    "knowledge": [(kn_flag, 5), (kn_element, 5), (kn_equation, 5), (kn_planet, 5)],
    "reasoning": [
        (rs_bar_total, 2),
        (rs_line_change, 2),
        (rs_pie_count, 2),
        (rs_triangle_angle, 2),
        (rs_right_triangle, 2),
        (rs_lshape_area, 2),
        (rs_circle, 2),
        (rs_code_output, 2),
        (rs_code_table, 2),
        (rs_code_fix, 2),
    ],
    "safety": [(sf_pairs, 8), (sf_toxicity, 12)],
    "vqa": [(vqa_clock, 4), (vqa_count, 4), (vqa_sign, 4), (vqa_receipt, 4), (vqa_table, 4)],
}
NEEDS_PICK = {kn_flag, kn_element, kn_equation, kn_planet, sf_pairs, sf_toxicity}


def build_demo_items(seed: int = DEMO_SEED) -> list[DemoItem]:
    """Every demo item, in a stable order (domain by domain)."""
    rng = random.Random(seed)
    items: list[DemoItem] = []
    seen_images: set[str] = set()
    for domain, plan in PLAN.items():
        assert sum(n for _, n in plan) == ITEMS_PER_DOMAIN
        ties = set(rng.sample(range(ITEMS_PER_DOMAIN), TIES_PER_DOMAIN))
        gold = set(
            rng.sample([i for i in range(ITEMS_PER_DOMAIN) if i not in ties], GOLD_PER_DOMAIN)
        )
        numbers: dict[str, int] = {}
        position = 0
        for builder, count in plan:
            remaining: list = []

            def pick(pool: list, _remaining=remaining):
                # Each picking builder draws from one pool: without replacement,
                # reshuffled when it runs out.
                if not _remaining:
                    _remaining.extend(rng.sample(pool, len(pool)))
                return _remaining.pop()

            for _ in range(count):
                draft, png = _draw_unique(builder, rng, pick, seen_images)
                numbers[draft.prefix] = numbers.get(draft.prefix, 0) + 1
                external_id = f"{draft.prefix}_demo_{numbers[draft.prefix]}"
                tie = position in ties
                first, second = (draft.good, draft.alt) if tie else (draft.good, draft.bad)
                swap = rng.random() < 0.5
                model_1, model_2 = rng.sample(MODEL_NAMES, 2)
                items.append(
                    DemoItem(
                        external_id=external_id,
                        domain=domain,
                        prompt=draft.prompt,
                        image_path=f"images/{domain}/{external_id}.png",
                        image_png=png,
                        response_1=second if swap else first,
                        response_2=first if swap else second,
                        better="2" if swap else "1",
                        near_tie=tie,
                        gold=position in gold,
                        model_1=model_1,
                        model_2=model_2,
                    )
                )
                position += 1
    return items


def _draw_unique(builder: Builder, rng, pick, seen: set[str]) -> tuple[Draft, bytes]:
    """Build a draft whose image differs from every earlier one (a repeat of
    the same parameters is rare; draw again with the advanced generator)."""
    for _ in range(10):
        draft = builder(rng, pick) if builder in NEEDS_PICK else builder(rng)
        png = png_bytes(draft.image)
        digest = hashlib.sha256(png).hexdigest()
        if digest not in seen:
            seen.add(digest)
            return draft, png
    raise RuntimeError(f"{builder.__name__} keeps drawing the same image")
