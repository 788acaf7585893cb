"""Inserting many new rows from plain values: PostgreSQL's COPY, and
``bulk_create`` on any other database, with the same rows either way.

An import writes 100,000 items, 400,000 parts and 100,000 verdicts.
``bulk_create`` builds a model instance per row and, on PostgreSQL (Django
5.2), sends each column as one array that psycopg escapes value by value in
Python: most of a big import's time went there. Here a row is a tuple of the
values of the fields the caller names; every other field gets what
``bulk_create`` would give it (its default; ``auto_now``/``auto_now_add``:
now), and every value goes through the field's own ``get_db_prep_save``,
as Django's insert does. On PostgreSQL the rows are streamed with COPY
(psycopg's public ``cursor.copy()``); the primary keys, when asked for, are
taken from the table's sequence first (``nextval``), so they are known
without a RETURNING clause. Other databases get ``bulk_create``.

COPY has no ON CONFLICT: the rows must be new (a duplicate is an
IntegrityError, as with ``bulk_create``); ``insert_per_key`` covers the
"ignore conflicts" case for rows that differ only by one column.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, connections, models
from django.utils import timezone

# Off only in tests, to compare both paths on PostgreSQL.
USE_COPY = True


def copy_available() -> bool:
    """Whether inserts here go through COPY (PostgreSQL) or bulk_create."""
    return USE_COPY and connection.vendor == "postgresql"


def _fields(model, names: Sequence[str]) -> list:
    return [model._meta.get_field(name) for name in names]


def _filled(model, given: Sequence) -> tuple[list, list]:
    """The other concrete fields (not the auto primary key) and the database
    values bulk_create would give them."""
    now = timezone.now()
    named = {f.column for f in given}
    fields, values = [], []
    for f in model._meta.concrete_fields:
        if f.column in named or (f.primary_key and f.db_returning):
            continue
        value = now if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False) else None
        if value is None:
            value = f.get_default()
        fields.append(f)
        values.append(f.get_db_prep_save(value, connection))
    return fields, values


# Fields whose get_db_prep_save returns a str (int) value as it is: a column
# of these holding only str (int) values is sent without calling it per value.
_TEXT_FIELDS = (models.CharField, models.TextField)
_INT_FIELDS = (
    models.IntegerField,
    models.BigIntegerField,
    models.SmallIntegerField,
    models.PositiveIntegerField,
    models.PositiveBigIntegerField,
    models.PositiveSmallIntegerField,
    models.AutoField,
    models.BigAutoField,
)


def _conversions(given: list, rows: list) -> list[tuple[int, Any]]:
    """(index, get_db_prep_save) of the columns whose values must be
    converted one by one: all but those of plain text and integer fields
    (exactly those classes) holding only str, int or None."""
    conv = []
    for i, f in enumerate(given):
        target = f.target_field if f.is_relation else f
        kind = str if type(target) in _TEXT_FIELDS else int if type(target) in _INT_FIELDS else None
        if kind is None or not all(type(row[i]) is kind or row[i] is None for row in rows):
            conv.append((i, f.get_db_prep_save))
    return conv


def reserve_ids(model, n: int) -> list[int]:
    """`n` fresh primary keys of `model` from its table's sequence, ascending
    (PostgreSQL). Nobody else gets them; an unused one is only a gap."""
    if n == 0:
        return []
    pk = model._meta.pk
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
            [model._meta.db_table, pk.column, n],
        )
        return sorted(row[0] for row in cursor.fetchall())


def insert_rows(
    model, names: Sequence[str], rows: Iterable[Sequence[Any]], *, return_ids: bool = False
) -> list[int]:
    """Insert `rows` (each the values of the fields `names`, attnames such as
    ``item_id`` for foreign keys) as new rows of `model`. Returns their
    primary keys in row order if `return_ids`, else []."""
    rows = rows if isinstance(rows, list) else list(rows)
    if not rows:
        return []
    given = _fields(model, names)
    if not copy_available():
        objs = model.objects.bulk_create(
            [model(**dict(zip(names, row, strict=True))) for row in rows], batch_size=1000
        )
        return [obj.pk for obj in objs] if return_ids else []
    rest, rest_values = _filled(model, given)
    columns = [f.column for f in given] + [f.column for f in rest]
    ids: list[int] = []
    if return_ids:
        ids = reserve_ids(model, len(rows))
        columns.insert(0, model._meta.pk.column)
    quote = connection.ops.quote_name
    statement = "COPY {} ({}) FROM STDIN".format(
        quote(model._meta.db_table), ", ".join(quote(c) for c in columns)
    )
    conv = _conversions(given, rows)
    tail = tuple(rest_values)
    db = connections[DEFAULT_DB_ALIAS]
    with db.cursor() as cursor:
        _copy(db, cursor, statement, rows, conv, tail, ids)
    return ids


def _copy(db, cursor, statement: str, rows: list, conv: list, tail: tuple, ids: list) -> None:
    """COPY `rows` (each converted by `conv`, then `tail` appended; its id
    first if `ids`)."""
    with cursor.copy(statement) as copy:
        write = copy.write_row
        for n, row in enumerate(rows):
            if conv:
                values = list(row)
                for i, prep in conv:
                    values[i] = prep(values[i], db)
                row = values
            write((ids[n], *row, *tail) if ids else (*row, *tail))


def insert_per_key(model, key: str, keys: Sequence[Any], fixed: dict[str, Any]) -> None:
    """One new row of `model` per value of `keys` (field `key`), every row
    with the same `fixed` values, skipping a key that already has its row
    (bulk_create's ignore_conflicts)."""
    if not keys:
        return
    if not copy_available():
        model.objects.bulk_create(
            [model(**{key: k}, **fixed) for k in keys], batch_size=1000, ignore_conflicts=True
        )
        return
    names = list(fixed)
    given = _fields(model, [key, *names])
    rest, rest_values = _filled(model, given)
    fixed_values = [
        f.get_db_prep_save(fixed[n], connection) for f, n in zip(given[1:], names, strict=True)
    ]
    quote = connection.ops.quote_name
    columns = ", ".join(quote(f.column) for f in [*given, *rest])
    # Typed placeholders: an untyped NULL in a SELECT list would be text.
    placeholders = ", ".join(f"%s::{f.cast_db_type(connection)}" for f in [*given[1:], *rest])
    prep = given[0].get_db_prep_save
    array = f"%s::{given[0].cast_db_type(connection)}[]"
    with connection.cursor() as cursor:
        for start in range(0, len(keys), 10_000):
            chunk = [prep(k, connection) for k in keys[start : start + 10_000]]
            # A scalar array of the keys (one parameter), the rest constants.
            cursor.execute(
                f"INSERT INTO {quote(model._meta.db_table)} ({columns}) "
                f"SELECT k, {placeholders} FROM unnest({array}) AS k ON CONFLICT DO NOTHING",
                [*fixed_values, *rest_values, chunk],
            )


def insert_or_keep(
    model, names: Sequence[str], rows: list[Sequence[Any]], unique: str
) -> list[int]:
    """Insert `rows` as insert_rows does, except that a row whose `unique`
    field (one of `names`) is already taken (by a concurrent transaction, say)
    leaves the existing row as it is; the primary key of each row's row, in
    row order. bulk_create(update_conflicts=True) rewriting `unique` with
    itself, as a COPY into a temporary table and one INSERT ... SELECT."""
    if not rows:
        return []
    if not copy_available():
        objs = [model(**dict(zip(names, row, strict=True))) for row in rows]
        model.objects.bulk_create(
            objs,
            batch_size=1000,
            update_conflicts=True,
            unique_fields=[unique],
            update_fields=[unique],
        )
        return [obj.pk for obj in objs]
    given = _fields(model, names)
    rest, rest_values = _filled(model, given)
    quote = connection.ops.quote_name
    key = quote(model._meta.get_field(unique).column)
    columns = ", ".join(quote(f.column) for f in [*given, *rest])
    table, temp = quote(model._meta.db_table), quote(f"new_{model._meta.db_table}")
    pk = quote(model._meta.pk.column)
    conv = _conversions(given, rows)
    tail = tuple(rest_values)
    db = connections[DEFAULT_DB_ALIAS]
    with db.cursor() as cursor:
        # Dropped at the end; a failed import rolls its creation back.
        cursor.execute(
            f"CREATE TEMPORARY TABLE {temp} AS SELECT {columns} FROM {table} WITH NO DATA"
        )
        _copy(db, cursor, f"COPY {temp} ({columns}) FROM STDIN", rows, conv, tail, [])
        cursor.execute(
            f"INSERT INTO {table} ({columns}) SELECT {columns} FROM {temp} "
            f"ON CONFLICT ({key}) DO UPDATE SET {key} = EXCLUDED.{key} RETURNING {key}, {pk}"
        )
        ids = dict(cursor.fetchall())
        cursor.execute(f"DROP TABLE {temp}")
    field, at = given[names.index(unique)], names.index(unique)
    return [ids[field.get_db_prep_save(row[at], db)] for row in rows]
