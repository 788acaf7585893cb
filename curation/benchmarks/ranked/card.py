"""What a release says about its ranked file, the generic ranked layout of
MR²Bench's training data (issue 33): the manifest's `ranked` section and the
card's section on it. Pure Python, no Django; every sentence is generated
from what the release holds."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from curation.benchmarks.common.card import (
    RecordsCardSection,
    changed_line,
    counts,
    head_lines,
    per_prompt_line,
    provenance_counts,
    s,
)
from curation.benchmarks.ranked.scoring import DEFINITIONS

FILE = "ranked/rankings.jsonl"
LAYOUT = (
    "one JSON record a line: id, prompt, images (the prompt's, paths relative to the "
    "file's folder; only when it has some), responses (N = 2..8 texts, the item's order), "
    "rankings (N ints, 1 = best, tied responses share a place), category; an imported "
    "record keeps its other fields in its own key order"
)
PREDICTIONS_SHAPE = (
    'JSONL lines {"id": "prompt ID", "scores": [one number per response, higher is '
    'better]} or {"id": "prompt ID", "ranking": [one place per response, 1 = best]}, in '
    "the file's response order"
)
RANKS_FROM = (
    "each member's rankings are its verdict's final ranking (the Kemeny-Young order of the "
    "votes when they agreed, the curator's when one set it); a best-of-N or pair decision "
    "without a ranking is written as the picked response first and the others tied second"
)
REKEY_RULE = "rk_<first 16 hex digits of sha256(salt:rk:old id)>"


def manifest_section(written: Sequence[Any], *, rekeyed: bool = False) -> dict:
    """The manifest's `ranked`: its file and layout, records per category,
    responses per record, where the rankings come from and how many differ
    from the imported ones, the scoring definitions."""
    return {
        "file": FILE,
        "layout": LAYOUT,
        "records": len(written),
        "categories": dict(Counter(r.category for r in written)),
        "responses": counts(str(r.n) for r in written),
        "rankings_from": RANKS_FROM,
        "from_pick": sum(r.from_pick for r in written),
        "changed_from_import": sum(r.changed for r in written),
        "provenance": provenance_counts(written),
        "predictions": PREDICTIONS_SHAPE,
        "scoring": DEFINITIONS,
        **({"id_rekey": REKEY_RULE} if rekeyed else {}),
    }


def card_lines(section: dict, *, mixed: bool) -> list[str]:
    n = section["records"]
    picks = section["from_pick"]
    sentence = (
        f"{n} prompt{s(n)} in `{section['file']}`, the generic ranked layout of MR²Bench's "
        f"training data: {section['layout']}."
    )
    return [
        *head_lines(
            "## Ranked responses",
            mixed=mixed,
            sentence=sentence,
            column="category",
            rows=section["categories"],
        ),
        per_prompt_line("Responses", section["responses"]),
        f"- Rankings: {section['rankings_from']} ({picks} such record{s(picks)}).",
        changed_line(section["changed_from_import"], "another ranking"),
        f"- Predictions: {section['predictions']}.",
        f"- Scoring: {section['scoring']}",
    ]


class CardSection(RecordsCardSection):
    """The card's words on the ranked file (curation.releases.card.CardSection)."""

    key = "ranked"
    prefix = "ranked/"
    file = FILE
    noun = "the ranked records"
    prompt_noun = "ranked"
    intro_text = (
        "Prompts with 2 to 8 responses ranked by people (ties allowed), in the generic "
        "ranked layout of MR²Bench's training data (responses + rankings)."
    )
    dataset_name = "ranked"
    card_lines = staticmethod(card_lines)
