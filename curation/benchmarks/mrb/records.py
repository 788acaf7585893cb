"""The Multimodal RewardBench record shape (DESIGN §7): the official keys
of a record, the slot (Output1/Output2) of its chosen response, its line in
provenance.jsonl and its manifest tallies (sub-buckets, balance). This
module is the `shape` (curation.releases.exporter.RecordShape) of the MRB
records part: the release's shared writer writes what it says. No Django
import.

Which slot holds the chosen response is a seeded shuffle per domain, balanced
so Output1 and Output2 counts differ by at most one."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable
from typing import Any

format_name = FORMAT_NAME = "multimodal-rewardbench"
RECORD_KEYS = ("ID", "Text", "Image", "Output1", "Output2", "Better", "Category")


def sub_bucket(category: str, external_id: str) -> str:
    """The official scorer's sub-bucket of a record (by ID prefix)."""
    lowered = external_id.lower()
    if category == "reasoning":
        return "reasoning/math" if lowered.startswith("math") else "reasoning/coding"
    if category == "safety":
        return "safety/bias" if lowered.startswith("pairs") else "safety/toxicity"
    return category


def slots(ids_by_domain: dict[str, list[str]], seed: int) -> dict[str, bool]:
    """For every item: True if the chosen response goes to Output1. Per
    domain, half the items (rounded down) get True, shuffled with a generator
    seeded by the release seed and the domain, over IDs in sorted order."""
    slots: dict[str, bool] = {}
    for domain, ids in sorted(ids_by_domain.items()):
        ordered = sorted(ids)
        flags = [True] * (len(ordered) // 2) + [False] * (len(ordered) - len(ordered) // 2)
        random.Random(f"{seed}:{domain}").shuffle(flags)
        slots.update(zip(ordered, flags, strict=True))
    return slots


def better(chosen_first: bool) -> str:
    """The record's `Better` (and ReleaseItem.better) for its slot."""
    return "Output1" if chosen_first else "Output2"


def record(item: Any, image: str, chosen_first: bool) -> dict[str, str]:
    """The record of an exporter.ExportItem whose image is at `image`."""
    chosen, rejected = item.chosen_and_rejected()
    return {
        "ID": item.external_id,
        "Text": item.prompt,
        "Image": image,
        "Output1": chosen if chosen_first else rejected,
        "Output2": rejected if chosen_first else chosen,
        "Better": better(chosen_first),
        "Category": item.category,
    }


def provenance(item: Any, record: dict) -> dict[str, Any]:
    return {
        "ID": item.external_id,
        "Better": record["Better"],
        "chosen_canonical": item.chosen,
        "provenance": item.provenance,
        "curator_reason": item.reason,
        "votes": list(item.votes),
        "model_1": item.model_1,
        "model_2": item.model_2,
    }


class Tally:
    """The manifest's `sub_buckets` and `balance` of the records written."""

    def __init__(self) -> None:
        self.buckets: Counter[str] = Counter()
        self.balance: dict[str, Counter[str]] = {}

    def add(self, item: Any, record: dict) -> None:
        self.buckets[sub_bucket(item.category, item.external_id)] += 1
        self.balance.setdefault(item.domain, Counter())[record["Better"]] += 1

    def summary(self, slugs: Iterable[str]) -> dict[str, Any]:
        """Its manifest sections, the domains' balance in `slugs` order."""
        return {
            "sub_buckets": dict(sorted(self.buckets.items())),
            "balance": {
                slug: {
                    "Output1": self.balance.get(slug, {}).get("Output1", 0),
                    "Output2": self.balance.get(slug, {}).get("Output2", 0),
                }
                for slug in slugs
            },
        }


def tally() -> Tally:
    return Tally()
