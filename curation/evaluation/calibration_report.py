"""The calibration report of a project's judge runs (issue 36 item 3): the
database side of curation.evaluation.calibration, for the page and the API."""

from __future__ import annotations

from collections import defaultdict

from django.db.models import Exists, OuterRef

from annotate.models import Item, Judgement, Project, Task
from curation.evaluation import calibration
from curation.models import JudgeRun, JudgeVote


def human_vote_rows(project: Project):
    """The votes the report reads (human_votes), as a QuerySet of Judgements."""
    return Judgement.objects.filter(
        is_current=True,
        imported=False,
        task=Task.PAIRWISE,
        assignment__item__project=project,
        assignment__item__purpose="benchmark",
    )


def human_votes(project: Project) -> dict[int, list[tuple[int, str]]]:
    """Item -> [(annotator, choice)]: the current, non-imported human votes
    of the project's benchmark items (qualification and check items never
    count; imported published labels are not this project's annotators)."""
    votes: dict[int, list[tuple[int, str]]] = defaultdict(list)
    rows = (
        human_vote_rows(project)
        .order_by("assignment__item_id", "assignment__annotator_id")
        .values_list("assignment__item_id", "assignment__annotator_id", "choice")
    )
    for item, annotator, choice in rows.iterator(chunk_size=20_000):
        votes[item].append((annotator, choice))
    return votes


def judge_votes(run: JudgeRun) -> dict[int, dict[str, tuple[str | None, float | None]]]:
    out: dict[int, dict[str, tuple[str | None, float | None]]] = defaultdict(dict)
    rows = JudgeVote.objects.filter(run=run).values_list("item_id", "order", "choice", "confidence")
    for item, order, choice, confidence in rows.iterator(chunk_size=20_000):
        out[item][order] = (choice or None, confidence)
    return out


def project_runs(project: Project):
    return JudgeRun.objects.filter(project=project).select_related("created_by")


def calibration_for(project: Project) -> list[dict]:
    """Per project judge run that has votes: its figures over all domains
    (domain None) and per domain, as plain dicts."""
    voted = JudgeVote.objects.filter(run=OuterRef("pk"))
    runs = list(project_runs(project).filter(Exists(voted)).order_by("name", "pk"))
    if not runs:
        return []
    humans = human_votes(project)
    domain_of = dict(
        Item.objects.benchmark()
        .filter(project=project)
        .values_list("pk", "domain__slug")
        .iterator(chunk_size=20_000)
    )
    out = []
    for run in runs:
        rows = calibration.report(humans, judge_votes(run), domain_of)
        out.append(
            {
                "run": run,
                "rows": [{"domain": domain, **figures.summary()} for domain, figures in rows],
            }
        )
    return out
