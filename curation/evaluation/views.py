"""Evaluation pages: the judge runner (the project's judge endpoints for
admins; starting a run on a release and following it, for curators and
admins) and a release's leaderboard (uploaded predictions scored, its chart
and its CSV/JSON downloads).

No page, form value or message ever contains an API key: the endpoint pages
say "set" or "not set", the key field is write-only, and run errors are
redacted by the client before they are stored."""

import io
import json
from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Q
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotate.projects import ADMIN_ROLES, CURATOR_ROLES, member_of, project_for
from common.body_guard import guard_body
from curation.evaluation import judge_client
from curation.evaluation.connection import check_endpoint
from curation.evaluation.forms import EvaluationForm, JudgeEndpointForm, JudgeRunForm
from curation.evaluation.judge_runs import (
    JudgeRunError,
    cancel_judge_run,
    delete_endpoint,
    is_stale,
    max_concurrency,
    resume_judge_run,
    save_endpoint,
    start_judge_run,
)
from curation.evaluation.service import EvaluationError, evaluate_upload, leaderboards
from curation.models import (
    JudgeEndpoint,
    JudgeOutput,
    JudgeRun,
    JudgeRunStatus,
    Release,
    ReleaseStatus,
)
from curation.releases import publishing
from curation.releases.views import attachment_name, release_for
from curation.spreadsheet_cells import SafeWriter

RUN_ERRORS_SHOWN = 100


# --- Endpoints (admins) -----------------------------------------------------------------


def _endpoint_for(project, endpoint_id) -> JudgeEndpoint:
    endpoint = JudgeEndpoint.objects.filter(project=project, pk=endpoint_id).first()
    if endpoint is None:
        raise Http404("No such judge endpoint")
    return endpoint


def _save(request, project, form, endpoint=None):
    data = form.cleaned_data
    try:
        return save_endpoint(project=project, actor=request.user, endpoint=endpoint, **data)
    except JudgeRunError as exc:
        form.add_error(None, str(exc))
        return None


@guard_body(member_of(ADMIN_ROLES))
@require_http_methods(["GET", "POST"])
@login_required
def judge_endpoints(request, slug):
    project, role = project_for(request.user, slug, ADMIN_ROLES)
    form = JudgeEndpointForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        endpoint = _save(request, project, form)
        if endpoint is not None:
            messages.success(request, f"Judge endpoint {endpoint.name} saved.")
            return redirect("judge_endpoints", slug=project.slug)
    return render(
        request,
        "curation/judge_endpoints.html",
        {
            "project": project,
            "role": role,
            "endpoints": JudgeEndpoint.objects.filter(project=project).order_by("name"),
            "form": form,
        },
        status=400 if form.errors else 200,
    )


@guard_body(member_of(ADMIN_ROLES))
@require_http_methods(["GET", "POST"])
@login_required
def judge_endpoint_edit(request, slug, endpoint_id):
    project, role = project_for(request.user, slug, ADMIN_ROLES)
    endpoint = _endpoint_for(project, endpoint_id)
    initial = {
        "name": endpoint.name,
        "base_url": endpoint.base_url,
        "model": endpoint.model,
        "temperature": endpoint.temperature,
        "max_tokens": endpoint.max_tokens,
        "timeout_seconds": endpoint.timeout_seconds,
    }  # never the key
    had_key = endpoint.has_api_key
    form = JudgeEndpointForm(request.POST or None, initial=initial, has_key=had_key)
    if (
        request.method == "POST"
        and form.is_valid()
        and _save(request, project, form, endpoint) is not None
    ):
        messages.success(request, f"Judge endpoint {endpoint.name} saved.")
        if had_key and not endpoint.has_api_key and not form.cleaned_data.get("clear_api_key"):
            messages.warning(
                request,
                "The stored API key was removed because the base URL now points to another "
                "address (scheme, host or port); enter the key again if that server needs one.",
            )
        return redirect("judge_endpoints", slug=project.slug)
    return render(
        request,
        "curation/judge_endpoint_edit.html",
        {
            "project": project,
            "role": role,
            "endpoint": endpoint,
            "form": form,
            "check_prompt": judge_client.CONNECTION_CHECK_PROMPT,
        },
        status=400 if form.errors else 200,
    )


@guard_body(member_of(ADMIN_ROLES))
@require_POST
@login_required
def judge_endpoint_check(request, slug, endpoint_id):
    """Test connection, from the endpoint's page: the answer is a message."""
    project, _ = project_for(request.user, slug, ADMIN_ROLES)
    endpoint = _endpoint_for(project, endpoint_id)
    check = check_endpoint(endpoint=endpoint)
    if check.ok:
        messages.success(
            request,
            f"Connected to {endpoint.name} in {check.seconds:.1f} s: {check.message}.",
        )
    else:
        messages.error(request, f"{endpoint.name} did not answer as a judge: {check.message}")
    return redirect("judge_endpoint_edit", slug=project.slug, endpoint_id=endpoint.pk)


@guard_body(member_of(ADMIN_ROLES))
@require_POST
@login_required
def judge_endpoint_delete(request, slug, endpoint_id):
    project, _ = project_for(request.user, slug, ADMIN_ROLES)
    endpoint = _endpoint_for(project, endpoint_id)
    name = endpoint.name
    delete_endpoint(endpoint=endpoint, actor=request.user)
    messages.success(request, f"Judge endpoint {name} deleted; its runs stay on record.")
    return redirect("judge_endpoints", slug=project.slug)


# --- Runs (curators) --------------------------------------------------------------------


def _run_for(project, run_id) -> JudgeRun:
    run = (
        JudgeRun.objects.filter(Q(release__project=project) | Q(project=project), pk=run_id)
        .select_related("release__project", "evaluation", "created_by")
        .first()
    )
    if run is None:
        raise Http404("No such judge run")
    return run


def run_form(project, data=None, release=None) -> JudgeRunForm:
    """The "Run a judge" form, also shown on the leaderboard page."""
    initial = {}
    first = project.judge_endpoints.order_by("name").first()
    if first is not None and release is not None:
        initial["name"] = first.model
    return JudgeRunForm(
        data, initial=initial, project=project, max_concurrency=max_concurrency(), release=release
    )


@guard_body(member_of(CURATOR_ROLES))
@require_http_methods(["GET", "POST"])
@login_required
def judge_run_new(request, slug, release_id):
    project, role = project_for(request.user, slug, CURATOR_ROLES)
    release = Release.objects.filter(project=project, pk=release_id).first()
    if release is None:
        raise Http404("No such release")
    form = run_form(project, request.POST or None, release)
    if request.method == "POST":
        if release.status != ReleaseStatus.READY:
            form.add_error(None, "Only ready releases can be judged.")
        elif form.is_valid():
            data = form.cleaned_data
            try:
                run = start_judge_run(release=release, user=request.user, **data)
            except JudgeRunError as exc:
                form.add_error(None, str(exc))
            else:
                return redirect("judge_run", slug=project.slug, run_id=run.pk)
    return render(
        request,
        "curation/judge_run_new.html",
        {"project": project, "role": role, "release": release, "form": form},
        status=400 if form.errors else 200,
    )


@require_GET
@login_required
def judge_run_detail(request, slug, run_id):
    project, role = project_for(request.user, slug, CURATOR_ROLES)
    run = _run_for(project, run_id)
    errors = list(
        JudgeOutput.objects.filter(run=run)
        .exclude(error="")
        .order_by("external_id", "order")
        .values("external_id", "order", "error", "attempts")[:RUN_ERRORS_SHOWN]
    )
    return render(
        request,
        "curation/judge_run_detail.html",
        {
            "project": project,
            "role": role,
            "run": run,
            "release": run.release,
            "errors": errors,
            "stale": is_stale(run),
            "errors_shown": RUN_ERRORS_SHOWN,
        },
    )


@require_GET
@login_required
def judge_run_progress(request, slug, run_id):
    """Polled by htmx while a run is pending or running; reloads the page
    once it has stopped."""
    project, _ = project_for(request.user, slug, CURATOR_ROLES)
    run = _run_for(project, run_id)
    if run.status not in (JudgeRunStatus.PENDING, JudgeRunStatus.RUNNING) or is_stale(run):
        response = HttpResponse(status=204)
        response["HX-Refresh"] = "true"
        return response
    return render(request, "curation/_judge_run_progress.html", {"run": run})


@guard_body(member_of(CURATOR_ROLES))
@require_POST
@login_required
def judge_run_cancel(request, slug, run_id):
    project, _ = project_for(request.user, slug, CURATOR_ROLES)
    run = _run_for(project, run_id)
    if cancel_judge_run(run=run):
        messages.info(request, "Cancelled; the answers received so far are kept.")
    else:
        messages.error(request, "Only a pending or running run can be cancelled.")
    return redirect("judge_run", slug=project.slug, run_id=run.pk)


@guard_body(member_of(CURATOR_ROLES))
@require_POST
@login_required
def judge_run_resume(request, slug, run_id):
    project, _ = project_for(request.user, slug, CURATOR_ROLES)
    run = _run_for(project, run_id)
    if resume_judge_run(run=run):
        messages.info(request, "Resumed: only items without an answer are sent.")
    else:
        messages.error(request, "Only a failed, cancelled or stalled run can be resumed.")
    return redirect("judge_run", slug=project.slug, run_id=run.pk)


# --- Leaderboard ---------------------------------------------------------------------


@guard_body(member_of(CURATOR_ROLES), uploads=True)
@require_http_methods(["GET", "POST"])
@login_required
def leaderboard_view(request, slug, release_id):
    project, role = project_for(request.user, slug, CURATOR_ROLES)
    release = release_for(project, release_id)
    form = EvaluationForm(request.POST or None, request.FILES or None)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            data = form.cleaned_data
            try:
                evaluate_upload(
                    release=release,
                    name=data["name"],
                    predictions=data["predictions"],
                    filename=data["predictions"].name,
                    fmt=data["format"],
                    swapped=data["swapped"] or None,
                    swapped_filename=data["swapped"].name if data["swapped"] else "",
                    user=request.user,
                    official_compat=data["official_compat"],
                )
            except EvaluationError as exc:
                form.add_error(None, str(exc))
                status = 400
            else:
                messages.success(request, f"Scored {data['name']}.")
                return redirect("leaderboard", slug=project.slug, release_id=release.pk)
        else:
            status = 400
    boards = leaderboards(release, sort=request.GET.get("sort", "all"))
    download = request.GET.get("download")
    if download == "json":
        payload = [
            {
                "name": r["evaluation"].name,
                "scoring": r["evaluation"].scoring,
                "report": r["evaluation"].report,
            }
            for board in boards
            for r in board.rows
        ]
        response = HttpResponse(
            json.dumps(payload, indent=2), content_type="application/json; charset=utf-8"
        )
        response["Content-Disposition"] = (
            f'attachment; filename="{attachment_name(f"{project.slug}-{release.version}")}'
            '-leaderboard.json"'
        )
        return response
    if download == "csv":
        # The first table that offers one (?table=<benchmark> picks another).
        wanted = request.GET.get("table")
        board = next((b for b in boards if b.csv and (wanted is None or b.key == wanted)), None)
        if board is None:
            raise Http404("No table of this leaderboard has a CSV download.")
        out = io.StringIO()
        writer = SafeWriter(out)
        for row in board.csv():
            writer.writerow(row)
        response = HttpResponse(out.getvalue(), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = (
            f'attachment; filename="{attachment_name(f"{project.slug}-{release.version}")}'
            '-leaderboard.csv"'
        )
        return response
    return render(
        request,
        "curation/leaderboard.html",
        {
            "project": project,
            "role": role,
            "release": release,
            "form": form,
            "boards": boards,
            "has_entries": any(board.rows for board in boards),
            "release_path": _local_release_path(release),
            "api_url": request.build_absolute_uri(
                reverse("api_evaluations", args=[project.slug, release.pk])
            ),
            "judge_runs": JudgeRun.objects.filter(release=release).select_related("evaluation"),
            "judge_form": run_form(project, release=release)
            if release.status == ReleaseStatus.READY
            else None,
        },
        status=status,
    )


def _local_release_path(release) -> str:
    """Where the release's folder is on this server, as a shell in the
    project's folder reaches it (var/media/releases/…), or "" when releases
    live in a bucket (then the page offers the download and the API)."""
    try:
        path = Path(publishing.release_storage().path(release.folder))
    except NotImplementedError:
        return ""
    base = Path(settings.BASE_DIR)
    return str(path.relative_to(base)) if path.is_relative_to(base) else str(path)
