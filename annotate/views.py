"""Site pages of the annotate app: home, a project's overview, stored media."""

from pathlib import Path

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.files.storage import default_storage
from django.db.models import Count, Exists, OuterRef, Q
from django.http import Http404, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.views.decorators.http import require_GET

from annotate.eligibility import short_of_annotators
from annotate.importing.sources import safe_relative_path
from annotate.models import (
    ImageAsset,
    Item,
    ItemPart,
    MediaAsset,
    Project,
    ProjectPause,
)
from annotate.projects import CURATOR_ROLES, project_for
from annotate.qualification.service import is_admitted
from common.serving import stored_file_response


@require_GET
@login_required
def home(request):
    projects = (
        Project.objects.visible_to(request.user)
        .annotate(
            n_items=Count("items", distinct=True),
            n_mine=Count(
                "items__assignments",
                filter=Q(
                    items__assignments__annotator=request.user,
                    items__assignments__status="submitted",
                ),
                distinct=True,
            ),
        )
        .order_by("name")
    )
    return render(request, "annotate/home.html", {"projects": projects})


@require_GET
@login_required
def project_overview(request, slug):
    project, role = project_for(request.user, slug)
    domains = project.domains.annotate(n_items=Count("items")).order_by("position")
    # Curators see what waits on votes nobody eligible can give.
    stuck = short_of_annotators(project).count() if role in CURATOR_ROLES else 0
    context = {"project": project, "role": role, "domains": domains, "stuck": stuck}
    # A newcomer who must qualify first (issue 36; no query unless required).
    context["qualifying"] = not is_admitted(project=project, user=request.user)
    # ... and, for curators, who the check rule paused (annotate.checks).
    context["paused"] = (
        ProjectPause.objects.open().filter(project=project).count()
        if role in CURATOR_ROLES and project.check_rate > 0
        else 0
    )
    return render(request, "annotate/project.html", context)


IMAGE_PREFIXES = ("images/", "thumbs/")
# Videos and audio files, and what is made of them (issue 35).
MEDIA_PREFIXES = ("media/", "posters/", "strips/", "waves/")
SERVED_MEDIA_PREFIXES = (*IMAGE_PREFIXES, *MEDIA_PREFIXES)


@require_GET
@login_required
def media(request, path):
    """Serve stored images, videos and audio files (and their posters, strips
    and waveforms) to signed-in members of a project that uses them, with a
    fixed, safe content type. Content-addressed names make them immutable, so
    caching is long. Byte ranges are served (206) as players need to seek;
    settings.MEDIA_SERVING may hand a video or audio file to a proxy
    (`accel`) or to the bucket (`presigned`) once the checks passed."""
    name = safe_relative_path(path)
    if name is None or not name.startswith(SERVED_MEDIA_PREFIXES):
        raise Http404("No such file")
    if name.startswith(IMAGE_PREFIXES):
        content_type = _stored_image_content_type(name, request.user)
    else:
        content_type = _stored_media_content_type(name, request.user)
    if content_type is None:
        raise Http404("No such file")
    if name.startswith("media/") and settings.MEDIA_SERVING != "stream":
        return _handed_off(name, content_type)
    # Streamed through this view from any storage (object storage too), not
    # redirected to a presigned URL: the sign-in is checked on every request and
    # the bucket could not send these safety headers (docs/decisions.md).
    return stored_file_response(request, name, content_type)


def _handed_off(name: str, content_type: str):
    """After the checks: the proxy sends the file (X-Accel-Redirect to its
    internal location), or the browser fetches it from the bucket by a
    short-lived presigned URL (object storage answers ranges itself)."""
    if settings.MEDIA_SERVING == "accel":
        response = HttpResponse(content_type=content_type)
        response["X-Accel-Redirect"] = f"{settings.MEDIA_ACCEL_PREFIX.rstrip('/')}/{name}"
        response["Cache-Control"] = "private, max-age=31536000, immutable"
        return response
    response = HttpResponseRedirect(default_storage.url(name))
    response["Cache-Control"] = "private, no-store"
    return response


def _stored_media_content_type(name: str, user) -> str | None:
    """The content type of a stored video or audio file, or of its poster,
    strip or waveform (WebP), under the images' rule: an active member of a
    project one of whose items has a part holding it."""
    sha256 = Path(name).stem
    assets = MediaAsset.objects.filter(sha256=sha256)
    if not user.is_superuser:
        assets = assets.filter(
            Exists(
                ItemPart.objects.filter(
                    media=OuterRef("pk"),
                    item__project__memberships__user=user,
                    item__project__memberships__is_active=True,
                )
            )
        )
    asset = assets.only("file", "content_type", "poster", "strip", "waveform").first()
    if asset is None:
        return None
    if name == asset.file:
        return asset.content_type
    if name in (asset.poster, asset.strip, asset.waveform):
        return "image/webp"
    return None


# Content types of the formats the importer validates with Pillow.
IMAGE_CONTENT_TYPES = {
    "PNG": "image/png",
    "JPEG": "image/jpeg",
    "WEBP": "image/webp",
    "GIF": "image/gif",
}


def _stored_image_content_type(name: str, user) -> str | None:
    """The content type of a stored image or thumbnail, from the format
    Pillow validated at import, never from the name; None for anything that
    is not an image the importer stored, or whose items are all in projects
    the user is not an active member of (images are shared across projects, so
    membership of any project that uses it suffices). An image is used as an
    item's own image or as one of its parts (a response's picture, a
    prompt's second image: issue 24). Names end in the image's SHA-256."""
    sha256 = Path(name).stem
    assets = ImageAsset.objects.filter(sha256=sha256)
    if not user.is_superuser:
        # An *active* membership, as annotate.projects rules everywhere: a
        # deactivated member is a stranger here too (issue 29). Both conditions
        # sit in one filter() so they hold for the same membership row.
        assets = assets.filter(
            Exists(
                Item.objects.filter(
                    image=OuterRef("pk"),
                    project__memberships__user=user,
                    project__memberships__is_active=True,
                )
            )
            | Exists(
                ItemPart.objects.filter(
                    image=OuterRef("pk"),
                    item__project__memberships__user=user,
                    item__project__memberships__is_active=True,
                )
            )
        )
    asset = assets.only("format", "file", "thumbnail").first()
    if asset is None:
        return None
    if name == asset.file:
        return IMAGE_CONTENT_TYPES.get(asset.format.upper())
    if name == asset.thumbnail:
        return "image/webp"  # thumbnails are always written as WebP
    return None
