"""Best-of-N and ranking items and votes for curation tests (issue 33),
written directly as the annotation pages store them: Judgement.task, the
canonical choice ("1".."8" or "none"; "" for a ranking), JudgementSlot
ranks (1 = best, ties share), the assignment's display_order."""

from __future__ import annotations

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotate.models import Item, Judgement, JudgementSlot, Task, text_part, write_item_content
from curation.models import Verdict
from curation.verdicts.service import update_verdict
from tests.factories import make_assignment, make_item, make_member, make_project


def ranked_project(task=Task.RANKING, team=7, **kwargs):
    project = make_project(task=task, **kwargs)
    project.team = [make_member(project) for _ in range(team)]
    return project


def ranked_item(project, n=4):
    item = make_item(project, domain=project.domains.get(slug="general_preference"))
    write_item_content(
        item,
        [text_part("Which answer is best?")],
        [[text_part(f"Answer {k}")] for k in range(1, n + 1)],
    )
    Verdict.objects.get_or_create(item=item, project=project)
    return item


def _assign(item, user, order):
    """A submitted assignment, counted live on its item as a claim counts it,
    its vote counted in the item's votes_ranked as the vote's statement
    counts it (`item` gets the counts back, as the vote's sender does)."""
    Item.objects.filter(pk=item.pk).update(
        live_assignments=F("live_assignments") + 1, votes_ranked=F("votes_ranked") + 1
    )
    item.refresh_from_db(fields=["votes_needed", "live_assignments", "votes_ranked"])
    return make_assignment(
        item, user, display_order=order, status="submitted", submitted_at=timezone.now()
    )


def rank_vote(item, ranks, *, user=None, order=None, flagged=False, decide=True):
    """One ranking (ranks per canonical slot), then the rule as a vote runs it."""
    project = item.project
    user = user or project.team.pop(0)
    order = order or "".join(str(s) for s in range(1, len(ranks) + 1))
    assignment = _assign(item, user, order)
    judgement = Judgement.objects.create(
        assignment=assignment, task=Task.RANKING, choice="", flagged_problem=flagged
    )
    JudgementSlot.objects.bulk_create(
        JudgementSlot(judgement=judgement, slot=slot, rank=rank)
        for slot, rank in enumerate(ranks, start=1)
    )
    if decide:
        with transaction.atomic():  # as in the vote's own transaction
            update_verdict(item=item)
    return user


def pick_vote(item, choice, *, n=4, user=None, order=None, decide=True):
    project = item.project
    user = user or project.team.pop(0)
    order = order or "".join(str(s) for s in range(1, n + 1))
    assignment = _assign(item, user, order)
    Judgement.objects.create(assignment=assignment, task=Task.BEST_OF_N, choice=choice)
    if decide:
        with transaction.atomic():  # as in the vote's own transaction
            update_verdict(item=item)
    return user
