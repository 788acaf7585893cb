"""Pairwise decompositions of ranked items for training (issue 33, item 5),
as pure functions (no Django import).

A ranked or best-of-N item's final ranking (canonical slots, 1 = best, ties
share a rank) becomes (chosen, rejected) pairs in one of two modes the
curator picks when cutting a release:

* ``best`` — best vs each other: every slot ranked first against every slot
  ranked below it (a first place shared by several slots gives each of them
  its pairs; the shared first places give none between them);
* ``all`` — every ordered pair: every two slots with different ranks, the
  better one chosen.

Slots with the same rank (a tie) never make a pair. A best-of-N pick is the
ranking "the picked slot first, every other slot tied second", so both modes
give the pick against each other slot.

Pairs are listed by the chosen slot, then the rejected slot (canonical
order); slots are 1-based here as the verdict stores them.
"""

from __future__ import annotations

from collections.abc import Sequence

BEST = "best"
ALL = "all"
MODES = {
    BEST: "best vs each other",
    ALL: "every ordered pair",
}
RULES = {
    BEST: "each response ranked first is chosen against each response ranked below it",
    ALL: "for every two responses with different ranks the better one is chosen",
}
TIE_RULE = "responses sharing a rank (ties) make no pair"


def pairs(ranks: Sequence[int], mode: str) -> list[tuple[int, int]]:
    """The (chosen slot, rejected slot) pairs of a ranking, 1-based slots;
    `ranks[k]` is the rank of slot k + 1."""
    if mode not in MODES:
        raise ValueError(f"unknown pairwise mode {mode!r}")
    n = len(ranks)
    if mode == BEST:
        top = min(ranks, default=0)
        winners = [i for i in range(n) if ranks[i] == top]
        return [(i + 1, j + 1) for i in winners for j in range(n) if ranks[j] > top]
    return [(i + 1, j + 1) for i in range(n) for j in range(n) if ranks[i] < ranks[j]]


def pick_ranks(n_slots: int, pick: int) -> tuple[int, ...]:
    """The ranking of a best-of-N pick (1-based slot): first, the rest tied second."""
    if not 1 <= pick <= n_slots:
        raise ValueError(f"slot {pick} is not one of {n_slots}")
    return tuple(1 if slot == pick else 2 for slot in range(1, n_slots + 1))


def pair_id(released_id: str, chosen: int, rejected: int) -> str:
    """A pair's row ID: the item's released ID and its two canonical slots."""
    return f"{released_id}:{chosen}>{rejected}"


def ranks_text(ranks: Sequence[int]) -> str:
    """How a release member stores its frozen ranking ("1,2,2,4")."""
    return ",".join(str(r) for r in ranks)


def parse_ranks(text: str) -> tuple[int, ...]:
    return tuple(int(r) for r in text.split(",")) if text else ()
