"""Django's model backend with the per-request user lookup in raw SQL.

Every signed-in request loads its user by primary key; Django builds a
QuerySet for that, which costs more CPU than the database spends answering.
Authentication, permissions and the is_active rule are ModelBackend's."""

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import ValidationError


class UserBackend(ModelBackend):
    def get_user(self, user_id):
        User = get_user_model()
        table = User._meta.db_table
        pk = User._meta.pk.column
        try:
            pk_value = User._meta.pk.to_python(user_id)
        except ValidationError:  # a malformed id in the session: nobody
            return None
        for user in User._default_manager.raw(
            f'SELECT * FROM "{table}" WHERE "{pk}" = %s', [pk_value]
        ):
            return user if self.user_can_authenticate(user) else None
        return None
