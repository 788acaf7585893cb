"""Adaptive votes' page: the rule in plain words, its parameters, what the
last refit found (curators and admins), and the settings (admins)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from annotate.models import CertaintyReason
from annotate.models.adaptive import adaptive_summary
from annotate.projects import ADMIN_ROLES, CURATOR_ROLES, member_of, project_for
from common.body_guard import guard_body
from curation.quality.adaptive import AdaptiveSettingsError, set_vote_mode
from curation.quality.forms import AdaptiveForm


def _initial(project) -> dict:
    return {
        "vote_mode": project.vote_mode,
        "base_votes": project.adaptive_base_votes,
        "budget": project.adaptive_budget,
        "stop_certainty": project.adaptive_stop_certainty,
    }


def _page(request, project, role, form, status=200):
    summary = adaptive_summary(project)
    return render(
        request,
        "curation/quality/adaptive.html",
        {
            "project": project,
            "role": role,
            "form": form if role in ADMIN_ROLES else None,
            "summary": summary,
            "rows": [(label, summary["items"][value]) for value, label in CertaintyReason.choices],
        },
        status=status,
    )


@require_GET
@login_required
def adaptive_votes(request, slug):
    project, role = project_for(request.user, slug, CURATOR_ROLES)
    return _page(request, project, role, AdaptiveForm(initial=_initial(project)))


@guard_body(member_of(ADMIN_ROLES))
@require_POST
@login_required
def adaptive_settings(request, slug):
    project, role = project_for(request.user, slug, ADMIN_ROLES)
    form = AdaptiveForm(request.POST)
    if form.is_valid():
        try:
            changed = set_vote_mode(project=project, actor=request.user, **form.cleaned_data)
        except AdaptiveSettingsError as exc:
            for field, message in exc.errors.items():
                name = field.removeprefix("adaptive_")
                form.add_error(name if name in form.fields else None, message)
        else:
            if changed:
                messages.success(request, "Vote mode saved.")
            return redirect("adaptive_votes", slug=project.slug)
    return _page(request, project, role, form, status=400)
