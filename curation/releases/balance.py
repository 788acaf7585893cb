"""Side and length balance of a release's pairs, and balancing by seeded
sampling (issue 36 item 4). Pure Python, no Django.

Length: a pair's chosen response is "longer" when it has more characters
than the rejected one ("equal" when both have as many). A domain's longer
share is longer / pairs. Balancing drops, per domain, the fewest pairs that
bring that share within `tolerance` of 0.5: longer-chosen pairs when the
share is too high, the others when it is too low; which ones is a seeded
sample (random.Random(f"{seed}:{domain}")) over item ids in sorted order, so
a seed gives the same pairs every time. A domain left without pairs counts
as balanced.

Side: the share of pairs whose chosen response is in the first position of
the release's files (Output1), read from the benchmark's seeded slots, which
already put half of each domain's chosen responses first where the format
lets the order be chosen."""

from __future__ import annotations

import math
import random
from collections.abc import Iterable
from typing import NamedTuple


class PairLength(NamedTuple):
    item_id: int
    domain: str
    chosen_chars: int
    rejected_chars: int

    @property
    def longer(self) -> bool:
        return self.chosen_chars > self.rejected_chars

    @property
    def equal(self) -> bool:
        return self.chosen_chars == self.rejected_chars


def _within(longer: int, n: int, tolerance: float) -> bool:
    # A tiny epsilon: 0.55 - 0.5 must count as within a tolerance of 0.05.
    return n == 0 or abs(longer / n - 0.5) <= tolerance + 1e-12


def to_drop(n: int, longer: int, tolerance: float) -> tuple[str, int]:
    """Which pairs ("longer" or "other") and how many to drop, the fewest
    that bring longer / pairs within tolerance of 0.5."""
    if _within(longer, n, tolerance):
        return "", 0
    if longer / n > 0.5:
        p = 0.5 + tolerance
        k = max(0, math.floor((longer - p * n) / (1 - p)) - 1)
        while not _within(longer - k, n - k, tolerance):
            k += 1
        return "longer", k
    q = 0.5 - tolerance
    k = 0 if q <= 0 else max(0, math.floor(n - longer / q) - 1)
    while not _within(longer, n - k, tolerance):
        k += 1
    return "other", k


def balance_drops(pairs: Iterable[PairLength], *, tolerance: float, seed: int) -> dict:
    """{domain: sorted item ids to drop} for a length balance within tolerance."""
    by_domain: dict[str, list[PairLength]] = {}
    for pair in pairs:
        by_domain.setdefault(pair.domain, []).append(pair)
    drops: dict[str, list[int]] = {}
    for domain, rows in sorted(by_domain.items()):
        longer = sum(r.longer for r in rows)
        which, k = to_drop(len(rows), longer, tolerance)
        if not k:
            continue
        pool = sorted(r.item_id for r in rows if r.longer == (which == "longer"))
        drops[domain] = sorted(random.Random(f"{seed}:{domain}").sample(pool, k))
    return drops


def length_report(pairs: Iterable[PairLength]) -> dict[str, dict]:
    """Per domain: pairs, chosen longer / shorter / equal, longer share."""
    out: dict[str, dict] = {}
    for pair in pairs:
        row = out.setdefault(
            pair.domain, {"pairs": 0, "chosen_longer": 0, "chosen_shorter": 0, "equal": 0}
        )
        row["pairs"] += 1
        key = "chosen_longer" if pair.longer else "equal" if pair.equal else "chosen_shorter"
        row[key] += 1
    for row in out.values():
        row["longer_share"] = row["chosen_longer"] / row["pairs"]
    return dict(sorted(out.items()))


def side_report(slots: dict[str, bool], domain_of: dict[str, str]) -> dict[str, dict]:
    """Per domain: pairs, chosen first (Output1), its share. `slots` maps an
    external ID to True when its chosen response is written first."""
    out: dict[str, dict] = {}
    for external_id, first in slots.items():
        row = out.setdefault(domain_of[external_id], {"pairs": 0, "chosen_first": 0})
        row["pairs"] += 1
        row["chosen_first"] += bool(first)
    for row in out.values():
        row["first_share"] = row["chosen_first"] / row["pairs"]
    return dict(sorted(out.items()))
