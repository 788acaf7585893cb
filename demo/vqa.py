"""VQA: short answers about a clock, a count of shapes, a sign, a receipt or a
timetable."""

from __future__ import annotations

import random

from demo.drawing import draw_clock, draw_shapes, draw_table, money
from demo.items import Draft
from demo.subjects import (
    NAMES,
    count_words,
    make_receipt,
    make_sign,
    pick_size,
    receipt_image,
    sign_image,
)

SHORT = "Answer the question using a single word or phrase."


def vqa_clock(rng: random.Random) -> Draft:
    hour = rng.randint(1, 12)
    minute = rng.choice([m for m in range(5, 60, 5) if m // 5 != hour % 12])
    img = draw_clock(
        hour, minute, pick_size(rng), rng.choice([(60, 60, 70), (150, 40, 40), (30, 80, 140)])
    )
    swapped_hour = minute // 5 or 12
    swapped_min = (hour % 12) * 5
    good = f"{hour}:{minute:02d}"
    alt = f"It is {hour}:{minute:02d}."
    bad = rng.choice([f"{swapped_hour}:{swapped_min:02d}", f"{hour % 12 + 1}:{minute:02d}"])
    return Draft("vqa", f"What time does the clock show?\n{SHORT}", img, good, bad, alt)


def vqa_count(rng: random.Random) -> Draft:
    kinds = ["circle", "square", "triangle"]
    colours = ["red", "blue", "green", "yellow"]
    size = pick_size(rng)
    w, h = size
    cells = [(c, r) for c in range(w // 70) for r in range(h // 70)]
    chosen = rng.sample(cells, min(len(cells), rng.randint(8, 16)))
    shapes = [
        (
            rng.choice(kinds),
            rng.choice(colours),
            40 + c * 70 + rng.uniform(-6, 6),
            40 + r * 70 + rng.uniform(-6, 6),
        )
        for c, r in chosen
    ]
    kind, colour = shapes[0][0], shapes[0][1]
    count = sum(1 for k, c, _, _ in shapes if (k, c) == (kind, colour))
    img = draw_shapes(shapes, size, (rng.randint(240, 255), rng.randint(240, 255), 245))
    same_colour = sum(1 for _, c, _, _ in shapes if c == colour)
    wrong = same_colour if same_colour != count else count + 1
    prompt = f"How many {colour} {kind}s are there in the image?\n{SHORT}"
    return Draft(
        "vqa",
        prompt,
        img,
        str(count),
        str(wrong),
        count_words(count).capitalize() if count <= 7 else str(count),
    )


def vqa_sign(rng: random.Random) -> Draft:
    kind, lines, facts = make_sign(rng)
    img = sign_image(kind, lines, rng)
    if kind == "cafe":
        q, a, wrong = (
            "What time does the café open?",
            f"{facts['opens']}:00",
            f"{facts['closes']}:00",
        )
    elif kind == "parking":
        q, a, wrong = "On which days is parking not allowed?", "Monday to Friday", "Every day"
    elif kind == "platform":
        q, a, wrong = (
            f"Which platform do trains to {facts['town']} leave from?",
            str(facts["number"]),
            str(facts["minutes"]),
        )
    elif kind == "library":
        q, a, wrong = (
            "On which floor are the study rooms?",
            str(facts["floor"]),
            str(facts["floor"] + 1),
        )
    else:
        q, a, wrong = "What is the speed limit?", str(facts["limit"]), str(facts["limit"] + 10)
    alt = {"Monday to Friday": "Weekdays (Mon-Fri)"}.get(a, f"{a}.")
    return Draft("vqa", f"{q}\n{SHORT}", img, a, wrong, alt)


def vqa_receipt(rng: random.Random) -> Draft:
    r = make_receipt(rng)
    img = receipt_image(r, rng)
    return Draft(
        "vqa",
        f"What is the total amount on this receipt?\n{SHORT}",
        img,
        f"${money(r.total)}",
        f"${money(r.subtotal)}",
        f"${money(r.total)} (incl. tax)",
    )


def vqa_table(rng: random.Random) -> Draft:
    names = rng.sample(NAMES, rng.randint(4, 6))
    header = ["Train", "Departs", "Platform"]
    numbers = rng.sample(range(100, 1000), len(names))
    rows = [
        [
            f"{n[0]}{number}",
            f"{rng.randint(6, 22):02d}:{rng.choice(range(0, 60, 5)):02d}",
            str(rng.randint(1, 9)),
        ]
        for n, number in zip(names, numbers, strict=True)
    ]
    station = rng.choice(["Central", "North", "Harbour"])
    img = draw_table(header, rows, pick_size(rng), title=f"Departures - {station} Station")
    i = rng.randrange(len(rows))
    # The wrong answer reads the neighbouring row (a different time).
    wrong = next(
        (
            rows[(i + k) % len(rows)][1]
            for k in range(1, len(rows))
            if rows[(i + k) % len(rows)][1] != rows[i][1]
        ),
        rows[i][2],
    )
    prompt = f"When does train {rows[i][0]} depart?\n{SHORT}"
    return Draft("vqa", prompt, img, rows[i][1], wrong, f"At {rows[i][1]}")
