"""The data grid page (/p/<slug>/items/) and its bulk actions. Curators and
admins only, as every curation page."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotate.projects import CURATOR_ROLES, member_of, project_for
from common.body_guard import guard_body
from curation.gold.service import EXPLANATION_MAX
from curation.grid.bulk import ACTIONS, MAX_BULK_ITEMS, apply_bulk
from curation.grid.filters import DEFAULT_PAGE_SIZE, GridFilterForm, GridRows, decorate, matching
from curation.models import ExclusionCategory
from curation.verdicts.decisions import CurationError


class BulkForm(forms.Form):
    action = forms.ChoiceField(choices=list(ACTIONS.items()))
    items = forms.CharField(widget=forms.HiddenInput, required=False)
    category = forms.ChoiceField(
        required=False,
        label="Exclusion reason",
        choices=[("", "—"), *[c for c in ExclusionCategory.choices if c[0]]],
    )
    n = forms.IntegerField(required=False, min_value=1, max_value=20, initial=1, label="More votes")
    domain = forms.ChoiceField(required=False, label="Move to")
    explanation = forms.CharField(
        required=False,
        max_length=EXPLANATION_MAX,
        label="Explanation (Markdown, shown after a qualification answer)",
        widget=forms.Textarea(attrs={"rows": 2}),
    )
    is_attention = forms.BooleanField(required=False, label="Attention check (an obvious answer)")
    reason = forms.CharField(
        max_length=2000,
        label="Reason (goes into the audit log)",
        widget=forms.Textarea(attrs={"rows": 2}),
    )
    back = forms.CharField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, **kwargs)
        self.domains = {d.slug: d for d in project.domains.order_by("position")}
        self.fields["domain"].choices = [
            ("", "—"),
            *[(d.slug, d.title) for d in self.domains.values()],
        ]

    def clean(self):
        data = super().clean()
        # The checked rows' item IDs (apply_bulk skips those of other projects).
        raw = self.data.getlist("item") if hasattr(self.data, "getlist") else []
        try:
            data["item_ids"] = [int(v) for v in raw]
        except ValueError:
            raise forms.ValidationError(
                "The selection holds something that is not an item ID."
            ) from None
        if data.get("items") != "matching" and not data["item_ids"]:
            raise forms.ValidationError("Select at least one item.")
        return data


@require_GET
@login_required
def item_grid(request, slug):
    project, role = project_for(request.user, slug, CURATOR_ROLES)
    form = GridFilterForm(request.GET or None, project=project)
    if form.is_bound and not form.is_valid():
        filters: dict = {}
        status = 400
    else:
        filters = form.cleaned_data if form.is_bound else {}
        status = 200
    size = filters.get("page_size") or DEFAULT_PAGE_SIZE
    page = Paginator(GridRows(project, filters), size).get_page(request.GET.get("page"))
    rows = list(page.object_list)
    decorate(rows)
    query = request.GET.copy()
    query.pop("page", None)
    bulk = BulkForm(project=project, initial={"back": request.get_full_path()})
    return render(
        request,
        "curation/grid.html",
        {
            "project": project,
            "role": role,
            "form": form,
            "page": page,
            "rows": rows,
            "query": query.urlencode(),
            "bulk": bulk,
            "max_bulk": MAX_BULK_ITEMS,
        },
        status=status,
    )


def _safe_back(project, back: str) -> str:
    base = reverse("item_grid", args=[project.slug])
    return back if back.startswith(base) else base


@guard_body(member_of(CURATOR_ROLES))
@require_POST
@login_required
def item_grid_bulk(request, slug):
    project, _role = project_for(request.user, slug, CURATOR_ROLES)
    form = BulkForm(request.POST, project=project)
    back = _safe_back(project, request.POST.get("back", ""))
    if not form.is_valid():
        for name, errors in form.errors.items():
            field = form.fields.get(name)
            label = (field.label or name) if field else ""
            messages.error(request, f"{label + ': ' if label else ''}{' '.join(errors)}")
        return redirect(back)
    data = form.cleaned_data
    if data["items"] == "matching":
        # Every item the grid's filter (the page's query string) selects.
        filter_form = GridFilterForm(_query_of(back), project=project)
        if not filter_form.is_valid():
            messages.error(request, "The filter is not valid any more; nothing was changed.")
            return redirect(back)
        ids = list(
            matching(project, filter_form.cleaned_data).values_list("item_id", flat=True)[
                : MAX_BULK_ITEMS + 1
            ]
        )
    else:
        ids = data["item_ids"]
    try:
        outcome = apply_bulk(
            project=project,
            curator=request.user,
            action=data["action"],
            item_ids=ids,
            reason=data["reason"],
            category=data.get("category") or "",
            n=data.get("n") or 1,
            domain=form.domains.get(data.get("domain") or ""),
            explanation=data.get("explanation") or "",
            is_attention=bool(data.get("is_attention")),
        )
    except CurationError as refused:
        messages.error(request, f"Nothing was changed: {refused}")
        return redirect(back)
    (messages.success if outcome.done else messages.warning)(request, outcome.summary())
    return redirect(back)


def _query_of(url: str) -> QueryDict:
    return QueryDict(url.partition("?")[2])
