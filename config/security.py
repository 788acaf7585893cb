"""Security headers sent with every response, and the client address that
login rate limiting counts failures against."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse


def content_security_policy(policy: dict[str, list[str]]) -> str:
    return "; ".join(f"{directive} {' '.join(sources)}" for directive, sources in policy.items())


class SecurityHeadersMiddleware:
    """Content-Security-Policy and Permissions-Policy (Django 5.2's
    SecurityMiddleware sends the others). A view that sets its own policy,
    such as the sandboxed media view, keeps it."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.csp = content_security_policy(settings.SECURE_CSP)
        self.permissions_policy = settings.PERMISSIONS_POLICY

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", self.csp)
        response.headers.setdefault("Permissions-Policy", self.permissions_policy)
        return response


def client_ip(request: HttpRequest) -> str | None:
    """The address login failures are counted against. Behind the TLS proxy
    (BEHIND_PROXY) every request comes from the proxy, so the client is the
    last X-Forwarded-For entry: the one our proxy appended. Earlier entries
    are whatever the client sent and could be forged to dodge the limit."""
    if settings.BEHIND_PROXY:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
        hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
        if hops:
            return hops[-1]
    return request.META.get("REMOTE_ADDR")


def login_locked_out(request: HttpRequest, original_response=None, credentials=None):
    """The log-in page again, saying why logging in is refused and for how
    long (django-axes calls this instead of its plain-text 429)."""
    from django.contrib.auth.forms import AuthenticationForm
    from django.shortcuts import render

    minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
    return render(
        request,
        "registration/login.html",
        {
            "form": AuthenticationForm(request),
            "locked_out": True,
            "lockout_minutes": minutes,
            "failure_limit": settings.AXES_FAILURE_LIMIT,
            "next": request.POST.get("next", ""),
        },
        status=429,
    )
