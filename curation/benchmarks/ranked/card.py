"""What a release says about its ranked file, the generic ranked layout of
MR²Bench's training data (issue 33): the manifest's `ranked` section and the
card's section on it. Pure Python, no Django; every sentence is generated
from what the release holds."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

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


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def manifest_section(written: Sequence[Any], *, rekeyed: bool = False) -> dict:
    """The manifest's `ranked`: its file and layout, records per category,
    responses per record, where the rankings come from and how many differ
    from the imported ones, the scoring definitions."""
    return {
        "file": FILE,
        "layout": LAYOUT,
        "records": len(written),
        "categories": dict(Counter(r.category for r in written)),
        "responses": dict(sorted(Counter(str(r.n) for r in written).items())),
        "rankings_from": RANKS_FROM,
        "from_pick": sum(r.from_pick for r in written),
        "changed_from_import": sum(r.changed for r in written),
        "provenance": dict(sorted(Counter(r.provenance or "unknown" for r in written).items())),
        "predictions": PREDICTIONS_SHAPE,
        "scoring": DEFINITIONS,
        **({"id_rekey": REKEY_RULE} if rekeyed else {}),
    }


def card_lines(section: dict, *, mixed: bool) -> list[str]:
    n = section["records"]
    changed = section["changed_from_import"]
    picks = section["from_pick"]
    return [
        "",
        "## Ranked responses" if mixed else "## Contents",
        "",
        f"{n} prompt{_s(n)} in `{section['file']}`, the generic ranked layout of MR²Bench's "
        f"training data: {section['layout']}.",
        "",
        "| category | prompts |",
        "|---|---:|",
        *(f"| {name} | {count} |" for name, count in section["categories"].items()),
        "",
        "- Responses per prompt: "
        + ", ".join(f"{k}: {v}" for k, v in section["responses"].items())
        + ".",
        f"- Rankings: {section['rankings_from']} ({picks} such record{_s(picks)}).",
        f"- {changed} record{_s(changed)} "
        + ("has" if changed == 1 else "have")
        + " another ranking than imported (the studio's decision differs).",
        f"- Predictions: {section['predictions']}.",
        f"- Scoring: {section['scoring']}",
    ]


class CardSection:
    """The card's words on the ranked file (curation.releases.card.CardSection)."""

    states_consensus_rule = False
    shows_nominal_alpha = False

    def __init__(self, meta: Any, summary: dict):
        self.meta = meta
        self.section = meta.manifest_extra.get("ranked")
        self.holds = bool(self.section)

    def intro(self) -> str:
        return (
            "Prompts with 2 to 8 responses ranked by people (ties allowed), in the generic "
            "ranked layout of MR²Bench's training data (responses + rankings)."
        )

    def phrase(self) -> str:
        n = self.section["records"]
        return f"{n} ranked prompt{_s(n)}"

    def owns(self, category: str) -> bool:
        return category.startswith("ranked/")

    def lines(self, *, mixed: bool, others: Sequence[Any]) -> list[str]:
        return card_lines(self.section, mixed=mixed)

    def files(self, *, parquet: bool, trl: bool) -> str:
        return f"`{FILE}` (the ranked records), "

    def absent_lines(self) -> list[str]:
        return []

    def loading(self, domains: Sequence[str], *, parquet: bool, trl: bool) -> list[str]:
        return [
            "## Loading",
            "",
            "```python",
            "from datasets import load_dataset",
            f'ranked = load_dataset("json", data_files="path/to/this/folder/{FILE}", '
            'split="train")',
            "```",
            "",
        ]
