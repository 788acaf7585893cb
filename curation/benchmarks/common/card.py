"""The card's section on a benchmark's records file (curation.releases.card.
CardSection) and the counts its manifest section and card lines share. Pure
Python, no Django: every sentence is generated from what the release holds."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any


def s(n: int) -> str:
    return "" if n == 1 else "s"


def counts(values: Iterable[str]) -> dict[str, int]:
    """How often each value occurs, by value."""
    return dict(sorted(Counter(values).items()))


def provenance_counts(written: Sequence[Any]) -> dict[str, int]:
    return counts(r.provenance or "unknown" for r in written)


def head_lines(title: str, *, mixed: bool, sentence: str, column: str, rows: dict) -> list[str]:
    """The section's heading (Contents when the release holds nothing else),
    its opening sentence and its table of prompts per `column`."""
    return [
        "",
        title if mixed else "## Contents",
        "",
        sentence,
        "",
        f"| {column} | prompts |",
        "|---|---:|",
        *(f"| {name} | {count} |" for name, count in rows.items()),
        "",
    ]


def per_prompt_line(what: str, values: dict[str, int]) -> str:
    return f"- {what} per prompt: " + ", ".join(f"{k}: {v}" for k, v in values.items()) + "."


def changed_line(changed: int, what: str) -> str:
    """The line on records whose decision differs from the imported one."""
    verb = "has" if changed == 1 else "have"
    return (
        f"- {changed} record{s(changed)} {verb} {what} than imported "
        "(the studio's decision differs)."
    )


class RecordsCardSection:
    """A benchmark's words on its file: `key` names its manifest section,
    `prefix` its domains' export Category, `file` and `noun` its file in the
    card's list of files; `card_lines(section, mixed=)` are its own."""

    key: str
    prefix: str
    file: str
    noun: str  # "the ranked records"
    prompt_noun: str  # "ranked": "3 ranked prompts"
    intro_text: str
    dataset_name: str  # the variable of the loading example
    loading_notes: tuple[str, ...] = ()
    states_consensus_rule = False
    shows_nominal_alpha = False

    def __init__(self, meta: Any, summary: dict):
        self.meta = meta
        self.section = meta.manifest_extra.get(self.key)
        self.holds = bool(self.section)

    @staticmethod
    def card_lines(section: dict, *, mixed: bool) -> list[str]:
        raise NotImplementedError

    def intro(self) -> str:
        return self.intro_text

    def phrase(self) -> str:
        n = self.section["records"]
        return f"{n} {self.prompt_noun} prompt{s(n)}"

    def owns(self, category: str) -> bool:
        return category.startswith(self.prefix)

    def lines(self, *, mixed: bool, others: Sequence[Any]) -> list[str]:
        return self.card_lines(self.section, mixed=mixed)

    def files(self, *, parquet: bool, trl: bool) -> str:
        return f"`{self.file}` ({self.noun}), "

    def absent_lines(self) -> list[str]:
        return []

    def loading(self, domains: Sequence[str], *, parquet: bool, trl: bool) -> list[str]:
        return [
            "## Loading",
            "",
            "```python",
            "from datasets import load_dataset",
            f'{self.dataset_name} = load_dataset("json", '
            f'data_files="path/to/this/folder/{self.file}", split="train")',
            "```",
            "",
            *self.loading_notes,
        ]
