"""Calibrated judges (issue 36 item 3), for curators: a project's judge runs
over its benchmark items, the "judge this project" form, and the
calibration report per judge and domain against the human majority."""

from __future__ import annotations

from typing import cast

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.validators import MaxValueValidator
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from annotate.projects import CURATOR_ROLES, member_of, project_for
from common.body_guard import guard_body
from curation.evaluation import calibration
from curation.evaluation.calibration_report import calibration_for, project_runs
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
    return {
        "project": project,
        "role": role,
        "form": form,
        "runs": project_runs(project).order_by("-created_at", "-pk"),
        "reports": calibration_for(project),
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
