"""The contested rule for best-of-N and ranking projects (issue 33), applied
to the database beside the pair rule: curation.verdicts.service calls these
for an item whose project's task is not pairwise, through its one _apply
(same escalation, same audit, same "nothing waits silently" recheck).

Plain ORM only: the pair path's raw PostgreSQL statements
(curation.verdicts.postgres) read a pair's choice and two correctness
labels and cannot take a ranking; a raw statement lives only beside its ORM
twin, so rankings have none.

The pure rule is curation.verdicts.ranking_rule (0-based slots); here every
slot is canonical and 1-based, as Judgement.choice, JudgementSlot.slot,
Verdict.final_choice and VerdictRank.slot store it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from annotate.models import Judgement, JudgementSlot, Project, Task
from curation.models import Verdict, VerdictRank
from curation.verdicts.rule import NEEDS_VOTES

if TYPE_CHECKING:
    from curation.verdicts.ranking_rule import RankingThresholds

# ranking_rule (numpy, scipy, krippendorff through curation.agreement.ranking)
# is imported where a ranked item is decided: every vote's receiver imports
# this module, and pair projects never need it (tests/test_import_weight.py).


RANKED_TASKS = (Task.BEST_OF_N, Task.RANKING)
# Kendall's W a ranked item needs (with the top share) to be agreed: the
# project's ranking_least_w (the rule settings), this by default; the
# project's agree_share is the share.
LEAST_W = 0.5


def is_ranked(project: Project) -> bool:
    return project.task in RANKED_TASKS


def thresholds_for(project: Project) -> RankingThresholds:
    from curation.verdicts.ranking_rule import RankingThresholds

    return RankingThresholds(
        votes_per_item=project.votes_per_item,
        agree_share=project.agree_share,
        least_w=project.ranking_least_w if project.task == Task.RANKING else None,
        escalation_votes=project.escalation_votes,
    )


@dataclass
class RankedVotes:
    """One item's current best-of-N picks or rankings, in the rule's terms."""

    task: str
    n_slots: int = 0
    votes: list = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.votes)


@dataclass(frozen=True)
class RankedOutcome:
    """ranking_rule.RankingOutcome in the verdict's terms (rule.Outcome's
    fields, plus the final ranks): final_choice is the best slot, "1".."8"."""

    status: str
    final_choice: str = ""
    final_ranks: tuple[int, ...] = ()
    provenance: str = ""
    reason: str = ""
    escalate_by: int = 0
    kind: str = ""


def _gold_slot(gold: str) -> int | None:
    return int(gold) - 1 if gold.isdigit() else None


def decide(
    votes: RankedVotes,
    *,
    votes_needed: int,
    escalations: int,
    thresholds: RankingThresholds,
    gold: str = "",
    eligible: int | None = None,
) -> RankedOutcome:
    """rule.decide's signature for a ranked item: ranking_rule.decide_pick or
    decide_ranking, by the task of the votes."""
    from curation.verdicts import ranking_rule

    common = {
        "votes_needed": votes_needed,
        "escalations": escalations,
        "thresholds": thresholds,
        "gold": _gold_slot(gold),
        "eligible": eligible,
    }
    if len(votes) < votes_needed:
        return RankedOutcome(NEEDS_VOTES)
    if votes.task == Task.BEST_OF_N:
        out = ranking_rule.decide_pick(votes.votes, n_slots=votes.n_slots, **common)
    else:
        out = ranking_rule.decide_ranking(votes.votes, **common)
    return RankedOutcome(
        status=out.status,
        final_choice="" if out.final_slot is None else str(out.final_slot + 1),
        final_ranks=tuple(out.final_ranks),
        provenance=out.provenance,
        reason=out.reason,
        escalate_by=out.escalate_by,
        kind=out.kind,
    )


def rule_votes(item_ids, task: str) -> dict[int, RankedVotes]:
    """The current judgements of `item_ids` of the project's `task`, per
    item (two queries: the judgements, the rankings' slot rows)."""
    from curation.verdicts.ranking_rule import PickVote, RankingVote

    rows = list(
        Judgement.objects.filter(assignment__item_id__in=item_ids, is_current=True, task=task)
        .order_by("pk")
        .values_list(
            "pk", "assignment__item_id", "choice", "flagged_problem", "assignment__display_order"
        )
    )
    ranks: dict[int, dict[int, int]] = defaultdict(dict)
    if task == Task.RANKING and rows:
        slots = JudgementSlot.objects.filter(
            judgement_id__in=[r[0] for r in rows], rank__isnull=False
        ).values_list("judgement_id", "slot", "rank")
        for judgement_id, slot, rank in slots:
            ranks[judgement_id][slot] = rank
    out: dict[int, RankedVotes] = {}
    for pk, item_id, choice, flagged, order in rows:
        entry = out.setdefault(item_id, RankedVotes(task, len(order)))
        if task == Task.BEST_OF_N:
            slot = None if choice == "none" else int(choice) - 1
            entry.votes.append(PickVote(slot, flagged))
        else:
            given = ranks[pk]
            entry.votes.append(
                RankingVote(tuple(given.get(s) for s in range(1, len(order) + 1)), flagged)
            )
    return out


def votes_of(item_ids, project: Project) -> dict[int, RankedVotes]:
    return rule_votes(item_ids, project.task)


def empty_votes(project: Project) -> RankedVotes:
    return RankedVotes(project.task)


def load_final_ranks(verdicts) -> None:
    """Set `ranked_final` (the stored final ranks, per slot, () if none) on
    each verdict: what the audit snapshot compares (one query)."""
    ids = [v.pk for v in verdicts if v.pk is not None]
    stored: dict[int, list[tuple[int, int]]] = defaultdict(list)
    if ids:
        for verdict_id, slot, rank in VerdictRank.objects.filter(verdict_id__in=ids).values_list(
            "verdict_id", "slot", "rank"
        ):
            stored[verdict_id].append((slot, rank))
    for v in verdicts:
        v.ranked_final = tuple(rank for _, rank in sorted(stored.get(v.pk, [])))


def write_final_ranks(verdicts: list[Verdict]) -> None:
    """Store each verdict's `ranked_final` as its VerdictRank rows (replacing
    what was there)."""
    if not verdicts:
        return
    VerdictRank.objects.filter(verdict__in=[v.pk for v in verdicts]).delete()
    VerdictRank.objects.bulk_create(
        VerdictRank(verdict_id=v.pk, slot=slot, rank=rank)
        for v in verdicts
        for slot, rank in enumerate(v.ranked_final, start=1)
    )


def current_voters(item_id: int, task: str | None, *, user=None):
    """The item's current judgements (of `task`; any with None) in the order
    rule_votes reads them; `user`: only that annotator's, any revision."""
    if user is not None:
        return Judgement.objects.filter(assignment__item_id=item_id, assignment__annotator=user)
    return Judgement.objects.filter(
        assignment__item_id=item_id, is_current=True, task=task
    ).order_by("pk")
