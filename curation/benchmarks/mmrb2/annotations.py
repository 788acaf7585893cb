"""What an exported MMRB2 pair says about its labels, from the studio's
votes and verdict (issue 24): pure Python, no Django.

- `chosen` follows the item's verdict when it is decided with a side
  (response 1 is the pair's `response_a`, as the import maps it), else the
  imported value stays.
- `human_annotations` is written from the current votes (each annotator's
  latest revision), in the order the annotators first submitted:
  text-to-image, edit and interleaved take each graded vote's point on the
  project's scale (`scales.scale_value`: graded6 is MMRB2's 1-6, 6 = A much
  better; graded7 1-7, 4 = tie); reasoning takes the letter grades
  `{"response_a_ratings": [...], "response_b_ratings": [...]}`. A pair
  without such votes keeps the imported value, so a file imported and
  exported again is the same bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from annotate.loop import scales

REASONING = "reasoning"


@dataclass(frozen=True)
class Vote:
    """A current vote in canonical terms (strength oriented to response 1)."""

    strength: int | None = None
    grade_1: str = ""
    grade_2: str = ""


def published_chosen(final_choice: str | None, imported: Any) -> Any:
    """ "A" / "B" from a decided verdict's side, else the imported value."""
    return {"1": "A", "2": "B"}.get(final_choice or "", imported)


def written_from_votes(*, task: str, votes: Sequence[Vote], scale: str) -> bool:
    """Whether the pair's `human_annotations` come from the studio's votes
    (else they stay as imported)."""
    if task == REASONING:
        return any(v.grade_1 or v.grade_2 for v in votes)
    return scales.is_graded(scale) and any(v.strength is not None for v in votes)


def human_annotations(*, task: str, votes: Sequence[Vote], scale: str, imported: Any) -> Any:
    """The pair's `human_annotations` in the published shape (see module)."""
    if not written_from_votes(task=task, votes=votes, scale=scale):
        return imported
    if task == REASONING:
        graded = [v for v in votes if v.grade_1 or v.grade_2]
        return {
            "response_a_ratings": [v.grade_1 for v in graded if v.grade_1],
            "response_b_ratings": [v.grade_2 for v in graded if v.grade_2],
        }
    strengths = [v.strength for v in votes if v.strength is not None]
    return [scales.scale_value(s, scale) for s in strengths]


def published_fields(
    fields: dict[str, Any],
    *,
    task: str,
    votes: Sequence[Vote],
    scale: str,
    final_choice: str | None,
) -> dict[str, Any]:
    """The pair's stored fields with `chosen` and `human_annotations` as
    the studio decided and collected them (key order kept)."""
    out = dict(fields)
    out["chosen"] = published_chosen(final_choice, fields.get("chosen"))
    out["human_annotations"] = human_annotations(
        task=task, votes=votes, scale=scale, imported=fields.get("human_annotations")
    )
    return out
