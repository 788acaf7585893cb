"""The API's token authentication: DRF's own, reusing the token that
config.request_limits.BodyGuardMiddleware already looked up for this request
to check the sender before reading the body (one query, not two)."""

from __future__ import annotations

from rest_framework import authentication


class TokenAuthentication(authentication.TokenAuthentication):
    def authenticate(self, request):
        # (The middleware's result for this very request's header; DRF's
        # Request reads the attribute from the Django request it wraps.)
        checked = getattr(request, "checked_token", None)
        return checked if checked is not None else super().authenticate(request)
