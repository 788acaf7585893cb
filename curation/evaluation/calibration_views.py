"""Calibrated judges (issue 36 item 3), for curators: a project's judge runs
over its benchmark items, the "judge this project" form, and the
calibration report per judge and domain against the human majority."""

from __future__ import annotations

from typing import cast

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.validators import MaxValueValidator
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotate.projects import CURATOR_ROLES, member_of, project_for
from common.body_guard import guard_body
from curation.evaluation import calibration
from curation.evaluation.calibration_cache import request_refresh, stored_report
from curation.evaluation.calibration_report import project_runs
from curation.evaluation.judge_runs import max_concurrency
from curation.evaluation.project_judging import (
    ProjectJudgeError,
    judging_benchmarks,
    start_project_judge_run,
)


class ProjectJudgeRunForm(forms.Form):
    endpoint: forms.ModelChoiceField = forms.ModelChoiceField(
        queryset=None, empty_label=None, label="Judge endpoint"
    )
    name = forms.CharField(max_length=120, help_text="Its name in the calibration report.")
    scoring = forms.ChoiceField(
        label="Judge prompt",
        required=False,
        help_text="Whose judge prompt is sent: by default each item's, the benchmark "
        "its domain belongs to.",
    )
    concurrency = forms.IntegerField(
        min_value=1, initial=4, help_text="Requests in flight at once."
    )

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, **kwargs)
        endpoint = cast(forms.ModelChoiceField, self.fields["endpoint"])
        endpoint.queryset = project.judge_endpoints.order_by("name")
        scoring = cast(forms.ChoiceField, self.fields["scoring"])
        scoring.choices = [("", "Each item's benchmark (by its domain)")] + [
            (b.key, b.title) for b in judging_benchmarks()
        ]
        limit = max_concurrency()
        concurrency = cast(forms.IntegerField, self.fields["concurrency"])
        concurrency.max_value = limit
        concurrency.validators.append(MaxValueValidator(limit))
        concurrency.widget.attrs["max"] = limit


def _context(project, role, form) -> dict:
    runs = list(project_runs(project).order_by("-created_at", "-pk"))
    stored = stored_report(project, runs)
    return {
        "project": project,
        "role": role,
        "form": form,
        "runs": runs,
        "stored": stored,
        "reports": stored.reports,
        "rules": {
            "min_votes": calibration.MIN_HUMAN_VOTES,
            "min_cases": calibration.MIN_CASES,
            "min_loo": calibration.MIN_LOO_CASES,
            "bins": calibration.ECE_BINS,
        },
    }


@require_GET
@login_required
def calibration_page(request, slug):
    project, role = project_for(request.user, slug, CURATOR_ROLES)
    form = ProjectJudgeRunForm(project=project)
    return render(request, "curation/calibration.html", _context(project, role, form))


@guard_body(member_of(CURATOR_ROLES))
@require_http_methods(["POST"])
@login_required
def project_judge_run_new(request, slug):
    """Start a judge run over the project's benchmark items (both orders)."""
    project, role = project_for(request.user, slug, CURATOR_ROLES)
    form = ProjectJudgeRunForm(request.POST, project=project)
    if form.is_valid():
        try:
            data = {**form.cleaned_data, "scoring": form.cleaned_data["scoring"] or None}
            run = start_project_judge_run(project=project, user=request.user, **data)
        except ProjectJudgeError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("judge_run", slug=project.slug, run_id=run.pk)
    return render(request, "curation/calibration.html", _context(project, role, form), status=400)


@guard_body(member_of(CURATOR_ROLES))
@require_POST
@login_required
def calibration_refresh(request, slug):
    """Recompute the stored report in the background (the Recompute button)."""
    project, _ = project_for(request.user, slug, CURATOR_ROLES)
    if request_refresh(project=project):
        messages.info(request, "Recomputing the calibration report in the background.")
    else:
        messages.info(request, "A recomputation is already running.")
    return redirect("calibration", slug=project.slug)


@require_GET
@login_required
def calibration_status(request, slug):
    """Polled by the page while the report is computed: its progress, and a
    reload (htmx) once it has finished."""
    from curation.models import CalibrationCache

    project, _ = project_for(request.user, slug, CURATOR_ROLES)
    cache = CalibrationCache.objects.filter(project=project).first()
    if cache is None or cache.requested_at is None:
        response = HttpResponse(status=204)
        response["HX-Refresh"] = "true"
        return response
    return render(request, "curation/_calibration_progress.html", {"cache": cache})
