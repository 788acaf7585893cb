"""Leaderboard drill-down (an entry's items, an item's entries), the
suspected-errors queue and the label-quality refresh."""

from __future__ import annotations

from types import SimpleNamespace

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import F
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from annotate.models import Item, Judgement
from annotate.projects import CURATOR_ROLES, member_of, project_for
from common.body_guard import guard_body
from curation.benchmarks import registry
from curation.benchmarks.base import EvaluationError
from curation.models import (
    Evaluation,
    ItemPrediction,
    ItemQuality,
    LabelQualityRun,
    LabelQualityStatus,
    Provenance,
    VerdictStatus,
)
from curation.quality.forms import RefreshForm, ReviewForm
from curation.quality.libraries import libraries_available
from curation.quality.service import (
    INSTALL_HINT,
    LabelQualityError,
    project_entries,
    project_judges,
    request_label_quality,
)
from curation.verdicts.decisions import confirm_label, overturn_label
from curation.verdicts.views import apply_decision

PAGE_SIZE = 50
SHOW = {"wrong": "Wrong", "right": "Right", "all": "All"}
# The queue's views: every suspect by CROWDLAB's probability, or the items
# every vote agrees on while the models lean the other way (issue 30).
VIEWS = {"all": "All suspects", "unanimous": "Unanimous, but the models disagree"}


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
    """The two filters of the entry's per-item rows (categories and
    sub-buckets, or what its benchmark calls them), from the stored report
    (no query): its benchmark says (Benchmark.item_filters)."""
    try:
        benchmark = registry.get(evaluation.scoring)
    except EvaluationError:  # a benchmark no longer installed
        return [], []
    if not hasattr(benchmark, "item_filters"):
        return [], []
    return benchmark.item_filters(evaluation.report)


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


# --- Suspected label errors -------------------------------------------------------------


def suspected_errors(project, params=None):
    """Agreed and resolved items ranked by CROWDLAB's probability of their
    current label, lowest first; an item leaves the queue once a curator
    confirmed it (provenance reviewed) or changed its side. The view
    "unanimous" keeps the items whose votes all agree while the models give
    the label less than even odds, the models' confidence against it first."""
    params = params or {}
    rows = _queue_rows(project)
    if params.get("view") == "unanimous":
        rows = rows.filter(unanimous=True, models_against__gt=0.5).order_by(
            "-models_against", "item_id"
        )
    if params.get("domain"):
        rows = rows.filter(item__domain__slug=params["domain"])
    return rows


def _queue_rows(project):
    return (
        ItemQuality.objects.filter(
            project=project,
            label_quality__isnull=False,
            item__verdict__status__in=(VerdictStatus.AGREED, VerdictStatus.RESOLVED),
            item__verdict__final_choice=F("label"),
        )
        .exclude(item__verdict__provenance=Provenance.REVIEWED)
        .select_related("item__domain", "item__verdict")
        .order_by("label_quality", "item_id")
    )


def next_suspect(project, user, *, after_item_id=None) -> int | None:
    """The first item of the queue this curator may decide (not one they
    voted on, unless the project allows it), other than `after_item_id`."""
    rows = suspected_errors(project)
    if after_item_id is not None:
        rows = rows.exclude(item_id=after_item_id)
    if not project.allow_self_adjudication:
        voted = Judgement.objects.filter(assignment__annotator=user).values("assignment__item_id")
        rows = rows.exclude(item_id__in=voted)
    return rows.values_list("item_id", flat=True).first()


def page_without_count(queryset, number) -> SimpleNamespace:
    """One page and whether another follows, without counting the whole queue:
    a COUNT over 100,000 joined rows took most of the page's time, and a queue
    ranked by suspicion is read from the top."""
    try:
        number = max(1, int(number or 1))
    except ValueError:
        number = 1
    start = (number - 1) * PAGE_SIZE
    rows = list(queryset[start : start + PAGE_SIZE + 1])
    return SimpleNamespace(
        object_list=rows[:PAGE_SIZE],
        number=number,
        start_index=start + 1,
        has_next=len(rows) > PAGE_SIZE,
        has_previous=number > 1,
        next_page_number=number + 1,
        previous_page_number=number - 1,
    )


def _run_context(project):
    run = LabelQualityRun.objects.filter(project=project).first()
    return {
        "run": run,
        "available": libraries_available(),
        "install_hint": INSTALL_HINT,
    }


@require_GET
@login_required
def label_quality_queue(request, slug):
    project, role = project_for(request.user, slug, CURATOR_ROLES)
    page = page_without_count(suspected_errors(project, request.GET), request.GET.get("page"))
    entries = project_entries(project)
    context = _run_context(project)
    selected = context["run"].evaluations if context["run"] else None
    form = RefreshForm(
        entries=entries,
        judges=project_judges(project),
        initial={
            "entries": selected if selected is not None else [e.pk for e in entries],
            "judges": context["run"].judge_runs if context["run"] else [],
        },
    )
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "curation/quality/queue.html",
        {
            **context,
            "project": project,
            "role": role,
            "page": page,
            "form": form,
            "domains": project.domains.order_by("position", "slug"),
            "domain": request.GET.get("domain", ""),
            "view": request.GET.get("view") if request.GET.get("view") in VIEWS else "all",
            "views": VIEWS,
            "graded": project.is_graded,
            "query": query.urlencode(),
            "first": page.object_list[0].item_id if page.object_list else None,
        },
    )


@guard_body(member_of(CURATOR_ROLES))
@require_POST
@login_required
def label_quality_refresh(request, slug):
    project, _role = project_for(request.user, slug, CURATOR_ROLES)
    form = RefreshForm(
        request.POST, entries=project_entries(project), judges=project_judges(project)
    )
    if not form.is_valid():
        for errors in form.errors.values():
            for e in errors:
                messages.error(request, e)
        return redirect("label_quality", slug=project.slug)
    try:
        queued = request_label_quality(
            project=project,
            evaluations=[e.pk for e in form.cleaned_data["entries"]],
            judge_runs=[r.pk for r in form.cleaned_data["judges"]],
            user=request.user,
        )
    except LabelQualityError as exc:
        messages.error(request, str(exc))
    else:
        if queued:
            messages.success(request, "Label quality is being computed in the background.")
        else:
            messages.info(request, "A computation is already queued.")
    return redirect("label_quality", slug=project.slug)


def _review_context(request, project, role, item_id):
    quality = (
        ItemQuality.objects.filter(project=project, item_id=item_id)
        .select_related("item__domain", "item__image", "item__verdict")
        .first()
    )
    if quality is None:
        raise Http404("No label-quality result for this item")
    item = quality.item
    verdict = item.verdict
    voted = Judgement.objects.filter(assignment__item=item, assignment__annotator=request.user)
    conflict = voted.exists() and not project.allow_self_adjudication
    return {
        "project": project,
        "role": role,
        "quality": quality,
        "item": item,
        "verdict": verdict,
        "other": "2" if verdict.final_choice == "1" else "1",
        "entries": list(item_entries(item)),
        "conflict": conflict,
        "next_item_id": next_suspect(project, request.user, after_item_id=item.pk),
        "in_queue": verdict.status in (VerdictStatus.AGREED, VerdictStatus.RESOLVED)
        and verdict.final_choice == quality.label
        and verdict.provenance != Provenance.REVIEWED,
    }


@require_GET
@login_required
def label_quality_review(request, slug, item_id):
    project, role = project_for(request.user, slug, CURATOR_ROLES)
    context = _review_context(request, project, role, item_id)
    return render(request, "curation/quality/review.html", context)


@guard_body(member_of(CURATOR_ROLES))
@require_POST
@login_required
def label_quality_decide(request, slug, item_id):
    project, role = project_for(request.user, slug, CURATOR_ROLES)
    form = ReviewForm(request.POST)
    actions = {
        "confirm": lambda data, common: confirm_label(**common),
        "overturn": lambda data, common: overturn_label(**common),
    }
    action, status = apply_decision(request, project, item_id, form, actions)
    if action is not None:
        done = "label confirmed" if action == "confirm" else "label overturned"
        messages.success(request, f"Saved: {done}.")
        following = next_suspect(project, request.user, after_item_id=item_id)
        if following is None:
            return redirect("label_quality", slug=project.slug)
        return redirect("label_quality_review", slug=project.slug, item_id=following)
    context = _review_context(request, project, role, item_id)
    return render(request, "curation/quality/review.html", context, status=status)


@require_GET
@login_required
def label_quality_status(request, slug):
    """Polled by the queue page while the analysis is queued or running;
    tells htmx to reload the page once it has finished (or failed)."""
    project, _role = project_for(request.user, slug, CURATOR_ROLES)
    run = LabelQualityRun.objects.filter(project=project).only("status").first()
    busy = (LabelQualityStatus.PENDING, LabelQualityStatus.RUNNING)
    if run is None or run.status not in busy:
        response = HttpResponse(status=204)
        response["HX-Refresh"] = "true"
        return response
    return HttpResponse(f'<span class="muted">{run.get_status_display()}…</span>')
