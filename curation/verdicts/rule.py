"""The contested-item rule (DESIGN §6), as a pure function of an item's votes.

No Django import: curation.verdicts.service feeds it the current judgements of one
item and writes the outcome to the item's Verdict.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

NEEDS_VOTES = "needs_votes"
AGREED = "agreed"
CONTESTED = "contested"

# Why a split went to the curators without (all) its escalation votes.
NO_ONE_LEFT = "no annotator left to break it"


@dataclass(frozen=True)
class Thresholds:
    votes_per_item: int = 3
    agree_share: float = 0.8  # winner share at or above which an item is agreed
    escalation_votes: int = 2  # extra votes asked once for an A-vs-B split
    # Graded projects: "consensus" (Multimodal RewardBench 2's filter): agreed only if every vote
    # is on one side and their mean strength is at least this. None: off.
    consensus_strength: float | None = None


@dataclass(frozen=True)
class RuleVote:
    choice: str  # "1", "2" or "tie" (canonical)
    correct_1: str = ""
    correct_2: str = ""
    flagged_problem: bool = False
    # Graded votes: the signed strength oriented to response 1 (None: A/B).
    strength: int | None = None

    @property
    def contradicts(self) -> bool:
        """Prefers a response the same voter called incorrect while calling the
        other one correct."""
        if self.choice == "1":
            return self.correct_1 == "no" and self.correct_2 == "yes"
        if self.choice == "2":
            return self.correct_2 == "no" and self.correct_1 == "yes"
        return False


@dataclass(frozen=True)
class Outcome:
    status: str
    final_choice: str = ""  # "1"/"2" when agreed
    provenance: str = ""  # "unanimous"/"majority" when agreed
    reason: str = ""
    escalate_by: int = 0  # extra votes the item now needs
    kind: str = ""  # why it is contested (curation.models.ContestKind values)


def decide(
    votes: Iterable[RuleVote],
    *,
    votes_needed: int,
    escalations: int,
    thresholds: Thresholds,
    gold: str = "",
    eligible: int | None = None,
) -> Outcome:
    """Where an item stands given its current votes.

    1. fewer votes than needed → needs_votes;
    2. problem flags and correctness/preference contradictions → contested;
    3. a tie majority or no strict majority → contested;
    4. winner 1 or 2 with share ≥ agree_share, or whose only dissent is ties
       → agreed (unanimous or majority) unless it disagrees with gold;
    With a consensus strength set (graded projects), 3 and 4 give way to
    Multimodal RewardBench 2's filter: agreed only when every vote is on one side and their
    mean strength (|strength|: 1 slightly … 3 much better) is at least the
    threshold, else contested ("consensus"), never escalated: more votes
    cannot undo a dissent.
    5. otherwise an A-vs-B split: escalate once, asking for
       min(escalation_votes, eligible) more votes, where `eligible` is how many
       annotators could still give one (None: not counted yet, the caller asks
       again with the count when the outcome escalates); with none eligible the
       split goes straight to contested. Contested if still split after the
       extra votes.
    """
    votes = list(votes)
    n = len(votes)
    if n < votes_needed:
        # No reason text: it would change (and cost a write) on every vote.
        return Outcome(NEEDS_VOTES)
    flagged = sum(v.flagged_problem for v in votes)
    if flagged:
        return Outcome(
            CONTESTED, reason=f"problem flagged by {flagged} annotator(s)", kind="problem"
        )
    contradictions = sum(v.contradicts for v in votes)
    if contradictions:
        return Outcome(
            CONTESTED,
            reason=f"{contradictions} vote(s) prefer a response they marked incorrect",
            kind="contradiction",
        )
    counts = {"1": 0, "2": 0, "tie": 0}
    for v in votes:
        counts[v.choice] += 1
    tally = f"{counts['1']}-{counts['2']}-{counts['tie']} (1-2-tie)"
    if thresholds.consensus_strength is not None:
        return _consensus(votes, counts, tally, thresholds.consensus_strength, gold)
    top = max(counts.values())
    leaders = [c for c, k in counts.items() if k == top]
    if len(leaders) > 1:
        return Outcome(CONTESTED, reason=f"no strict majority: {tally}", kind="no_majority")
    winner = leaders[0]
    if winner == "tie":
        return Outcome(CONTESTED, reason=f"tie majority: {tally}", kind="tie_majority")
    loser = "2" if winner == "1" else "1"
    share = counts[winner] / n
    if share >= thresholds.agree_share or counts[loser] == 0:
        if gold and gold != winner:
            return Outcome(
                CONTESTED, reason=f"majority {winner} disagrees with gold {gold}", kind="gold"
            )
        provenance = "unanimous" if counts[winner] == n else "majority"
        return Outcome(AGREED, final_choice=winner, provenance=provenance, reason=tally)
    if escalations == 0 and thresholds.escalation_votes > 0:
        extra = thresholds.escalation_votes
        if eligible is not None:
            extra = min(extra, max(eligible, 0))
        if extra == 0:
            return Outcome(CONTESTED, reason=f"split {tally}, {NO_ONE_LEFT}", kind="split")
        return Outcome(
            NEEDS_VOTES,
            reason=f"split {tally}: escalated for {extra} more vote{'s' if extra != 1 else ''}",
            escalate_by=extra,
        )
    return Outcome(CONTESTED, reason=f"still split after escalation: {tally}", kind="split")


def _consensus(
    votes: list[RuleVote], counts: dict[str, int], tally: str, least: float, gold: str
) -> Outcome:
    """Multimodal RewardBench 2's consensus filter: every vote on one side,
    mean strength >= least."""
    n = len(votes)
    side = next((c for c in ("1", "2") if counts[c] == n), None)
    if side is None:
        return Outcome(CONTESTED, reason=f"no consensus: {tally}", kind="consensus")
    mean = sum(abs(v.strength or 0) for v in votes) / n
    if mean < least:
        return Outcome(
            CONTESTED,
            reason=f"consensus too weak: mean strength {mean:.2f} < {least:g}, {tally}",
            kind="consensus",
        )
    if gold and gold != side:
        return Outcome(
            CONTESTED, reason=f"consensus {side} disagrees with gold {gold}", kind="gold"
        )
    return Outcome(
        AGREED,
        final_choice=side,
        provenance="unanimous",
        reason=f"consensus, mean strength {mean:.2f}: {tally}",
    )
