"""What a release says about its MM-RLHF-RewardBench file (issue 34): the
manifest's `mmrlhf` section and the card's section on it. Pure Python, no
Django; every sentence is generated from what the release holds."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from curation.benchmarks.mmrlhf.scoring import DEFINITIONS

FOLDER = "mmrlhf"
FILE = f"{FOLDER}/mm_rlhf_rewardbench.jsonl"
LAYOUT = (
    "MM-RLHF-RewardBench as published: one JSON line per ranked pair, the pairs of a prompt "
    "id on consecutive lines, with id, prompt, chosen, rejected, image (or video: a folder "
    "of frames), chosen_reason, rejected_reason; media paths relative to the file's folder, "
    "their first folder the category"
)
PREDICTIONS_SHAPE = (
    'JSONL lines {"id": "prompt id", "rewards": [chosen\'s reward, rejected\'s reward]}, '
    "the k-th line of an id for its k-th pair in the release's file (the benchmark's lines "
    "with rewards added, as the published inference writes them, are such a file)"
)
REKEY_RULE = "mm_<first 16 hex digits of sha256(salt:mm:old prompt id)> per prompt id"


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def manifest_section(written: Sequence[Any], *, rekeyed: bool = False) -> dict:
    """The manifest's `mmrlhf`: file, layout, pairs and prompt ids per
    category, pairs whose decision traded chosen and rejected, scoring."""
    groups = {w.released_id.rsplit("#", 1)[0] for w in written}
    frames = {w.video: list(w.frames) for w in written if w.video}
    return {
        "file": FILE,
        "layout": LAYOUT,
        "pairs": len(written),
        "prompt_ids": len(groups),
        "categories": dict(Counter(w.category for w in written)),
        "swapped_from_import": sum(w.chosen == "2" for w in written),
        "provenance": dict(sorted(Counter(w.provenance or "unknown" for w in written).items())),
        "predictions": PREDICTIONS_SHAPE,
        "scoring": DEFINITIONS,
        # A video's frames (file names in order) by folder: the judge's images.
        **({"frames": frames} if frames else {}),
        **({"id_rekey": REKEY_RULE} if rekeyed else {}),
    }


class CardSection:
    """The card's words on the file (curation.releases.card.CardSection)."""

    states_consensus_rule = False
    shows_nominal_alpha = False

    def __init__(self, meta: Any, summary: dict):
        self.meta = meta
        self.section = meta.manifest_extra.get("mmrlhf")
        self.holds = bool(self.section)

    def intro(self) -> str:
        return (
            "Ranked pairs of multimodal answers grouped by prompt, in MM-RLHF-RewardBench's "
            "published layout (scored by Acc and Acc+)."
        )

    def phrase(self) -> str:
        n = self.section["pairs"]
        return f"{n} MM-RLHF-RewardBench pair{_s(n)}"

    def owns(self, category: str) -> bool:
        return category.startswith(f"{FOLDER}/")

    def lines(self, *, mixed: bool, others: Sequence[Any]) -> list[str]:
        s = self.section
        swapped = s["swapped_from_import"]
        return [
            "",
            "## MM-RLHF-RewardBench" if mixed else "## Contents",
            "",
            f"{s['pairs']} pair{_s(s['pairs'])} over {s['prompt_ids']} prompt "
            f"id{_s(s['prompt_ids'])} in `{s['file']}`: {s['layout']}.",
            "",
            "| category | pairs |",
            "|---|---:|",
            *(f"| {name} | {count} |" for name, count in s["categories"].items()),
            "",
            f"- {swapped} pair{_s(swapped)} "
            + ("was" if swapped == 1 else "were")
            + " decided for the imported `rejected` (chosen and rejected traded).",
            f"- Predictions: {s['predictions']}.",
            f"- Scoring: {s['scoring']}",
        ]

    def files(self, *, parquet: bool, trl: bool) -> str:
        return f"`{FILE}` (the MM-RLHF-RewardBench pairs), "

    def absent_lines(self) -> list[str]:
        return []

    def loading(self, domains: Sequence[str], *, parquet: bool, trl: bool) -> list[str]:
        return [
            "## Loading",
            "",
            "```python",
            "from datasets import load_dataset",
            f'pairs = load_dataset("json", data_files="path/to/this/folder/{FILE}", split="train")',
            "```",
            "",
        ]
