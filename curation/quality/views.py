"""Leaderboard drill-down (an entry's items, an item's entries), the
suspected-errors queue and the label-quality refresh."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import render
from django.views.decorators.http import require_GET

from annotate.models import Item
from annotate.permissions import CURATOR_ROLES, project_for

from ..models import Evaluation, ItemPrediction

PAGE_SIZE = 50
SHOW = {"wrong": "Wrong", "right": "Right", "all": "All"}


def entry_for(project, release_id, evaluation_id) -> Evaluation:
    evaluation = (
        Evaluation.objects.select_related("release")
        .filter(pk=evaluation_id, release_id=release_id, release__project=project)
        .first()
    )
    if evaluation is None:
        raise Http404("No such evaluation")
    return evaluation


def entry_predictions(evaluation, params):
    """An entry's per-item rows filtered as `params` say (show, category, sub_bucket)."""
    rows = ItemPrediction.objects.filter(evaluation=evaluation)
    show = params.get("show") or "wrong"
    if show == "wrong":
        rows = rows.filter(correct=False)
    elif show == "right":
        rows = rows.filter(correct=True)
    if params.get("category"):
        rows = rows.filter(category=params["category"])
    if params.get("sub_bucket"):
        rows = rows.filter(sub_bucket=params["sub_bucket"])
    return rows.order_by("external_id")


def filter_options(evaluation) -> tuple[list[str], list[str]]:
    """Categories and sub-buckets from the stored report (no query)."""
    groups = evaluation.report.get("official", {}).get("groups", [])
    categories = [g["name"] for g in groups if g["level"] == "category"]
    buckets = [g["name"] for g in groups if g["level"] == "sub_bucket"]
    return categories, buckets


@require_GET
@login_required
def entry_items(request, slug, release_id, evaluation_id):
    project, role = project_for(request.user, slug, CURATOR_ROLES)
    evaluation = entry_for(project, release_id, evaluation_id)
    page = Paginator(entry_predictions(evaluation, request.GET), PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    categories, buckets = filter_options(evaluation)
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "curation/quality/entry_items.html",
        {
            "project": project,
            "role": role,
            "release": evaluation.release,
            "evaluation": evaluation,
            "page": page,
            "show": request.GET.get("show") or "wrong",
            "shows": SHOW,
            "category": request.GET.get("category", ""),
            "sub_bucket": request.GET.get("sub_bucket", ""),
            "categories": categories,
            "buckets": buckets,
            "query": query.urlencode(),
        },
    )


def item_entries(item):
    """Every entry's row for an item, across the project's releases."""
    return (
        ItemPrediction.objects.filter(item=item)
        .select_related("evaluation__release")
        .order_by("evaluation__release__created_at", "evaluation__name")
    )


@require_GET
@login_required
def item_models(request, slug, item_id):
    project, role = project_for(request.user, slug, CURATOR_ROLES)
    item = Item.objects.filter(project=project, pk=item_id).select_related("domain").first()
    if item is None:
        raise Http404("No such item")
    return render(
        request,
        "curation/quality/item_models.html",
        {"project": project, "role": role, "item": item, "rows": list(item_entries(item))},
    )
