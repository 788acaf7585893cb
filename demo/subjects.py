"""The subjects several domains draw and talk about, picked with the caller's
`random.Random`: chart series and pie shares, scenes, receipts and signs, plus
the small English helpers ("an", "three", "a, b and c") their texts share."""

from __future__ import annotations

import random

from PIL import Image

from demo.drawing import INK, WHITE, Receipt, Scene, Series, draw_receipt, draw_sign, money

MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
NAMES = ["Maya", "Liam", "Aisha", "Noah", "Sofia", "Kenji", "Elena", "Omar", "Priya", "Jonas"]
SIZES = ((480, 360), (512, 384), (560, 420), (600, 450), (640, 480))


def pick_size(rng: random.Random) -> tuple[int, int]:
    return rng.choice(SIZES)


def join_words(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def make_series(rng: random.Random, n: int | None = None) -> Series:
    kind = rng.randrange(5)
    n = n or rng.randint(4, 6)
    if kind == 0:
        product = rng.choice(["umbrellas", "bicycles", "ice-cream tubs", "notebooks", "scarves"])
        start = rng.randrange(0, 12 - n)
        return Series(
            f"Monthly sales of {product}",
            "Units sold",
            product,
            MONTHS[start : start + n],
            rng.sample(range(12, 96), n),
        )
    if kind == 1:
        return Series(
            f"Books read by students in {rng.choice(MONTHS)}",
            "Books",
            "books",
            rng.sample(NAMES, n),
            rng.sample(range(2, 19), n),
        )
    if kind == 2:
        city = rng.choice(["Harbourton", "Millbrook", "Eastvale", "Lakeside", "Northgate"])
        start = rng.randrange(0, 12 - n)
        return Series(
            f"Rainfall in {city}",
            "Rainfall (mm)",
            "mm",
            MONTHS[start : start + n],
            rng.sample(range(18, 140), n),
        )
    if kind == 3:
        place = rng.choice(["science museum", "city zoo", "botanic garden", "art gallery"])
        return Series(
            f"Visitors to the {place}",
            "Visitors (hundreds)",
            "hundred visitors",
            DAYS[:n],
            rng.sample(range(5, 48), n),
        )
    fruits = ["Apple", "Banana", "Mango", "Grape", "Cherry", "Pear", "Kiwi"]
    return Series(
        f"Favourite fruit ({rng.randint(3, 9)}th grade survey)",
        "Votes",
        "votes",
        rng.sample(fruits, n),
        rng.sample(range(3, 30), n),
    )


def make_scene(rng: random.Random) -> Scene:
    balloons = rng.choices(["red", "blue", "yellow", "purple", "orange"], k=rng.randint(2, 5))
    return Scene(
        night=rng.random() < 0.25,
        house=rng.choice(["yellow", "blue", "white", "red", "pink"]),
        roof=rng.choice(["red", "grey", "blue", "green"]),
        windows=rng.randint(2, 5),
        trees=rng.randint(1, 4),
        balloons=balloons,
        car=rng.choice([None, "red", "blue", "green", "orange"]),
    )


def an(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def count_words(n: int) -> str:
    return ["no", "one", "two", "three", "four", "five", "six", "seven"][n]


def balloon_phrase(colours: list[str]) -> str:
    counts: dict[str, int] = {}
    for c in colours:
        counts[c] = counts.get(c, 0) + 1
    parts = [f"{count_words(n)} {c}" for c, n in counts.items()]
    total = len(colours)
    return f"{count_words(total)} balloons ({join_words(parts)})"


STORES = ["Corner Deli", "Green Leaf Cafe", "Harbour Grocers", "Blue Door Bakery", "Sunny Market"]
MENU = [
    ("Coffee", 350),
    ("Latte", 425),
    ("Croissant", 295),
    ("Bagel", 250),
    ("Orange juice", 375),
    ("Sandwich", 795),
    ("Soup of day", 650),
    ("Muffin", 275),
    ("Salad bowl", 925),
    ("Tea", 225),
    ("Cookie", 150),
    ("Water", 120),
]


def make_receipt(rng: random.Random) -> Receipt:
    lines = [
        (name, rng.choice([1, 1, 1, 2, 3]), price)
        for name, price in rng.sample(MENU, rng.randint(3, 6))
    ]
    return Receipt(
        store=rng.choice(STORES),
        date=(
            f"{rng.randint(2, 27):02d}/{rng.randint(1, 12):02d}/2025  "
            f"{rng.randint(7, 19)}:{rng.randint(0, 59):02d}"
        ),
        lines=lines,
        tax_percent=rng.choice([5, 8, 10]),
    )


def receipt_image(r: Receipt, rng: random.Random) -> Image.Image:
    return draw_receipt(r, (480, 150 + 21 * len(r.lines) + 110), rng)


def usd(cents: int) -> str:
    # Plain "$", as models write it: every "$" here is followed by a digit, so
    # under Pandoc's rules (which annotate.rendering follows) it can never close
    # a LaTeX span, and two amounts in a sentence stay text.
    return f"${money(cents)}"


def make_sign(rng: random.Random) -> tuple[str, list[str], dict]:
    """A sign: kind, its lines, and the facts the text states."""
    kind = rng.choice(["cafe", "parking", "platform", "library", "speed"])
    if kind == "cafe":
        opens, closes = rng.randint(6, 9), rng.randint(14, 18)
        name = rng.choice(["CAFE ROSA", "THE DAILY GRIND", "BEAN THERE", "CUP & SAUCER"])
        return (
            kind,
            [name, f"OPEN {opens}:00 - {closes}:00", "Closed on Mondays"],
            {
                "name": name,
                "opens": opens,
                "closes": closes,
            },
        )
    if kind == "parking":
        start, end = rng.randint(7, 9), rng.randint(17, 19)
        return (
            kind,
            ["NO PARKING", f"{start} AM - {end - 12} PM", "MON - FRI"],
            {
                "start": start,
                "end": end,
            },
        )
    if kind == "platform":
        number = rng.randint(2, 9)
        town = rng.choice(["Riverside", "Kingsbridge", "Oakfield", "Port Ellen"])
        minutes = rng.choice([10, 15, 20, 30])
        return (
            kind,
            [f"PLATFORM {number}", f"Trains to {town}", f"every {minutes} min"],
            {
                "number": number,
                "town": town,
                "minutes": minutes,
            },
        )
    if kind == "library":
        floor = rng.randint(1, 4)
        return kind, ["LIBRARY", "Quiet please", f"Study rooms: floor {floor}"], {"floor": floor}
    limit = rng.choice([20, 25, 30, 40, 50])
    return kind, ["SPEED LIMIT", str(limit), "School zone"], {"limit": limit}


SIGN_COLOURS = {
    "cafe": ((111, 78, 55), WHITE),
    "parking": ((200, 30, 45), WHITE),
    "platform": ((20, 60, 130), WHITE),
    "library": ((35, 110, 75), WHITE),
    "speed": (WHITE, INK),
}


def sign_image(kind: str, lines: list[str], rng: random.Random) -> Image.Image:
    bg, fg = SIGN_COLOURS[kind]
    return draw_sign(lines, pick_size(rng), bg, fg, rng)


def describe_sign(kind: str, facts: dict) -> tuple[str, str]:
    """A correct and a subtly wrong reading of the sign."""
    if kind == "cafe":
        right = (
            f'The sign reads **{facts["name"]}**, "OPEN {facts["opens"]}:00 - '
            f'{facts["closes"]}:00" and "Closed on Mondays". It is a café\'s opening-hours '
            f"sign: it opens at {facts['opens']} in the morning, closes at "
            f"{facts['closes'] - 12} in the afternoon, and is closed all day on Mondays."
        )
        wrong = (
            f"The sign says **{facts['name']}** is open from {facts['opens'] + 1}:00 to "
            f"{facts['closes'] + 2}:00 and closed on Sundays. It is a café sign telling "
            "customers the opening hours."
        )
    elif kind == "parking":
        right = (
            f'It says "NO PARKING, {facts["start"]} AM - {facts["end"] - 12} PM, MON - FRI". '
            f"Parking is forbidden on weekdays between {facts['start']} a.m. and "
            f"{facts['end'] - 12} p.m.; outside those hours and at weekends you may park here."
        )
        wrong = (
            f'It says "NO PARKING" at all times, every day of the week, between '
            f"{facts['start']} AM and {facts['end'] - 11} PM. You can never park here."
        )
    elif kind == "platform":
        right = (
            f'The sign reads "PLATFORM {facts["number"]} - Trains to {facts["town"]} - every '
            f'{facts["minutes"]} min". It is a railway platform sign: trains to '
            f"{facts['town']} leave from platform {facts['number']} every {facts['minutes']} "
            "minutes."
        )
        wrong = (
            f'The sign reads "PLATFORM {facts["number"] + 1}" and says trains to '
            f"{facts['town']} run every {facts['minutes'] * 2} minutes from this platform."
        )
    elif kind == "library":
        right = (
            f'It says "LIBRARY - Quiet please - Study rooms: floor {facts["floor"]}". It asks '
            f"visitors to keep quiet and tells them the study rooms are on floor {facts['floor']}."
        )
        wrong = (
            f'It says "LIBRARY - Quiet please - Study rooms: floor {facts["floor"] + 1}", '
            "asking people to whisper and pointing to the reading café."
        )
    else:
        right = (
            f'It is a speed-limit sign: "SPEED LIMIT {facts["limit"]} - School zone". Drivers '
            f"must not go faster than {facts['limit']} because there is a school nearby."
        )
        wrong = (
            f"It is a speed-limit sign reading {facts['limit'] + 10}, the normal limit on a "
            "main road."
        )
    return right, wrong


def make_pie(rng: random.Random) -> tuple[str, list[str], list[int]]:
    title, pool = rng.choice(
        [
            ("How students get to school", ["Walk", "Bus", "Car", "Bike", "Train"]),
            ("Household budget", ["Rent", "Food", "Transport", "Savings", "Leisure"]),
            ("Favourite pet (survey)", ["Dog", "Cat", "Fish", "Rabbit", "Bird"]),
            ("Energy sources", ["Solar", "Wind", "Gas", "Hydro", "Nuclear"]),
        ]
    )
    n = rng.randint(3, 5)
    labels = rng.sample(pool, n)
    while True:
        cuts = sorted(rng.sample(range(1, 20), n - 1))
        percents = [5 * (b - a) for a, b in zip([0, *cuts], [*cuts, 20], strict=True)]
        if len(set(percents)) == n:
            return title, labels, percents
