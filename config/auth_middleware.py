"""Django's AuthenticationMiddleware, letting the backend use the user that
the session's own query read (config.sessions, config.auth_backends).

`request.user` resolves, lazily and once, through django.contrib.auth's
get_user (session keys, backend path, session-hash check: all Django's).
Only while that call runs, the request's session store is made visible to
UserBackend.get_user, which takes the user from it when the ids match; no
other request, thread or later call can see it."""

from django.contrib import auth
from django.contrib.auth.middleware import AuthenticationMiddleware as DjangoMiddleware
from django.utils.functional import SimpleLazyObject

from .auth_backends import session_in_lookup


def get_user(request):
    if not hasattr(request, "_cached_user"):
        token = session_in_lookup.set(request.session)
        try:
            request._cached_user = auth.get_user(request)
        finally:
            session_in_lookup.reset(token)
    return request._cached_user


class AuthenticationMiddleware(DjangoMiddleware):
    def process_request(self, request):
        super().process_request(request)  # its checks, and request.auser
        request.user = SimpleLazyObject(lambda: get_user(request))
