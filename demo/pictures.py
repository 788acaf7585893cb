"""Pictures of the generation demo (text-to-image, editing, interleaved):
flat shapes on a background, a small landscape whose parts an edit changes,
and the step pictures of the interleaved answers.

Every picture is a pure function of its parameters (positions are chosen
before drawing, never while drawing), so an edited scene differs from its
input exactly where the edit says, and a "worse" picture differs from the
better one by what its record says: a count, a colour, a missing edit."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from PIL import Image, ImageDraw

from demo.drawing import COLOURS, INK, WHITE, canvas, font

SHAPES = ("circle", "square", "triangle", "star")
# Backgrounds far from every object colour, so each object is one patch of
# its own colour (tests count them).
BACKGROUNDS = {
    "blue": (52, 86, 160),
    "white": (250, 250, 246),
    "black": (28, 30, 36),
    "beige": (236, 224, 196),
}
SHAPE_RADIUS = 30


@dataclass(frozen=True)
class Placed:
    kind: str
    colour: str
    x: float
    y: float


def layout(rng: random.Random, n: int, size: int, *, grid: int = 4) -> list[tuple[float, float]]:
    """`n` separated positions: distinct cells of a grid, jittered."""
    cell = size / grid
    cells = rng.sample([(c, r) for c in range(grid) for r in range(grid)], n)
    jitter = cell / 2 - SHAPE_RADIUS - 6
    return [
        (
            round(cell * (c + 0.5) + rng.uniform(-jitter, jitter), 1),
            round(cell * (r + 0.5) + rng.uniform(-jitter, jitter), 1),
        )
        for c, r in cells
    ]


def draw_shape(d: ImageDraw.ImageDraw, kind: str, fill, x: float, y: float, r: float) -> None:
    if kind == "circle":
        d.ellipse([x - r, y - r, x + r, y + r], fill=fill)
    elif kind == "square":
        d.rectangle([x - r * 0.85, y - r * 0.85, x + r * 0.85, y + r * 0.85], fill=fill)
    elif kind == "triangle":
        d.polygon([(x, y - r), (x - r, y + r * 0.75), (x + r, y + r * 0.75)], fill=fill)
    else:
        points = []
        for i in range(10):
            a = math.radians(-90 + 36 * i)
            rr = r if i % 2 == 0 else r * 0.45
            points.append((x + rr * math.cos(a), y + rr * math.sin(a)))
        d.polygon(points, fill=fill)


def draw_objects(objects: list[Placed], background: str, size: int) -> Image.Image:
    img, d = canvas((size, size), BACKGROUNDS[background])
    for o in objects:
        # A soft shadow (a darker background shade), then the flat object.
        shade = tuple(max(0, v - 24) for v in BACKGROUNDS[background])
        draw_shape(d, o.kind, shade, o.x + 4, o.y + 5, SHAPE_RADIUS)
        draw_shape(d, o.kind, COLOURS[o.colour], o.x, o.y, SHAPE_RADIUS)
    return img


def draw_word_sign(word: str, colour: str, size: int, tilt: int) -> Image.Image:
    """A street sign with one word on it, on a sky over a pavement."""
    img, d = canvas((size, size), (170, 210, 240))
    d.rectangle([0, size * 0.8, size, size], fill=(130, 130, 126))
    d.rectangle([size / 2 - 6, size * 0.45, size / 2 + 6, size * 0.9], fill=(80, 80, 86))
    f = font(54)
    width = f.getlength(word)
    box = [size / 2 - width / 2 - 26, size * 0.2, size / 2 + width / 2 + 26, size * 0.2 + 90]
    d.rounded_rectangle(box, radius=16, fill=COLOURS[colour], outline=WHITE, width=6)
    d.text((size / 2 + tilt, size * 0.2 + 64), word, font=f, fill=WHITE, anchor="ms")
    return img


# --- The editing demo's landscape ---------------------------------------------------


@dataclass(frozen=True)
class Landscape:
    """Everything drawn, with its place: an edit is a change of one field."""

    sky: tuple[int, int, int] = (150, 205, 240)
    house: str = "white"
    roof: str = "red"
    door: str = "blue"
    sun: bool = True
    tree: bool = True
    car: str | None = "yellow"
    clouds: tuple[tuple[int, int], ...] = ((70, 60), (250, 45))
    balloons: tuple[str, ...] = ()
    house_x: int = 40
    tree_x: int = 250
    car_x: int = 220
    sun_xy: tuple[int, int] = (320, 64)


GROUND_Y = 270  # of a 384-pixel landscape


def draw_landscape(s: Landscape, size: int = 384) -> Image.Image:
    img, d = canvas((size, size), s.sky)
    d.rectangle([0, GROUND_Y, size, size], fill=(96, 170, 80))
    if s.sun:
        x, y = s.sun_xy
        d.ellipse([x - 30, y - 30, x + 30, y + 30], fill=(255, 210, 60))
    for cx, cy in s.clouds:
        for dx, dy, r in ((-22, 6, 18), (0, 0, 24), (24, 6, 18)):
            d.ellipse([cx + dx - r, cy + dy - r, cx + dx + r, cy + dy + r], fill=WHITE)
    for i, colour in enumerate(s.balloons):
        bx, by = 150 + 34 * i, 70 + 14 * (i % 2)
        d.line([(bx, by + 20), (bx + 4, by + 80)], fill=INK, width=2)
        d.ellipse([bx - 14, by - 18, bx + 14, by + 20], fill=COLOURS[colour])
    hx, base = s.house_x, GROUND_Y + 20
    d.rectangle([hx, base - 100, hx + 130, base], fill=COLOURS[s.house], outline=INK, width=2)
    d.polygon(
        [(hx - 14, base - 100), (hx + 65, base - 165), (hx + 144, base - 100)],
        fill=COLOURS[s.roof],
        outline=INK,
    )
    d.rectangle([hx + 52, base - 56, hx + 78, base], fill=COLOURS[s.door], outline=INK, width=2)
    for wx in (hx + 14, hx + 90):
        d.rectangle([wx, base - 84, wx + 26, base - 58], fill=(200, 230, 250), outline=INK, width=2)
    if s.tree:
        tx = s.tree_x
        d.rectangle([tx - 7, GROUND_Y - 40, tx + 7, GROUND_Y + 24], fill=(110, 70, 40))
        d.ellipse([tx - 38, GROUND_Y - 116, tx + 38, GROUND_Y - 30], fill=(30, 120, 50))
    if s.car:
        cx, cy = s.car_x, size - 30
        d.rounded_rectangle([cx, cy - 34, cx + 120, cy], radius=8, fill=COLOURS[s.car])
        d.rounded_rectangle([cx + 24, cy - 58, cx + 92, cy - 30], radius=8, fill=COLOURS[s.car])
        d.rectangle([cx + 32, cy - 52, cx + 84, cy - 38], fill=(200, 230, 250))
        for wx in (cx + 26, cx + 94):
            d.ellipse([wx - 13, cy - 13, wx + 13, cy + 13], fill=INK)
    return img


# Where each part of the landscape can be checked: a pixel inside it.
def probe(s: Landscape, part: str) -> tuple[int, int]:
    base = GROUND_Y + 20
    return {
        "house": (s.house_x + 45, base - 20),
        "roof": (s.house_x + 65, base - 120),
        "door": (s.house_x + 65, base - 20),
        "sun": s.sun_xy,
        "tree": (s.tree_x, GROUND_Y - 90),
        "car": (s.car_x + 60, 384 - 50),
        "balloon": (150, 72),
    }[part]


# --- Step pictures of the interleaved demo ------------------------------------------

STEP_SIZE = 256


def draw_house_steps(step: int, walls: str, roof: str) -> Image.Image:
    """A house drawn in four steps: walls, roof, door and windows, chimney smoke."""
    img, d = canvas((STEP_SIZE, STEP_SIZE), (246, 244, 238))
    d.line([(0, 214), (STEP_SIZE, 214)], fill=(150, 150, 140), width=3)
    d.rectangle([58, 124, 198, 214], fill=COLOURS[walls], outline=INK, width=3)
    if step >= 2:
        d.polygon([(46, 124), (128, 58), (210, 124)], fill=COLOURS[roof], outline=INK)
    if step >= 3:
        d.rectangle([114, 164, 142, 214], fill=(110, 70, 40), outline=INK, width=2)
        for x in (72, 160):
            d.rectangle([x, 140, x + 26, 164], fill=(200, 230, 250), outline=INK, width=2)
    if step >= 4:
        d.rectangle([164, 70, 182, 104], fill=(120, 60, 50), outline=INK, width=2)
        for i, r in enumerate((8, 11, 14)):
            cx, cy = 176 + 8 * i, 56 - 18 * i
            d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=(200, 200, 205))
    return img


def draw_snowman_steps(balls: int, face: bool, hat: str | None, scarf: str) -> Image.Image:
    """A snowman of `balls` snowballs (bottom up), then a face, a hat, a scarf."""
    img, d = canvas((STEP_SIZE, STEP_SIZE), (190, 215, 240))
    d.rectangle([0, 210, STEP_SIZE, STEP_SIZE], fill=WHITE)
    centres = [(128, 180, 40), (128, 118, 30), (128, 70, 22)][:balls]
    for cx, cy, r in centres:
        d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=WHITE, outline=(120, 130, 150), width=2)
    cx, cy, r = centres[-1]  # the face and the hat go on the top ball, however many
    if face:
        for ex in (cx - 8, cx + 8):
            d.ellipse([ex - 3, cy - 6, ex + 3, cy], fill=INK)
        d.polygon([(cx, cy + 4), (cx + 18, cy + 8), (cx, cy + 10)], fill=(240, 130, 30))
        d.rectangle([cx - 16, cy + r - 2, cx + 16, cy + r + 6], fill=COLOURS[scarf])
    if hat:
        d.rectangle([cx - 22, cy - r - 2, cx + 22, cy - r + 4], fill=COLOURS[hat])
        d.rectangle([cx - 14, cy - r - 28, cx + 14, cy - r], fill=COLOURS[hat])
    return img


@dataclass
class Bars:
    heights: list[int]
    colours: list[str] = field(default_factory=list)


def draw_bars(bars: Bars, caption: str = "") -> Image.Image:
    """Bars of the given heights (a sorting demo's state), labelled by height."""
    img, d = canvas((STEP_SIZE, STEP_SIZE), (250, 250, 247))
    n = len(bars.heights)
    width = (STEP_SIZE - 40) / n
    for i, (h, colour) in enumerate(zip(bars.heights, bars.colours, strict=True)):
        x0 = 20 + i * width + 6
        d.rectangle([x0, 210 - h * 18, x0 + width - 12, 210], fill=COLOURS[colour], outline=INK)
        d.text((x0 + (width - 12) / 2, 228), str(h), font=font(16), fill=INK, anchor="ms")
    d.line([(14, 210), (STEP_SIZE - 14, 210)], fill=INK, width=2)
    if caption:
        d.text((STEP_SIZE / 2, 22), caption, font=font(15), fill=INK, anchor="ms")
    return img
