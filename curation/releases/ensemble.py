"""A release filter's ensemble beyond evaluations (issue 36 items 3+4): the
project's complete project-level judge runs (JudgeVote rows) read with the
evaluations' predictions in canonical terms, in one statement
(`ensemble_rows`, the one reader of curation.releases.filters), their
validation and their names in the manifest, card and release page."""

from __future__ import annotations

from django.db.models import BooleanField, F, IntegerField, Max, Q, Value
from django.db.models.functions import Cast

from curation.models import ItemPrediction, JudgeRun, JudgeRunStatus, JudgeVote
from curation.releases import filter_rules
from curation.releases.service import ReleaseError


class EnsembleError(ReleaseError):
    """An ensemble field names an unknown entry: `field` says which."""

    def __init__(self, message: str, field: str):
        super().__init__(message)
        self.field = field


def ensemble_rows(spec_ids: set[int], items):
    """The one reader: every ensemble entry's per-item prediction of `items`
    as filter_rules.Prediction (item, entry, choice, swapped choice, has
    swapped), in ONE statement: the evaluations' ItemPrediction rows UNION ALL
    the project runs' JudgeVote rows grouped per (item, run), each order's
    canonical pick ("" unanswered). A run's pick in the first order it
    answered is its `choice`; when it answered both, the other is its
    `swapped_choice` (both right = "gets it right", as an evaluation)."""
    evaluations = sorted(i for i in spec_ids if i > 0)
    runs = sorted(-i for i in spec_ids if i < 0)
    parts = []
    if evaluations:
        parts.append(
            ItemPrediction.objects.filter(evaluation_id__in=evaluations)
            .filter(item_id__in=items)
            .order_by()
            .values_list("item_id", "evaluation_id", "choice", "swapped_choice", "has_swapped")
        )
    if runs:
        parts.append(
            JudgeVote.objects.filter(run_id__in=runs, item_id__in=items)
            .order_by()
            .values("item_id", "run_id")
            .annotate(
                entry=Cast(Value(0) - F("run_id"), IntegerField()),
                first=Max("choice", filter=Q(order="original")),
                second=Max("choice", filter=Q(order="swapped")),
                judged=Value(False, output_field=BooleanField()),
            )
            .values_list("item_id", "entry", "first", "second", "judged")
        )
    if not parts:
        return
    query = parts[0] if len(parts) == 1 else parts[0].union(parts[1], all=True)
    for item, entry, choice, swapped, has_swapped in query.iterator(chunk_size=20_000):
        if entry > 0:
            yield filter_rules.Prediction(item, entry, choice, swapped, has_swapped)
            continue
        answered = [c for c in (choice, swapped) if c]
        if answered:
            both = len(answered) == 2
            yield filter_rules.Prediction(
                item, entry, answered[0], answered[1] if both else "", both
            )


def check_judge_runs(*, project, run_ids, what: str, field: str) -> list[int]:
    """The project's complete project-level judge runs among `run_ids`;
    any other (unknown, another project's, a release's, not complete) is
    refused by id."""
    ids = sorted({int(i) for i in run_ids or []})
    found = set(
        JudgeRun.objects.filter(
            pk__in=ids, project=project, status=JudgeRunStatus.COMPLETE
        ).values_list("pk", flat=True)
    )
    missing = sorted(set(ids) - found)
    if missing:
        raise EnsembleError(
            f"Not a complete judge run on this project, for the {what} ensemble: "
            f"{', '.join(map(str, missing))}.",
            field,
        )
    return ids


def judge_run_entries(ids) -> list[dict]:
    """The ensemble's project judge runs as the manifest names them: run,
    name, model (a project run has no evaluation nor release)."""
    rows = JudgeRun.objects.filter(pk__in=ids).order_by("pk").values("pk", "name", "model")
    return [
        {"judge_run": r["pk"], "name": r["name"], "model": r["model"], "on": "project"}
        for r in rows
    ]


def entry_label(e: dict) -> str:
    """An ensemble entry in the card's and the page's words."""
    if e.get("on") == "project":
        return f"{e['name']} (project judge run #{e['judge_run']}, model {e['model']})"
    return f"{e['name']} (#{e['evaluation']})"
