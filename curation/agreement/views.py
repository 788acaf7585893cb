"""The agreement dashboard (and its CSV tables) and its background refresh."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from annotate.models import Task
from annotate.projects import CURATOR_ROLES, member_of, project_for
from common.body_guard import guard_body
from curation.agreement.groups import group_consensus
from curation.exports import formats as export_formats
from curation.models import (
    AgreementCache,
)
from curation.quality.service import annotator_quality
from curation.verdicts.service import stuck_items


@require_GET
@login_required
def agreement_dashboard(request, slug):
    # The numeric stack (numpy, krippendorff) loads with the first agreement
    # page, not with the URLconf (issue 32).
    from curation.agreement import reports
    from curation.agreement.diagnostics import MIN_SIDE_VOTES

    project, role = project_for(request.user, slug, CURATOR_ROLES)
    if project.task != Task.PAIRWISE:
        return _ranked_dashboard(request, project, role)
    report = reports.build_report(project)
    # CROWDLAB's annotator quality (curation/quality/) beside kappa, once computed.
    crowdlab, crowdlab_at = annotator_quality(project)
    for row in report.annotators:
        row.crowdlab_quality = crowdlab.get(row.annotator_id)
    table = request.GET.get("download")
    if table in ("domains", "annotators"):
        body = reports.domains_csv(report) if table == "domains" else reports.annotators_csv(report)
        response = HttpResponse(body, content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{project.slug}-{table}.csv"'
        return response
    return render(
        request,
        "curation/agreement.html",
        {
            "project": project,
            "role": role,
            "report": report,
            "crowdlab_at": crowdlab_at,
            "fmt": reports.fmt,
            "min_side_votes": MIN_SIDE_VOTES,
            "stuck_count": stuck_items(project).count(),
            "export_domains": [(r.key, r.title) for r in report.domains if r.key != reports.ALL],
            "parquet_available": export_formats.parquet_available(),
            "groups": group_consensus(project),
        },
    )


def _ranked_dashboard(request, project, role):
    """A best-of-N or ranking project's agreement (ranked_report): its
    statistics with their bootstrap intervals and each annotator's position
    bias, instead of the pair tables (which its votes have no tallies for)."""
    from curation.agreement import ranked_report, reports

    cache = AgreementCache.objects.filter(project=project).first()
    computed = cache is not None and cache.computed_at is not None
    report = ranked_report.build(
        project,
        cached=cache.payload.get("ranked_ci") if computed else None,
        from_json=reports.from_json,
    )
    return render(
        request,
        "curation/agreement_ranked.html",
        {
            "project": project,
            "role": role,
            "report": report,
            "cache": cache,
            "computed": computed,
            "stuck_count": stuck_items(project).count(),
            "groups": group_consensus(project),
        },
    )


@guard_body(member_of(CURATOR_ROLES))
@require_POST
@login_required
def agreement_refresh(request, slug):
    from curation.agreement.reports import request_agreement_refresh

    project, _ = project_for(request.user, slug, CURATOR_ROLES)
    if request_agreement_refresh(project=project):
        messages.info(request, "Recomputing confidence intervals in the background.")
    else:
        messages.info(request, "A recomputation is already running.")
    return redirect("agreement", slug=project.slug)


@require_GET
@login_required
def agreement_status(request, slug):
    """Polled by the dashboard while the background computation runs; tells
    htmx to reload the page once it has finished."""
    project, _ = project_for(request.user, slug, CURATOR_ROLES)
    cache = AgreementCache.objects.filter(project=project).first()
    if cache is None or cache.requested_at is None:
        response = HttpResponse(status=204)
        response["HX-Refresh"] = "true"
        return response
    return HttpResponse('<span class="muted">Computing…</span>')
