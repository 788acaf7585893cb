"""Pages of the check and qualification items curators make (curation.gold):
the adjudication page's form, the project's list of such items with their
retire and explanation forms. Curators and admins only."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotate.models import Item, Task
from annotate.projects import CURATOR_ROLES, member_of, project_for
from common.body_guard import guard_body
from curation.gold.forms import ExplanationForm, MakeGoldForm, RetireForm
from curation.gold.service import (
    GoldRefused,
    edit_explanation,
    gold_items,
    gold_rows,
    make_gold_item,
    retire_gold_item,
    settled_side,
)
from curation.models import Verdict
from curation.verdicts.decisions import CurationError

FORM_PREFIX = "gold"


def adjudication_gold_context(project, verdict: Verdict, form: MakeGoldForm | None = None) -> dict:
    """What the adjudication page shows about making this item a check or
    qualification item: the form, or why not, and the copies made of it
    (one query)."""
    copies = list(Item.objects.filter(copied_from_id=verdict.item_id).order_by("pk"))
    live = next((c for c in copies if c.retired_at is None), None)
    refusal = ""
    if project.task != Task.PAIRWISE:
        refusal = "Check and qualification items are pairwise only."
    elif live is not None:
        refusal = (
            f"This item's {live.get_purpose_display().lower()} item is {live.external_id}; "
            "retire it to make another."
        )
    else:
        try:
            settled_side(verdict)
        except GoldRefused as refused:
            refusal = f"It cannot be a check or qualification item yet: {refused}"
    return {
        "gold_copies": copies,
        "gold_refusal": refusal,
        "gold_form": form or MakeGoldForm(prefix=FORM_PREFIX),
    }


@guard_body(member_of(CURATOR_ROLES))
@require_POST
@login_required
def make_gold(request, slug, item_id):
    project, _role = project_for(request.user, slug, CURATOR_ROLES)
    back = reverse("adjudicate", args=[project.slug, item_id])
    form = MakeGoldForm(request.POST, prefix=FORM_PREFIX)
    if not form.is_valid():
        for name, errors in form.errors.items():
            label = form.fields[name].label if name in form.fields else ""
            messages.error(request, f"{label or name}: {' '.join(errors)}")
        return redirect(back + "#gold")
    data = form.cleaned_data
    try:
        copy = make_gold_item(
            project=project,
            item_id=item_id,
            curator=request.user,
            purpose=data["purpose"],
            explanation=data["explanation"],
            is_attention=data["is_attention"],
            reason=data["reason"],
        )
    except Verdict.DoesNotExist:
        raise Http404("No such item") from None
    except CurationError as refused:
        messages.error(request, f"Nothing was made: {refused}")
        return redirect(back + "#gold")
    messages.success(request, f"Made {copy.get_purpose_display().lower()} item {copy.external_id}.")
    return redirect(back + "#gold")


@require_GET
@login_required
def gold_list(request, slug):
    project, role = project_for(request.user, slug, CURATOR_ROLES)
    rows = gold_rows(gold_items(project))
    return render(
        request,
        "curation/gold.html",
        {"project": project, "role": role, "rows": rows, "pairwise": project.task == Task.PAIRWISE},
    )


def _gate_action(request, slug, item_id, form_class, act, *, done: str, anchor: bool):
    """A curator's change to one check or qualification item from the list
    page: the form's errors or the refusal as messages, else `done` (with
    the item's external id) and back to the list (at the item if `anchor`)."""
    project, _role = project_for(request.user, slug, CURATOR_ROLES)
    back = reverse("gold_items", args=[project.slug])
    form = form_class(request.POST, prefix=f"g{item_id}")
    if not form.is_valid():
        for name, errors in form.errors.items():
            label = form.fields[name].label if name in form.fields else ""
            messages.error(request, f"{label or name}: {' '.join(errors)}")
        return redirect(f"{back}#gold-{item_id}")
    try:
        item = act(project=project, item_id=item_id, curator=request.user, **form.cleaned_data)
    except Item.DoesNotExist:
        raise Http404("No such check or qualification item") from None
    except CurationError as refused:
        messages.error(request, f"Nothing was changed: {refused}")
        return redirect(f"{back}#gold-{item_id}")
    messages.success(request, done.format(item.external_id))
    return redirect(f"{back}#gold-{item_id}" if anchor else back)


@guard_body(member_of(CURATOR_ROLES))
@require_POST
@login_required
def gold_retire(request, slug, item_id):
    said = "Retired {}: it is not served any more."
    return _gate_action(
        request, slug, item_id, RetireForm, retire_gold_item, done=said, anchor=False
    )


@guard_body(member_of(CURATOR_ROLES))
@require_POST
@login_required
def gold_explanation(request, slug, item_id):
    said = "Saved the explanation of {}."
    return _gate_action(
        request, slug, item_id, ExplanationForm, edit_explanation, done=said, anchor=True
    )
