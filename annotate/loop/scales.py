"""Preference scales, pure Python: A/B(/tie) as ever, or a graded scale
(Multimodal RewardBench 2's six points, or seven with a tie in the middle).

A graded vote is stored canonically as a signed *strength*, oriented to
response 1 whatever was displayed: +3 response 1 much better, +2 better,
+1 slightly better, 0 tie (seven-point scale only), -1..-3 the same for
response 2. Its sign gives the vote's collapsed choice ("1", "2", "tie"),
stored beside it in Judgement.choice so every tally, statistic, verdict and
release reads graded votes exactly as A/B ones. On the page a point is
shown in displayed terms (oriented to the left response); the swap is a
change of sign (annotate.loop.rules.canonical_vote).

`scale_value` writes a strength in a published scale's own numbers: for
graded6 Multimodal RewardBench 2's human_annotations (6 = A much better
... 1 = B much better, with A = response 1), for graded7 1..7 (4 = tie).
"""

from __future__ import annotations

AB = "ab"
GRADED6 = "graded6"
GRADED7 = "graded7"
SCALES = (AB, GRADED6, GRADED7)
SCALE_NAMES = {
    AB: "A/B (ties if the project allows them)",
    GRADED6: "Graded, 6 points (Multimodal RewardBench 2: A much better … B much better)",
    GRADED7: "Graded, 7 points (with a tie in the middle)",
}

# The points of each graded scale as displayed, left to right, each a
# strength oriented to the LEFT response (A): key 1 is the first.
POINTS: dict[str, tuple[int, ...]] = {
    GRADED6: (3, 2, 1, -1, -2, -3),
    GRADED7: (3, 2, 1, 0, -1, -2, -3),
}
STRENGTH_WORDS = {3: "much better", 2: "better", 1: "slightly better"}
MAX_STRENGTH = 3


def is_graded(scale: str) -> bool:
    return scale in POINTS


def point_label(strength: int, *, left: str = "A", right: str = "B") -> str:
    """A displayed point's words: "A much better", "Tie", "B slightly better"."""
    if strength == 0:
        return "Tie"
    side = left if strength > 0 else right
    return f"{side} {STRENGTH_WORDS[abs(strength)]}"


def choice_of(strength: int) -> str:
    """The collapsed canonical choice of a canonical strength."""
    return "1" if strength > 0 else "2" if strength < 0 else "tie"


def scale_value(strength: int, scale: str) -> int:
    """A canonical strength as the scale's own number, response 1 high:
    graded6 1..6 (Multimodal RewardBench 2's human_annotations), graded7 1..7 (4 = tie)."""
    points = POINTS[scale]
    return len(points) - points.index(strength)


def strength_of_value(value: int, scale: str) -> int:
    """Inverse of scale_value."""
    points = POINTS[scale]
    if not 1 <= value <= len(points):
        raise ValueError(f"{value!r} is not a point of the {scale} scale")
    return points[len(points) - value]
