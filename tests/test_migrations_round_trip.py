"""Every migration goes back and forward again, as `manage.py migrate` runs
them; the data-migration tests build their old databases forward from an
empty one instead (tests/migrations.py), so this is where the way back of
each migration is exercised."""

import pytest
from django.db import connection

from tests.migrations import database_copies, migrated_to, unapplied_to


def schema() -> dict:
    """Each table's columns and constraints (indexes included), by name."""
    introspection = connection.introspection
    with connection.cursor() as cursor:
        return {
            table: (
                sorted(
                    column.name for column in introspection.get_table_description(cursor, table)
                ),
                sorted(introspection.get_constraints(cursor, table)),
            )
            for table in introspection.table_names(cursor)
        }


FIRST = [("annotate", "0001_initial")]


@pytest.mark.django_db(transaction=True)
def test_every_migration_goes_back_and_forward_and_an_old_database_built_forward_is_the_same():
    latest = schema()
    # Back to annotate's first migration, as `manage.py migrate` goes: every
    # later annotate migration, and each curation one that needs one of
    # them, unapplied; then all applied again.
    with unapplied_to(FIRST):
        old = schema()
        assert "annotate_item" in old and "curation_release" not in old
        assert "correct_1_yes" not in old["annotate_item"][0]
    assert schema() == latest
    # The data-migration tests' way: the same old database, built forward.
    with migrated_to(FIRST) as apps:
        assert database_copies() is not None
        assert schema() == old
        apps.get_model("annotate", "Project").objects.create(slug="old", name="Old")
    assert schema() == latest
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM annotate_project")
        assert cursor.fetchone() == (0,)
