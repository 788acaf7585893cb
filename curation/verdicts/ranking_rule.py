"""The contested-item rule for best-of-N picks and rankings (issue 33), as
pure functions of one item's judgements, beside the pair rule (rule.py).

No Django import. Same statuses, escalation and "nothing waits silently"
guarantee as rule.decide: a shortfall escalates ONCE by
min(escalation_votes, eligible annotators); with nobody eligible it is
contested at once; still short after the extra votes, contested.

Thresholds (canonical slots, curation.agreement.ranking's definitions):

* top share: the share of ALL the item's judgements that put one slot alone
  at the top (a pick, or the only slot ranked first; a tied first place and
  "none is acceptable" name no slot) must reach ``agree_share``;
* rankings also need Kendall's W over the item's complete rankings of at
  least ``least_w`` (None: not checked); W undefined (fewer than two
  complete rankings, every ranking all tied) does not meet it.

Agreed: the final pick is the leading slot; the final ranking is the exact
Kemeny-Young aggregate (rka.kemeny), "unanimous" when every ranking is
the same ranking (same mid-ranks), else "majority". A majority of picks
saying "none is acceptable" is contested (kind "problem"): curators decide
what an item without an acceptable response becomes. Contest kinds are
curation.models.ContestKind's: problem, gold, tie_majority (tied first
places or "none" outnumber the leading slot), no_majority (two slots lead),
split (the share or W short of the threshold).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from curation.agreement import ranking
from curation.agreement import ranking_aggregate as rka
from curation.verdicts.rule import AGREED, CONTESTED, NEEDS_VOTES, NO_ONE_LEFT


@dataclass(frozen=True)
class RankingThresholds:
    votes_per_item: int = 3
    agree_share: float = 0.8  # share naming the same single top slot
    least_w: float | None = 0.5  # Kendall's W for rankings; None: not checked
    escalation_votes: int = 2


@dataclass(frozen=True)
class RankingVote:
    ranks: Sequence[float | None]  # per canonical slot, 1 = best; None = not ranked
    flagged_problem: bool = False


@dataclass(frozen=True)
class PickVote:
    slot: int | None  # canonical slot; None = "none is acceptable"
    flagged_problem: bool = False


@dataclass(frozen=True)
class RankingOutcome:
    status: str
    final_slot: int | None = None  # the agreed best slot
    final_ranks: tuple[int, ...] = ()  # rankings: the Kemeny-Young order, 1 = best
    provenance: str = ""
    reason: str = ""
    escalate_by: int = 0
    kind: str = ""


def _shortfall(
    reason: str, kind: str, escalations: int, thresholds: RankingThresholds, eligible: int | None
) -> RankingOutcome:
    """rule.decide's step 5: escalate once (bounded by who is eligible), else contested."""
    if escalations == 0 and thresholds.escalation_votes > 0:
        extra = thresholds.escalation_votes
        if eligible is not None:
            extra = min(extra, max(eligible, 0))
        if extra == 0:
            return RankingOutcome(CONTESTED, reason=f"{reason}, {NO_ONE_LEFT}", kind=kind)
        plural = "s" if extra != 1 else ""
        return RankingOutcome(
            NEEDS_VOTES,
            reason=f"{reason}: escalated for {extra} more vote{plural}",
            escalate_by=extra,
        )
    return RankingOutcome(CONTESTED, reason=f"still short after escalation: {reason}", kind=kind)


def _top(tops: list[int], n: int, n_slots: int) -> tuple[int | None, int, str, str]:
    """(leading slot or None, its count, tally text, kind if no slot leads alone)."""
    counts = np.bincount([t for t in tops if t >= 0], minlength=n_slots)
    unnamed = n - int(counts.sum())
    most = int(counts.max(initial=0))
    tally = (
        f"top {'-'.join(str(int(c)) for c in counts)} (slots 1..{n_slots}), {unnamed} without one"
    )
    if unnamed > most:
        return None, most, tally, "tie_majority"
    if most == 0 or int((counts == most).sum()) > 1:
        return None, most, tally, "no_majority"
    return int(counts.argmax()), most, tally, ""


def decide_pick(
    votes: Iterable[PickVote],
    *,
    n_slots: int,
    votes_needed: int,
    escalations: int,
    thresholds: RankingThresholds,
    gold: int | None = None,
    eligible: int | None = None,
) -> RankingOutcome:
    """Where a best-of-N item stands given its picks (``gold``: a slot)."""
    votes = list(votes)
    n = len(votes)
    if n < votes_needed:
        return RankingOutcome(NEEDS_VOTES)
    flagged = sum(v.flagged_problem for v in votes)
    if flagged:
        return RankingOutcome(
            CONTESTED, reason=f"problem flagged by {flagged} annotator(s)", kind="problem"
        )
    for v in votes:
        if v.slot is not None and not 0 <= v.slot < n_slots:
            raise ValueError(f"a pick names one of the {n_slots} slots, or None")
    none = sum(v.slot is None for v in votes)
    if none / n >= thresholds.agree_share:
        return RankingOutcome(
            CONTESTED, reason=f"{none} of {n} found no response acceptable", kind="problem"
        )
    slot, count, tally, kind = _top([-1 if v.slot is None else v.slot for v in votes], n, n_slots)
    if slot is None:
        return _shortfall(f"no single top: {tally}", kind, escalations, thresholds, eligible)
    if count / n < thresholds.agree_share:
        return _shortfall(
            f"top share {count}/{n} < {thresholds.agree_share:g}: {tally}",
            "split",
            escalations,
            thresholds,
            eligible,
        )
    if gold is not None and gold != slot:
        return RankingOutcome(
            CONTESTED, reason=f"top {slot + 1} disagrees with gold {gold + 1}", kind="gold"
        )
    return RankingOutcome(
        AGREED,
        final_slot=slot,
        provenance="unanimous" if count == n else "majority",
        reason=tally,
    )


def decide_ranking(
    votes: Iterable[RankingVote],
    *,
    votes_needed: int,
    escalations: int,
    thresholds: RankingThresholds,
    gold: int | None = None,
    eligible: int | None = None,
) -> RankingOutcome:
    """Where a ranked item stands given its rankings (``gold``: the slot that
    should come first)."""
    votes = list(votes)
    n = len(votes)
    if n < votes_needed:
        return RankingOutcome(NEEDS_VOTES)
    flagged = sum(v.flagged_problem for v in votes)
    if flagged:
        return RankingOutcome(
            CONTESTED, reason=f"problem flagged by {flagged} annotator(s)", kind="problem"
        )
    table = ranking.RankTable.of(
        [ranking.Ranking(item=0, annotator=i, ranks=v.ranks) for i, v in enumerate(votes)]
    )
    n_slots = table.width
    slot, count, tally, kind = _top(ranking.unique_tops(table.ranks).tolist(), n, n_slots)
    if slot is None:
        return _shortfall(f"no single top: {tally}", kind, escalations, thresholds, eligible)
    if count / n < thresholds.agree_share:
        return _shortfall(
            f"top share {count}/{n} < {thresholds.agree_share:g}: {tally}",
            "split",
            escalations,
            thresholds,
            eligible,
        )
    w = float(ranking.kendalls_w(table)[0])
    if thresholds.least_w is not None and not w >= thresholds.least_w:
        shown = "undefined" if np.isnan(w) else f"{w:.2f}"
        return _shortfall(
            f"Kendall's W {shown} < {thresholds.least_w:g}: {tally}",
            "split",
            escalations,
            thresholds,
            eligible,
        )
    if gold is not None and gold != slot:
        return RankingOutcome(
            CONTESTED, reason=f"top {slot + 1} disagrees with gold {gold + 1}", kind="gold"
        )
    mids = ranking.mid_ranks(table.ranks)
    same = bool(np.array_equal(mids, np.broadcast_to(mids[0], mids.shape), equal_nan=True))
    w_text = "" if np.isnan(w) else f", W {w:.2f}"
    return RankingOutcome(
        AGREED,
        final_slot=slot,
        final_ranks=rka.kemeny(table.ranks).ranks,
        provenance="unanimous" if same else "majority",
        reason=f"{tally}{w_text}",
    )
