"""Django's model backend, and DRF's token authentication, with the
per-request user lookup in raw SQL, or none at all when the session's own
query brought the user (config.sessions).

Every signed-in request loads its user by primary key; Django builds a
QuerySet for that, which costs more CPU than the database spends answering.
Authentication, permissions and the is_active rule are ModelBackend's."""

from contextvars import ContextVar

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication as drf_authentication
from rest_framework import exceptions as drf_exceptions

# The session of the request whose user AuthenticationMiddleware is resolving,
# set only for the duration of that call (config.auth_middleware).
session_in_lookup: ContextVar = ContextVar("session_in_lookup", default=None)


class UserBackend(ModelBackend):
    def get_user(self, user_id):
        User = get_user_model()
        table = User._meta.db_table
        pk = User._meta.pk.column
        try:
            pk_value = User._meta.pk.to_python(user_id)
        except ValidationError:  # a malformed id in the session: nobody
            return None
        # The user the request's session row named, read in the session's own
        # query (config.sessions), when it is the user the session data names.
        user = getattr(session_in_lookup.get(), "session_user", None)
        if user is not None and user.pk == pk_value:
            return user if self.user_can_authenticate(user) else None
        for user in User._default_manager.raw(
            f'SELECT * FROM "{table}" WHERE "{pk}" = %s', [pk_value]
        ):
            return user if self.user_can_authenticate(user) else None
        return None


class TokenAuthentication(drf_authentication.TokenAuthentication):
    """DRF's token authentication with its per-request lookup (the token and
    its user) in one raw query, for the same reason as UserBackend. Errors,
    the header format and the inactive-user rule are DRF's."""

    def authenticate_credentials(self, key):
        Token = self.get_model()
        User = get_user_model()
        sql = (
            f'SELECT u.*, t."created" AS token_created FROM "{Token._meta.db_table}" t '
            f'INNER JOIN "{User._meta.db_table}" u ON u."{User._meta.pk.column}" = t."user_id" '
            'WHERE t."key" = %s'
        )
        user = next(iter(User._default_manager.raw(sql, [key])), None)
        if user is None:
            raise drf_exceptions.AuthenticationFailed(_("Invalid token."))
        if not user.is_active:
            raise drf_exceptions.AuthenticationFailed(_("User inactive or deleted."))
        token = Token(key=key, user=user, created=user.token_created)
        token._state.adding = False
        token._state.db = user._state.db
        return user, token
