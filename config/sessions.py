"""Database sessions that bring their user along: one query per request.

Every signed-in request reads its session, then its user. Sessions live in
accounts.Session, which keeps the signed-in user's id as a column beside the
encoded data (written from the data on every save), so one raw query reads
the session and, joined, its user. The user read with the session is offered
to the authentication backend for this request only (config.auth_backends):
the user id in the session data stays the authority, Django's session-hash
check still runs, and when the two ids disagree the backend reads the user
by itself as before. Writing, expiry and everything else are Django's
(`SESSION_ENGINE = "config.sessions"`)."""

from __future__ import annotations

from functools import cache

from django.contrib.auth import SESSION_KEY, get_user_model
from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.core.exceptions import ValidationError
from django.db import connections, router
from django.utils import timezone


class _Row:
    __slots__ = ("session_data",)

    def __init__(self, session_data: str):
        self.session_data = session_data


@cache
def _load_query(alias: str) -> tuple[str, list[str], int]:
    """(the SELECT of a session joined to its user, the user's attnames in
    column order, the position of the user's pk among them) for one
    database; built once, since it runs on every signed-in request."""
    from accounts.models import Session

    User = get_user_model()
    connection = connections[alias]
    qn = connection.ops.quote_name
    fields = User._meta.concrete_fields
    sql = (
        f"SELECT s.session_data, {', '.join('u.' + qn(f.column) for f in fields)} "
        f"FROM {qn(Session._meta.db_table)} s "
        f"LEFT JOIN {qn(User._meta.db_table)} u ON u.{qn(User._meta.pk.column)} = s.user_id "
        "WHERE s.session_key = %s AND s.expire_date > %s"
    )
    attnames = [f.attname for f in fields]
    return sql, attnames, attnames.index(User._meta.pk.attname)


class SessionStore(DatabaseSessionStore):
    # The user whose id the session row's user column holds, read in the same
    # query as the session (None: anonymous, unknown, or not loaded yet).
    session_user = None

    @classmethod
    def get_model_class(cls):
        from accounts.models import Session

        return Session

    def _get_session_from_db(self):
        self.session_user = None
        key = self.session_key  # None when the cookie's key is malformed
        if key is None:
            return None
        connection = connections[router.db_for_read(self.model)]
        sql, attnames, pk_at = _load_query(connection.alias)
        with connection.cursor() as cursor:
            cursor.execute(sql, [key, connection.ops.adapt_datetimefield_value(timezone.now())])
            row = cursor.fetchone()
        if row is None:
            # As Django's: an unknown or expired key is replaced on save.
            self._session_key = None
            return None
        if row[1 + pk_at] is not None:
            self.session_user = get_user_model().from_db(connection.alias, attnames, row[1:])
        return _Row(row[0])

    def create_model_instance(self, data):
        obj = super().create_model_instance(data)
        obj.user_id = self._user_id(data)
        return obj

    async def acreate_model_instance(self, data):
        obj = await super().acreate_model_instance(data)
        obj.user_id = self._user_id(data)
        return obj

    @staticmethod
    def _user_id(data):
        """The signed-in user's id, as django.contrib.auth reads it from the data."""
        if SESSION_KEY not in data:
            return None
        try:
            return get_user_model()._meta.pk.to_python(data[SESSION_KEY])
        except ValidationError:
            return None

    def flush(self):
        self.session_user = None
        super().flush()

    def cycle_key(self):
        self.session_user = None
        super().cycle_key()
