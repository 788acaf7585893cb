"""The contested rule applied to the database.

A verdict follows its item's votes (update_verdict, in the vote's
transaction); a change of the rule's thresholds re-decides what it touches;
items waiting for votes nobody eligible can give are rechecked and, where
still short, reported as stuck (never silently waited for). Curators'
decisions are in curation.verdicts.decisions.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from functools import partial
from types import ModuleType

from django.db import connection, transaction
from django.db.models import F

from annotate.eligibility import eligible_counts, short_of_annotators
from annotate.models import Item, Judgement, Project, Task
from curation.models import (
    AuditEvent,
    ContestKind,
    Verdict,
    VerdictStatus,
)
from curation.verdicts import orm, postgres, ranked
from curation.verdicts.orm import VOTE_FIELDS
from curation.verdicts.rule import NO_ONE_LEFT, RuleVote, Thresholds, decide

# Verdicts a curator decided; new votes never overturn them.
CURATOR_DECIDED = (VerdictStatus.RESOLVED, VerdictStatus.EXCLUDED)


def _statements() -> ModuleType:
    """The vote's verdict statements: raw SQL on PostgreSQL
    (curation.verdicts.postgres), the plain ORM reference elsewhere
    (curation.verdicts.orm); tests/curation/verdicts/test_statement_paths.py
    holds them equal."""
    return postgres if connection.vendor == "postgresql" else orm


def thresholds_for(project: Project) -> Thresholds:
    return Thresholds(
        votes_per_item=project.votes_per_item,
        agree_share=project.agree_share,
        # Adaptive votes replace the escalation: the refit decides which
        # items get more votes (curation.quality.adaptive).
        escalation_votes=0 if project.is_adaptive else project.escalation_votes,
        consensus_strength=project.consensus_strength if project.is_graded else None,
    )


def verdict_snapshot(verdict: Verdict) -> dict:
    snapshot = {
        "status": verdict.status,
        "final_choice": verdict.final_choice,
        "provenance": verdict.provenance,
        "escalations": verdict.escalations,
        "escalated_by": verdict.escalated_by,
        "reason": verdict.reason,
        "contest_kind": verdict.contest_kind,
        "exclusion_category": verdict.exclusion_category,
        "decided_by": verdict.decided_by_id,
    }
    # A ranked item's verdict (curation.verdicts.ranked) also has its final ranks.
    if getattr(verdict, "ranked_final", None) is not None:
        snapshot["final_ranks"] = list(verdict.ranked_final)
    return snapshot


def _rule_votes(item_ids) -> dict[int, list[RuleVote]]:
    votes: dict[int, list[RuleVote]] = defaultdict(list)
    rows = (
        Judgement.objects.with_pair_answers()
        .filter(assignment__item_id__in=item_ids, is_current=True)
        .values_list(
            "assignment__item_id", "choice", "correct_1", "correct_2", "flagged_problem", "strength"
        )
    )
    for item_id, choice, c1, c2, flagged, strength in rows:
        votes[item_id].append(RuleVote(choice, c1, c2, flagged, strength))
    return votes


def _apply(
    verdict: Verdict,
    item: Item,
    votes: list[RuleVote],
    thresholds: Thresholds,
    *,
    eligible: Callable[[], int],
    escalation_cut: bool = False,
    rule: Callable = decide,
    audit: list | None = None,
) -> bool:
    """Move `verdict` to where the rule puts it. Returns True if it changed
    (the caller saves it). An escalation raises the item's votes_needed by as
    many votes as `eligible()` annotators can still give (asked only then).
    `escalation_cut`: the escalation's votes were taken back because nobody
    is left to give them (the reason says so). `rule`: rule.decide, or
    ranked.decide for a best-of-N or ranking item (votes: ranked.RankedVotes,
    thresholds: ranking_rule.RankingThresholds). `audit`: a list to add the
    audit event to (the caller writes them in bulk) instead of writing it."""
    before = verdict_snapshot(verdict)
    decide_with = partial(
        rule,
        votes,
        votes_needed=item.votes_needed,
        escalations=verdict.escalations,
        thresholds=thresholds,
        gold=item.gold_choice,
    )
    outcome = decide_with()
    if outcome.escalate_by:
        outcome = decide_with(eligible=eligible())
    if outcome.escalate_by:
        Item.objects.filter(pk=item.pk).update(votes_needed=F("votes_needed") + outcome.escalate_by)
        item.votes_needed += outcome.escalate_by
        verdict.escalations += 1
        verdict.escalated_by = outcome.escalate_by
    reason = outcome.reason
    if escalation_cut and outcome.kind == ContestKind.SPLIT:
        reason = f"split {reason.rsplit(': ', 1)[-1]}, {NO_ONE_LEFT}"
    verdict.status = outcome.status
    verdict.final_choice = outcome.final_choice
    verdict.provenance = outcome.provenance
    verdict.reason = reason
    verdict.contest_kind = outcome.kind
    if rule is ranked.decide:
        verdict.ranked_final = outcome.final_ranks
    after = verdict_snapshot(verdict)
    if after == before:
        return False
    verdict.version += 1
    if (
        before["status"] != after["status"]
        or before["final_choice"] != after["final_choice"]
        or before.get("final_ranks") != after.get("final_ranks")
    ):
        event = AuditEvent(
            project_id=item.project_id,
            item_id=item.pk,
            actor=None,
            action="rule",
            before=before,
            after=after,
            reason=reason,
        )
        if audit is None:
            event.save()
        else:
            audit.append(event)
    return True


def update_verdict(*, item: Item) -> Verdict:
    """Re-apply the contested rule to one item after a vote. Runs inside the
    vote's transaction (called from the judgement_recorded receiver)."""
    # Curation locks its own row: the verdict row lock serialises concurrent
    # votes on the same item, so each sees the other's judgement and the
    # escalation happens once. Taken after the vote's own locks (its
    # assignment, then its item), the order a curator's decision takes them
    # too (annotate.loop.leases.stop_collecting_votes), so the two never
    # deadlock.
    verdict = _statements().locked_verdict(item.pk)
    if verdict is None:
        verdict = Verdict.objects.create(item_id=item.pk, project_id=item.project_id)
    if verdict.status in CURATOR_DECIDED:
        return verdict
    if ranked.is_ranked(item.project):
        return _update_ranked_verdict(item, verdict)
    # The sender's item carries its tallies with this vote counted. Below the
    # votes it needs, the rule looks at nothing but that count (needs_votes),
    # so the votes themselves need not be read.
    votes = [] if item.n_votes < item.votes_needed else _statements().item_rule_votes(item.pk)

    def eligible() -> int:
        return eligible_counts(project=item.project, item_ids=[item.pk])[item.pk]

    if _apply(verdict, item, votes, thresholds_for(item.project), eligible=eligible):
        _statements().save_after_vote(verdict)
    return verdict


def _update_ranked_verdict(item: Item, verdict: Verdict) -> Verdict:
    """update_verdict for a best-of-N or ranking item: the same rule pass
    through ranking_rule, in plain ORM (curation.verdicts.ranked)."""
    project = item.project
    if verdict.status == VerdictStatus.AGREED:
        ranked.load_final_ranks([verdict])
    else:
        # Final ranks are stored only while a verdict is agreed or resolved
        # (resolved never gets here): nothing to read, as for a pair.
        verdict.ranked_final = ()
    before_ranks = verdict.ranked_final
    # As a pair's: the sender's item carries its count with this vote
    # (votes_ranked), and below the votes it needs the rule looks at nothing
    # but that count (needs_votes), so the votes need not be read.
    votes = (
        ranked.empty_votes(project)
        if item.n_votes < item.votes_needed
        else ranked.votes_of([item.pk], project).get(item.pk, ranked.empty_votes(project))
    )

    def eligible() -> int:
        return eligible_counts(project=project, item_ids=[item.pk])[item.pk]

    if _apply(
        verdict, item, votes, ranked.thresholds_for(project), eligible=eligible, rule=ranked.decide
    ):
        orm.save_after_vote(verdict)
        if verdict.ranked_final != before_ranks:
            ranked.write_final_ranks([verdict])
    return verdict


def _rule_of(project: Project):
    """(votes of item ids, thresholds, rule, no votes) for the project's task."""
    if ranked.is_ranked(project):
        return (
            partial(ranked.votes_of, project=project),
            ranked.thresholds_for(project),
            ranked.decide,
            ranked.empty_votes(project),
        )
    return _rule_votes, thresholds_for(project), decide, []


def update_thresholds(
    *,
    project: Project,
    actor,
    votes_per_item: int,
    agree_share: float,
    escalation_votes: int,
    consensus_strength: float | type[Ellipsis] | None = ...,
    ranking_least_w: float | None = None,
) -> Counter:
    """Change a project's contested-rule thresholds and re-evaluate every item
    a curator has not decided, escalations already granted included.

    - The base count moves every open item's votes_needed by the difference.
    - A lower escalation takes votes back from escalated items (to 0: they
      are decided at once on the votes they have); a higher one asks more of
      items still waiting for their escalation votes (as far as eligible
      annotators can give them). Items the rule has already settled after
      their escalation are re-decided on their votes, not escalated again.
    - Never below an item's live assignments: a vote someone is giving right
      now still counts when it comes.
    - `consensus_strength` (graded projects only; None turns it off, left
      out it stays as it is): Multimodal RewardBench 2's consensus filter (rule.decide).
    - `ranking_least_w` (rankings' Kendall's W, 0..1; left out it stays as it is).

    Returns how many verdicts moved into each status (only verdicts whose
    status changed)."""
    with transaction.atomic():
        project = Project.objects.select_for_update().get(pk=project.pk)
        if consensus_strength is ...:
            consensus_strength = project.consensus_strength
        if consensus_strength is not None and not project.is_graded:
            raise ValueError("The consensus strength needs a graded preference scale.")
        if ranking_least_w is None:
            ranking_least_w = project.ranking_least_w
        if not 0 <= ranking_least_w <= 1:
            raise ValueError("Kendall's W runs from 0 to 1.")
        before = {
            "votes_per_item": project.votes_per_item,
            "agree_share": project.agree_share,
            "escalation_votes": project.escalation_votes,
            "consensus_strength": project.consensus_strength,
        }
        after = {
            "votes_per_item": votes_per_item,
            "agree_share": agree_share,
            "escalation_votes": escalation_votes,
            "consensus_strength": consensus_strength,
        }
        if project.task == Task.RANKING or ranking_least_w != project.ranking_least_w:
            # W is the ranking rule's: other projects' audit (and the
            # decision rules their releases state) stay as they were.
            before["ranking_least_w"] = project.ranking_least_w
            after["ranking_least_w"] = ranking_least_w
        if before == after:
            return Counter()
        delta = votes_per_item - project.votes_per_item
        project.votes_per_item = votes_per_item
        project.agree_share = agree_share
        project.escalation_votes = escalation_votes
        project.consensus_strength = consensus_strength
        project.ranking_least_w = ranking_least_w
        project.save(update_fields=[*after])
        AuditEvent.objects.create(
            project=project, actor=actor, action="thresholds", before=before, after=after
        )
        open_verdicts = Verdict.objects.filter(project=project).exclude(status__in=CURATOR_DECIDED)
        if escalation_votes != before["escalation_votes"]:
            regranted = open_verdicts.filter(escalations__gt=0)
            if escalation_votes > before["escalation_votes"]:
                regranted = regranted.filter(status=VerdictStatus.NEEDS_VOTES)
            else:
                regranted = regranted.filter(escalated_by__gt=escalation_votes)
            _regrant_escalations(
                project=project, verdicts=regranted, escalation_votes=escalation_votes
            )
        if delta:
            # Benchmark items only: qualification and check items need no votes.
            items = (
                Item.objects.benchmark()
                .filter(project=project)
                .exclude(verdict__status__in=CURATOR_DECIDED)
            )
            for item in items.only("pk", "votes_needed", "live_assignments").order_by("pk"):
                needed = max(item.votes_needed + delta, item.live_assignments, 1)
                if needed != item.votes_needed:
                    Item.objects.filter(pk=item.pk).update(votes_needed=needed)
        open_items = Item.objects.filter(project=project).exclude(
            verdict__status__in=CURATOR_DECIDED
        )
        moved = reevaluate_items(project=project, items=open_items)
        moved.update(recheck_waiting_items(project=project))
        return moved


def _regrant_escalations(*, project: Project, verdicts, escalation_votes: int) -> None:
    """Set escalated items' extra votes to the project's new escalation_votes
    (rechecked against the eligible annotators afterwards)."""
    for verdict in verdicts.select_related("item").order_by("item_id"):
        item = verdict.item
        needed = max(
            item.votes_needed - verdict.escalated_by + escalation_votes, item.live_assignments
        )
        granted = verdict.escalated_by + (needed - item.votes_needed)
        Item.objects.filter(pk=item.pk).update(votes_needed=needed)
        Verdict.objects.filter(pk=verdict.pk).update(escalated_by=max(granted, 0))


def reevaluate_items(*, project: Project, items) -> Counter:
    """Apply the rule to many items at once (a constant number of queries per
    batch, plus one per item that escalates). Returns how many verdicts moved
    into each status."""
    votes_of, thresholds, rule, no_votes = _rule_of(project)
    moved: Counter = Counter()
    # Only benchmark items have verdicts: qualification and check items
    # measure annotators (issue 36).
    item_ids = list(items.benchmark().order_by("pk").values_list("pk", flat=True))
    for start in range(0, len(item_ids), 2000):
        ids = item_ids[start : start + 2000]
        # Items before verdicts: the order a vote locks them in.
        batch = list(
            Item.objects.select_for_update()
            .filter(pk__in=ids)
            .only("pk", "project_id", "votes_needed", "gold_choice")
            .order_by("pk")
        )
        verdicts = {
            v.item_id: v for v in Verdict.objects.select_for_update().filter(item_id__in=ids)
        }
        votes = votes_of(ids)
        if rule is ranked.decide:
            ranked.load_final_ranks(verdicts.values())
        eligible = _EligibleCounts(project, ids)
        dirty, reranked, events = [], [], []
        for item in batch:
            verdict = verdicts.get(item.pk)
            if verdict is None:
                verdict = Verdict(item_id=item.pk, project=project)
                verdict.ranked_final = () if rule is ranked.decide else None
            if verdict.status in CURATOR_DECIDED:
                continue
            status = verdict.status
            stored_ranks = getattr(verdict, "ranked_final", None)
            changed = _apply(
                verdict,
                item,
                votes.get(item.pk, no_votes),
                thresholds,
                eligible=partial(eligible.of, item.pk),
                rule=rule,
                audit=events,
            )
            if rule is ranked.decide and verdict.ranked_final != stored_ranks:
                reranked.append(verdict)
            if changed or verdict.pk is None:
                dirty.append(verdict)
            if verdict.status != status:
                moved[verdict.status] += 1
        new = [v for v in dirty if v.pk is None]
        Verdict.objects.bulk_create(new)
        _update_verdicts([v for v in dirty if v.pk is not None])
        ranked.write_final_ranks(reranked)
        AuditEvent.objects.bulk_create(events, batch_size=1000)
    return moved


def _update_verdicts(verdicts: list[Verdict]) -> None:
    """Save the rule's fields (VOTE_FIELDS but updated_at) of these verdicts:
    one UPDATE per set of values they share (a re-evaluation moves many
    verdicts to the same place), bulk_update for the rest. Django's
    bulk_update builds a CASE per field and object, which took minutes for
    20,000 verdicts (bench/refit_bench.py)."""
    fields = list(VOTE_FIELDS[:-1])
    groups: dict[tuple, list[int]] = defaultdict(list)
    for verdict in verdicts:
        groups[tuple(getattr(verdict, f) for f in fields)].append(verdict.pk)
    alone = []
    for values, pks in groups.items():
        if len(pks) == 1:
            alone.append(pks[0])
            continue
        Verdict.objects.filter(pk__in=pks).update(**dict(zip(fields, values, strict=True)))
    if alone:
        chosen = set(alone)
        Verdict.objects.bulk_update([v for v in verdicts if v.pk in chosen], fields)


class _EligibleCounts:
    """eligible_counts() of a batch of items, asked for the first time one of
    them escalates (most re-evaluations escalate none)."""

    def __init__(self, project: Project, item_ids: list[int]):
        self.project, self.item_ids = project, item_ids
        self.counts: dict[int, int] | None = None

    def of(self, item_id: int) -> int:
        if self.counts is None:
            self.counts = eligible_counts(project=self.project, item_ids=self.item_ids)
        return self.counts[item_id]


def recheck_waiting_items(*, project: Project, item_ids: list[int] | None = None) -> Counter:
    """Items that wait for more votes than eligible annotators can still give
    (someone left, was deactivated, skipped, or let a lease run out): take
    back the escalation votes that cannot come and decide them on the votes
    they have; a split with nobody left to break it goes to the curators.
    What remains short (the base count, a curator's request) is reported as
    stuck (stuck_items), never silently waited for. Returns how many verdicts
    moved into each status."""
    with transaction.atomic():
        short = short_of_annotators(project)
        if item_ids is not None:
            short = short.filter(pk__in=item_ids)
        ids = list(short.values_list("pk", flat=True))
        if not ids:
            return Counter()
        # Locked in a vote's order (item, then verdict), then counted again:
        # a claim or vote that committed meanwhile is seen.
        items = {
            i.pk: i
            for i in Item.objects.select_for_update()
            .filter(pk__in=ids)
            .only("pk", "project_id", "votes_needed", "live_assignments", "gold_choice")
            .order_by("pk")
        }
        eligible = eligible_counts(project=project, item_ids=ids)
        verdicts = (
            Verdict.objects.select_for_update()
            .filter(item_id__in=ids, escalated_by__gt=0)
            .exclude(status__in=CURATOR_DECIDED)
        )
        cut = []
        for verdict in verdicts:
            item = items[verdict.item_id]
            shortfall = item.votes_needed - item.live_assignments - eligible[item.pk]
            take = min(verdict.escalated_by, shortfall)
            if take <= 0:
                continue
            item.votes_needed -= take
            Item.objects.filter(pk=item.pk).update(votes_needed=item.votes_needed)
            verdict.escalated_by -= take
            cut.append((verdict, item))
        if not cut:
            return Counter()
        votes_of, thresholds, rule, no_votes = _rule_of(project)
        votes = votes_of([item.pk for _, item in cut])
        if rule is ranked.decide:
            ranked.load_final_ranks([verdict for verdict, _ in cut])
        moved: Counter = Counter()
        for verdict, item in cut:
            status = verdict.status
            stored_ranks = getattr(verdict, "ranked_final", None)
            _apply(
                verdict,
                item,
                votes.get(item.pk, no_votes),
                thresholds,
                eligible=partial(eligible.__getitem__, item.pk),
                escalation_cut=True,
                rule=rule,
            )
            verdict.save()
            if rule is ranked.decide and verdict.ranked_final != stored_ranks:
                ranked.write_final_ranks([verdict])
            if verdict.status != status:
                moved[verdict.status] += 1
        return moved


def stuck_items(project: Project):
    """Items still collecting votes that no eligible annotator can give (the
    base count above the team, or a curator asking for more votes than
    people are left), each annotated with `eligible`; a reason per item from
    stuck_reason(). One query."""
    return short_of_annotators(project)


def stuck_reason(item) -> str:
    missing = item.votes_needed - item.n_votes
    if item.eligible <= 0:
        who = "no annotator left who has not seen it"
    else:
        who = f"only {item.eligible} eligible annotator{'s' if item.eligible != 1 else ''} left"
    return f"needs {missing} more vote{'s' if missing != 1 else ''}; {who}"
