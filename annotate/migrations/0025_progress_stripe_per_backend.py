"""PostgreSQL: a transaction moves one counter stripe per project, the one
of its database session (pg_backend_pid() mod 16), not the stripe of each
item it writes (item id mod 16).

With item stripes, a vote (its item's tallies) followed by the next claim
(another item's live_assignments) in one transaction locked two counter
rows; two annotators doing the same on two items of crossed stripes waited
on each other and PostgreSQL broke the deadlock with an error (HTTP 500 in
bench/annotate_bench.py's API runs). A project's figures are the sums over
its stripes, so which stripe carries a change is free: one per session
means one counter row per project per transaction, nothing to cross. A
statement that writes items of several projects takes their rows in
project order. SQLite has one writer at a time and keeps item stripes.
"""

import importlib

from django.db import migrations

_INITIAL = importlib.import_module("annotate.migrations.0022_progresscounter")
_INTO, _UPSERT, _SHARE = _INITIAL._INTO, _INITIAL._UPSERT, _INITIAL._SHARE
_STRIPE = "pg_backend_pid() % 16"


def _functions():
    pg = _SHARE["postgresql"]
    signed = {
        "inserted": ", ".join(f"sum({x.format(r='r')})" for x in pg),
        "deleted": ", ".join(f"-sum({x.format(r='r')})" for x in pg),
    }
    grouped = "SELECT project_id, {stripe}, {sums} FROM {table} r GROUP BY 1 ORDER BY 1"
    moved = ", ".join(f"{x.format(r='NEW')} - {x.format(r='OLD')}" for x in pg)
    old = ", ".join(f"-{x.format(r='OLD')}" for x in pg)
    new = ", ".join(x.format(r="NEW") for x in pg)
    return [
        f"""CREATE OR REPLACE FUNCTION annotate_progress_{kind}() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            {_INTO} {grouped.format(stripe=_STRIPE, sums=signed[table], table=table)}
            {_UPSERT};
            RETURN NULL;
        END $$"""
        for kind, table in (("insert", "inserted"), ("delete", "deleted"))
    ] + [
        f"""CREATE OR REPLACE FUNCTION annotate_progress_update() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            IF OLD.project_id = NEW.project_id THEN
                {_INTO} VALUES (NEW.project_id, {_STRIPE}, {moved}) {_UPSERT};
            ELSE
                {_INTO} VALUES (OLD.project_id, {_STRIPE}, {old}) {_UPSERT};
                {_INTO} VALUES (NEW.project_id, {_STRIPE}, {new}) {_UPSERT};
            END IF;
            RETURN NULL;
        END $$"""
    ]


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for sql in _functions():
            schema_editor.execute(sql, params=None)


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for sql in _INITIAL._postgresql():
            if sql.startswith("CREATE FUNCTION"):
                schema_editor.execute(
                    sql.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1), params=None
                )


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0024_preference_scale_label"),
    ]

    operations = [migrations.RunPython(forward, backward)]
