"""What a release says about its Multimodal RewardBench 2 task files, in
MMRB2's own terms (issue 30): the manifest's `mmrb2` section and the card's
section on it. Pure Python, no Django.

Every sentence is generated from what the release holds: pairs per task and
`prompt_source`, who decided each pair (the verdicts' provenance), how many
pairs' `human_annotations` the studio wrote from its votes and how many it
kept as imported; nothing is said of what did not happen.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from curation.benchmarks.common.card import RecordsCardSection, counts, s

REASONING = "reasoning"
# The published meaning of each scale's points (A = response_a = response 1).
SCALE_WORDS = {
    "graded6": "1-6, 6 = A much better, 1 = B much better",
    "graded7": "1-7, 7 = A much better, 4 = tie, 1 = B much better",
}
PROVENANCE_WORDS = {
    "unanimous": "agreed by the rule, unanimous",
    "majority": "agreed by the rule, majority",
    "adjudicated": "decided by a curator",
    "reviewed": "confirmed in the label-quality review",
    "gold": "imported gold",
}


def manifest_section(pairs: Sequence[Any], *, scale: str) -> dict:
    """The manifest's `mmrb2`: per task its file, domain, pairs written, how
    many only there, pairs per `prompt_source`, decisions per provenance and
    how many `human_annotations` the studio's votes wrote; the same counts
    for all task files, and the rule that wrote `human_annotations`."""
    tasks: dict[str, dict] = {}
    by_task: dict[str, list] = {}
    for pair in pairs:
        by_task.setdefault(pair.task, []).append(pair)
    for task, written in by_task.items():
        tasks[task] = {
            "file": f"mmrb2/{task}.json",
            "domain": written[0].domain,
            "pairs": len(written),
            "mmrb2_only": sum(not p.mrb_shaped for p in written),
            "prompt_source": counts(p.prompt_source or "(none)" for p in written),
            "provenance": counts(p.provenance or "unknown" for p in written),
            "human_annotations_from_votes": sum(p.from_votes for p in written),
        }
    return {
        "tasks": tasks,
        "pairs": len(pairs),
        "provenance": counts(p.provenance or "unknown" for p in pairs),
        "human_annotations_scale": scale,
        "human_annotations_rule": human_annotations_rule(tasks, scale=scale),
    }


def human_annotations_rule(tasks: dict[str, dict], *, scale: str) -> str:
    """How the task files' `human_annotations` were written, from the counts."""
    voted = {t: e["human_annotations_from_votes"] for t, e in tasks.items()}
    graded = sum(n for t, n in voted.items() if t != REASONING)
    grades = voted.get(REASONING, 0)
    kept = sum(e["pairs"] for e in tasks.values()) - graded - grades
    parts = []
    if graded:
        parts.append(
            f"{graded} pair{s(graded)} from the studio's graded votes, one point per "
            f"annotator on the {scale} scale ({SCALE_WORDS.get(scale, scale)})"
        )
    if grades:
        parts.append(
            f"{grades} reasoning pair{s(grades)} from the studio's letter grades "
            "(`response_a_ratings`, `response_b_ratings`)"
        )
    if graded or grades:
        text = (
            "written for "
            + " and ".join(parts)
            + (", each annotator's latest vote in the order they first submitted")
        )
        if kept:
            text += f"; {kept} pair{s(kept)} without such votes keep the imported value"
    else:
        text = "as imported for every pair (the studio collected no votes on the scale)"
    return text + ". `chosen` is the side of each pair's verdict."


def _listed(counts: dict[str, int], words: dict[str, str] | None = None) -> str:
    return ", ".join(f"{(words or {}).get(k, k)}: {n}" for k, n in counts.items())


def card_lines(section: dict, *, titles: dict[str, str], mixed: bool) -> list[str]:
    """The card's section on the task files (see module); `mixed`: the
    release also holds Multimodal RewardBench records."""
    tasks = section["tasks"]
    n_files = len(tasks)
    only = sum(t["mmrb2_only"] for t in tasks.values())
    shared = section["pairs"] - only
    lines = [
        "",
        "## Multimodal RewardBench 2 task files" if mixed else "## Contents",
        "",
        f"{section['pairs']} pair{s(section['pairs'])} in {n_files} task "
        f"file{s(n_files)} in the Multimodal RewardBench 2 layout "
        '(`mmrb2/<task>.json`, `{"pairs": [...]}`, images beside them)'
        + (
            f"; {shared} of them, with text responses to one prompt image, "
            + (
                "is also a Multimodal RewardBench record."
                if shared == 1
                else "are also Multimodal RewardBench records."
            )
            if shared
            else "."
        ),
        "",
        "| task | file | pairs | only in this file | prompt_source |",
        "|---|---|---:|---:|---|",
    ]
    lines += [
        f"| {titles.get(t['domain'], task)} | `{t['file']}` | {t['pairs']} | "
        f"{t['mmrb2_only']} | {_listed(t['prompt_source'])} |"
        for task, t in tasks.items()
    ]
    decisions = {
        k: section["provenance"][k] for k in PROVENANCE_WORDS if k in section["provenance"]
    }
    decisions.update(section["provenance"])  # any other value, after the known ones
    return [
        *lines,
        "",
        f"- `human_annotations`: {section['human_annotations_rule']}",
        f"- Decisions: {_listed(decisions, PROVENANCE_WORDS)}.",
    ]


class CardSection(RecordsCardSection):
    """The card's words on the task files (curation.releases.card.CardSection)."""

    key = "mmrb2"
    prefix = "mmrb2/"
    states_consensus_rule = True  # the benchmark states its own: the card says ours
    shows_nominal_alpha = False  # its labels are graded: the graded table has the collapse
    intro_text = (
        "Expert-annotated preference pairs for multimodal reward models and judges, in "
        "the Multimodal RewardBench 2 layout (facebookresearch/MMRB2): per task a "
        '`{"pairs": [...]}` file of prompts and two responses (text, images or both), '
        "`chosen` and `human_annotations`."
    )

    def phrase(self) -> str:
        pairs = self.section["pairs"]
        return f"{pairs} pair{s(pairs)} in Multimodal RewardBench 2 task files"

    def lines(self, *, mixed: bool, others: Sequence[Any]) -> list[str]:
        titles = {slug: title for slug, title, _ in self.meta.domains}
        return card_lines(self.section, titles=titles, mixed=mixed)

    def files(self, *, parquet: bool, trl: bool) -> str:
        return "`mmrb2/<task>.json` (the task files, their images under `mmrb2/`), "

    def loading(self, domains: Sequence[str], *, parquet: bool, trl: bool) -> list[str]:
        task = next(iter(self.section["tasks"]), "<task>")
        return [
            "## Loading",
            "",
            "```python",
            "import json",
            f'pairs = json.load(open("path/to/this/folder/mmrb2/{task}.json"))["pairs"]',
            "```",
            "",
            "Image paths in a pair are relative to the task file's folder. MMRB2's own "
            "`compute_accuracy.py` scores judges against these files (forward and reverse "
            "order).",
            "",
        ]
