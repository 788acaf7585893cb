"""General correctness: describe a bar chart, a scene, a receipt, a sign or a
pie chart. The worse description gets a count, a value or a word wrong."""

from __future__ import annotations

import random
from dataclasses import replace

from demo.drawing import SERIES, Scene, draw_bar_chart, draw_pie_chart, draw_scene
from demo.items import Draft
from demo.subjects import (
    an,
    balloon_phrase,
    count_words,
    describe_sign,
    join_words,
    make_pie,
    make_receipt,
    make_scene,
    make_series,
    make_sign,
    pick_size,
    receipt_image,
    sign_image,
    usd,
)


def gc_bar_chart(rng: random.Random) -> Draft:
    s = make_series(rng)
    img = draw_bar_chart(s, pick_size(rng), rng.choice(SERIES))
    listing = "\n".join(f"- {lab}: {v} {s.unit}" for lab, v in zip(s.labels, s.values, strict=True))
    good = (
        f'This is a bar chart titled "{s.title}". The y-axis shows {s.ylabel.lower()} and '
        f"there is one bar per category:\n\n{listing}\n\nThe highest value is **{s.max_label}** "
        f"({max(s.values)} {s.unit}) and the lowest is **{s.min_label}** ({min(s.values)} "
        f"{s.unit})."
    )
    alt = (
        f'The chart "{s.title}" compares {len(s.values)} categories ({join_words(s.labels)}). '
        f"{s.max_label} leads with {max(s.values)} {s.unit}, while {s.min_label} is the lowest at "
        f"{min(s.values)} {s.unit}; the values are labelled above each bar."
    )
    wrong_value = max(s.values) + rng.choice([7, 9, 12])
    others = [lab for lab in s.labels if lab != s.max_label]
    bad = rng.choice(
        [
            f'This bar chart, "{s.title}", shows {s.ylabel.lower()}. The highest bar is '
            f"{rng.choice(others)} and the values rise steadily from left to right, with "
            f"{s.min_label} close to the top.",
            f'This is a bar chart titled "{s.title}". {s.max_label} has the highest value at '
            f"about {wrong_value} {s.unit}, and {s.min_label} is the lowest at around "
            f"{min(s.values) + 3} {s.unit}.",
        ]
    )
    prompt = rng.choice(
        [
            "Describe this chart.",
            "What does this bar chart show? Describe it in detail.",
            "Write a short description of this figure for someone who cannot see it.",
        ]
    )
    return Draft("correctness", prompt, img, good, bad, alt)


def scene_caption(s: Scene, *, short: bool = False) -> str:
    when = "at night under a starry sky with a full moon" if s.night else "on a sunny day"
    parts = [
        f"A simple illustration of a {s.house} house with a {s.roof} roof, a dark door and "
        f"{count_words(s.windows)} windows, {when}.",
        f"{count_words(s.trees).capitalize()} {'tree stands' if s.trees == 1 else 'trees stand'} "
        "on the grass to the right of the house",
        f"and {balloon_phrase(s.balloons)} float in the sky.",
    ]
    if s.car:
        parts.append(f"{an(s.car).capitalize()} {s.car} car is parked at the bottom right.")
    if short:
        return (
            f"A {s.house} house with a {s.roof} roof {when}, {count_words(s.trees)} "
            f"{'tree' if s.trees == 1 else 'trees'}, {balloon_phrase(s.balloons)}"
            + (f" and {an(s.car)} {s.car} car." if s.car else ".")
        )
    return " ".join(parts)


def gc_scene(rng: random.Random) -> Draft:
    s = make_scene(rng)
    img = draw_scene(s, pick_size(rng), rng)
    good = scene_caption(s)
    alt = scene_caption(s, short=True)
    wrong = replace(s)
    error = rng.randrange(3)
    if error == 0:
        wrong.trees = s.trees + 1
    elif error == 1:
        wrong.house = rng.choice([c for c in ("green", "orange", "purple") if c != s.house])
    else:
        wrong.night = not s.night
    bad = scene_caption(wrong)
    if rng.random() < 0.5:
        bad += " There is also a dog playing near the door."
    prompt = rng.choice(
        [
            "Write a detailed caption for this image.",
            "Describe everything you can see in this picture.",
            "Give an accurate, detailed description of this image.",
        ]
    )
    return Draft("correctness", prompt, img, good, bad, alt)


def gc_receipt(rng: random.Random) -> Draft:
    r = make_receipt(rng)
    img = receipt_image(r, rng)
    items = "\n".join(
        f"- {name}" + (f" (x{q})" if q > 1 else "") + f": {usd(q * p)}" for name, q, p in r.lines
    )
    good = (
        f"This is a receipt from **{r.store}** dated {r.date.split()[0]}.\n\n{items}\n\n"
        f"Subtotal {usd(r.subtotal)}, tax ({r.tax_percent}%) {usd(r.tax)}, "
        f"**total {usd(r.total)}**."
    )
    alt = (
        f"A {r.store} receipt from {r.date.split()[0]} for {len(r.lines)} kinds of item "
        f"({join_words([n.lower() for n, _, _ in r.lines])}). The subtotal is {usd(r.subtotal)}; "
        f"with {r.tax_percent}% tax ({usd(r.tax)}) the total comes to {usd(r.total)}."
    )
    name, q, p = r.lines[rng.randrange(len(r.lines))]
    bad = (
        f"This is a receipt from **{r.store}**. It lists "
        f"{join_words([n.lower() for n, _, _ in r.lines])}. The {name.lower()} cost "
        f"{usd(q * p + 100)} and the total, including tax, is {usd(r.subtotal)}."
    )
    prompt = rng.choice(
        ["Summarize this receipt.", "What is on this receipt? Give the key details."]
    )
    return Draft("correctness", prompt, img, good, bad, alt)


def gc_sign(rng: random.Random) -> Draft:
    kind, lines, facts = make_sign(rng)
    img = sign_image(kind, lines, rng)
    good, bad = describe_sign(kind, facts)
    alt = f'The sign\'s text is: "{" / ".join(lines)}". ' + good.split(". ", 1)[-1]
    prompt = rng.choice(
        [
            "What does the sign in this picture say, and what does it mean?",
            "Read the sign and explain what it tells people.",
        ]
    )
    return Draft("correctness", prompt, img, good, bad, alt)


def gc_pie(rng: random.Random) -> Draft:
    title, labels, percents = make_pie(rng)
    img = draw_pie_chart(title, labels, percents, pick_size(rng))
    order = sorted(zip(percents, labels, strict=True), reverse=True)
    table = "\n".join(
        ["| Category | Share |", "|---|---|"] + [f"| {lab} | {p}% |" for p, lab in order]
    )
    good = (
        f'The pie chart "{title}" splits a whole into {len(labels)} parts:\n\n{table}\n\n'
        f"{order[0][1]} is the largest share ({order[0][0]}%) and {order[-1][1]} the smallest "
        f"({order[-1][0]}%); together the slices add up to 100%."
    )
    alt = (
        f'This is a pie chart titled "{title}". The biggest slice is {order[0][1]} at '
        f"{order[0][0]}%, followed by "
        + join_words([f"{lab} ({p}%)" for p, lab in order[1:]])
        + "."
    )
    bad = (
        f'The pie chart "{title}" shows that {order[-1][1]} is the largest group with '
        f"{order[0][0]}%, while {order[0][1]} makes up only {order[-1][0]}%. The remaining "
        "slices are roughly equal."
    )
    return Draft("correctness", "Describe this pie chart.", img, good, bad, alt)
