"""Reasoning, math: totals and changes read off charts, angles, right
triangles, L-shaped areas and circles. Answers show their working in LaTeX; the
worse one slips on a reading or a step."""

from __future__ import annotations

import math
import random

from demo.drawing import (
    INK,
    SERIES,
    WHITE,
    canvas,
    draw_bar_chart,
    draw_line_chart,
    draw_pie_chart,
    font,
)
from demo.items import Draft
from demo.subjects import make_pie, make_series, pick_size


def rs_bar_total(rng: random.Random) -> Draft:
    s = make_series(rng)
    img = draw_bar_chart(s, pick_size(rng), rng.choice(SERIES))
    a, b = rng.sample(s.labels, 2)
    va, vb = s.value_of(a), s.value_of(b)
    if rng.random() < 0.5:
        total = sum(s.values)
        terms = " + ".join(map(str, s.values))
        readings = ", ".join(f"{lab} = {v}" for lab, v in zip(s.labels, s.values, strict=True))
        prompt = f"What is the total of all the bars in the chart ({s.ylabel.lower()})?"
        good = (
            f"Reading the value above each bar: {readings}.\n\n"
            f"$$\\text{{total}} = {terms} = {total}$$\n\n**Answer:** {total}"
        )
        alt = f"Adding the labelled values, ${terms} = {total}$. The total is **{total}** {s.unit}."
        slip = rng.randrange(len(s.values))
        misread = list(s.values)
        misread[slip] += rng.choice([-5, -3, 4, 6])
        bad = (
            f"The bars show {', '.join(map(str, misread))}. Adding them:\n\n"
            f"$$ {' + '.join(map(str, misread))} = {sum(misread)}$$\n\n**Answer:** {sum(misread)}"
        )
    else:
        diff = abs(va - vb)
        hi, lo = (a, b) if va >= vb else (b, a)
        prompt = f"How much higher is the bar for {hi} than the bar for {lo}?"
        good = (
            f"From the chart, {hi} = {max(va, vb)} and {lo} = {min(va, vb)}.\n\n"
            f"$${max(va, vb)} - {min(va, vb)} = {diff}$$\n\n"
            f"So {hi} is **{diff}** {s.unit} higher."
        )
        alt = (
            f"${hi} - {lo} = {max(va, vb)} - {min(va, vb)} = {diff}$. The difference is **{diff}**."
        )
        wrong = max(va, vb) + min(va, vb)
        bad = (
            f"{hi} is {max(va, vb)} and {lo} is {min(va, vb)}. The difference is "
            f"${max(va, vb)} + {min(va, vb)} = {wrong}$, so {hi} is {wrong} higher."
        )
    return Draft("mathvista", prompt, img, good, bad, alt)


def rs_line_change(rng: random.Random) -> Draft:
    s = make_series(rng, n=rng.randint(5, 6))
    img = draw_line_chart(s, pick_size(rng), rng.choice(SERIES))
    changes = [b - a for a, b in zip(s.values, s.values[1:], strict=False)]
    k = max(range(len(changes)), key=lambda i: changes[i])
    prompt = "Between which two consecutive points does the line rise the most, and by how much?"
    steps = ", ".join(
        f"{s.labels[i]}→{s.labels[i + 1]}: ${changes[i]:+d}$" for i in range(len(changes))
    )
    good = (
        f"Changes between consecutive points:\n\n{steps}\n\nThe largest rise is "
        f"**{s.labels[k]} to {s.labels[k + 1]}**: ${s.values[k + 1]} - {s.values[k]} = "
        f"{changes[k]}$ {s.unit}."
    )
    alt = (
        f"The steepest upward segment is from {s.labels[k]} ({s.values[k]}) to "
        f"{s.labels[k + 1]} ({s.values[k + 1]}), an increase of **{changes[k]}** {s.unit}."
    )
    top = s.values.index(max(s.values))
    lo = s.values.index(min(s.values))
    if max(changes) <= 0:  # no rise at all: the correct answer says so
        good = (
            f"The line never rises: every change is zero or negative ({steps}). "
            "There is no increase between consecutive points."
        )
        alt = "None of the segments goes up, so there is no rise to report."
    bad = (
        f"The line rises the most from {s.labels[lo]} to {s.labels[top]}, by "
        f"${s.values[top]} - {s.values[lo]} = {s.values[top] - s.values[lo]}$ {s.unit}, since "
        "those are the lowest and highest points."
    )
    if abs(top - lo) == 1 and top > lo:
        bad = (
            f"The biggest rise is {s.labels[k]} to {s.labels[k + 1]}, by about "
            f"{changes[k] + rng.choice([5, 8])} {s.unit}."
        )
    return Draft("mathvista", prompt, img, good, bad, alt)


def rs_pie_count(rng: random.Random) -> Draft:
    title, labels, percents = make_pie(rng)
    img = draw_pie_chart(title, labels, percents, pick_size(rng))
    total = rng.choice([200, 300, 400, 500, 600, 800, 1000, 1200])
    i = rng.randrange(len(labels))
    answer = total * percents[i] // 100
    prompt = (
        f"If the chart represents {total} people in total, how many of them are in the "
        f'"{labels[i]}" group?'
    )
    good = (
        f"The {labels[i]} slice is {percents[i]}%.\n\n"
        f"$$\\frac{{{percents[i]}}}{{100}} \\times {total} = {answer}$$\n\n**Answer:** {answer}"
    )
    alt = (
        f"{labels[i]} is {percents[i]}% of {total}: ${percents[i] / 100:g} \\times {total} = "
        f"{answer}$, so **{answer}** people."
    )
    j = (i + 1) % len(labels)
    bad = (
        f"The {labels[i]} slice is {percents[j]}%, so $0.{percents[j]:02d} \\times {total} = "
        f"{total * percents[j] // 100}$. **Answer:** {total * percents[j] // 100}"
    )
    return Draft("mathvista", prompt, img, good, bad, alt)


def label_at(d, xy, text, size=18, fill=INK) -> None:
    d.text(xy, text, font=font(size), fill=fill, anchor="mm")


def rs_triangle_angle(rng: random.Random) -> Draft:
    a = rng.randint(35, 80)
    b = rng.randint(35, 80)
    c = 180 - a - b
    size = pick_size(rng)
    img, d = canvas(size, (252, 252, 250))
    w, h = size
    base = w * 0.6
    ra, rb = math.radians(a), math.radians(b)
    side_b = base * math.sin(rb) / math.sin(math.radians(c))  # |AC|, law of sines
    A = (0.0, 0.0)
    B = (base, 0.0)
    C = (side_b * math.cos(ra), side_b * math.sin(ra))
    height = C[1]
    scale = min(1.0, (h - 110) / height)
    ox = (w - base * scale) / 2
    oy = h - 55

    def P(p):
        return (ox + p[0] * scale, oy - p[1] * scale)

    pa, pb, pc = P(A), P(B), P(C)
    d.polygon([pa, pb, pc], outline=INK, fill=(227, 242, 253), width=3)
    label_at(d, (pa[0] - 14, pa[1] + 12), "A")
    label_at(d, (pb[0] + 14, pb[1] + 12), "B")
    label_at(d, (pc[0], pc[1] - 16), "C")
    for p, q1, q2, text in ((pa, pb, pc, f"{a}°"), (pb, pa, pc, f"{b}°"), (pc, pa, pb, "x")):
        ux = (q1[0] - p[0]) / math.dist(p, q1) + (q2[0] - p[0]) / math.dist(p, q2)
        uy = (q1[1] - p[1]) / math.dist(p, q1) + (q2[1] - p[1]) / math.dist(p, q2)
        n = math.hypot(ux, uy)
        label_at(d, (p[0] + 42 * ux / n, p[1] + 42 * uy / n), text, 17, (180, 30, 30))
    prompt = rng.choice(
        [
            "Find the value of x in the triangle.",
            "What is the measure of angle C (marked x)?",
        ]
    )
    good = (
        f"The interior angles of a triangle add up to $180^\\circ$:\n\n"
        f"$$x = 180^\\circ - {a}^\\circ - {b}^\\circ = {c}^\\circ$$\n\n**Answer:** $x = {c}^\\circ$"
    )
    alt = f"Since $A + B + C = 180^\\circ$, $x = 180 - ({a} + {b}) = {c}$. So angle C is **{c}°**."
    wrong = rng.choice([w for w in (360 - a - b, 90 - abs(a - b), c + 10) if w != c])
    bad = (
        "Angles in a triangle sum to "
        + ("$360^\\circ$" if wrong == 360 - a - b else "$180^\\circ$")
        + f", so $x = {wrong}^\\circ$.\n\n**Answer:** ${wrong}^\\circ$"
    )
    return Draft("mathvista", prompt, img, good, bad, alt)


TRIPLES = [(3, 4, 5), (5, 12, 13), (8, 15, 17), (7, 24, 25), (20, 21, 29), (9, 40, 41)]


def rs_right_triangle(rng: random.Random) -> Draft:
    base_triple = rng.choice(TRIPLES)
    k = rng.choice([1, 2, 3]) if base_triple[2] < 20 else 1
    a, b, c = (k * v for v in base_triple)
    if rng.random() < 0.5:
        a, b = b, a
    unit = rng.choice(["cm", "m", "in"])
    size = pick_size(rng)
    img, d = canvas(size, (250, 250, 252))
    w, h = size
    scale = min((w - 160) / b, (h - 120) / a)
    x0, y0 = 90 + rng.uniform(0, 20), h - 50
    pa, pb, pc = (x0, y0), (x0 + b * scale, y0), (x0, y0 - a * scale)
    d.polygon([pa, pb, pc], outline=INK, fill=(232, 245, 233), width=3)
    d.rectangle([x0, y0 - 18, x0 + 18, y0], outline=INK, width=2)
    label_at(d, (x0 - 36, y0 - a * scale / 2), f"{a} {unit}")
    label_at(d, (x0 + b * scale / 2, y0 + 20), f"{b} {unit}")
    label_at(d, ((pb[0] + pc[0]) / 2 + 20, (pb[1] + pc[1]) / 2 - 14), "c = ?", 18, (180, 30, 30))
    prompt = "Find the length of the hypotenuse c."
    good = (
        f"The triangle has a right angle, so by the Pythagorean theorem:\n\n"
        f"$$c = \\sqrt{{a^2 + b^2}} = \\sqrt{{{a}^2 + {b}^2}} = \\sqrt{{{a * a} + {b * b}}} = "
        f"\\sqrt{{{c * c}}} = {c}$$\n\n**Answer:** $c = {c}$ {unit}"
    )
    alt = f"$c^2 = {a}^2 + {b}^2 = {a * a + b * b}$, so $c = {c}$ {unit}."
    bad = rng.choice(
        [
            f"Add the two legs: $c = {a} + {b} = {a + b}$.\n\n**Answer:** {a + b} {unit}",
            f"$$c = \\sqrt{{{a}^2 + {b}^2}} = \\sqrt{{{a * a + b * b + 2 * a}}} \\approx "
            f"{math.sqrt(a * a + b * b + 2 * a):.2f}$$\n\n**Answer:** "
            f"{math.sqrt(a * a + b * b + 2 * a):.2f} {unit}",
        ]
    )
    return Draft("mathvista", prompt, img, good, bad, alt)


def rs_lshape_area(rng: random.Random) -> Draft:
    W, H = rng.randint(8, 16), rng.randint(6, 12)
    cw, ch = rng.randint(2, W // 2), rng.randint(2, H - 3)
    unit = rng.choice(["cm", "m"])
    size = pick_size(rng)
    img, d = canvas(size, WHITE)
    w, h = size
    s = min((w - 160) / W, (h - 110) / H)
    x0, y0 = (w - W * s) / 2, (h - H * s) / 2 + 10
    # The cut-out is the top-right corner.
    poly = [
        (x0, y0),
        (x0 + (W - cw) * s, y0),
        (x0 + (W - cw) * s, y0 + ch * s),
        (x0 + W * s, y0 + ch * s),
        (x0 + W * s, y0 + H * s),
        (x0, y0 + H * s),
    ]
    d.polygon(poly, fill=(255, 243, 224), outline=INK, width=3)
    label_at(d, (x0 + W * s / 2, y0 + H * s + 20), f"{W} {unit}")
    label_at(d, (x0 - 36, y0 + H * s / 2), f"{H} {unit}")
    label_at(d, (x0 + (W - cw) * s / 2, y0 - 16), f"{W - cw} {unit}")
    label_at(d, (x0 + W * s + 36, y0 + ch * s + (H - ch) * s / 2), f"{H - ch} {unit}")
    area = W * H - cw * ch
    prompt = "What is the area of this shape? All corners are right angles."
    good = (
        f"Treat it as a {W} by {H} rectangle with a {cw} by {ch} corner removed (the missing "
        f"corner is ${W} - {W - cw} = {cw}$ wide and ${H} - {H - ch} = {ch}$ tall):\n\n"
        f"$$A = {W} \\cdot {H} - {cw} \\cdot {ch} = {W * H} - {cw * ch} = {area}$$\n\n"
        f"**Answer:** {area} {unit}$^2$"
    )
    alt = (
        f"Split it into two rectangles: ${W - cw} \\times {ch} = {(W - cw) * ch}$ on top and "
        f"${W} \\times {H - ch} = {W * (H - ch)}$ below. Total: **{area} {unit}²**."
    )
    bad = (
        f"Multiply the outer dimensions: $A = {W} \\times {H} = {W * H}$.\n\n**Answer:** "
        f"{W * H} {unit}$^2$"
    )
    return Draft("mathvista", prompt, img, good, bad, alt)


def rs_circle(rng: random.Random) -> Draft:
    r = rng.randint(3, 15)
    unit = rng.choice(["cm", "m", "mm"])
    size = pick_size(rng)
    img, d = canvas(size, (252, 250, 245))
    w, h = size
    R = min(w, h) * 0.36
    cx, cy = w / 2 + rng.uniform(-40, 40), h / 2
    d.ellipse([cx - R, cy - R, cx + R, cy + R], fill=(237, 231, 246), outline=INK, width=3)
    ang = math.radians(rng.uniform(-60, 30))
    end = (cx + R * math.cos(ang), cy + R * math.sin(ang))
    d.line([(cx, cy), end], fill=(180, 30, 30), width=3)
    d.ellipse([cx - 4, cy - 4, cx + 4, cy + 4], fill=INK)
    label_at(d, ((cx + end[0]) / 2, (cy + end[1]) / 2 - 16), f"r = {r} {unit}", 18, (180, 30, 30))
    ask_area = rng.random() < 0.6
    if ask_area:
        prompt = "What is the area of the circle? Give the exact value and a decimal."
        exact, approx = f"{r * r}\\pi", math.pi * r * r
        good = (
            f"The area of a circle is $A = \\pi r^2$. With $r = {r}$:\n\n"
            f"$$A = \\pi \\cdot {r}^2 = {exact} \\approx {approx:.2f}$$\n\n"
            f"**Answer:** ${exact} \\approx {approx:.2f}$ {unit}$^2$"
        )
        alt = f"$A = \\pi r^2 = {r * r}\\pi \\approx {approx:.2f}$ {unit}²."
        bad = (
            f"$A = 2\\pi r = {2 * r}\\pi \\approx {2 * math.pi * r:.2f}$\n\n**Answer:** "
            f"{2 * math.pi * r:.2f} {unit}$^2$"
        )
    else:
        prompt = "What is the circumference of the circle?"
        approx = 2 * math.pi * r
        good = (
            f"The circumference is $C = 2\\pi r$:\n\n$$C = 2\\pi \\cdot {r} = {2 * r}\\pi "
            f"\\approx {approx:.2f}$$\n\n**Answer:** ${2 * r}\\pi \\approx {approx:.2f}$ {unit}"
        )
        alt = f"$C = 2\\pi r = {2 * r}\\pi \\approx {approx:.2f}$ {unit}."
        bad = (
            f"$C = \\pi r^2 = {r * r}\\pi \\approx {math.pi * r * r:.2f}$\n\n**Answer:** "
            f"{math.pi * r * r:.2f} {unit}"
        )
    return Draft("mathvista", prompt, img, good, bad, alt)
