"""Training-mix pages: the list, the form, a mix's progress, card and download.

Mixes span projects, so their pages are not under a project: a user who
curates or administers no project gets 403; a mix with a source from a
project the user does not curate is a 404 to them (Mix.objects.visible_to).
"""

from __future__ import annotations

from pathlib import PurePosixPath

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import FileResponse, Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from common.body_guard import guard_body
from common.storage import open_stored
from curation.models import Mix, ReleaseStatus
from curation.releases import publishing
from curation.releases.mixes.forms import MixForm
from curation.releases.mixes.service import MixError, create_mix, curated_projects, may_mix
from curation.releases.views import attachment_name

PAGE_SIZE = 50


def require_curator(user) -> None:
    if not user.is_superuser and not curated_projects(user).exists():
        raise PermissionDenied("Training mixes are for the curators and admins of a project.")


def mix_for(user, mix_id: int) -> Mix:
    require_curator(user)
    mix = Mix.objects.visible_to(user).filter(pk=mix_id).select_related("created_by").first()
    if mix is None:
        raise Http404("No such mix")
    return mix


@require_GET
@login_required
def mix_list(request):
    require_curator(request.user)
    mixes = Mix.objects.visible_to(request.user).select_related("created_by")
    page = Paginator(mixes, PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "curation/mixes.html", {"mixes": page.object_list, "page": page})


@guard_body(may_mix)
@require_http_methods(["GET", "POST"])
@login_required
def mix_new(request):
    require_curator(request.user)
    form = MixForm(request.POST or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        try:
            mix = create_mix(user=request.user, **form.service_arguments())
        except MixError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("mix_detail", mix_id=mix.pk)
    return render(
        request, "curation/mix_new.html", {"form": form}, status=400 if form.errors else 200
    )


@require_GET
@login_required
def mix_detail(request, mix_id):
    mix = mix_for(request.user, mix_id)
    card = ""
    if mix.status == ReleaseStatus.READY:
        try:
            stream = open_stored(publishing.release_storage(), f"{mix.folder}/README.md")
            card = stream.read().decode("utf-8")
            stream.close()
        except FileNotFoundError:
            card = ""
    sources = list(mix.sources.select_related("project", "release"))
    return render(
        request, "curation/mix_detail.html", {"mix": mix, "sources": sources, "card": card}
    )


@require_GET
@login_required
def mix_progress(request, mix_id):
    """Polled by htmx while a mix builds; reloads the page when done."""
    mix = mix_for(request.user, mix_id)
    if mix.status in (ReleaseStatus.READY, ReleaseStatus.FAILED):
        response = HttpResponse(status=204)
        response["HX-Refresh"] = "true"
        return response
    return render(request, "curation/_mix_progress.html", {"mix": mix})


def mix_file_response(mix: Mix) -> FileResponse:
    stream = open_stored(publishing.release_storage(), mix.archive)
    response = FileResponse(
        stream,
        as_attachment=True,
        filename=attachment_name(PurePosixPath(mix.archive).name),
        content_type="application/zip",
    )
    response["Content-Length"] = str(mix.size_bytes)
    response["X-Content-SHA256"] = mix.sha256
    return response


@require_GET
@login_required
def mix_download(request, mix_id):
    mix = mix_for(request.user, mix_id)
    if mix.status != ReleaseStatus.READY:
        raise Http404("This mix is not ready")
    try:
        return mix_file_response(mix)
    except FileNotFoundError:
        raise Http404("This mix's archive is missing from the storage") from None
