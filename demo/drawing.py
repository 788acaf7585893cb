"""Drawing with Pillow, shared by the domains: the palette, the embedded font,
text on a grid or rotated, and the pictures several domains use (bar, line and
pie charts, tables, receipts, signs, scenes, shapes, clocks, code, people).

Only Pillow's embedded font is used, never a system font, so the same
parameters give byte-identical PNGs on every machine."""

from __future__ import annotations

import io
import keyword
import math
import random
import re
from dataclasses import dataclass
from functools import cache

from PIL import Image, ImageDraw, ImageFont

WHITE = (255, 255, 255)
INK = (33, 37, 41)
MUTED = (110, 117, 125)
GRID = (226, 229, 233)
SERIES = (
    (66, 133, 244),
    (219, 68, 55),
    (244, 180, 0),
    (15, 157, 88),
    (171, 71, 188),
    (0, 172, 193),
    (255, 112, 67),
    (124, 179, 66),
)
COLOURS = {
    "red": (214, 48, 49),
    "blue": (41, 128, 185),
    "yellow": (241, 196, 15),
    "green": (39, 174, 96),
    "orange": (230, 126, 34),
    "purple": (142, 68, 173),
    "pink": (232, 116, 160),
    "white": (245, 245, 240),
    "grey": (149, 165, 166),
}


@cache
def font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    # Pillow's embedded font: the same glyphs on every machine.
    return ImageFont.load_default(size=size)


def canvas(size: tuple[int, int], bg=WHITE) -> tuple[Image.Image, ImageDraw.ImageDraw]:
    img = Image.new("RGB", size, bg)
    return img, ImageDraw.Draw(img)


def png_bytes(img: Image.Image) -> bytes:
    # Flat drawings need few colours: a 256-colour palette keeps files around
    # 5 KB and encodes twice as fast as RGB (this runs at every first `make run`).
    out = io.BytesIO()
    img.quantize(256, method=Image.Quantize.FASTOCTREE).save(out, format="PNG", compress_level=6)
    return out.getvalue()


def vertical_text(img: Image.Image, centre: tuple[float, float], text: str, size: int) -> None:
    f = font(size)
    width = int(f.getlength(text)) + 4
    label = Image.new("RGBA", (width, size + 8), (0, 0, 0, 0))
    ImageDraw.Draw(label).text((2, (size + 8) / 2), text, font=f, fill=INK, anchor="lm")
    label = label.rotate(90, expand=True)
    img.paste(label, (int(centre[0] - label.width / 2), int(centre[1] - label.height / 2)), label)


def mono_text(draw, xy, text: str, size: int, fill=INK) -> None:
    """Draw text on a fixed character grid (the embedded font is proportional)."""
    advance = round(size * 0.6)
    x, y = xy
    f = font(size)
    for i, ch in enumerate(text):
        if ch != " ":
            draw.text((x + i * advance + advance / 2, y), ch, font=f, fill=fill, anchor="ms")


def formula_text(draw, xy, parts: list[tuple[str, str]], size: int, fill=WHITE) -> None:
    """Draw a formula from (text, "n"|"sup"|"sub") parts, centred on xy."""
    small = round(size * 0.6)
    widths = [font(size if kind == "n" else small).getlength(text) for text, kind in parts]
    x = xy[0] - sum(widths) / 2
    y = xy[1]
    for (text, kind), width in zip(parts, widths, strict=True):
        if kind == "n":
            draw.text((x, y), text, font=font(size), fill=fill, anchor="ls")
        elif kind == "sup":
            draw.text((x, y - size * 0.45), text, font=font(small), fill=fill, anchor="ls")
        else:
            draw.text((x, y + size * 0.2), text, font=font(small), fill=fill, anchor="ls")
        x += width


def nice_step(vmax: float, ticks: int = 5) -> int:
    for step in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000):
        if step * ticks >= vmax:
            return step
    return 10_000


def draw_axes(draw, box, step: int, ticks: int, fmt=str) -> None:
    left, top, right, bottom = box
    for i in range(ticks + 1):
        y = bottom - (bottom - top) * i / ticks
        draw.line([(left, y), (right, y)], fill=GRID, width=1)
        draw.text((left - 8, y), fmt(step * i), font=font(13), fill=MUTED, anchor="rm")
    draw.line([(left, top - 6), (left, bottom)], fill=INK, width=2)
    draw.line([(left, bottom), (right, bottom)], fill=INK, width=2)


@dataclass
class Series:
    title: str
    ylabel: str
    unit: str  # words after a value in prose: "12 mm"
    labels: list[str]
    values: list[int]

    def value_of(self, label: str) -> int:
        return self.values[self.labels.index(label)]

    @property
    def max_label(self) -> str:
        return self.labels[self.values.index(max(self.values))]

    @property
    def min_label(self) -> str:
        return self.labels[self.values.index(min(self.values))]


def draw_bar_chart(s: Series, size, colour) -> Image.Image:
    img, d = canvas(size)
    w, h = size
    box = (74, 56, w - 24, h - 58)
    left, top, right, bottom = box
    d.text((w / 2, 26), s.title, font=font(20), fill=INK, anchor="mm")
    step = nice_step(max(s.values))
    draw_axes(d, box, step, 5)
    vertical_text(img, (20, (top + bottom) / 2), s.ylabel, 14)
    slot = (right - left) / len(s.values)
    bar = slot * 0.62
    for i, (label, value) in enumerate(zip(s.labels, s.values, strict=True)):
        x0 = left + slot * i + (slot - bar) / 2
        y0 = bottom - (bottom - top) * value / (step * 5)
        d.rectangle([x0, y0, x0 + bar, bottom - 1], fill=colour)
        d.text((x0 + bar / 2, y0 - 4), str(value), font=font(13), fill=INK, anchor="md")
        d.text((x0 + bar / 2, bottom + 8), label, font=font(13), fill=INK, anchor="mt")
    return img


def draw_line_chart(s: Series, size, colour) -> Image.Image:
    img, d = canvas(size)
    w, h = size
    box = (74, 56, w - 30, h - 58)
    left, top, right, bottom = box
    d.text((w / 2, 26), s.title, font=font(20), fill=INK, anchor="mm")
    step = nice_step(max(s.values))
    draw_axes(d, box, step, 5)
    vertical_text(img, (20, (top + bottom) / 2), s.ylabel, 14)
    n = len(s.values)
    points = [
        (
            left + 24 + (right - left - 48) * i / (n - 1),
            bottom - (bottom - top) * v / (step * 5),
        )
        for i, v in enumerate(s.values)
    ]
    d.line(points, fill=colour, width=3)
    for (x, y), label, value in zip(points, s.labels, s.values, strict=True):
        d.ellipse([x - 5, y - 5, x + 5, y + 5], fill=colour, outline=WHITE)
        d.text((x, y - 9), str(value), font=font(13), fill=INK, anchor="md")
        d.text((x, bottom + 8), label, font=font(13), fill=INK, anchor="mt")
    return img


def draw_pie_chart(title: str, labels: list[str], percents: list[int], size) -> Image.Image:
    img, d = canvas(size)
    w, h = size
    d.text((w / 2, 26), title, font=font(20), fill=INK, anchor="mm")
    r = min(w * 0.3, (h - 80) / 2)
    cx, cy = 40 + r, 52 + (h - 52) / 2
    start = -90.0
    for i, p in enumerate(percents):
        end = start + 360 * p / 100
        d.pieslice([cx - r, cy - r, cx + r, cy + r], start, end, fill=SERIES[i], outline=WHITE)
        mid = math.radians((start + end) / 2)
        d.text(
            (cx + r * 0.64 * math.cos(mid), cy + r * 0.64 * math.sin(mid)),
            f"{p}%",
            font=font(14),
            fill=WHITE,
            anchor="mm",
        )
        start = end
    lx = cx + r + 36
    for i, label in enumerate(labels):
        y = cy - 14 * len(labels) + 28 * i
        d.rectangle([lx, y - 8, lx + 16, y + 8], fill=SERIES[i])
        d.text((lx + 24, y), label, font=font(15), fill=INK, anchor="lm")
    return img


def draw_table(
    header: list[str], rows: list[list[str]], size, title: str = "", accent=(52, 73, 94)
) -> Image.Image:
    img, d = canvas(size, (250, 250, 248))
    w, h = size
    top = 56 if title else 24
    if title:
        d.text((w / 2, 28), title, font=font(19), fill=INK, anchor="mm")
    ncol = len(header)
    left, right = 24, w - 24
    row_h = min(34, (h - top - 20) / (len(rows) + 1))
    col_w = (right - left) / ncol
    d.rectangle([left, top, right, top + row_h], fill=accent)
    for j, text in enumerate(header):
        d.text(
            (left + col_w * j + 10, top + row_h / 2), text, font=font(15), fill=WHITE, anchor="lm"
        )
    for i, row in enumerate(rows, start=1):
        y = top + row_h * i
        if i % 2 == 0:
            d.rectangle([left, y, right, y + row_h], fill=(236, 240, 243))
        for j, text in enumerate(row):
            d.text(
                (left + col_w * j + 10, y + row_h / 2), text, font=font(15), fill=INK, anchor="lm"
            )
    bottom = top + row_h * (len(rows) + 1)
    d.rectangle([left, top, right, bottom], outline=(180, 186, 192))
    for j in range(1, ncol):
        d.line([(left + col_w * j, top), (left + col_w * j, bottom)], fill=(200, 205, 210))
    return img


def money(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"


@dataclass
class Receipt:
    store: str
    date: str
    lines: list[tuple[str, int, int]]  # name, quantity, unit price in cents
    tax_percent: int

    @property
    def subtotal(self) -> int:
        return sum(q * p for _, q, p in self.lines)

    @property
    def tax(self) -> int:
        return (self.subtotal * self.tax_percent + 50) // 100

    @property
    def total(self) -> int:
        return self.subtotal + self.tax


def draw_receipt(r: Receipt, size, rng: random.Random) -> Image.Image:
    bg = (rng.randint(150, 190), rng.randint(120, 150), rng.randint(90, 110))  # a table top
    img, d = canvas(size, bg)
    w, h = size
    pw = 300
    x0 = (w - pw) / 2 + rng.randint(-30, 30)
    y0 = 18
    d.rectangle([x0 + 5, y0 + 5, x0 + pw + 5, h - 10], fill=tuple(c - 40 for c in bg))
    d.rectangle([x0, y0, x0 + pw, h - 15], fill=(252, 251, 245))
    m = 16
    y = y0 + 30
    d.text((x0 + pw / 2, y), r.store.upper(), font=font(18), fill=INK, anchor="ms")
    y += 20
    d.text((x0 + pw / 2, y), r.date, font=font(13), fill=MUTED, anchor="ms")
    y += 26
    for name, qty, price in r.lines:
        label = f"{qty} x {name}" if qty > 1 else name
        mono_text(d, (x0 + m, y), label[:20], 14)
        mono_text(d, (x0 + pw - m - 8 * 7, y), f"{money(qty * price):>7}", 14)
        y += 21
    y += 4
    d.line([(x0 + m, y - 12), (x0 + pw - m, y - 12)], fill=MUTED)
    for label, value in (
        ("SUBTOTAL", r.subtotal),
        (f"TAX {r.tax_percent}%", r.tax),
        ("TOTAL", r.total),
    ):
        mono_text(d, (x0 + m, y + 6), label, 15 if label == "TOTAL" else 14)
        mono_text(d, (x0 + pw - m - 8 * 8, y + 6), f"${money(value):>7}", 14)
        y += 22
    d.text((x0 + pw / 2, y + 20), "Thank you!", font=font(14), fill=MUTED, anchor="ms")
    return img


def draw_sign(lines: list[str], size, colour, text_colour, rng: random.Random) -> Image.Image:
    sky = (rng.randint(150, 190), rng.randint(200, 225), rng.randint(230, 250))
    img, d = canvas(size, sky)
    w, h = size
    d.rectangle([0, h * 0.78, w, h], fill=(120, 120, 118))
    sw = min(w - 80, 60 + 19 * max(len(line) for line in lines))
    sh = 30 + 40 * len(lines)
    cx = w / 2 + rng.randint(-40, 40)
    top = 40 + rng.randint(0, 20)
    d.rectangle([cx - 5, top + sh, cx + 5, h * 0.9], fill=(90, 90, 95))
    d.rounded_rectangle(
        [cx - sw / 2, top, cx + sw / 2, top + sh], radius=14, fill=colour, outline=WHITE, width=5
    )
    for i, line in enumerate(lines):
        size_px = 30 if i == 0 else 22
        d.text((cx, top + 38 + 40 * i), line, font=font(size_px), fill=text_colour, anchor="ms")
    return img


@dataclass
class Scene:
    night: bool
    house: str
    roof: str
    windows: int
    trees: int
    balloons: list[str]
    car: str | None


def draw_scene(s: Scene, size, rng: random.Random) -> Image.Image:
    w, h = size
    sky = (25, 35, 70) if s.night else (135 + rng.randint(0, 30), 200, 240)
    img, d = canvas(size, sky)
    ground = h * 0.68
    d.rectangle([0, ground, w, h], fill=(40, 90, 45) if s.night else (96, 170, 80))
    if s.night:
        for _ in range(30):
            x, y = rng.uniform(0, w), rng.uniform(0, ground - 10)
            d.point((x, y), fill=WHITE)
        mx = rng.uniform(w * 0.6, w - 50)
        d.ellipse([mx - 22, 30, mx + 22, 74], fill=(240, 240, 210))
    else:
        sx = rng.uniform(w * 0.6, w - 50)
        d.ellipse([sx - 28, 26, sx + 28, 82], fill=(255, 210, 60))
    # The house on the left third.
    hx, hw, hh = rng.uniform(30, w * 0.12), w * 0.3, h * 0.28
    base = ground + 20
    d.rectangle([hx, base - hh, hx + hw, base], fill=COLOURS[s.house], outline=INK)
    d.polygon(
        [(hx - 12, base - hh), (hx + hw / 2, base - hh - h * 0.16), (hx + hw + 12, base - hh)],
        fill=COLOURS[s.roof],
        outline=INK,
    )
    door_w = hw * 0.18
    d.rectangle(
        [hx + hw / 2 - door_w / 2, base - hh * 0.5, hx + hw / 2 + door_w / 2, base], fill=INK
    )
    lit = (250, 220, 100) if s.night else (200, 230, 250)
    spots = [(0.08, 0.18), (0.66, 0.18), (0.08, 0.58), (0.66, 0.58), (0.37, 0.1)][: s.windows]
    for fx, fy in spots:
        x0, y0 = hx + hw * fx + 4, base - hh + hh * fy
        d.rectangle([x0, y0, x0 + hw * 0.2, y0 + hh * 0.22], fill=lit, outline=INK)
    # Trees in the middle, spread out.
    tree_left, tree_right = hx + hw + 40, w * 0.9
    for i in range(s.trees):
        tx = tree_left + (tree_right - tree_left) * (i + 0.5) / s.trees + rng.uniform(-10, 10)
        ty = ground + rng.uniform(0, 30)
        d.rectangle([tx - 5, ty - 40, tx + 5, ty], fill=(110, 70, 40))
        r = rng.uniform(20, 28)
        d.ellipse([tx - r, ty - 40 - 1.6 * r, tx + r, ty - 40 + 0.4 * r], fill=(30, 120, 50))
    # Balloons float in the sky.
    for i, colour in enumerate(s.balloons):
        bx = w * 0.38 + i * 36 + rng.uniform(-6, 6)
        by = 50 + rng.uniform(0, 50)
        d.line([(bx, by + 22), (bx + rng.uniform(-8, 8), by + 80)], fill=INK)
        d.ellipse([bx - 14, by - 18, bx + 14, by + 22], fill=COLOURS[colour], outline=INK)
    if s.car:
        cx = w * 0.6 + rng.uniform(0, w * 0.15)
        cy = h - 30
        d.rounded_rectangle([cx, cy - 34, cx + 110, cy], radius=8, fill=COLOURS[s.car])
        d.rounded_rectangle([cx + 22, cy - 56, cx + 86, cy - 30], radius=8, fill=COLOURS[s.car])
        d.rectangle([cx + 30, cy - 50, cx + 78, cy - 36], fill=(200, 230, 250))
        for wx in (cx + 24, cx + 86):
            d.ellipse([wx - 12, cy - 12, wx + 12, cy + 12], fill=INK)
    return img


def draw_shapes(shapes: list[tuple[str, str, float, float]], size, bg) -> Image.Image:
    img, d = canvas(size, bg)
    for kind, colour, x, y in shapes:
        fill = COLOURS[colour]
        if kind == "circle":
            d.ellipse([x - 22, y - 22, x + 22, y + 22], fill=fill, outline=INK)
        elif kind == "square":
            d.rectangle([x - 20, y - 20, x + 20, y + 20], fill=fill, outline=INK)
        else:
            d.polygon([(x, y - 24), (x - 24, y + 18), (x + 24, y + 18)], fill=fill, outline=INK)
    return img


def draw_clock(hour: int, minute: int, size, rim) -> Image.Image:
    img, d = canvas(size, (236, 232, 224))
    w, h = size
    cx, cy, r = w / 2, h / 2, min(w, h) * 0.4
    d.ellipse([cx - r - 10, cy - r - 10, cx + r + 10, cy + r + 10], fill=rim)
    d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=WHITE)
    for i in range(60):
        a = math.radians(i * 6 - 90)
        inner = r * (0.86 if i % 5 == 0 else 0.92)
        d.line(
            [
                (cx + inner * math.cos(a), cy + inner * math.sin(a)),
                (cx + r * 0.97 * math.cos(a), cy + r * 0.97 * math.sin(a)),
            ],
            fill=INK,
            width=3 if i % 5 == 0 else 1,
        )
    for n in range(1, 13):
        a = math.radians(n * 30 - 90)
        d.text(
            (cx + r * 0.74 * math.cos(a), cy + r * 0.74 * math.sin(a)),
            str(n),
            font=font(20),
            fill=INK,
            anchor="mm",
        )
    hour_angle = math.radians((hour % 12) * 30 + minute * 0.5 - 90)
    minute_angle = math.radians(minute * 6 - 90)
    d.line(
        [(cx, cy), (cx + r * 0.5 * math.cos(hour_angle), cy + r * 0.5 * math.sin(hour_angle))],
        fill=INK,
        width=7,
    )
    d.line(
        [
            (cx, cy),
            (cx + r * 0.82 * math.cos(minute_angle), cy + r * 0.82 * math.sin(minute_angle)),
        ],
        fill=INK,
        width=4,
    )
    d.ellipse([cx - 6, cy - 6, cx + 6, cy + 6], fill=(200, 40, 40))
    return img


PYTHON_KEYWORDS = frozenset([*keyword.kwlist, "print", "range", "len", "sum", "max"])
TOKEN = re.compile(r"\s+|\w+|\"[^\"]*\"|'[^']*'|.")


def draw_code(lines: list[str], size, filename: str) -> Image.Image:
    img, d = canvas(size, (40, 44, 52))
    w, _ = size
    d.rectangle([0, 0, w, 30], fill=(33, 37, 43))
    for i, colour in enumerate(((224, 108, 117), (229, 192, 123), (152, 195, 121))):
        d.ellipse([12 + 18 * i, 10, 24 + 18 * i, 22], fill=colour)
    d.text((w / 2, 15), filename, font=font(13), fill=(171, 178, 191), anchor="mm")
    size_px, advance = 15, 9
    for row, line in enumerate(lines):
        y = 58 + row * 22
        d.text((34, y), str(row + 1), font=font(13), fill=(92, 99, 112), anchor="rs")
        col = 0
        for token in TOKEN.findall(line):
            if token in PYTHON_KEYWORDS:
                colour = (198, 120, 221)
            elif token[0] in "\"'":
                colour = (152, 195, 121)
            elif token.isdigit():
                colour = (209, 154, 102)
            else:
                colour = (220, 223, 228)
            mono_text(d, (48 + col * advance, y), token, size_px, colour)
            col += len(token)
    return img


def draw_person(d, cx: float, ground: float, look: dict) -> None:
    skin, hair, shirt = look["skin"], look["hair"], look["shirt"]
    head_y = ground - 200
    if look.get("long_hair"):
        d.rounded_rectangle([cx - 27, head_y - 26, cx + 27, head_y + 42], radius=14, fill=hair)
    # Legs or skirt, body, arms, head.
    if look.get("skirt"):
        d.polygon(
            [
                (cx - 22, ground - 110),
                (cx + 22, ground - 110),
                (cx + 36, ground - 50),
                (cx - 36, ground - 50),
            ],
            fill=look["trousers"],
        )
        d.rectangle([cx - 16, ground - 50, cx - 8, ground], fill=skin)
        d.rectangle([cx + 8, ground - 50, cx + 16, ground], fill=skin)
    else:
        d.rectangle([cx - 22, ground - 112, cx - 3, ground], fill=look["trousers"])
        d.rectangle([cx + 3, ground - 112, cx + 22, ground], fill=look["trousers"])
    d.rounded_rectangle([cx - 28, ground - 175, cx + 28, ground - 105], radius=10, fill=shirt)
    d.rectangle([cx - 40, ground - 170, cx - 29, ground - 112], fill=shirt)
    d.rectangle([cx + 29, ground - 170, cx + 40, ground - 112], fill=shirt)
    if look.get("tie"):
        d.polygon(
            [
                (cx - 5, ground - 174),
                (cx + 5, ground - 174),
                (cx + 3, ground - 130),
                (cx - 3, ground - 130),
            ],
            fill=(160, 30, 40),
        )
    d.ellipse([cx - 24, head_y - 24, cx + 24, head_y + 24], fill=skin)
    d.chord([cx - 25, head_y - 27, cx + 25, head_y + 10], 180, 360, fill=hair)
    d.ellipse([cx - 10, head_y - 2, cx - 5, head_y + 3], fill=INK)
    d.ellipse([cx + 5, head_y - 2, cx + 10, head_y + 3], fill=INK)
    d.arc([cx - 9, head_y + 4, cx + 9, head_y + 14], 20, 160, fill=INK, width=2)
    if look.get("glasses"):
        d.ellipse([cx - 15, head_y - 7, cx - 1, head_y + 7], outline=INK, width=2)
        d.ellipse([cx + 1, head_y - 7, cx + 15, head_y + 7], outline=INK, width=2)


def draw_two_people(a: dict, b: dict, size, wall) -> Image.Image:
    img, d = canvas(size, wall)
    w, h = size
    ground = h - 50
    d.rectangle([0, ground, w, h], fill=(180, 160, 130))
    for look, cx, name in ((a, w * 0.3, "Person A"), (b, w * 0.7, "Person B")):
        draw_person(d, cx, ground, look)
        d.text((cx, ground + 26), name, font=font(17), fill=INK, anchor="mm")
    return img
