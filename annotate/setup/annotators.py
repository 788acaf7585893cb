"""The annotator table for curators (issue 36): each annotator's accuracy on
the project's check items with its 95 % Wilson interval, how many checks
they answered, and whether they are paused; a curator reinstates a paused
annotator here (annotate.checks)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from annotate import checks
from annotate.models import Membership
from annotate.projects import CURATOR_ROLES, member_of, project_for
from common.body_guard import guard_body


@require_GET
@login_required
def annotators(request, slug):
    project, role = project_for(request.user, slug, CURATOR_ROLES)
    return render(
        request,
        "annotate/setup/annotators.html",
        {"project": project, "role": role, "rows": checks.annotator_rows(project)},
    )


@guard_body(member_of(CURATOR_ROLES))
@require_POST
@login_required
def annotator_reinstate(request, slug, user_id):
    """A curator lifts an annotator's pause."""
    project, _ = project_for(request.user, slug, CURATOR_ROLES)
    membership = (
        Membership.objects.filter(project=project, user_id=user_id).select_related("user").first()
    )
    if membership is None:
        raise Http404("No such member")
    name = membership.pseudonym or membership.user.get_username()
    try:
        checks.reinstate(actor=request.user, project=project, annotator=membership.user)
    except checks.NotPaused:
        messages.info(request, f"{name} is not paused.")
    else:
        messages.success(request, f"{name} is reinstated and may annotate again.")
    return redirect("annotators", slug=project.slug)
