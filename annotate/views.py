"""Site pages of the annotate app: home, a project's overview, stored media."""

from pathlib import Path

from django.contrib.auth.decorators import login_required
from django.core.files.storage import default_storage
from django.db.models import Count, Exists, OuterRef, Q
from django.http import FileResponse, Http404
from django.shortcuts import render
from django.views.decorators.http import require_GET

from annotate.eligibility import short_of_annotators
from annotate.importing.sources import safe_relative_path
from annotate.models import (
    ImageAsset,
    Item,
    ItemPart,
    Project,
)
from annotate.projects import CURATOR_ROLES, project_for
from common.storage import open_stored


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
    return render(
        request,
        "annotate/project.html",
        {"project": project, "role": role, "domains": domains, "stuck": stuck},
    )


SERVED_MEDIA_PREFIXES = ("images/", "thumbs/")


@require_GET
@login_required
def media(request, path):
    """Serve stored images to signed-in users with a fixed, safe content type.
    Content-addressed names make them immutable, so caching is long."""
    name = safe_relative_path(path)
    if name is None or not name.startswith(SERVED_MEDIA_PREFIXES):
        raise Http404("No such file")
    content_type = _stored_image_content_type(name, request.user)
    if content_type is None:
        raise Http404("No such file")
    # Streamed through this view from any storage (object storage too), not
    # redirected to a presigned URL: the sign-in is checked on every request and
    # the bucket could not send these safety headers (docs/decisions.md).
    try:
        stream = open_stored(default_storage, name)
    except FileNotFoundError:
        raise Http404("No such file") from None
    response = FileResponse(stream, content_type=content_type)
    response["Cache-Control"] = "private, max-age=31536000, immutable"
    # Even if a browser sniffed past the content type, the file is a sandboxed
    # document that may load nothing and run nothing.
    response["Content-Security-Policy"] = "sandbox; default-src 'none'"
    return response


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
