"""HTML pages about the API: the Swagger UI (vendored files, no inline
script) and the page where a signed-in user creates or revokes their token."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods
from rest_framework.authtoken.models import Token

from common.body_guard import guard_body, signed_in

DOCS_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
)


@require_GET
def api_docs(request):
    """Swagger UI over /api/schema/. Public, like the schema: it documents
    the endpoints, every one of which still checks credentials."""
    response = render(request, "api/docs.html")
    # The site's strict policy, plus data: images: Swagger UI's stylesheet
    # draws its icons as data: SVGs. Still no inline script or style.
    response["Content-Security-Policy"] = DOCS_CSP
    return response


@guard_body(signed_in)
@require_http_methods(["GET", "POST"])
@login_required
def api_token(request):
    """GET: whether you have a token. POST action=create: a new token (any
    old one stops working), shown once on the response page only.
    POST action=revoke: delete it."""
    new_key = None
    if request.method == "POST":
        action = request.POST.get("action")
        if action == "create":
            with transaction.atomic():
                Token.objects.filter(user=request.user).delete()
                new_key = Token.objects.create(user=request.user).key
        elif action == "revoke":
            deleted, _ = Token.objects.filter(user=request.user).delete()
            messages.success(request, "Token revoked." if deleted else "You had no token.")
            return redirect("api_token")
        else:
            messages.error(request, "Unknown action.")
            return redirect("api_token")
    token = Token.objects.filter(user=request.user).only("created").first()
    response = render(request, "api/token.html", {"token": token, "new_key": new_key})
    # The key is on this page once: never cache it.
    response["Cache-Control"] = "no-store"
    return response
