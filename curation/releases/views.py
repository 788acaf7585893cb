"""Release pages: the list, cutting a new release, its build's progress, the
download and the diff against another release.
"""

import re
from pathlib import PurePosixPath

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotate.projects import CURATOR_ROLES, member_of, project_for
from common.body_guard import guard_body
from common.storage import open_stored
from curation.models import (
    Release,
    ReleaseStatus,
    Verdict,
)
from curation.releases import filter_outputs, publishing
from curation.releases.forms import ReleaseForm
from curation.releases.recovery import NotRetryable, retry_release
from curation.releases.service import (
    ReleaseError,
    create_release,
    diff_releases,
    released_id_map,
)

# A download's file name keeps letters, digits, dot, dash and underscore; a
# release version typed into the shell could hold quotes, slashes or control
# characters that would otherwise reach the Content-Disposition header.
UNSAFE_IN_FILENAME = re.compile(r"[^A-Za-z0-9._-]+")


def attachment_name(name: str) -> str:
    return UNSAFE_IN_FILENAME.sub("_", name).lstrip(".") or "download"


def release_for(project, release_id) -> Release:
    release = Release.objects.filter(project=project, pk=release_id).first()
    if release is None:
        raise Http404("No such release")
    return release


@require_GET
@login_required
def release_list(request, slug):
    project, role = project_for(request.user, slug, CURATOR_ROLES)
    releases = list(Release.objects.filter(project=project).select_related("created_by"))
    releasable = Verdict.objects.releasable().filter(project=project).count()
    return render(
        request,
        "curation/releases.html",
        {
            "project": project,
            "role": role,
            "releases": releases,
            "releasable": releasable,
        },
    )


@guard_body(member_of(CURATOR_ROLES))
@require_http_methods(["GET", "POST"])
@login_required
def release_new(request, slug):
    project, role = project_for(request.user, slug, CURATOR_ROLES)
    initial = {
        "domains": list(project.domains.values_list("slug", flat=True)),
        "seed": project.seed,
        "version": f"v{Release.objects.filter(project=project).count() + 1}.0",
    }
    form = ReleaseForm(request.POST or None, initial=initial, project=project)
    if request.method == "POST" and form.is_valid():
        try:
            release = create_release(project=project, user=request.user, **form.cleaned_data)
        except ReleaseError as exc:
            field = getattr(exc, "field", None)  # an ensemble's entry (filters.EnsembleError)
            form.add_error(field if field in form.fields else None, str(exc))
        else:
            return redirect("release_detail", slug=project.slug, release_id=release.pk)
    return render(
        request,
        "curation/release_new.html",
        {"project": project, "role": role, "form": form},
        status=400 if form.errors else 200,
    )


@require_GET
@login_required
def release_detail(request, slug, release_id):
    project, role = project_for(request.user, slug, CURATOR_ROLES)
    release = release_for(project, release_id)
    return render(
        request,
        "curation/release_detail.html",
        {
            "project": project,
            "role": role,
            "release": release,
            "filter_rows": filter_outputs.page_rows(release.manifest),
        },
    )


@require_GET
@login_required
def release_progress(request, slug, release_id):
    """Polled by htmx while a release builds; reloads the page when done, or
    when the build stalled (the page then offers Retry, and stops polling so
    the button keeps the keyboard focus)."""
    project, _ = project_for(request.user, slug, CURATOR_ROLES)
    release = release_for(project, release_id)
    if release.status in (ReleaseStatus.READY, ReleaseStatus.FAILED) or release.is_stalled:
        response = HttpResponse(status=204)
        response["HX-Refresh"] = "true"
        return response
    return render(request, "curation/_release_progress.html", {"release": release})


@guard_body(member_of(CURATOR_ROLES))
@require_POST
@login_required
def release_retry(request, slug, release_id):
    """Build a failed or stalled release again (curators and admins; audited)."""
    project, _ = project_for(request.user, slug, CURATOR_ROLES)
    release = release_for(project, release_id)
    try:
        retry_release(release=release, actor=request.user)
    except NotRetryable as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "The build starts again from scratch.")
    return redirect("release_detail", slug=project.slug, release_id=release.pk)


@require_GET
@login_required
def release_download(request, slug, release_id):
    project, _ = project_for(request.user, slug, CURATOR_ROLES)
    release = release_for(project, release_id)
    if release.status != ReleaseStatus.READY:
        raise Http404("This release is not ready")
    # Streamed from the releases storage (a bucket too), read as it is sent.
    try:
        stream = open_stored(publishing.release_storage(), release.archive)
    except FileNotFoundError:
        raise Http404("This release's archive is missing from the storage") from None
    response = FileResponse(
        stream,
        as_attachment=True,
        filename=attachment_name(PurePosixPath(release.archive).name),
        content_type="application/zip",
    )
    response["Content-Length"] = str(release.size_bytes)
    response["X-Content-SHA256"] = release.sha256
    return response


@require_GET
@login_required
def release_id_map(request, slug, release_id):
    """A re-keyed release's old-to-new IDs as JSON (curators and admins of
    the project only; the map is never in the release's files)."""
    project, _ = project_for(request.user, slug, CURATOR_ROLES)
    release = release_for(project, release_id)
    if release.status != ReleaseStatus.READY or not release.rekeyed:
        raise Http404("This release did not re-key its IDs")
    response = StreamingHttpResponse(
        released_id_map(release), content_type="application/json; charset=utf-8"
    )
    name = attachment_name(f"{project.slug}-{release.version}-id-map.json")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@require_GET
@login_required
def release_diff(request, slug, release_id):
    project, role = project_for(request.user, slug, CURATOR_ROLES)
    release = release_for(project, release_id)
    others = Release.objects.ready().filter(project=project).exclude(pk=release.pk)
    against_id = request.GET.get("against")
    if against_id:
        # A malformed id is no release (not a server error).
        against = others.filter(pk=against_id).first() if against_id.isdecimal() else None
    else:
        against = others.filter(created_at__lt=release.created_at).order_by("-created_at").first()
    if release.status != ReleaseStatus.READY or against is None:
        return render(
            request,
            "curation/release_diff.html",
            {"project": project, "role": role, "release": release, "against": None,
             "others": others},
        )  # fmt: skip
    return render(
        request,
        "curation/release_diff.html",
        {
            "project": project,
            "role": role,
            "release": release,
            "against": against,
            "others": others,
            "diff": diff_releases(against, release),
        },
    )
