"""Refusals that must happen before a view, or Django, reads the request.

* A body larger than ``UPLOAD_MAX_BYTES`` (by its Content-Length) is refused
  with 413 before a byte of it is read or spooled to disk.
* A body larger than ``ANONYMOUS_BODY_MAX_BYTES`` from a client that is
  neither signed in (session) nor presenting an API token that exists is
  refused with 403 (401 under /api/), also unread: CsrfViewMiddleware reads
  the form body to find its token, so without this an anonymous client with
  a CSRF cookie could make the server spool any upload before any check.
  The log-in form and other anonymous posts are far smaller.
* A query string holding a NUL character is a 400: no filter can match it
  and PostgreSQL refuses it in a query (a 500 otherwise).

Placed after the authentication middleware (request.user) and before any
view: CsrfViewMiddleware reads the body only in process_view, which runs
after every middleware's __call__ has passed the request on.

BodyGuardMiddleware (issue 29) then decides, per view and before any
process_view that could read the body (it sits just ahead of
CsrfViewMiddleware), who may send that view a body and how large
(common.body_guard): a signed-in stranger's upload to someone else's
project or assignment is a 404 (403 for a member without the role), unread.
A body no larger than UNCHECKED_BODY_MAX_BYTES, which any view takes
unchecked, goes to the view, whose own check answers the same.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse, JsonResponse

from common.body_guard import guard_of

# common.api.errors' prefix and error shape, not imported: that module
# imports DRF, whose settings import it back, and this runs before any view.
API_PREFIX = "/api/"


def error_body(code: str, message: str) -> dict:
    return {"error": {"code": code, "message": message, "fields": {}}}


def _length(request) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


def _token_exists(request) -> bool:
    header = request.META.get("HTTP_AUTHORIZATION", "")
    scheme, _, key = header.partition(" ")
    if scheme.lower() not in ("token", "bearer") or not key.strip():
        return False
    from rest_framework.authtoken.models import Token

    return Token.objects.filter(key=key.strip()).exists()


def _refuse(request, status: int, code: str, message: str):
    if request.path.startswith(API_PREFIX):
        response = JsonResponse(error_body(code, message), status=status)
    else:
        response = HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")
    return response


class RequestLimitsMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if "\x00" in request.META.get("QUERY_STRING", "") or "%00" in request.META.get(
            "QUERY_STRING", ""
        ):
            return _refuse(request, 400, "invalid", "The query string holds a NUL character (%00).")
        length = _length(request)
        if length > settings.UPLOAD_MAX_BYTES:
            return _refuse(
                request,
                413,
                "too_large",
                f"The request body is larger than {settings.UPLOAD_MAX_BYTES} bytes.",
            )
        if (
            length > settings.ANONYMOUS_BODY_MAX_BYTES
            and not request.user.is_authenticated
            and not _token_exists(request)
        ):
            if request.path.startswith(API_PREFIX):
                response = _refuse(
                    request,
                    401,
                    "not_authenticated",
                    "Authentication credentials were not provided.",
                )
                response["WWW-Authenticate"] = "Token"
                return response
            return _refuse(request, 403, "forbidden", "Sign in before uploading.")
        return self.get_response(request)


# Methods whose body no part of Django or DRF reads on its own.
SAFE_METHODS = ("GET", "HEAD", "OPTIONS", "TRACE")


def _sender(request):
    """Who sends the request, as the view will see them: under /api/ the
    owner of a valid `Authorization: Token` (DRF's TokenAuthentication, the
    first of the API's classes), else the session's user. A bad token is
    anonymous here; the view then answers 401 without reading the body."""
    if request.path.startswith(API_PREFIX) and request.META.get("HTTP_AUTHORIZATION"):
        from rest_framework.authentication import TokenAuthentication
        from rest_framework.exceptions import AuthenticationFailed

        try:
            found = TokenAuthentication().authenticate(request)
        except AuthenticationFailed:
            return AnonymousUser()
        if found is not None:
            request.checked_token = found  # the view's DRF reuses it (common.api.auth)
            return found[0]
    return request.user


class BodyGuardMiddleware:
    """Runs the resolved view's body check (common.body_guard) and bounds the
    body by what the view declared, before CSRF's form parsing (the next
    middleware), DRF's parsers or the view read a byte of it."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        length = _length(request)
        if request.method in SAFE_METHODS or length <= 0:
            return None
        check, uploads = guard_of(view_func)
        if check is None:
            limit = settings.UNCHECKED_BODY_MAX_BYTES
        elif length <= settings.UNCHECKED_BODY_MAX_BYTES:
            # A body no larger than any signed-in user may send a view that
            # checks nothing: checking it first would spare nothing, and the
            # view checks as ever (a vote's small JSON: one statement and its
            # Python saved per vote; docs/decisions.md, issue 32).
            return None
        else:
            user = _sender(request)
            if user.is_authenticated:  # (anonymous: the view redirects or answers 401)
                try:
                    check(user, **view_kwargs)
                except Http404 as exc:
                    if not request.path.startswith(API_PREFIX):
                        raise
                    return _refuse(request, 404, "not_found", str(exc) or "Not found.")
                except PermissionDenied as exc:
                    if not request.path.startswith(API_PREFIX):
                        raise
                    message = str(exc) or "You do not have permission."
                    return _refuse(request, 403, "permission_denied", message)
            limit = settings.UPLOAD_MAX_BYTES if uploads else settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if length > limit:
            return _refuse(
                request, 413, "too_large", f"The request body is larger than {limit} bytes."
            )
        return None
