"""Database sessions read with one raw query.

Every signed-in request reads its session. Django's database backend builds
a QuerySet for that, which costs more CPU than PostgreSQL spends answering;
this store sends the same query as plain SQL. Writing, expiry and everything
else are Django's (`SESSION_ENGINE = "config.sessions"`)."""

from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.db import connections, router
from django.utils import timezone


class _Row:
    __slots__ = ("session_data",)

    def __init__(self, session_data: str):
        self.session_data = session_data


class SessionStore(DatabaseSessionStore):
    def _get_session_from_db(self):
        key = self.session_key  # None when the cookie's key is malformed
        if key is None:
            return None
        model = self.model
        connection = connections[router.db_for_read(model)]
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT session_data FROM {connection.ops.quote_name(model._meta.db_table)} "
                "WHERE session_key = %s AND expire_date > %s",
                [key, connection.ops.adapt_datetimefield_value(timezone.now())],
            )
            row = cursor.fetchone()
        if row is None:
            # As Django's: an unknown or expired key is replaced on save.
            self._session_key = None
            return None
        return _Row(row[0])
