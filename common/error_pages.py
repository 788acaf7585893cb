"""The pages a browser gets when a request goes nowhere (issue 31, "no dead
ends"): 400, 403, 404, 405 and 500 in the site's own layout, each saying
what happened and offering the way back: the page the user came from (same
site only), the page above this address, and their projects. Under /api/
the same refusals are JSON in the API's one error format
(common.api.errors), never HTML.

Django's own handlers render a bare "Not Found"; a view decorated with
require_POST answers a bookmarked form URL with an empty 405, which
`MethodNotAllowedPages` turns into a page (or JSON) here."""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

from django.http import HttpResponse, HttpResponseNotAllowed, JsonResponse
from django.shortcuts import redirect
from django.template.loader import render_to_string
from django.templatetags.static import static
from django.urls import Resolver404, resolve, reverse
from django.views.decorators.http import require_GET

API_PREFIX = "/api/"
logger = logging.getLogger(__name__)

PAGES = {
    400: ("Bad request", "The browser sent a request this page cannot read."),
    403: (
        "You cannot open this page",
        "Your role does not allow it. A project admin can change your role on the "
        "project's members page.",
    ),
    404: (
        "Page not found",
        "Nothing lives at this address, or it belongs to a project you are not a member of.",
    ),
    405: (
        "This address is for a form",
        "It saves something when its form is sent, so it cannot be opened as a page "
        "(a bookmark or a reloaded form). Go to the page the form is on and use it there.",
    ),
    500: (
        "Something went wrong on our side",
        "The error has been logged. Nothing you sent was half-saved: try again, or go back.",
    ),
}


def way_back(request) -> list[tuple[str, str]]:
    """(label, url) links out of a dead end, most specific first: the
    referring page when it is on this site, the nearest address above this
    one that is a page, and the projects list."""
    links: list[tuple[str, str]] = []
    here = request.path
    referer = urlsplit(request.META.get("HTTP_REFERER", ""))
    if referer.path and referer.netloc == request.get_host() and referer.path != here:
        links.append(("Back to the page you came from", referer.path))
    parts = [p for p in here.split("/") if p]
    while parts:
        parts.pop()
        parent = "/" + "/".join(parts) + ("/" if parts else "")
        if parent == "/":
            break
        try:
            resolve(parent)
        except Resolver404:
            continue
        if parent not in {url for _, url in links}:
            links.append(("Up to the page above this one", parent))
        break
    links.append(("Your projects", reverse("home")))
    return links


def render_error_page(request, status: int, detail: str = "", allowed=()) -> HttpResponse:
    title, message = PAGES[status]
    context = {
        "status": status,
        "title": title,
        "message": message,
        "detail": detail,
        "allowed": ", ".join(allowed),
        "links": way_back(request),
    }
    try:
        # With the request: the top bar knows who is logged in.
        body = render_to_string("errors/page.html", context, request=request)
    except Exception:  # a 500 whose cause (database, session) breaks the page too
        if status != 500:
            raise
        logger.exception("The 500 page itself failed; answering with plain text")
        return HttpResponse(
            "500 Internal Server Error: the error has been logged.",
            status=500,
            content_type="text/plain; charset=utf-8",
        )
    response = HttpResponse(body, status=status)
    if status == 405:
        response["Allow"] = ", ".join(allowed)
    return response


def _public_message(exception) -> str:
    """The message a view gave its Http404/PermissionDenied (ours are written
    for users: "No such project"); Django's resolver's own dict is not."""
    text = str(exception or "")
    return "" if not text or text.startswith("{") else text


def page_not_found(request, exception=None):
    return render_error_page(request, 404, _public_message(exception))


def permission_denied(request, exception=None):
    return render_error_page(request, 403, _public_message(exception))


def bad_request(request, exception=None):
    return render_error_page(request, 400)


def server_error(request):
    return render_error_page(request, 500)


def csrf_failure(request, reason=""):
    """CSRF_FAILURE_VIEW: a form sent from a stale or other-site page."""
    if request.path.startswith(API_PREFIX):
        from common.api.errors import error_body

        return JsonResponse(
            error_body("permission_denied", f"CSRF check failed: {reason}"), status=403
        )
    return render_error_page(
        request,
        403,
        "The form's security check (CSRF) failed: it was sent from a page that is too "
        "old (or from another site). Reload the page and send it again.",
    )


@require_GET
def favicon(request):
    """/favicon.ico, the address browsers probe by themselves (pages that
    name static/favicon.svg never ask): the vendored .ico beside it."""
    return redirect(static("favicon.ico"))


class MethodNotAllowedPages:
    """An empty 405 (require_POST, require_GET) becomes the 405 page, or the
    API's JSON error under /api/. Responses with a body are left alone (DRF's
    own 405s already are JSON)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if (
            response.status_code != 405
            or not isinstance(response, HttpResponseNotAllowed)
            or response.content
        ):
            return response
        allowed = [m.strip() for m in response.get("Allow", "").split(",") if m.strip()]
        if request.path.startswith(API_PREFIX):
            from common.api.errors import error_body

            refused = JsonResponse(
                error_body(
                    "method_not_allowed",
                    f"{request.method} is not allowed here; use {' or '.join(allowed)}.",
                ),
                status=405,
            )
            refused["Allow"] = ", ".join(allowed)
            return refused
        return render_error_page(request, 405, allowed=allowed)
