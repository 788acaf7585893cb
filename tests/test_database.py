"""PostgreSQL connections read timestamps with psycopg's C loader
(config/database.py), giving exactly what Django's own loader gives."""

import datetime

import pytest
from django.db import connection
from django.db.backends.postgresql.psycopg_any import register_tzloader
from django.utils import timezone

from annotate.models import Project
from config.database import UTCTimestamptzLoader
from tests.conftest import on_postgres

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(not on_postgres(), reason="PostgreSQL's timestamp loader"),
]

VALUES = [
    "2026-11-23 07:18:05.420535+00",
    "2026-03-29 01:30:00+01",
    "1999-12-31 23:59:59.999999-05:30",
    "2000-02-29 12:00:00+05:45",
    "1970-01-01 00:00:00+00",
    "0001-01-01 00:00:00+00",
    "9999-12-31 23:59:59.999999+00",
    "2024-06-30 23:59:60+00",  # a leap second: PostgreSQL rolls it over
]


def read(values):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT v::timestamptz FROM unnest(%s::text[]) WITH ORDINALITY AS t(v, n) ORDER BY n",
            [values],
        )
        return [row[0] for row in cursor.fetchall()]


def test_the_connection_uses_the_c_loader_and_cursors_keep_it():
    connection.ensure_connection()
    with connection.cursor() as cursor:
        # Django's create_cursor left the connection's loader alone.
        assert cursor.cursor.adapters.get_loader(1184, 0) is UTCTimestamptzLoader
    loader = UTCTimestamptzLoader(1184, connection.connection)
    assert type(loader).__module__.endswith("_psycopg")  # compiled, not Python


def test_timestamps_read_in_c_equal_what_djangos_loader_reads():
    fast = read(VALUES)
    assert all(v.tzinfo is datetime.UTC for v in fast)
    # Django's own loader on a cursor of the same connection, for comparison.
    with connection.cursor() as cursor:
        register_tzloader(connection.timezone, cursor.cursor)
        cursor.execute(
            "SELECT v::timestamptz FROM unnest(%s::text[]) WITH ORDINALITY AS t(v, n) ORDER BY n",
            [VALUES],
        )
        django_loaded = [row[0] for row in cursor.fetchall()]
    assert fast == django_loaded
    assert [v.tzinfo for v in fast] == [v.tzinfo for v in django_loaded]
    assert fast[2] == datetime.datetime(2000, 1, 1, 5, 29, 59, 999999, tzinfo=datetime.UTC)


def test_models_round_trip_their_datetimes():
    when = timezone.now().replace(microsecond=123456)
    project = Project.objects.create(slug="ts", name="ts")
    Project.objects.filter(pk=project.pk).update(created_at=when)
    assert Project.objects.get(pk=project.pk).created_at == when
