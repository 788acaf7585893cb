"""What a release's card says about its Multimodal RewardBench records
(curation.releases.card.CardSection): counts per domain and sub-bucket, the
Output1/Output2 balance, its files and how to load them. No Django import."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from curation.releases.card import loading_lines

RECORD_KEYS = "`ID, Text, Image, Output1, Output2, Better, Category`"


class CardSection:
    states_consensus_rule = False
    shows_nominal_alpha = True

    def __init__(self, meta: Any, summary: dict):
        self.meta = meta
        self.summary = summary
        self.holds = bool(summary["total"])

    def intro(self) -> str:
        return (
            "A benchmark of expert-annotated (prompt, chosen, rejected) triplets for "
            "vision-language reward models, in the Multimodal RewardBench format "
            f"({RECORD_KEYS})."
        )

    def phrase(self) -> str:
        total = self.summary["total"]
        return (
            f"{total} record{'' if total == 1 else 's'} in the Multimodal RewardBench format "
            f"({RECORD_KEYS})"
        )

    def owns(self, category: str) -> bool:
        return False  # every domain may have records

    def lines(self, *, mixed: bool, others: Sequence[Any]) -> list[str]:
        """Counts per domain and sub-bucket. Beside another benchmark's
        files, only the domains that have records or are not that
        benchmark's own are listed."""
        meta, summary = self.meta, self.summary
        titles = {slug: title for slug, title, _ in meta.domains}
        categories = {slug: category for slug, _, category in meta.domains}
        counts = summary["counts"]
        shown = [
            slug
            for slug in counts
            if not mixed
            or counts[slug]
            or not any(o.owns(categories.get(slug, "")) for o in others)
        ]
        lines = [
            "## Multimodal RewardBench records" if mixed else "## Contents",
            "",
            f"{summary['total']} record{'' if summary['total'] == 1 else 's'}. Which slot holds "
            f"the chosen response is a seeded shuffle per domain (seed {meta.seed}), balanced "
            "within each domain.",
            "",
            "| domain | Category | records | Output1 better | Output2 better |",
            "|---|---|---:|---:|---:|",
        ]
        for slug in shown:
            b = summary["balance"][slug]
            lines.append(
                f"| {titles.get(slug, slug)} | `{categories.get(slug, slug)}` | {counts[slug]} | "
                f"{b['Output1']} | {b['Output2']} |"
            )
        if summary["sub_buckets"]:
            lines += ["", "Sub-buckets used by the official scorer (by ID prefix):", ""]
            lines += [f"- `{bucket}`: {n}" for bucket, n in summary["sub_buckets"].items()]
        return lines

    def files(self, *, parquet: bool, trl: bool) -> str:
        return (
            "`all_data.json` (all records), `<domain>.json` (per domain), `images/`, "
            "`dpo/<domain>.jsonl` (prompt/chosen/rejected as chat messages, image paths), "
            + ("`parquet/<domain>.parquet` (the records, images embedded), " if parquet else "")
            + (
                "`trl/<domain>.parquet` (conversational rows for TRL, images embedded), "
                if trl
                else ""
            )
        )

    def absent_lines(self) -> list[str]:
        return [
            "",
            "No pair has the Multimodal RewardBench shape (one prompt image, text responses), "
            "so that format's files (`all_data.json`, `<domain>.json`, `dpo/`) are present but "
            "empty.",
        ]

    def loading(self, domains: Sequence[str], *, parquet: bool, trl: bool) -> list[str]:
        return loading_lines(domains, parquet=parquet, trl=trl)
