"""What a release says about its Omni-RewardBench files: the manifest's
`omni` section and the card's section. Pure Python."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from curation.benchmarks.omni.scoring import DEFINITIONS

LAYOUT = (
    "per task, omni/<task>_preferences.json: a JSON array (json.dump, indent=4) of records "
    "id, prompt, response1, response2, model1, model2, criteria, criteria_preference "
    "(response1, response2 or tie) and the task's media paths, relative to omni/media_data/"
)
PREDICTIONS_SHAPE = (
    'JSONL lines {"id", "output": the judge\'s answer} or {"id", "predicted": response1 | '
    'response2 | tie | null} (add "with_ties": true for the with-ties mode), or {"id", '
    '"scores": [score of response1, score of response2]} for a reward model'
)
REKEY_RULE = "om_<first 16 hex digits of sha256(salt:om:old id)>"


def manifest_section(written: Sequence[Any], *, rekeyed: bool = False) -> dict:
    from curation.benchmarks.omni.release_files import file_of

    tasks = Counter(r.task for r in written)
    return {
        "files": {task: file_of(task) for task in tasks},
        "layout": LAYOUT,
        "records": len(written),
        "tasks": dict(tasks),
        "preferences": dict(sorted(Counter(r.preference for r in written).items())),
        "changed_from_import": sum(r.changed for r in written),
        "predictions": PREDICTIONS_SHAPE,
        "scoring": DEFINITIONS,
        **({"id_rekey": REKEY_RULE} if rekeyed else {}),
    }


class CardSection:
    """The card's words on the Omni-RewardBench files."""

    states_consensus_rule = False
    shows_nominal_alpha = False

    def __init__(self, meta: Any, summary: dict):
        self.section = meta.manifest_extra.get("omni")
        self.holds = bool(self.section)

    def intro(self) -> str:
        return "Pairs judged under a free-form criterion, ties allowed (Omni-RewardBench layout)."

    def phrase(self) -> str:
        n = self.section["records"]
        return f"{n} Omni-RewardBench pair{'s' if n != 1 else ''}"

    def owns(self, category: str) -> bool:
        return category.startswith("omni/")

    def lines(self, *, mixed: bool, others: Sequence[Any]) -> list[str]:
        s = self.section
        prefs = ", ".join(f"{k}: {v}" for k, v in s["preferences"].items())
        return [
            "", "## Omni-RewardBench" if mixed else "## Contents", "",
            f"{s['records']} records in the published layout: {s['layout']}.", "",
            "| task | records | file |", "|---|---:|---|",
            *(f"| {t} | {n} | `{s['files'][t]}` |" for t, n in s["tasks"].items()), "",
            f"- Preferences (1 = response1, 2 = response2): {prefs}.",
            f"- {s['changed_from_import']} record(s) carry another preference than imported.",
            f"- Predictions: {s['predictions']}.",
            f"- Scoring: {s['scoring']}",
        ]  # fmt: skip

    def files(self, *, parquet: bool, trl: bool) -> str:
        return "`omni/<task>_preferences.json` (the Omni-RewardBench task files), "

    def absent_lines(self) -> list[str]:
        return []

    def loading(self, domains: Sequence[str], *, parquet: bool, trl: bool) -> list[str]:
        path = "omni/text_to_text_preferences.json"
        return ["## Loading", "", "```python", "import json",
                f'records = json.load(open("{path}"))', "```", ""]  # fmt: skip
