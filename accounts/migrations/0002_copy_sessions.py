"""Copy the unexpired sessions from Django's session table, so nobody is
signed out by the switch to accounts.Session; each row's user column is
read from its data (left NULL when the data cannot be decoded or names no
existing user: such a session then signs nobody in, as before)."""

from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.core.exceptions import ValidationError
from django.db import migrations
from django.utils import timezone

BATCH = 1000


def copy_sessions(apps, schema_editor):
    # The signing salt comes from the class name: decode as the stores that
    # wrote these rows (Django's and config.sessions', both "SessionStore").
    from django.contrib.sessions.backends.db import SessionStore

    Old = apps.get_model("sessions", "Session")
    New = apps.get_model("accounts", "Session")
    User = apps.get_model(settings.AUTH_USER_MODEL)
    db = schema_editor.connection.alias
    decoder = SessionStore()

    def user_id(session_data):
        value = decoder.decode(session_data).get(SESSION_KEY)
        try:
            return None if value is None else User._meta.pk.to_python(value)
        except ValidationError:  # a malformed id: the session signs nobody in
            return None

    def flush(batch):
        known = set(
            User.objects.using(db)
            .filter(pk__in={s.user_id for s in batch if s.user_id is not None})
            .values_list("pk", flat=True)
        )
        for s in batch:
            if s.user_id not in known:
                s.user_id = None
        New.objects.using(db).bulk_create(batch)

    batch = []
    rows = Old.objects.using(db).filter(expire_date__gt=timezone.now())
    for old in rows.iterator(chunk_size=BATCH):
        batch.append(
            New(
                session_key=old.session_key,
                session_data=old.session_data,
                expire_date=old.expire_date,
                user_id=user_id(old.session_data),
            )
        )
        if len(batch) == BATCH:
            flush(batch)
            batch = []
    if batch:
        flush(batch)


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_initial"),
        ("sessions", "0001_initial"),
    ]

    operations = [migrations.RunPython(copy_sessions, migrations.RunPython.noop)]
