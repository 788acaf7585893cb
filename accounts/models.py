"""Sessions with their user as a column (config.sessions).

Django's session table keeps the signed-in user only inside the encoded
session data, so every signed-in request read the session, then the user:
two queries. With the user's id beside the data, one query with a join
brings both; the user id in the data stays the authority (config.sessions,
config.auth_backends)."""

from django.conf import settings
from django.contrib.sessions.base_session import AbstractBaseSession
from django.db import models


class Session(AbstractBaseSession):
    # Written from the session data on every save (config.sessions); NULL for
    # an anonymous session. Deleting a user deletes their sessions.
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
    )

    @classmethod
    def get_session_store_class(cls):
        from config.sessions import SessionStore

        return SessionStore
