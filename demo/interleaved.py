"""Interleaved pairs of the generation demo: step-by-step answers that
alternate text and pictures (a house drawn in four steps, a snowman built
up, bars sorted swap by swap from a picture in the prompt). The worse
answer repeats a picture where a step should change it, stops a step short,
or shows a picture its text contradicts."""

from __future__ import annotations

import random

from demo.generation import GenDraft, Part
from demo.pictures import Bars, draw_bars, draw_house_steps, draw_snowman_steps

HOUSE_STEPS = (
    "Draw a rectangle for the walls, sitting on the ground line.",
    "Put a triangle on top for the roof, a little wider than the walls.",
    "Add a door in the middle and a window on each side.",
    "Finish with a chimney on the roof and some curls of smoke.",
)


def _steps(intro: str, texts: list[str], pictures: list, outro: str = "") -> list[Part]:
    parts: list[Part] = [("text", intro)]
    for n, (text, picture) in enumerate(zip(texts, pictures, strict=True), start=1):
        parts += [("text", f"**Step {n}.** {text}"), ("image", picture)]
    if outro:
        parts.append(("text", outro))
    return parts


def il_house(rng: random.Random, variant: int) -> GenDraft:
    walls = rng.choice(("yellow", "pink", "white", "orange"))
    roof = rng.choice(("red", "purple", "green", "blue"))
    prompt = (
        f"Show me how to draw a simple house with {walls} walls and a {roof} roof in four "
        "steps, with a picture after each step."
    )
    intro = "Here is an easy house in four steps:"
    good_steps = [1, 2, 3, 4]
    if variant % 2 == 0:
        k = rng.randint(2, 4)
        bad_steps = [s if s != k else k - 1 for s in good_steps]
        defect, clarity = f"the picture of step {k} is step {k - 1}'s again", "clear"
        bad_texts = list(HOUSE_STEPS)
    else:
        bad_steps = [1, 2, 3]
        defect, clarity = "stops after three of the four steps", "obvious"
        bad_texts = list(HOUSE_STEPS[:3])
    return GenDraft(
        source="demo-drawing-howto",
        prompt=[("text", prompt)],
        good=_steps(
            intro,
            list(HOUSE_STEPS),
            [draw_house_steps(s, walls, roof) for s in good_steps],
            "Your house is done!",
        ),
        bad=_steps(intro, bad_texts, [draw_house_steps(s, walls, roof) for s in bad_steps]),
        facts={"asked": {"steps": 4, "walls": walls, "roof": roof}},
        good_facts={"pictures": good_steps},
        bad_facts={"pictures": bad_steps},
        defect=defect,
        clarity=clarity,
    )


def il_snowman(rng: random.Random, variant: int) -> GenDraft:
    hat = rng.choice(("red", "blue", "purple", "green"))
    scarf = rng.choice([c for c in ("red", "yellow", "orange", "pink") if c != hat])
    prompt = (
        f"Teach a child to build a snowman with a {hat} hat and a {scarf} scarf, step by step, "
        "with a picture for each step."
    )
    texts = [
        "Roll a big snowball for the bottom.",
        "Roll a smaller ball and lift it on top.",
        "Add the smallest ball for the head.",
        f"Give it eyes and a carrot nose, wrap the {scarf} scarf and put on the {hat} hat.",
    ]
    good = [(1, False, None), (2, False, None), (3, False, None), (3, True, hat)]
    if variant % 2 == 0:
        bad = [(1, False, None), (2, False, None), (2, False, None), (2, True, hat)]
        defect, clarity = "the head is never added: the snowman has two balls", "obvious"
    else:
        bad = [(1, False, None), (2, False, None), (3, False, None), (3, True, None)]
        defect, clarity = "the hat the text puts on is not in the picture", "subtle"

    def pictures(states):
        return [draw_snowman_steps(b, f, h, scarf) for b, f, h in states]

    intro = "Let's build a snowman together!"
    return GenDraft(
        source="demo-kids-howto",
        prompt=[("text", prompt)],
        good=_steps(intro, texts, pictures(good), "Say hello to your snowman."),
        bad=_steps(intro, texts, pictures(bad), "Say hello to your snowman."),
        facts={"asked": {"hat": hat, "scarf": scarf}},
        good_facts={"pictures": [list(s) for s in good]},
        bad_facts={"pictures": [list(s) for s in bad]},
        defect=defect,
        clarity=clarity,
    )


def _selection_swaps(heights: list[int]) -> list[tuple[int, int]]:
    order, swaps = list(heights), []
    for i in range(len(order)):
        j = min(range(i, len(order)), key=order.__getitem__)
        if j != i:
            order[i], order[j] = order[j], order[i]
            swaps.append((i, j))
    return swaps


def il_sort(rng: random.Random, variant: int) -> GenDraft:
    while True:
        heights = rng.sample(range(2, 10), 5)
        swaps = _selection_swaps(heights)
        if 2 <= len(swaps) <= 3:
            break
    colours = rng.sample(("red", "yellow", "green", "orange", "purple", "pink", "blue"), 5)
    start = Bars(list(heights), list(colours))
    prompt = (
        "Sort these bars from shortest to tallest, one swap at a time. Say which two bars you "
        "swap and show the bars after each swap."
    )

    def run(swaps_done: list[tuple[int, int]]) -> tuple[list[str], list[Bars]]:
        bars = Bars(list(heights), list(colours))
        texts, states = [], []
        for i, j in swaps_done:
            a, b = bars.heights[i], bars.heights[j]
            bars.heights[i], bars.heights[j] = b, a
            bars.colours[i], bars.colours[j] = bars.colours[j], bars.colours[i]
            texts.append(f"Swap the bar of height {a} with the bar of height {b}.")
            states.append(Bars(list(bars.heights), list(bars.colours)))
        return texts, states

    good_texts, good_states = run(swaps)
    # The worse answer's last swap takes the wrong neighbour: the text says
    # it swapped the right pair, the picture shows the bars still unsorted.
    i, j = swaps[-1]
    wrong = (i, j - 1) if j - 1 > i else (i, j + 1) if j + 1 < 5 else (i - 1, j)
    _, bad_states = run([*swaps[:-1], wrong])
    bad_texts = good_texts
    sorted_text = "Now the bars are sorted: " + ", ".join(map(str, sorted(heights))) + "."
    intro = f"Selection sort needs {len(swaps)} swaps here."
    return GenDraft(
        source="demo-algorithm-steps",
        prompt=[("text", prompt), ("image", draw_bars(start, "Before"))],
        good=_steps(intro, good_texts, [draw_bars(s) for s in good_states], sorted_text),
        bad=_steps(intro, bad_texts, [draw_bars(s) for s in bad_states], sorted_text),
        facts={"asked": {"heights": heights}},
        good_facts={"pictures": [s.heights for s in good_states]},
        bad_facts={"pictures": [s.heights for s in bad_states]},
        defect="the last picture is not sorted although the text says it is",
        clarity="clear",
    )


INTERLEAVED_PLAN = [(il_house, 4), (il_snowman, 4), (il_sort, 4)]
