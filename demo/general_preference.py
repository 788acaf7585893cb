"""General preference: both responses are acceptable, one is more helpful (a
story about a scene, advice on a chart, a bill split, a sign rewritten, a
workout plan)."""

from __future__ import annotations

import random

from demo.drawing import SERIES, draw_bar_chart, draw_scene, draw_table
from demo.items import Draft
from demo.subjects import (
    DAYS,
    count_words,
    join_words,
    make_receipt,
    make_scene,
    make_series,
    make_sign,
    pick_size,
    receipt_image,
    sign_image,
    usd,
)


def gp_story(rng: random.Random) -> Draft:
    s = make_scene(rng)
    img = draw_scene(s, pick_size(rng), rng)
    hero, name = rng.choice(
        [
            ("Pip the mouse", "Pip"),
            ("a girl called Ada", "Ada"),
            ("old Mr. Bramble", "Mr. Bramble"),
            ("a boy named Theo", "Theo"),
        ]
    )
    first_balloon = s.balloons[0]
    when = (
        "One night, when the stars came out" if s.night else "One afternoon, when the sun was warm"
    )
    good = (
        f"Once upon a time, in a little {s.house} house with a {s.roof} roof, there lived "
        f"{hero}. {when}, {count_words(len(s.balloons))} balloons drifted "
        f"over the garden. The {first_balloon} one tugged at its string as if it wanted to say "
        f"something. {name} followed it past the "
        f"{count_words(s.trees)} {'tree' if s.trees == 1 else 'trees'}, all the way to the edge "
        'of the meadow, where the balloons settled gently in the grass. "You just wanted to '
        'come home," came the whisper, and everyone went back inside, warm and sleepy. The end.'
    )
    alt = (
        f"The {s.house} house was very quiet until {count_words(len(s.balloons))} balloons "
        f"came floating by. {name} opened a window and counted them, one "
        f"by one, while the {count_words(s.trees)} {'tree' if s.trees == 1 else 'trees'} "
        f"swayed below. The {first_balloon} balloon bobbed closer, and its string caught on the "
        f"{s.roof} roof. Together they untangled it, waved it goodbye, and then it was time for "
        "bed. Goodnight, little house."
    )
    bad = rng.choice(
        [
            f"Once upon a time there was a {s.house} house. Some balloons flew by. Everyone "
            "went to sleep. The end.",
            "There is a house and some balloons. The family inside went to bed. Goodnight!",
            f"A house stood next to {count_words(s.trees)} "
            f"{'tree' if s.trees == 1 else 'trees'}. Then it was night. The end.",
        ]
    )
    prompt = rng.choice(
        [
            "Write a short bedtime story (4-5 sentences) inspired by this picture.",
            "Can you make up a little children's story based on this image?",
        ]
    )
    return Draft("preference", prompt, img, good, bad, alt)


def gp_chart_tips(rng: random.Random) -> Draft:
    s = make_series(rng)
    img = draw_bar_chart(s, pick_size(rng), rng.choice(SERIES))
    good = "\n".join(
        [
            "A few concrete changes would make it easier to read at a glance:",
            "",
            f"1. **Lead with the message.** Replace the title with the takeaway, e.g. "
            f'"{s.max_label} had the most ({max(s.values)} {s.unit})".',
            f"2. **Highlight {s.max_label}.** Keep that bar in colour and grey out the others "
            "so the eye goes straight to it.",
            "3. **Lighten the grid.** The horizontal lines can be fainter or removed, since each "
            "bar already has its value on top.",
            f'4. **Keep the axis label** ("{s.ylabel}") but make it horizontal above the axis '
            "so nobody has to tilt their head.",
            "5. **Larger fonts**: category labels of at least 18 pt for a projector.",
            "",
            "If the order of categories has no meaning, sorting the bars from largest to "
            "smallest also helps.",
        ]
    )
    alt = "\n".join(
        [
            "It is already a clean chart; for a presentation I would:",
            "",
            f'- put the conclusion in the title ("{s.max_label} is highest")',
            f"- colour the {s.max_label} bar differently from the rest",
            "- remove or fade the gridlines, since the bars are labelled",
            "- increase the label font size so the back of the room can read it",
            "- say the unit once in the subtitle rather than on a rotated axis label",
        ]
    )
    bad = rng.choice(
        [
            "The chart looks fine. Maybe use more colours and a 3D effect so it stands out more.",
            "Add a pie chart next to it and some animations; audiences like movement.",
            "It's clear enough. Just make the title bigger.",
        ]
    )
    prompt = rng.choice(
        [
            "I'm presenting this chart to my team tomorrow. How can I make it clearer?",
            "Any suggestions to improve this chart for a slide?",
        ]
    )
    return Draft("preference", prompt, img, good, bad, alt)


def gp_bill_split(rng: random.Random) -> Draft:
    r = make_receipt(rng)
    img = receipt_image(r, rng)
    people = rng.choice([2, 3, 4])
    each = r.total / people / 100
    tip = round(r.subtotal * 0.15) / 100
    with_tip = (r.total / 100 + tip) / people
    table = "\n".join(
        [
            "| | Amount |",
            "|---|---|",
            f"| Total on receipt | {usd(r.total)} |",
            f"| Each ({people} people) | ${each:.2f} |",
            f"| Optional 15% tip on subtotal | ${tip:.2f} |",
            f"| Each, including tip | ${with_tip:.2f} |",
        ]
    )
    good = (
        f"The receipt total is {usd(r.total)} (subtotal {usd(r.subtotal)} plus {r.tax_percent}% "
        f"tax). Split evenly between {people}:\n\n{table}\n\nIf you would rather pay for what "
        "each person ordered, list who had which line item and I can work out individual "
        "amounts."
    )
    alt = (
        f"Total: {usd(r.total)}. Divided by {people}, that is **${each:.2f} each**. Adding a "
        f"15% tip on the pre-tax subtotal (${tip:.2f}) brings it to about "
        f"${with_tip:.2f} per person. Round up to the nearest dollar if you want to keep it "
        "simple."
    )
    bad = f"Just divide the total by {people}. Roughly ${each:.0f} each."
    prompt = f"{count_words(people).capitalize()} of us shared this. How should we split the bill?"
    return Draft("preference", prompt, img, good, bad, alt)


def gp_sign_rewrite(rng: random.Random) -> Draft:
    kind, lines, _facts = make_sign(rng)
    img = sign_image(kind, lines, rng)
    info = ", ".join(lines[1:])
    good = "\n".join(
        [
            "Here are three friendlier versions that keep all the information:",
            "",
            f'1. "Welcome! {lines[0].title()} - {info}. Thank you!"',
            f'2. "Glad you\'re here :) {info}."',
            f'3. "{lines[0].title()}: {info}. Thanks for helping us out!"',
            "",
            "Tip: a short thank-you line softens a rule without hiding it.",
        ]
    )
    alt = "\n".join(
        [
            "A few options:",
            "",
            f'- "Hello there! Please note: {info}."',
            f'- "{lines[0].title()} - {info}. We appreciate it!"',
            "",
            "Keep the key details (times, numbers) in large type so the friendlier words don't "
            "bury them.",
        ]
    )
    bad = f'Try: "{lines[0].title()} - have a nice day!"'
    return Draft(
        "preference", "Can you suggest friendlier wording for this sign?", img, good, bad, alt
    )


def gp_workout(rng: random.Random) -> Draft:
    activities = ["Running", "Cycling", "Swimming", "Yoga", "Weights", "Rest", "HIIT"]
    plan = [(day, rng.choice(activities), rng.choice([20, 30, 45, 60])) for day in DAYS]
    rows = [[day, act, "-" if act == "Rest" else f"{mins} min"] for day, act, mins in plan]
    img = draw_table(["Day", "Workout", "Time"], rows, pick_size(rng), title="My weekly plan")
    rest_days = [day for day, act, _ in plan if act == "Rest"]
    total = sum(mins for _, act, mins in plan if act != "Rest")
    strength = [day for day, act, _ in plan if act == "Weights"]
    notes = [
        f"- **Total time**: about {total} minutes of training per week"
        + (" - a solid amount." if total >= 150 else ", below the 150 minutes usually advised."),
        "- **Rest**: "
        + (
            f"you rest on {join_words(rest_days)}."
            if rest_days
            else "there is no rest day; add at least one so muscles can recover."
        ),
        "- **Strength**: "
        + (
            f"weights on {join_words(strength)}."
            if strength
            else "no strength session; two short sessions a week help a lot."
        ),
        "- **Mix**: alternate hard and easy days so you do not do intense sessions back to back.",
    ]
    good = (
        "Looking at your table:\n\n"
        + "\n".join(notes)
        + ("\n\nSmall, specific changes are easier to stick to than a full rewrite.")
    )
    alt = (
        f"Your plan adds up to roughly {total} minutes a week. "
        + (
            "There is no rest day, so I'd swap one session for rest. "
            if not rest_days
            else f"Good that {join_words(rest_days)} is a rest day. "
        )
        + (
            "Adding one or two strength sessions would balance the cardio."
            if not strength
            else "You already include strength work, which balances the cardio."
        )
    )
    bad = rng.choice(
        [
            "Exercise is great for your health. Keep going and stay motivated!",
            "Looks balanced to me. Just make sure you drink enough water!",
            "Any plan is better than no plan - you've got this!",
        ]
    )
    return Draft(
        "preference",
        "This is my weekly workout plan. Is it balanced? Any tips?",
        img,
        good,
        bad,
        alt,
    )
