"""Downloading a raw export from the pages (the agreement dashboard's and the
curation queue's Export form): curators and admins of the project, as on
every curation page. The API (curation.api.exports) answers with the same
streamed response."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponseBadRequest, StreamingHttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_GET

from annotate.models import Domain, Project
from annotate.projects import CURATOR_ROLES, project_for
from curation.exports import formats, records, service


class ExportForm(forms.Form):
    """The query string of an export: its format and, optionally, one domain."""

    file_format = forms.ChoiceField(
        choices=[(f, f) for f in formats.FORMATS], required=False, initial="csv"
    )
    domain = forms.SlugField(required=False)


def export_response(
    *, project: Project, kind: str, file_format: str, domain: Domain | None
) -> StreamingHttpResponse:
    """The export as a streamed download; nothing is read before the first
    piece is asked for."""
    rows = service.export_rows(project=project, kind=kind, domain=domain)
    response = StreamingHttpResponse(
        formats.encode(file_format, records.COLUMNS[kind], rows),
        content_type=formats.CONTENT_TYPES[file_format],
    )
    name = service.export_filename(
        project=project, kind=kind, file_format=file_format, domain=domain
    )
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    # A proxy must pass the pieces on as they come, not collect the whole file.
    response["X-Accel-Buffering"] = "no"
    response["Cache-Control"] = "no-store"
    return response


def _export(request, slug: str, kind: str):
    project, _ = project_for(request.user, slug, CURATOR_ROLES)
    form = ExportForm(request.GET)
    if not form.is_valid():
        return HttpResponseBadRequest("Unknown export format or domain.")
    file_format = form.cleaned_data["file_format"] or "csv"
    domain = None
    if form.cleaned_data["domain"]:
        domain = Domain.objects.filter(project=project, slug=form.cleaned_data["domain"]).first()
        if domain is None:
            raise Http404("No such domain in this project.")
    if file_format == "parquet" and not formats.parquet_available():
        messages.error(request, formats.PARQUET_HINT)
        return redirect("agreement", slug=project.slug)
    return export_response(project=project, kind=kind, file_format=file_format, domain=domain)


@require_GET
@login_required
def export_votes(request, slug):
    return _export(request, slug, "votes")


@require_GET
@login_required
def export_verdicts(request, slug):
    return _export(request, slug, "verdicts")
