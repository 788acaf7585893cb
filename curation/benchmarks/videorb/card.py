"""What a release says about its VideoRewardBench-style file (issue 35): the
manifest's `videorb` section and the card's section on it. Pure Python, no
Django; every sentence is generated from what the release holds."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from curation.benchmarks.common.card import RecordsCardSection, provenance_counts, s
from curation.benchmarks.videorb.scoring import DEFINITIONS, DIMENSIONS

FOLDER = "videorb"
FILE = f"{FOLDER}/videorewardbench.jsonl"
LAYOUT = (
    "VideoRewardBench-style (the studio's layout of the paper's facts, not a published "
    "file): one JSON line per sample with id, video, prompt, chosen, rejected, dimension "
    f"({', '.join(DIMENSIONS)}) and any other field imported; video paths relative to the "
    "file's folder, the videos beside it"
)
PREDICTIONS_SHAPE = (
    'JSONL lines {"id": "sample id", "chosen_score": number, "rejected_score": number}, '
    "one per sample of the release's file"
)
REKEY_RULE = "vrb_<first 16 hex digits of sha256(salt:vrb:old id)> per sample"


def manifest_section(written: Sequence[Any], *, rekeyed: bool = False) -> dict:
    """The manifest's `videorb`: file, layout, samples and videos per
    dimension, samples whose decision traded chosen and rejected, scoring."""
    counts = Counter(w.dimension for w in written)
    return {
        "file": FILE,
        "layout": LAYOUT,
        "samples": len(written),
        "videos": len({w.video for w in written}),
        "dimensions": {d: counts[d] for d in [*DIMENSIONS, *sorted(counts)] if d in counts},
        "swapped_from_import": sum(w.chosen == "2" for w in written),
        "provenance": provenance_counts(written),
        "predictions": PREDICTIONS_SHAPE,
        "scoring": DEFINITIONS,
        **({"id_rekey": REKEY_RULE} if rekeyed else {}),
    }


class CardSection(RecordsCardSection):
    """The card's words on the file (curation.releases.card.CardSection)."""

    key = "videorb"
    prefix = f"{FOLDER}/"
    file = FILE
    noun = "the VideoRewardBench-style samples"
    intro_text = (
        "Pairs of answers to questions about videos, in a VideoRewardBench-style layout "
        "(scored by accuracy overall and per dimension)."
    )
    dataset_name = "samples"

    def phrase(self) -> str:
        n = self.section["samples"]
        return f"{n} VideoRewardBench-style sample{s(n)}"

    @staticmethod
    def card_lines(section: dict, *, mixed: bool) -> list[str]:
        swapped = section["swapped_from_import"]
        n, videos = section["samples"], section["videos"]
        return [
            "",
            "## VideoRewardBench (style)" if mixed else "## Contents",
            "",
            f"{n} sample{s(n)} over {videos} video{s(videos)} in `{section['file']}`: "
            f"{section['layout']}.",
            "",
            "| dimension | samples |",
            "|---|---:|",
            *(f"| {name} | {count} |" for name, count in section["dimensions"].items()),
            "",
            f"- {swapped} sample{s(swapped)} "
            + ("was" if swapped == 1 else "were")
            + " decided for the imported `rejected` (chosen and rejected traded).",
            f"- Predictions: {section['predictions']}.",
            f"- Scoring: {section['scoring']}",
        ]
