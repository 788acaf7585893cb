"""Text-to-image and editing pairs of the generation demo: shapes counted
and coloured as asked (or not), a sign spelt right (or not), and a
landscape edited as instructed (or the edit missing, or made to the wrong
thing)."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

from demo.drawing import COLOURS
from demo.generation import GenDraft
from demo.pictures import (
    BACKGROUNDS,
    SHAPES,
    Landscape,
    Placed,
    draw_landscape,
    draw_objects,
    draw_word_sign,
    layout,
    probe,
)
from demo.subjects import an, count_words

SIZE = 384
# Object colours that stand out on every background (white and grey do not).
OBJECT_COLOURS = ("red", "yellow", "green", "orange", "purple", "pink")
WORDS = ("OPEN", "BAKERY", "LIBRARY", "STATION", "MUSEUM", "GARDEN", "HARBOUR", "SCHOOL")


def _objects(rng, kinds_colours: list[tuple[str, str]]) -> list[Placed]:
    spots = layout(rng, len(kinds_colours), SIZE)
    return [Placed(k, c, x, y) for (k, c), (x, y) in zip(kinds_colours, spots, strict=True)]


def _facts(objects: list[Placed], background: str) -> dict:
    return {
        "background": background,
        "objects": [{"shape": o.kind, "colour": o.colour} for o in objects],
    }


def t2i_count(rng: random.Random, variant: int) -> GenDraft:
    """N objects of one shape and colour; the worse picture has another count."""
    n = rng.randint(2, 7)
    shape, colour = rng.choice(SHAPES), rng.choice(OBJECT_COLOURS)
    background = rng.choice(list(BACKGROUNDS))
    off = rng.choice([d for d in (-2, -1, 1, 2) if 1 <= n + d <= 9])
    good = _objects(rng, [(shape, colour)] * n)
    bad = _objects(rng, [(shape, colour)] * (n + off))
    clarity = "obvious" if abs(off) == 2 or n <= 3 else "clear" if n <= 5 else "subtle"
    prompt = f"{count_words(n).capitalize()} {colour} {shape}s on a {background} background."
    return GenDraft(
        source="demo-counting",
        prompt=[("text", prompt)],
        good=[("image", draw_objects(good, background, SIZE))],
        bad=[("image", draw_objects(bad, background, SIZE))],
        facts={"asked": {"shape": shape, "colour": colour, "count": n, "background": background}},
        good_facts=_facts(good, background),
        bad_facts=_facts(bad, background),
        defect=f"count {n + off} instead of {n}",
        clarity=clarity,
    )


def t2i_binding(rng: random.Random, variant: int) -> GenDraft:
    """Two shapes of two colours; the worse picture swaps the colours."""
    s1, s2 = rng.sample(SHAPES, 2)
    c1, c2 = rng.sample(OBJECT_COLOURS, 2)
    background = rng.choice(list(BACKGROUNDS))
    good = _objects(rng, [(s1, c1), (s2, c2)])
    bad = [
        Placed(o.kind, c2 if o.colour == c1 else c1, o.x, o.y)
        for o in _objects(rng, [(s1, c1), (s2, c2)])
    ]
    prompt = f"{an(c1).capitalize()} {c1} {s1} and {an(c2)} {c2} {s2} on a {background} background."
    return GenDraft(
        source="demo-attribute-binding",
        prompt=[("text", prompt)],
        good=[("image", draw_objects(good, background, SIZE))],
        bad=[("image", draw_objects(bad, background, SIZE))],
        facts={"asked": {"objects": [[s1, c1], [s2, c2]], "background": background}},
        good_facts=_facts(good, background),
        bad_facts=_facts(bad, background),
        defect="colours swapped between the two shapes",
        clarity="clear",
    )


def t2i_sign(rng: random.Random, variant: int) -> GenDraft:
    """A sign with a word; the worse one misspells it."""
    word = WORDS[variant % len(WORDS)] if variant < len(WORDS) else rng.choice(WORDS)
    colour = rng.choice(("green", "blue", "red", "purple"))
    i = rng.randrange(len(word) - 1)
    if word[i] != word[i + 1] and rng.random() < 0.5:
        wrong = word[:i] + word[i + 1] + word[i] + word[i + 2 :]  # two letters swapped
    else:
        wrong = word[:i] + word[i + 1 :]  # a letter missing
    tilt = rng.randint(-4, 4)
    return GenDraft(
        source="demo-text-rendering",
        prompt=[("text", f'A {colour} street sign that says "{word}".')],
        good=[("image", draw_word_sign(word, colour, SIZE, tilt))],
        bad=[("image", draw_word_sign(wrong, colour, SIZE, -tilt))],
        facts={"asked": {"text": word, "colour": colour}},
        good_facts={"text": word},
        bad_facts={"text": wrong},
        defect=f'the sign says "{wrong}"',
        clarity="clear" if len(word) <= 6 else "subtle",
    )


T2I_PLAN = [(t2i_count, 5), (t2i_binding, 4), (t2i_sign, 3)]


# --- Editing ---------------------------------------------------------------------------


def _landscape(rng: random.Random, **fields) -> Landscape:
    sky = (rng.randint(135, 165), rng.randint(195, 215), rng.randint(232, 248))
    clouds = ((rng.randint(44, 80), rng.randint(40, 64)), (rng.randint(204, 228), 42))
    base: dict[str, Any] = {
        "sky": sky,
        "house": rng.choice(("white", "yellow", "pink")),
        "roof": rng.choice(("red", "grey", "purple")),
        "door": rng.choice(("blue", "green")),
        "car": rng.choice(("yellow", "orange", "blue", None)),
        "clouds": clouds,
        "house_x": rng.randint(24, 56),
        "tree_x": rng.randint(236, 262),
        "car_x": rng.randint(206, 240),
        "sun_xy": (rng.randint(318, 340), rng.randint(56, 76)),
    }
    base.update(fields)
    return Landscape(**base)


def _with(scene: Landscape, part: str, value: Any) -> Landscape:
    """The scene with one part changed (an edit)."""
    changes: dict[str, Any] = {part: value}
    return replace(scene, **changes)


def _redrawn(scene: Landscape) -> Landscape:
    """The scene as a model redraws it without the edit: the clouds drift."""
    return replace(scene, clouds=tuple((x + 14, y + 3) for x, y in scene.clouds))


def _edit_draft(
    source: str,
    instruction: str,
    scene: Landscape,
    edited: Landscape,
    bad: Landscape,
    part: str,
    defect: str,
    clarity: str,
) -> GenDraft:
    before, after, worse = draw_landscape(scene), draw_landscape(edited), draw_landscape(bad)
    x, y = probe(edited if part == "balloon" else scene, part)

    def pixel(img) -> list[int]:
        return list(img.getpixel((x, y)))

    return GenDraft(
        source=source,
        prompt=[("image", before), ("text", instruction)],
        good=[("image", after)],
        bad=[("image", worse)],
        facts={"probe": {"part": part, "xy": [x, y], "input": pixel(before)}},
        good_facts={"edited": True, "probe_colour": pixel(after)},
        bad_facts={"edited": False, "probe_colour": pixel(worse)},
        defect=defect,
        clarity=clarity,
    )


def edit_recolour(rng: random.Random, variant: int) -> GenDraft:
    scene = _landscape(rng, car=rng.choice(("yellow", "orange", "blue")))
    part = ("house", "roof", "door", "car")[variant % 4]
    colour = rng.choice(
        [c for c in ("red", "green", "purple", "orange", "blue") if c != getattr(scene, part)]
    )
    edited = _with(scene, part, colour)
    if rng.random() < 0.5:
        bad, defect, clarity = _redrawn(scene), "the edit is missing", "obvious"
    else:
        other = rng.choice([p for p in ("house", "roof", "door", "car") if p != part])
        colour_other = colour if colour != getattr(scene, other) else "grey"
        bad = _with(scene, other, colour_other)
        defect, clarity = f"the {other} was recoloured instead of the {part}", "clear"
    return _edit_draft(
        "demo-recolour", f"Make the {part} {colour}.", scene, edited, bad, part, defect, clarity
    )


def edit_add(rng: random.Random, variant: int) -> GenDraft:
    scene = _landscape(rng)
    colour = rng.choice(("red", "purple", "orange", "pink"))
    edited = replace(scene, balloons=(colour,))
    if variant % 2 == 0:
        bad, defect, clarity = _redrawn(scene), "the balloon is missing", "obvious"
    else:
        wrong = rng.choice([c for c in ("green", "blue", "yellow") if c != colour])
        bad, defect, clarity = replace(scene, balloons=(wrong,)), f"the balloon is {wrong}", "clear"
    instruction = f"Add a {colour} balloon floating in the sky."
    return _edit_draft("demo-add", instruction, scene, edited, bad, "balloon", defect, clarity)


def edit_remove(rng: random.Random, variant: int) -> GenDraft:
    part = ("tree", "sun", "car", "tree")[variant % 4]
    scene = _landscape(rng, car=rng.choice(("yellow", "orange", "blue")))
    edited = _with(scene, part, None if part == "car" else False)
    if variant < 2:
        bad, defect, clarity = _redrawn(scene), f"the {part} is still there", "obvious"
    else:
        other = "sun" if part != "sun" else "tree"
        bad = _with(scene, other, False)
        defect, clarity = f"the {other} was removed instead of the {part}", "clear"
    return _edit_draft(
        "demo-remove", f"Remove the {part}.", scene, edited, bad, part, defect, clarity
    )


EDIT_PLAN = [(edit_recolour, 5), (edit_add, 3), (edit_remove, 4)]

assert not set(OBJECT_COLOURS) - set(COLOURS)
