"""What a release says about its RewardBench 2 file, in RewardBench 2's own
terms (issue 33): the manifest's `rewardbench2` section and the card's
section on it. Pure Python, no Django. Every sentence is generated from what
the release holds."""

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

FILE = "rewardbench2/test.jsonl"
PREDICTIONS_SHAPE = (
    'one JSON object {"prompt ID": [score, ...]} or JSONL lines {"id": "prompt ID", '
    '"scores": [...]}: one classifier score per completion in the file\'s unrolled order, '
    "chosen first, then rejected (total_completions scores); judges give "
    '{"id", "verdict": "the judge\'s text, [[A]]..[[D]]", "position": 0-3} (4-way) or '
    '{"id", "ratings": [1-10 or -1, ...]} / {"id", "judgements": ["text ending in a '
    'rating", ...]}'
)
SCORING_WORDS = (
    "Scored as allenai/reward-bench scores RewardBench 2: per prompt "
    "1/count(scores == max) if the first chosen completion has the top score, else 0; a "
    "subset's score is the mean over its prompts; the Ties subset is "
    "0.30·tied_acc + 0.30·ref_acc + 0.20·correctness_preferred + "
    "0.20·correctness_preferred_hard + 0.01·margin; overall is the unweighted mean of the "
    "subset scores. A prompt without a prediction counts 0 (the studio's rule)."
)


REKEY_RULE = (
    "rb2_<first 16 hex digits of sha256(salt:rb2:old id)>; Ties IDs stay ref:<n>/tied:<n>, "
    "each n replaced by its rank in a salted order (a ref and its tied keep one number)"
)


def manifest_section(written: Sequence[Any], *, seed: int, rekeyed: bool = False) -> dict:
    """The manifest's `rewardbench2`: its file, records per subset, how many
    decisions kept the imported correct completions, the completions per
    record, and the seed of judge runs' answer positions."""
    return {
        "file": FILE,
        "records": len(written),
        "subsets": dict(Counter(r.subset for r in written)),
        "total_completions": counts(str(r.total) for r in written),
        "changed_from_import": sum(r.changed for r in written),
        "provenance": provenance_counts(written),
        "judge_position_seed": seed,
        "predictions": PREDICTIONS_SHAPE,
        **({"id_rekey": REKEY_RULE} if rekeyed else {}),
    }


def card_lines(section: dict, *, mixed: bool) -> list[str]:
    n = section["records"]
    sentence = (
        f"{n} prompt{s(n)} in `{section['file']}`, one record a line in the layout of "
        "allenai/reward-bench-2 (`id, prompt, chosen, rejected, num_correct, num_incorrect, "
        "total_completions, models, subset, additional_metadata`): the correct completions "
        "first (`chosen`), from each item's verdict, then the others (`rejected`)."
    )
    return [
        *head_lines(
            "## RewardBench 2 records",
            mixed=mixed,
            sentence=sentence,
            column="subset",
            rows=section["subsets"],
        ),
        per_prompt_line("Completions", section["total_completions"]),
        changed_line(section["changed_from_import"], "other correct completions"),
        f"- Predictions: {section['predictions']}.",
        f"- {SCORING_WORDS}",
        f"- Judge runs show the correct answer at a position drawn from seed "
        f"{section['judge_position_seed']} and the prompt's ID (the published script draws it "
        "unseeded).",
    ]


class CardSection(RecordsCardSection):
    """The card's words on the RewardBench 2 file (curation.releases.card.CardSection)."""

    key = "rewardbench2"
    prefix = "rewardbench2/"
    file = FILE
    noun = "the RewardBench 2 records"
    prompt_noun = "RewardBench 2"
    intro_text = (
        "Prompts with one or more correct and several incorrect completions for reward "
        "models and judges, in the RewardBench 2 layout (allenai/reward-bench-2)."
    )
    dataset_name = "rb2"
    loading_notes = (
        "allenai/reward-bench's `scripts/run_v2.py --dataset <this file>` scores a reward "
        "model on it.",
        "",
    )
    shows_nominal_alpha = True
    card_lines = staticmethod(card_lines)
