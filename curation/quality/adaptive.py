"""Adaptive votes' refit (issue 36, item 5): the posterior of every item of
a project in adaptive mode, from its current human votes and the judges,
and the rule of annotate.loop.adaptive applied to it: each item's certainty
and whether it is open go to ItemCertainty (the claim reads it), and its
votes_needed to what the rule asks (one more vote for an open item, the
votes it has for a settled one). Runs in a Celery task after every
REFIT_EVERY votes (never per request), or sooner once every vote the last
refit offered was given.

Here, in curation, because the judges' labels are curation's (leaderboard
entries' per-item predictions) and a changed votes_needed moves the item's
verdict (reevaluate_items); annotate only reads the result.
"""

from __future__ import annotations

from collections import defaultdict

from django.db import transaction
from django.db.models import Count, F, Max, Min, Q, Sum, Value
from django.db.models.functions import Greatest
from django.utils import timezone

from annotate.loop import adaptive
from annotate.models import (
    AdaptiveFit,
    Item,
    ItemCertainty,
    ItemPurpose,
    Judgement,
    Project,
    Task,
    VoteMode,
)
from curation.models import ItemPrediction, JudgeRunStatus, JudgeVote

# Votes between two refits (module docstring). A refit of 100,000 items
# takes seconds; at most one is queued per project at a time.
REFIT_EVERY = 20
# Items per write transaction of a refit (refit).
WRITE_BATCH = 2000


def judge_labels(project: Project) -> dict[int, list[tuple[str, str]]]:
    """Item -> [(judge, "1" | "2")]: each leaderboard entry of the project's
    releases that judged the item, its side being where its P(response 1
    better) leans (an even 0.5 says nothing and is left out)."""
    out: dict[int, list[tuple[str, str]]] = defaultdict(list)
    rows = ItemPrediction.objects.filter(
        evaluation__release__project=project, p1__isnull=False
    ).values_list("item_id", "evaluation_id", "p1")
    for item_id, evaluation_id, p1 in rows.iterator(chunk_size=10_000):
        if p1 != 0.5:
            out[item_id].append((f"judge{evaluation_id}", "1" if p1 > 0.5 else "2"))
    # The project's complete judge runs (issue 36 item 3): a run labels an
    # item when its answers in both orders pick the same response (as the
    # label-error audit takes them); one that flips with the order says nothing.
    picks = (
        JudgeVote.objects.filter(
            run__project=project, run__status=JudgeRunStatus.COMPLETE, choice__in=("1", "2")
        )
        .order_by()
        .values("item_id", "run_id")
        .annotate(low=Min("choice"), high=Max("choice"), orders=Count("pk"))
        .values_list("item_id", "run_id", "low", "high", "orders")
    )
    for item_id, run_id, low, high, orders in picks.iterator(chunk_size=10_000):
        if orders == 2 and low == high:
            out[item_id].append((f"run{run_id}", low))
    return out


def human_votes(project: Project) -> dict[int, list[tuple[str, str]]]:
    """Item -> [(annotator, choice)] of the project's current human votes on
    its benchmark items (imported annotations are not this team's votes)."""
    out: dict[int, list[tuple[str, str]]] = defaultdict(list)
    rows = Judgement.objects.filter(
        is_current=True,
        imported=False,
        assignment__item__project=project,
        assignment__item__purpose=ItemPurpose.BENCHMARK,
    ).values_list("assignment__item_id", "assignment__annotator_id", "choice")
    for item_id, annotator_id, choice in rows.iterator(chunk_size=20_000):
        out[item_id].append((f"a{annotator_id}", choice))
    return out


class AdaptiveSettingsError(ValueError):
    """Settings the rule refuses: `errors` per field, shown to the admin."""

    def __init__(self, errors: dict[str, str]):
        super().__init__(" ".join(errors.values()))
        self.errors = errors


def validate_settings(
    project: Project, *, vote_mode: str, base_votes: int, budget: int, stop_certainty: float
) -> adaptive.Rule:
    """The rule these settings make, or AdaptiveSettingsError."""
    rule = adaptive.Rule(base_votes=base_votes, budget=budget, stop_certainty=stop_certainty)
    errors = rule.errors()
    if vote_mode not in VoteMode.values:
        errors["vote_mode"] = f"The vote mode is one of {', '.join(VoteMode.values)}."
    elif vote_mode == VoteMode.ADAPTIVE and project.task != Task.PAIRWISE:
        errors["vote_mode"] = "Adaptive votes need a pairwise project (a label 1 or 2)."
    if errors:
        raise AdaptiveSettingsError(errors)
    return rule


def set_vote_mode(
    *,
    project: Project,
    actor,
    vote_mode: str,
    base_votes: int,
    budget: int,
    stop_certainty: float,
) -> bool:
    """Change a project's vote mode and adaptive rule (audited). Switching to
    adaptive, or changing its rule, queues a refit at once; switching back to
    fixed gives every item a curator has not decided the project's votes per
    item again (never below its live assignments) and re-decides them.
    Returns whether anything changed."""
    from curation.models import AuditEvent
    from curation.verdicts.service import CURATOR_DECIDED, reevaluate_items

    validate_settings(
        project,
        vote_mode=vote_mode,
        base_votes=base_votes,
        budget=budget,
        stop_certainty=stop_certainty,
    )
    fields = ("vote_mode", "adaptive_base_votes", "adaptive_budget", "adaptive_stop_certainty")
    with transaction.atomic():
        project = Project.objects.select_for_update().get(pk=project.pk)
        before = {f: getattr(project, f) for f in fields}
        after = dict(zip(fields, (vote_mode, base_votes, budget, stop_certainty), strict=True))
        if before == after:
            return False
        for name, value in after.items():
            setattr(project, name, value)
        project.save(update_fields=list(fields))
        AuditEvent.objects.create(
            project=project, actor=actor, action="vote_mode", before=before, after=after
        )
        if project.is_adaptive:
            AdaptiveFit.objects.get_or_create(project=project)
            request_refit(project.pk)
        elif before["vote_mode"] == VoteMode.ADAPTIVE:
            ItemCertainty.objects.filter(project=project).delete()
            AdaptiveFit.objects.filter(project=project).delete()
            items = Item.objects.filter(project=project, purpose=ItemPurpose.BENCHMARK).exclude(
                verdict__status__in=CURATOR_DECIDED
            )
            items.update(
                votes_needed=Greatest(Value(project.votes_per_item), F("live_assignments"))
            )
            reevaluate_items(project=project, items=items)
    return True


def request_refit(project_id: int) -> bool:
    """Queue a refit unless one is queued already (a conditional update:
    many votes queue one task). Returns True if queued."""
    from config.celery import enqueue_on_commit
    from curation.quality.tasks import refit_adaptive_task

    if AdaptiveFit.objects.filter(project_id=project_id, queued=False).update(queued=True):
        enqueue_on_commit(refit_adaptive_task, project_id)
        return True
    return False


def count_vote(*, project_id: int) -> bool:
    """A human vote in an adaptive project (the vote's receiver): count it,
    and queue a refit once REFIT_EVERY votes came, or every vote the last
    refit offered. Two short statements on the project's one refit row."""
    fits = AdaptiveFit.objects.filter(project_id=project_id)
    if not fits.update(votes_since=F("votes_since") + 1):
        AdaptiveFit.objects.get_or_create(project_id=project_id)
    due = fits.filter(queued=False).filter(
        Q(votes_since__gte=REFIT_EVERY) | Q(votes_since__gte=F("offered"))
    )
    if due.update(queued=True):
        from config.celery import enqueue_on_commit
        from curation.quality.tasks import refit_adaptive_task

        enqueue_on_commit(refit_adaptive_task, project_id)
        return True
    return False


def refit(*, project_id: int) -> str:
    """The refit (module docstring); idempotent: a project no longer in
    adaptive mode is left alone."""
    from curation.verdicts.service import CURATOR_DECIDED, reevaluate_items

    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        return "gone"
    # Votes from now on count towards the next refit.
    AdaptiveFit.objects.filter(project=project).update(queued=False, votes_since=0)
    if not project.is_adaptive:
        return "fixed"
    rule = project.adaptive_rule
    human = human_votes(project)
    judges = judge_labels(project)
    rows = [(i, who, label) for i, votes in human.items() for who, label in votes]
    rows += [(i, who, label) for i, votes in judges.items() for who, label in votes]
    p1, method = adaptive.posterior(rows)
    items = list(
        Item.objects.filter(project=project, purpose=ItemPurpose.BENCHMARK)
        .exclude(verdict__status__in=CURATOR_DECIDED)
        .values_list("pk", "votes_needed")
    )
    steps = adaptive.plan(
        rule=rule,
        human={pk: [label for _, label in human.get(pk, ())] for pk, _ in items},
        judges={pk: [label for _, label in v] for pk, v in judges.items()},
        p1=p1,
    )
    # Written in batches, each its own short transaction: a vote waits at most
    # one batch on an item, its verdict or a progress counter the refit holds
    # (bench/refit_bench.py), never the whole refit. Meanwhile the claim reads
    # some items' new certainties and others' old ones, as between two refits.
    pks = list(steps)
    needed_of = dict(items)
    for start in range(0, len(pks), WRITE_BATCH):
        batch = pks[start : start + WRITE_BATCH]
        with transaction.atomic():
            ItemCertainty.objects.bulk_create(
                [
                    ItemCertainty(
                        item_id=pk,
                        project=project,
                        p1=p1.get(pk, 0.5),
                        certainty=adaptive.certainty(p1.get(pk, 0.5)),
                        open=steps[pk].open,
                        reason=steps[pk].reason,
                        human_votes=len(human.get(pk, ())),
                    )
                    for pk in batch
                ],
                update_conflicts=True,
                unique_fields=["item"],
                update_fields=["project", "p1", "certainty", "open", "reason", "human_votes"],
            )
            by_target: dict[int, list[int]] = defaultdict(list)
            for pk in batch:
                if steps[pk].target != needed_of[pk]:
                    by_target[steps[pk].target].append(pk)
            changed = sorted(pk for targets in by_target.values() for pk in targets)
            # The items first, in id order, as a vote locks its one item before
            # the progress counter its update moves: holding the counter, the
            # refit never waits on a vote (which would deadlock).
            list(
                Item.objects.select_for_update().filter(pk__in=changed).order_by("pk").values("pk")
            )
            for target, targets in by_target.items():
                # Never below the live assignments: a vote being given counts.
                Item.objects.filter(pk__in=targets).update(
                    votes_needed=Greatest(Value(target), F("live_assignments"))
                )
            if changed:
                reevaluate_items(project=project, items=Item.objects.filter(pk__in=changed))
    with transaction.atomic():
        # The items the refit leaves out now (decided by a curator, or no
        # longer benchmark items) keep no certainty.
        ItemCertainty.objects.filter(project=project).filter(
            Q(item__verdict__status__in=CURATOR_DECIDED) | ~Q(item__purpose=ItemPurpose.BENCHMARK)
        ).delete()
        offered = (
            Item.objects.filter(project=project)
            .needing_votes()
            .aggregate(n=Sum(F("votes_needed") - F("live_assignments")))["n"]
            or 0
        )
        counts: dict[str, int] = defaultdict(int)
        for s in steps.values():
            counts[s.reason] += 1
        AdaptiveFit.objects.update_or_create(
            project=project,
            defaults={
                "fitted_at": timezone.now(),
                "method": method,
                "counts": dict(counts),
                "judges": len({who for v in judges.values() for who, _ in v}),
                "offered": offered,
            },
        )
    return f"{len(steps)} items, {counts.get('open', 0)} open ({method})"
