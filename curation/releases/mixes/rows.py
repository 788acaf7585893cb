"""The rules of a training mix, as pure functions (no Django import):
filters, per-source caps or weights, cross-source deduplication with the
reason for every row left out, and the TRL row of a kept pair.

Deduplication key: the image's SHA-256 and the *normalised* prompt, where
normalising is Unicode NFKC, then str.casefold(), then every run of white
space (str.split()) collapsed to one space and the ends stripped. So
"What is  shown?\\n" and "what is shown?" are the same prompt; "What is
shown" (no "?") is not.

Selection (deterministic for a seed): each source's candidates that pass the
filters are put in ID order and shuffled with random.Random(f"{seed}:{i}")
(i = the source's position). Sources are then taken in order; in that
shuffled order a row is

* ``duplicate`` if a row already kept (earlier in this source or in an
  earlier source) has the same key; the report names the row it duplicates;
* ``over_limit`` if its source already holds its cap (or its weighted share);
* kept otherwise.

The pairs of one ranked item (the pairwise decomposition of a release,
curation.releases.pairwise) share its key and are not duplicates of each
other; another item or source with that key is.

Only kept rows claim a key, so a pair that one source leaves out for its cap
may still come in from a later source. With weights, the share of source i is
round(T * w_i / sum(w)) by the largest remainder, T the requested size or
else the largest total for which every source has its share of distinct
rows (counted with the duplicates of earlier sources removed).
"""

from __future__ import annotations

import math
import random
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from curation.releases.trl import conversational_row

# Reasons a row is left out, in the report and dropped.jsonl.
FILTER_REASONS = ("status", "provenance", "min_share", "domain")


def normalise_prompt(text: str) -> str:
    """NFKC, casefold, white space collapsed (see the module's docstring)."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


@dataclass(frozen=True)
class Candidate:
    """One decided pair of one source, as the build reads it."""

    external_id: str
    domain: str
    category: str
    prompt: str
    response_1: str
    response_2: str
    chosen: str  # "1" | "2"
    image_sha256: str
    image_ext: str
    status: str  # agreed | resolved
    provenance: str
    share: float | None  # votes for the chosen side / all current votes (None: no votes)
    image_source: str = ""  # where the build finds the image's bytes
    # A pair of a ranked item's decomposition: the item's external ID (its
    # pairs share the key and are not duplicates of each other); "" for a pair item.
    group: str = ""

    def key(self) -> tuple[str, str]:
        return (self.image_sha256, normalise_prompt(self.prompt))


@dataclass(frozen=True)
class Filters:
    statuses: frozenset[str]
    provenances: frozenset[str]
    min_share: float | None = None
    domains: frozenset[str] | None = None  # None: every domain

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Filters:
        domains = data.get("domains")
        return cls(
            statuses=frozenset(data.get("statuses") or ()),
            provenances=frozenset(data.get("provenances") or ()),
            min_share=data.get("min_share"),
            domains=frozenset(domains) if domains else None,
        )

    def reject(self, c: Candidate) -> str | None:
        """Why the filters leave `c` out, or None."""
        if self.domains is not None and c.domain not in self.domains:
            return "domain"
        if c.status not in self.statuses:
            return "status"
        if c.provenance not in self.provenances:
            return "provenance"
        if self.min_share is not None and (c.share is None or c.share < self.min_share):
            return "min_share"
        return None


@dataclass
class SourceSpec:
    label: str
    cap: int | None = None
    weight: float | None = None


@dataclass
class Selection:
    kept: list[tuple[int, Candidate]] = field(default_factory=list)  # (source index, row)
    dropped: list[dict[str, Any]] = field(default_factory=list)
    report: list[dict[str, Any]] = field(default_factory=list)  # one entry per source


def seeded_order(rows: Sequence[Candidate], seed: int, index: int) -> list[Candidate]:
    ordered = sorted(rows, key=lambda c: c.external_id)
    random.Random(f"{seed}:{index}").shuffle(ordered)
    return ordered


def weighted_limits(available: Sequence[int], weights: Sequence[float], size: int | None):
    """Rows per source for `weights` (largest remainder), at most what each has."""
    total_weight = sum(weights)
    if size is None:
        size = min(
            (
                math.floor(n * total_weight / w + 1e-9)
                for n, w in zip(available, weights, strict=True)
            ),
            default=0,
        )
    exact = [size * w / total_weight for w in weights]
    limits = [math.floor(x) for x in exact]
    by_remainder = sorted(range(len(exact)), key=lambda i: (-(exact[i] - limits[i]), i))
    for i in by_remainder[: size - sum(limits)]:
        limits[i] += 1
    return [min(limit, n) for limit, n in zip(limits, available, strict=True)]


def select(
    sources: Sequence[SourceSpec],
    rows: Sequence[Sequence[Candidate]],
    *,
    filters: Filters,
    seed: int,
    dedup: bool = True,
    weights_mode: bool = False,
    size: int | None = None,
) -> Selection:
    """Apply filters, limits and deduplication (see the module's docstring)."""
    out = Selection()
    passing: list[list[Candidate]] = []
    filtered: list[Counter[str]] = []
    for index, source_rows in enumerate(rows):
        reasons: Counter[str] = Counter()
        keep = []
        for c in source_rows:
            reason = filters.reject(c)
            if reason is None:
                keep.append(c)
            else:
                reasons[reason] += 1
                out.dropped.append(_dropped(sources[index], c, reason))
        passing.append(seeded_order(keep, seed, index))
        filtered.append(reasons)

    limits: list[int | None] = [s.cap for s in sources]
    if weights_mode:
        seen: set[tuple[str, str]] = set()
        available = []
        for source_rows in passing:
            if dedup:
                distinct = {c.key() for c in source_rows}
                # The other pairs of a ranked item are not duplicates (see the module).
                siblings = len(
                    {
                        (c.key(), c.external_id)
                        for c in source_rows
                        if c.group and c.key() not in seen
                    }
                ) - len({c.key() for c in source_rows if c.group and c.key() not in seen})
                available.append(len(distinct - seen) + siblings)
                seen |= distinct
            else:
                available.append(len(source_rows))
        weights = [s.weight if s.weight else 1.0 for s in sources]
        limits = list(weighted_limits(available, weights, size))

    kept_keys: dict[tuple[str, str], tuple[str, str]] = {}  # key -> (source label, id)
    # key -> (source index, group) of the ranked item whose pairs claimed it
    groups: dict[tuple[str, str], tuple[int, str]] = {}
    for index, source_rows in enumerate(passing):
        spec = sources[index]
        duplicates: Counter[str] = Counter()
        over = kept = 0
        limit = limits[index]
        for c in source_rows:
            key = c.key()
            same_item = bool(c.group) and groups.get(key) == (index, c.group)
            if dedup and key in kept_keys and not same_item:
                of_label, of_id = kept_keys[key]
                duplicates[of_label] += 1
                out.dropped.append(
                    _dropped(spec, c, "duplicate", duplicate_of=f"{of_label}:{of_id}")
                )
            elif limit is not None and kept >= limit:
                over += 1
                out.dropped.append(_dropped(spec, c, "over_limit"))
            else:
                kept += 1
                kept_keys.setdefault(key, (spec.label, c.external_id))
                if c.group:
                    groups.setdefault(key, (index, c.group))
                out.kept.append((index, c))
        out.report.append(
            {
                "source": spec.label,
                "candidates": len(rows[index]),
                "filtered": {r: filtered[index][r] for r in FILTER_REASONS if filtered[index][r]},
                "duplicates": sum(duplicates.values()),
                "duplicate_of": dict(sorted(duplicates.items())),
                "over_limit": over,
                "limit": limits[index],
                "kept": kept,
            }
        )
    return out


def _dropped(spec: SourceSpec, c: Candidate, reason: str, **extra: str) -> dict[str, Any]:
    return {"source": spec.label, "id": c.external_id, "reason": reason, **extra}


def trl_row(*, row_id: str, source: str, candidate: Candidate, images: list[Any]) -> dict[str, Any]:
    """One TRL row (issue 22 item 4's layout): conversational prompt,
    chosen and rejected as assistant messages with plain string contents (TRL
    inserts the image placeholder itself), `images` as given by the caller (a
    path relative to the JSONL file, or an embedded {bytes, path})."""
    c = candidate
    chosen, rejected = (
        (c.response_1, c.response_2) if c.chosen == "1" else (c.response_2, c.response_1)
    )
    row = conversational_row(
        id=row_id, prompt=c.prompt, chosen=chosen, rejected=rejected, category=c.category
    )
    return {**row, "images": images, "source": source}
