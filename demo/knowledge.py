"""Knowledge: flags, chemical elements, famous equations and planets. The worse
answer gets a fact wrong (a capital, what the numbers on a tile mean, what an
equation says), now and then the drawn thing itself."""

from __future__ import annotations

import math
import random

from PIL import Image

from demo.drawing import INK, WHITE, canvas, font, formula_text
from demo.items import Draft
from demo.subjects import pick_size

# country, capital, a wrong capital, design in words, drawing ("v"/"h" stripes,
# "disc", "cross", "nordic"), colours
FLAGS = [
    (
        "France",
        "Paris",
        "Lyon",
        "vertical blue, white and red stripes",
        "v",
        [(0, 85, 164), WHITE, (239, 65, 53)],
    ),
    (
        "Italy",
        "Rome",
        "Milan",
        "vertical green, white and red stripes",
        "v",
        [(0, 146, 70), WHITE, (206, 43, 55)],
    ),
    (
        "Ireland",
        "Dublin",
        "Cork",
        "vertical green, white and orange stripes",
        "v",
        [(22, 155, 98), WHITE, (255, 136, 62)],
    ),
    (
        "Belgium",
        "Brussels",
        "Antwerp",
        "vertical black, yellow and red stripes",
        "v",
        [(0, 0, 0), (253, 218, 36), (239, 51, 64)],
    ),
    (
        "Nigeria",
        "Abuja",
        "Lagos",
        "vertical green, white and green stripes",
        "v",
        [(0, 135, 81), WHITE, (0, 135, 81)],
    ),
    (
        "Germany",
        "Berlin",
        "Bonn",
        "horizontal black, red and gold stripes",
        "h",
        [(0, 0, 0), (221, 0, 0), (255, 206, 0)],
    ),
    (
        "Austria",
        "Vienna",
        "Salzburg",
        "horizontal red, white and red stripes",
        "h",
        [(237, 41, 57), WHITE, (237, 41, 57)],
    ),
    ("Poland", "Warsaw", "Kraków", "white over red", "h", [WHITE, (220, 20, 60)]),
    ("Ukraine", "Kyiv", "Lviv", "blue over yellow", "h", [(0, 87, 183), (255, 215, 0)]),
    ("Japan", "Tokyo", "Kyoto", "a red disc on a white field", "disc", [WHITE, (188, 0, 45)]),
    (
        "Switzerland",
        "Bern",
        "Zurich",
        "a white cross on a red square",
        "cross",
        [(218, 41, 28), WHITE],
    ),
    (
        "Sweden",
        "Stockholm",
        "Gothenburg",
        "a yellow Nordic cross on blue",
        "nordic",
        [(0, 106, 167), (254, 204, 0)],
    ),
    (
        "Denmark",
        "Copenhagen",
        "Aarhus",
        "a white Nordic cross on red",
        "nordic",
        [(200, 16, 46), WHITE],
    ),
]
# Capitals that people often get wrong, and why.
CAPITAL_NOTES = {
    "Switzerland": "Bern is the federal city and de facto capital, although Zurich is larger.",
    "Nigeria": "Abuja replaced Lagos as the capital in 1991; Lagos is still the largest city.",
    "Germany": "Bonn was the capital of West Germany, but Berlin has been the capital since "
    "reunification.",
    "Poland": "Kraków was the royal capital until around 1600; Warsaw has been the capital since.",
    "Japan": "Kyoto was the imperial capital for about a thousand years, until 1868.",
}


def draw_flag(kind: str, colours, size, rng: random.Random) -> Image.Image:
    bg = (rng.randint(200, 235), rng.randint(215, 240), rng.randint(225, 250))
    img, d = canvas(size, bg)
    w, h = size
    fw = w * 0.62
    fh = fw * (1 if kind == "cross" else 2 / 3)
    if fh > h * 0.7:
        fh = h * 0.7
        fw = fh * (1 if kind == "cross" else 1.5)
    x0, y0 = (w - fw) / 2 + 20, (h - fh) / 2 - 20
    d.rectangle([x0 - 34, y0 - 10, x0 - 26, h - 10], fill=(120, 110, 100))  # the pole
    if kind in ("v", "h"):
        n = len(colours)
        for i, c in enumerate(colours):
            if kind == "v":
                d.rectangle([x0 + fw * i / n, y0, x0 + fw * (i + 1) / n, y0 + fh], fill=c)
            else:
                d.rectangle([x0, y0 + fh * i / n, x0 + fw, y0 + fh * (i + 1) / n], fill=c)
    elif kind == "disc":
        d.rectangle([x0, y0, x0 + fw, y0 + fh], fill=colours[0])
        r = fh * 0.3
        d.ellipse(
            [x0 + fw / 2 - r, y0 + fh / 2 - r, x0 + fw / 2 + r, y0 + fh / 2 + r], fill=colours[1]
        )
    elif kind == "cross":
        d.rectangle([x0, y0, x0 + fw, y0 + fh], fill=colours[0])
        a, b = fw * 0.19, fw * 0.625 / 2
        cx, cy = x0 + fw / 2, y0 + fh / 2
        d.rectangle([cx - a / 2, cy - b, cx + a / 2, cy + b], fill=colours[1])
        d.rectangle([cx - b, cy - a / 2, cx + b, cy + a / 2], fill=colours[1])
    else:
        d.rectangle([x0, y0, x0 + fw, y0 + fh], fill=colours[0])
        bar = fh * 0.2
        vx = x0 + fw * 0.36
        d.rectangle([vx - bar / 2, y0, vx + bar / 2, y0 + fh], fill=colours[1])
        d.rectangle([x0, y0 + fh / 2 - bar / 2, x0 + fw, y0 + fh / 2 + bar / 2], fill=colours[1])
    d.rectangle([x0, y0, x0 + fw, y0 + fh], outline=(90, 90, 90))
    return img


def kn_flag(rng: random.Random, pick) -> Draft:
    country, capital, wrong, design, kind, colours = pick(FLAGS)
    img = draw_flag(kind, colours, pick_size(rng), rng)
    note = CAPITAL_NOTES.get(country, "")
    good = f"This is the flag of **{country}**: {design}. Its capital is **{capital}**."
    if note:
        good += f" {note}"
    alt = f"That's the flag of {country} ({design}); the capital city is {capital}."
    bad = rng.choice(
        [
            f"This is the flag of {country}, and its capital is {wrong}.",
            f"The flag shows {design}, so it is {country}. The capital is {wrong}, its largest "
            "and best-known city.",
        ]
    )
    prompt = rng.choice(
        [
            "Which country's flag is this, and what is its capital?",
            "Identify this flag and name the capital of the country.",
        ]
    )
    return Draft("knowledge", prompt, img, good, bad, alt)


# symbol, number, name, mass, true fact, false fact
ELEMENTS = [
    (
        "Fe",
        26,
        "iron",
        "55.845",
        "The symbol comes from the Latin *ferrum*; iron is the main "
        "ingredient of steel and carries oxygen in haemoglobin.",
        "The symbol stands for 'ferrite'; iron is a noble gas used in lighting.",
    ),
    (
        "Cu",
        29,
        "copper",
        "63.546",
        "Its symbol comes from the Latin *cuprum*; it conducts "
        "electricity very well and is used in electrical wiring.",
        "It is a poor conductor, so it is mainly used as an insulator in cables.",
    ),
    (
        "Na",
        11,
        "sodium",
        "22.990",
        "The symbol comes from the Latin *natrium*; it is a soft, "
        "highly reactive alkali metal found in table salt (NaCl).",
        "It is an inert metal that does not react with water.",
    ),
    (
        "Au",
        79,
        "gold",
        "196.97",
        "The symbol comes from the Latin *aurum*; gold is very "
        "unreactive, which is why it does not tarnish.",
        "Gold rusts quickly in air, which is why jewellery must be coated.",
    ),
    (
        "Ag",
        47,
        "silver",
        "107.87",
        "The symbol comes from the Latin *argentum*; silver has "
        "the highest electrical conductivity of any element.",
        "The symbol comes from 'agate'; silver is a liquid at room temperature.",
    ),
    (
        "He",
        2,
        "helium",
        "4.0026",
        "It is a noble gas, the second-lightest element, used to "
        "fill balloons and to cool MRI magnets.",
        "It is highly flammable, which is why airships were filled with it.",
    ),
    (
        "Hg",
        80,
        "mercury",
        "200.59",
        "The symbol comes from *hydrargyrum* ('liquid silver'); "
        "it is the only metal that is liquid at room temperature.",
        "It is a light gas used in party balloons.",
    ),
    (
        "Ne",
        10,
        "neon",
        "20.180",
        "It is a noble gas that glows reddish-orange in discharge tubes, hence 'neon signs'.",
        "It is a reactive metal that glows because it burns in air.",
    ),
]


def draw_element_tile(symbol: str, number: int, mass: str, size, rng: random.Random):
    tile_bg = rng.choice([(255, 236, 179), (200, 230, 201), (187, 222, 251), (248, 187, 208)])
    img, d = canvas(size, (rng.randint(235, 250), 245, 245))
    w, h = size
    side = min(w, h) * 0.7
    x0, y0 = (w - side) / 2, (h - side) / 2
    d.rectangle([x0, y0, x0 + side, y0 + side], fill=tile_bg, outline=INK, width=4)
    d.text((x0 + 18, y0 + 14), str(number), font=font(30), fill=INK, anchor="lt")
    d.text(
        (x0 + side / 2, y0 + side * 0.55),
        symbol,
        font=font(int(side * 0.38)),
        fill=INK,
        anchor="mm",
    )
    d.text((x0 + side / 2, y0 + side - 20), mass, font=font(22), fill=INK, anchor="ms")
    return img


def kn_element(rng: random.Random, pick) -> Draft:
    symbol, number, name, mass, true_fact, false_fact = pick(ELEMENTS)
    img = draw_element_tile(symbol, number, mass, pick_size(rng), rng)
    good = (
        f"The tile shows **{name}** ({symbol}), atomic number {number}: every {name} atom has "
        f"{number} protons. The number at the bottom, {mass}, is its standard atomic weight. "
        f"{true_fact}"
    )
    alt = (
        f"This is the periodic-table entry for {name}: symbol {symbol}, atomic number {number}, "
        f"atomic mass about {mass} u. {true_fact}"
    )
    bad = (
        f"The tile shows {name} ({symbol}). The {number} means it has {number} neutrons, and "
        f"{mass} is its melting point in degrees Celsius. {false_fact}"
    )
    prompt = rng.choice(
        [
            "Which element is shown on this tile? Tell me something about it.",
            "What do the numbers on this periodic-table tile mean, and what element is it?",
        ]
    )
    return Draft("knowledge", prompt, img, good, bad, alt)


# parts to draw, name, explanation (LaTeX), wrong explanation, a second good explanation
EQUATIONS = [
    (
        [("E = mc", "n"), ("2", "sup")],
        "mass-energy equivalence",
        "This is Einstein's **mass-energy equivalence** from 1905: $E = mc^2$. A mass $m$ "
        "corresponds to an energy $E$, where $c \\approx 3.0 \\times 10^8$ m/s is the speed of "
        "light. Because $c^2$ is huge, a tiny mass holds an enormous amount of energy.",
        "This is Newton's equation for kinetic energy, $E = mc^2$, where $c$ is the speed of "
        "the moving object. It was published in the Principia in 1687.",
        "$E = mc^2$ is Einstein's mass-energy relation (special relativity, 1905): energy "
        "equals mass times the speed of light squared, which is why nuclear reactions that "
        "lose a little mass release so much energy.",
    ),
    (
        [("a", "n"), ("2", "sup"), (" + b", "n"), ("2", "sup"), (" = c", "n"), ("2", "sup")],
        "Pythagorean theorem",
        "This is the **Pythagorean theorem**. In a right-angled triangle with legs $a$, $b$ "
        "and hypotenuse $c$:\n\n$$a^2 + b^2 = c^2$$\n\nFor example $3^2 + 4^2 = 9 + 16 = 25 = "
        "5^2$. It only holds for right triangles.",
        "This is the Pythagorean theorem, $a^2 + b^2 = c^2$, which holds for every triangle: "
        "the squares of any two sides add up to the square of the third.",
        "That's Pythagoras' theorem: for a right triangle, the square on the hypotenuse $c$ "
        "equals the sum of the squares on the other two sides, $a^2 + b^2 = c^2$ "
        "(e.g. $6^2 + 8^2 = 10^2$).",
    ),
    (
        [("F = m a", "n")],
        "Newton's second law",
        "This is **Newton's second law of motion**: the net force on an object equals its mass "
        "times its acceleration, $F = ma$. With $m$ in kg and $a$ in m/s$^2$, $F$ is in newtons.",
        "This is Newton's first law (inertia): $F = ma$ says an object keeps moving at the same "
        "speed unless its mass changes.",
        "$F = ma$ is Newton's second law: force (N) = mass (kg) times acceleration (m/s$^2$). "
        "Pushing a 2 kg cart with 10 N accelerates it at $5\\ \\mathrm{m/s^2}$.",
    ),
    (
        [("PV = nRT", "n")],
        "ideal gas law",
        "This is the **ideal gas law**, $PV = nRT$: pressure times volume equals the amount of "
        "gas (moles) times the gas constant $R \\approx 8.314\\ \\mathrm{J\\,mol^{-1}\\,K^{-1}}$ "
        "times the absolute temperature.",
        "This is Boyle's law, $PV = nRT$, where $R$ is the radius of the container and $T$ is "
        "the time in seconds.",
        "It's the ideal gas law: $PV = nRT$ links pressure $P$, volume $V$, amount of gas "
        "$n$ (mol) and temperature $T$ (kelvin) through the gas constant $R$.",
    ),
    (
        [("V = I R", "n")],
        "Ohm's law",
        "This is **Ohm's law**: the voltage across a resistor equals the current through it "
        "times its resistance, $V = IR$. For example $2\\,\\mathrm{A}$ through "
        "$5\\,\\Omega$ gives $10\\,\\mathrm{V}$.",
        "This is the formula for electrical power: $V = IR$, where $V$ is the power in watts "
        "and $R$ the time the current flows.",
        "Ohm's law, $V = IR$: voltage (volts) equals current (amperes) times resistance "
        "(ohms). Double the resistance at the same voltage and the current halves.",
    ),
]


def kn_equation(rng: random.Random, pick) -> Draft:
    parts, _name, right, wrong, alt = pick(EQUATIONS)
    size = pick_size(rng)
    board = (rng.randint(30, 50), rng.randint(70, 90), rng.randint(55, 70))
    img, d = canvas(size, (150, 110, 70))
    w, h = size
    d.rectangle([18, 18, w - 18, h - 18], fill=board)
    for _ in range(rng.randint(3, 7)):  # chalk smudges
        x, y = rng.uniform(40, w - 80), rng.uniform(40, h - 60)
        d.ellipse(
            [x, y, x + rng.uniform(20, 60), y + rng.uniform(6, 14)],
            fill=tuple(c + 18 for c in board),
        )
    formula_text(d, (w / 2, h / 2 + 18), parts, 56, fill=(245, 245, 235))
    prompt = rng.choice(
        [
            "What is this equation called, and what does it mean?",
            "Explain the formula written on the board.",
        ]
    )
    return Draft("knowledge", prompt, img, right, wrong, alt)


PLANETS = [
    (
        "Saturn",
        "It is the sixth planet from the Sun and the second largest; its bright rings are made "
        "mostly of ice and rock particles.",
        "It is the closest planet to the Sun and its rings are solid sheets of metal.",
    ),
    (
        "Jupiter",
        "It is the largest planet in the Solar System, a gas giant whose Great Red Spot is a "
        "storm bigger than Earth.",
        "It is a small rocky planet, and the red spot is a volcano.",
    ),
    (
        "Mars",
        "It is the fourth planet from the Sun; iron oxide in its dust makes it look red, it has "
        "white polar ice caps, and two small moons, Phobos and Deimos.",
        "It is red because it is the hottest planet, and it has no moons.",
    ),
    (
        "Neptune",
        "It is the eighth and farthest planet from the Sun, an ice giant whose blue colour "
        "comes from methane; it was found in 1846 after being predicted mathematically.",
        "It is the planet closest to Earth and was first seen by ancient Greek astronomers.",
    ),
    (
        "Earth",
        "It is the third planet from the Sun and the only known world with liquid surface "
        "oceans and life; about 71% of its surface is water.",
        "It is the largest planet in the Solar System and has two moons.",
    ),
]


def draw_planet(name: str, size, rng: random.Random) -> Image.Image:
    img, d = canvas(size, (8, 10, 24))
    w, h = size
    for _ in range(rng.randint(40, 90)):
        x, y = rng.uniform(0, w), rng.uniform(0, h)
        r = rng.choice([0.5, 1, 1, 1.5])
        d.ellipse([x - r, y - r, x + r, y + r], fill=(230, 230, 255))
    cx, cy = w / 2 + rng.uniform(-30, 30), h / 2 + rng.uniform(-20, 20)
    r = min(w, h) * (0.24 if name == "Saturn" else 0.32)
    if name == "Saturn":
        d.ellipse(
            [cx - r * 2.1, cy - r * 0.45, cx + r * 2.1, cy + r * 0.45],
            outline=(210, 190, 140),
            width=9,
        )
        d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=(222, 196, 140))
        d.chord(
            [cx - r * 2.1, cy - r * 0.45, cx + r * 2.1, cy + r * 0.45],
            0,
            180,
            outline=(210, 190, 140),
            width=9,
        )
    elif name == "Jupiter":
        d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=(216, 180, 140))
        for k in range(-3, 4):
            y = cy + k * r * 0.25
            half = math.sqrt(max(r * r - (y - cy) ** 2, 0))
            d.line([(cx - half, y), (cx + half, y)], fill=(170, 120, 90), width=int(r * 0.07))
        d.ellipse([cx + r * 0.15, cy + r * 0.28, cx + r * 0.5, cy + r * 0.46], fill=(190, 70, 50))
    elif name == "Mars":
        d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=(193, 68, 14))
        d.chord([cx - r, cy - r, cx + r, cy + r], 245, 295, fill=WHITE)  # polar cap
        for _ in range(6):
            x, y = cx + rng.uniform(-r * 0.6, r * 0.5), cy + rng.uniform(-r * 0.5, r * 0.6)
            d.ellipse([x, y, x + r * 0.18, y + r * 0.1], fill=(150, 50, 15))
    elif name == "Neptune":
        d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=(60, 90, 200))
        d.ellipse([cx - r * 0.4, cy - r * 0.3, cx - r * 0.1, cy - r * 0.1], fill=(30, 50, 140))
    else:
        d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=(40, 110, 200))
        for _ in range(5):
            x, y = cx + rng.uniform(-r * 0.6, r * 0.3), cy + rng.uniform(-r * 0.6, r * 0.4)
            d.ellipse(
                [x, y, x + r * rng.uniform(0.2, 0.45), y + r * rng.uniform(0.15, 0.35)],
                fill=(70, 150, 70),
            )
        d.arc(
            [cx - r * 0.9, cy - r * 0.5, cx + r * 0.2, cy - r * 0.2], 180, 330, fill=WHITE, width=4
        )
    return img


def kn_planet(rng: random.Random, pick) -> Draft:
    name, fact, wrong = pick(PLANETS)
    img = draw_planet(name, pick_size(rng), rng)
    good = f"This illustration shows **{name}**. {fact}"
    alt = f"It looks like {name}. {fact[0].upper()}{fact[1:]}"
    others = [p[0] for p in PLANETS if p[0] != name]
    bad = rng.choice(
        [f"This illustration shows {name}. {wrong}", f"This is {rng.choice(others)}. {wrong}"]
    )
    prompt = rng.choice(
        [
            "Which planet is this, and what is special about it?",
            "Name the planet in this picture and give a fact about it.",
        ]
    )
    return Draft("knowledge", prompt, img, good, bad, alt)
