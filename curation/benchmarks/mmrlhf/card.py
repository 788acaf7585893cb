"""What a release says about its MM-RLHF-RewardBench file (issue 34): the
manifest's `mmrlhf` section and the card's section on it. Pure Python, no
Django; every sentence is generated from what the release holds."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from curation.benchmarks.common.card import RecordsCardSection, provenance_counts, s
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
        "provenance": provenance_counts(written),
        "predictions": PREDICTIONS_SHAPE,
        "scoring": DEFINITIONS,
        # A video's frames (file names in order) by folder: the judge's images.
        **({"frames": frames} if frames else {}),
        **({"id_rekey": REKEY_RULE} if rekeyed else {}),
    }


class CardSection(RecordsCardSection):
    """The card's words on the file (curation.releases.card.CardSection)."""

    key = "mmrlhf"
    prefix = f"{FOLDER}/"
    file = FILE
    noun = "the MM-RLHF-RewardBench pairs"
    intro_text = (
        "Ranked pairs of multimodal answers grouped by prompt, in MM-RLHF-RewardBench's "
        "published layout (scored by Acc and Acc+)."
    )
    dataset_name = "pairs"

    def phrase(self) -> str:
        n = self.section["pairs"]
        return f"{n} MM-RLHF-RewardBench pair{s(n)}"

    @staticmethod
    def card_lines(section: dict, *, mixed: bool) -> list[str]:
        swapped = section["swapped_from_import"]
        return [
            "",
            "## MM-RLHF-RewardBench" if mixed else "## Contents",
            "",
            f"{section['pairs']} pair{s(section['pairs'])} over {section['prompt_ids']} prompt "
            f"id{s(section['prompt_ids'])} in `{section['file']}`: {section['layout']}.",
            "",
            "| category | pairs |",
            "|---|---:|",
            *(f"| {name} | {count} |" for name, count in section["categories"].items()),
            "",
            f"- {swapped} pair{s(swapped)} "
            + ("was" if swapped == 1 else "were")
            + " decided for the imported `rejected` (chosen and rejected traded).",
            f"- Predictions: {section['predictions']}.",
            f"- Scoring: {section['scoring']}",
        ]
