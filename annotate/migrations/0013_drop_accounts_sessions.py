"""Back to Django's own sessions (issue 18): everybody signs in again.

The `accounts` app, whose table held every session since November 2026,
is gone. Its sessions are not moved: they name an authentication backend
that no longer exists, so Django would refuse them anyway, and a session
lasts at most SESSION_COOKIE_AGE (12 hours by default). This migration
drops the old table, empties django_session (rows left there from before
the accounts app must not come back to life), and forgets the accounts
app's applied migrations, so that an older release migrated again rebuilds
its table, and no future app called `accounts` has migrations marked as
applied that never ran.

On a database that never had the accounts app every statement does
nothing. Not reversible in data: going back leaves everybody signed out
once more."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0012_domain_correctness_wording"),
        ("sessions", "0001_initial"),
    ]

    operations = [
        migrations.RunSQL(
            [
                "DROP TABLE IF EXISTS accounts_session",
                "DELETE FROM django_session",
                "DELETE FROM django_migrations WHERE app = 'accounts'",
            ],
            reverse_sql=migrations.RunSQL.noop,
        ),
    ]
