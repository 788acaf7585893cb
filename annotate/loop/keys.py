"""The compare page's keys: what each key does on an item like this one
(the `?` panel lists exactly these; static/js/work.js acts only on them)."""

import functools

from annotate.loop import rules, scales

# The letter-grade keys of each response (a domain that asks grades): the
# bottom row, left hand for A (left), right hand for B (right).
GRADE_KEYS = {"left": "zcv", "right": "nm,"}


# The picture keys of each layout (_layout): MRB's one prompt image; parts
# with pictures among text (every picture zooms and pans together); two
# responses of pictures alone, and an edit (the input beside them), which
# also flicker between A and B in one place (static/js/pictures.js).
_ZOOM_PARTS = ("zoom", "+ - .", "Zoom in / out / fit, every picture together")
_PAN = (
    "pan",
    "Shift+← Shift+→ Shift+↑ Shift+↓",
    "Pan the zoomed pictures together (or drag one)",
)
_FLICKER = (
    "flicker",
    "t",
    "Flicker: response A and B in turn in one place (t again switches; Esc: side by side)",
)
PICTURE_KEYS = {
    "image_prompt": [
        ("zoom", "+ - .", "Zoom in / out / fit; drag to pan, wheel to zoom"),
        ("fullsize", "f", "Image at full size"),
    ],
    "text": [],
    "parts": [_ZOOM_PARTS, _PAN],
    "pictures": [
        ("zoom", "+ - .", "Zoom in / out / fit, both responses together; wheel zooms too"),
        _PAN,
        _FLICKER,
    ],
}
# Videos and audio (issue 35, static/js/clips.js): one transport for both responses.
PICTURE_KEYS["clips"] = [
    ("clip-play", "Space", "Play / pause both responses together"),
    ("clip-step", ", .", "One frame back / forward (pauses)"),
    ("clip-speed", "[ ]", "Slower / faster (0.25 to 2 times)"),
    ("clip-loop", "l", "Loop: mark its start, then its end; a third press clears it"),
    ("clip-switch", "t", "Videos: flicker each response in turn here; audio: hear the next one"),
]
PICTURE_KEYS["edit"] = [
    ("zoom", "+ - .", "Zoom in / out / fit, input and both responses together; wheel zooms too"),
    _PAN,
    _FLICKER,
]


@functools.cache
def _keymap(
    *,
    allow_tie: bool,
    domain_words: tuple[str, str, str] | None,
    judged: bool,
    can_revise: bool,
    scale: str = scales.AB,
    grade_question: str | None = None,
    layout: str = "image_prompt",
) -> tuple[tuple[str, tuple[str, ...], str], ...]:
    """(action, keys, meaning) of every key the compare page acts on for an
    item like this one (`layout`: see _layout), `keys` a tuple of key names:
    the `?` panel lists exactly these, and work.js acts only on the actions
    listed (data-actions). Keys are written separated by spaces, since `,`
    is a key itself (a grade key)."""
    points = scales.POINTS.get(scale)
    if points is None:
        keys = [
            ("left", "1 ←", "A (left) is better"),
            ("right", "2 →", "B (right) is better"),
        ]
        if allow_tie:
            keys.append(("tie", "0", "Tie (say why in the rationale)"))
    else:
        # Keys 1..N pick the scale's points in displayed order (1: A much better).
        keys = [
            (f"point-{n}", str(n), scales.point_label(strength))
            for n, strength in enumerate(points, start=1)
        ]
        keys.append(("point-step", "← →", "One point towards A / towards B"))
    if grade_question is not None:
        for side, name in (("left", "A"), ("right", "B")):
            q = grade_question.replace("{response}", name)
            keys += [
                (f"grade-{side}-{grade}", key, f"{q}: {grade}")
                for grade, key in zip(rules.GRADES, GRADE_KEYS[side], strict=True)
            ]
    if domain_words is not None:
        question, yes, no = domain_words
        for side, (k_yes, k_no, k_unsure) in (("A", "qwe"), ("B", "opu")):
            q = question.replace("{response}", side)
            keys += [
                (f"{side.lower()}-yes", k_yes, f"{q} {yes}"),
                (f"{side.lower()}-no", k_no, f"{q} {no}"),
                (f"{side.lower()}-unsure", k_unsure, f"{q} Unsure"),
            ]
    keys += vote_keys(
        judged=judged,
        can_revise=can_revise,
        undo="Undo: back to your last vote, to change it while its item still waits for votes",
    )
    if layout == "clips":  # [ and ] set the speed: confidence moves to { and }
        keys = [("confidence", "{ }", m) if a == "confidence" else (a, k, m) for a, k, m in keys]
    keys += PICTURE_KEYS[layout]
    keys += [
        ("guidelines", "g", "Guidelines"),
        ("keys", "?", "This list"),
        ("close", "Esc", "Close panels, full size and flicker"),
    ]
    return tuple((action, tuple(k.split(" ")), meaning) for action, k, meaning in keys)


def vote_keys(*, judged: bool, can_revise: bool, undo: str) -> list[tuple[str, str, str]]:
    """The keys of what every vote has (the pair's and the slots'):
    confidence, rationale, submit, skip and undo (`undo` says what it does)
    or saving a revision, and the problem flag."""
    keys = [
        ("confidence", "[ ]", "Confidence down / up"),
        ("rationale", "r", "Write a rationale (Esc leaves the box, Ctrl+Enter submits)"),
    ]
    if not judged:
        keys.append(("submit", "Enter", "Submit (with nothing focused or from the form)"))
        keys.append(("skip", "s", "Skip (asks for a reason)"))
        keys.append(("undo", "Backspace", undo))
    elif can_revise:
        keys.append(("submit", "Enter", "Save the revised judgement"))
    keys.append(("flag", "x", "Flag a problem with the item"))
    return keys
