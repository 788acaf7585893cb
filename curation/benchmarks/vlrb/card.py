"""What a release says about its VL-RewardBench file: the manifest's `vlrb`
section and the card's section on it. Pure Python, no Django; every
sentence is generated from what the release holds."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from curation.benchmarks.vlrb.scoring import DEFINITIONS, GROUPS, PREDICTIONS_SHAPE

FILE = "vlrb/vl_rewardbench.jsonl"
MARK = "vlrb"  # the Item.meta key of a pair imported in the official shape
GROUP_CATEGORIES = GROUPS
LAYOUT = (
    "one JSON record a line in the layout of MMInstruction/VL-RewardBench: id, query, "
    "response (two texts), image (a path relative to the file's folder), human_ranking "
    "([0, 1]: the first response is preferred; [1, 0]: the second); an imported record keeps "
    "its other fields (models, judge, rationale, query_source, …) in its own key order"
)
GROUPING = (
    "the task group is cal.py's: the ID's prefix up to its first '_' or '-' names the source "
    "(RLAIF → rlaif-v, RLHF → rlhf-v, hallucination → povid: hallucination; mathverse, mmmu "
    "→ reasoning; wildvision and anything else → general), case-sensitive"
)
REKEY_RULE = "<the old ID's prefix up to its first '_' or '-'>_<first 16 hex digits of sha256>"


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def manifest_section(written: Sequence[Any], *, rekeyed: bool = False) -> dict:
    """The manifest's `vlrb`: its file and layout, records per official
    group, how many are ranked otherwise than imported or sit in another
    group's domain, the predictions shape and the scoring rule."""
    groups = Counter(r.group for r in written)
    return {
        "file": FILE,
        "layout": LAYOUT,
        "records": len(written),
        "groups": {g: groups.get(g, 0) for g in GROUP_CATEGORIES},
        "grouping": GROUPING,
        "chosen_first": sum(r.chosen == "1" for r in written),
        "changed_from_import": sum(r.changed for r in written),
        "domain_not_id_group": sum(r.other_group for r in written),
        "provenance": dict(sorted(Counter(r.provenance or "unknown" for r in written).items())),
        "predictions": PREDICTIONS_SHAPE,
        "scoring": DEFINITIONS,
        **({"id_rekey": REKEY_RULE} if rekeyed else {}),
    }


def card_lines(section: dict, *, mixed: bool) -> list[str]:
    n, changed = section["records"], section["changed_from_import"]
    other = section["domain_not_id_group"]
    return [
        "",
        "## VL-RewardBench" if mixed else "## Contents",
        "",
        f"{n} pair{_s(n)} in `{section['file']}`, {section['layout']}.",
        "",
        "| group | pairs |",
        "|---|---:|",
        *(f"| {name} | {count} |" for name, count in section["groups"].items()),
        "",
        f"- Groups: {section['grouping']}"
        + (f" ({other} pair{_s(other)} sit in another group's domain here)." if other else "."),
        f"- The first response is preferred in {section['chosen_first']} of {n}.",
        f"- {changed} pair{_s(changed)} "
        + ("has" if changed == 1 else "have")
        + " another preference than imported (the studio's decision differs).",
        f"- Predictions: {section['predictions']}.",
        f"- Scoring: {section['scoring']}",
    ]


class CardSection:
    """The card's words on the VL-RewardBench file (curation.releases.card.CardSection)."""

    states_consensus_rule = False
    shows_nominal_alpha = True

    def __init__(self, meta: Any, summary: dict):
        self.meta = meta
        self.section = meta.manifest_extra.get("vlrb")
        self.holds = bool(self.section)

    def intro(self) -> str:
        return (
            "Image and question pairs with two responses and a human preference, in the layout of "
            "VL-RewardBench (response + human_ranking)."
        )

    def phrase(self) -> str:
        n = self.section["records"]
        return f"{n} VL-RewardBench pair{_s(n)}"

    def owns(self, category: str) -> bool:
        return False  # its pairs are records of the pair layout too

    def lines(self, *, mixed: bool, others: Sequence[Any]) -> list[str]:
        return card_lines(self.section, mixed=mixed)

    def files(self, *, parquet: bool, trl: bool) -> str:
        return f"`{FILE}` (the VL-RewardBench records), "

    def absent_lines(self) -> list[str]:
        return []

    def loading(self, domains: Sequence[str], *, parquet: bool, trl: bool) -> list[str]:
        return [
            "## Loading",
            "",
            "```python",
            "from datasets import load_dataset",
            f'vlrb = load_dataset("json", data_files="path/to/this/folder/{FILE}", split="test")',
            "```",
            "",
        ]
