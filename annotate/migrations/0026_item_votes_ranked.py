"""Item.votes_ranked: an item's current best-of-N picks and rankings,
counted by the vote's own statement as a pair's choice is in votes_1/2/tie
(issue 33). Existing items are counted from their current N-slot judgements.

The progress counters' triggers (migrations 0022 and 0025) count
min(votes, votes_needed) with the new column in `votes`, and watch it. A
column added on SQLite rebuilds the table, which drops its triggers: they
are made again after. The backfill is an UPDATE of the items, so the
triggers move the counters by exactly the votes it adds; going back, the
count is taken out the same way before the old triggers return.
"""

import importlib

from django.db import migrations, models

_INITIAL = importlib.import_module("annotate.migrations.0022_progresscounter")
_STRIPED = importlib.import_module("annotate.migrations.0025_progress_stripe_per_backend")
_INTO, _UPSERT = _INITIAL._INTO, _INITIAL._UPSERT

_VOTES = "{r}.votes_1 + {r}.votes_2 + {r}.votes_tie + {r}.votes_ranked"
_SHARE = {
    "sqlite": (
        "{r}.votes_needed",
        f"min({_VOTES}, {{r}}.votes_needed)",
        "({r}.live_assignments < {r}.votes_needed)",
    ),
    "postgresql": (
        "{r}.votes_needed",
        f"least({_VOTES}, {{r}}.votes_needed)",
        "({r}.live_assignments < {r}.votes_needed)::int",
    ),
}
_COLUMNS = _INITIAL._COLUMNS + ", votes_ranked"
_N_SLOT_TASKS = ("best_of_n", "ranking")

_DROP_SQLITE = [
    f"DROP TRIGGER IF EXISTS annotate_progress_{kind}" for kind in ("insert", "delete", "update")
]
_STRIPE = _STRIPED._STRIPE


def _sqlite_triggers(share, columns) -> list[str]:
    """0022's SQLite triggers (item stripes) for `share` and `columns`."""

    def row(r, sign=""):
        return ", ".join(f"{sign}{x.format(r=r)}" for x in share)

    taken_out = f"""UPDATE annotate_progresscounter SET
                needed = needed - OLD.votes_needed,
                collected = collected - {share[1].format(r="OLD")},
                unfilled = unfilled - {share[2].format(r="OLD")}
            WHERE project_id = OLD.project_id AND stripe = OLD.id % 16;"""
    changed = " OR ".join(f"({x.format(r='OLD')}) IS NOT ({x.format(r='NEW')})" for x in share)
    return [
        *_DROP_SQLITE,
        f"""CREATE TRIGGER annotate_progress_insert AFTER INSERT ON annotate_item BEGIN
            {_INTO} VALUES (NEW.project_id, NEW.id % 16, {row("NEW")}) {_UPSERT};
        END""",
        f"""CREATE TRIGGER annotate_progress_delete AFTER DELETE ON annotate_item BEGIN
            {taken_out}
        END""",
        f"""CREATE TRIGGER annotate_progress_update AFTER UPDATE OF {columns} ON annotate_item
        WHEN OLD.project_id IS NOT NEW.project_id OR {changed} BEGIN
            {taken_out}
            {_INTO} VALUES (NEW.project_id, NEW.id % 16, {row("NEW")}) {_UPSERT};
        END""",
    ]


def _postgresql_triggers(share, columns) -> list[str]:
    """0025's functions (session stripes) for `share`, and 0022's update
    trigger watching `columns`."""
    signed = {
        "inserted": ", ".join(f"sum({x.format(r='r')})" for x in share),
        "deleted": ", ".join(f"-sum({x.format(r='r')})" for x in share),
    }
    grouped = "SELECT project_id, {stripe}, {sums} FROM {table} r GROUP BY 1 ORDER BY 1"
    moved = ", ".join(f"{x.format(r='NEW')} - {x.format(r='OLD')}" for x in share)
    old = ", ".join(f"-{x.format(r='OLD')}" for x in share)
    new = ", ".join(x.format(r="NEW") for x in share)
    changed = " OR ".join(
        f"{x.format(r='OLD')} IS DISTINCT FROM {x.format(r='NEW')}" for x in share
    )
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
        END $$""",
        "DROP TRIGGER IF EXISTS annotate_progress_update ON annotate_item",
        f"""CREATE TRIGGER annotate_progress_update AFTER UPDATE OF {columns} ON annotate_item
        FOR EACH ROW WHEN (OLD.project_id IS DISTINCT FROM NEW.project_id OR {changed})
        EXECUTE FUNCTION annotate_progress_update()""",
    ]


def _run(schema_editor, statements) -> None:
    for sql in statements:
        schema_editor.execute(sql, params=None)


# Each item's current N-slot judgements (a revision supersedes: is_current).
_BACKFILL = f"""
    UPDATE annotate_item SET votes_ranked = (
        SELECT COUNT(*) FROM annotate_judgement j
        INNER JOIN annotate_assignment a ON a.id = j.assignment_id
        WHERE a.item_id = annotate_item.id AND j.is_current
          AND j.task IN {_N_SLOT_TASKS!r}
    )
    WHERE id IN (
        SELECT a.item_id FROM annotate_judgement j
        INNER JOIN annotate_assignment a ON a.id = j.assignment_id
        WHERE j.is_current AND j.task IN {_N_SLOT_TASKS!r}
    )
"""


def count_n_slot_votes(apps, schema_editor):
    """The new triggers, then the backfill (which they count)."""
    vendor = schema_editor.connection.vendor
    make = {"sqlite": _sqlite_triggers, "postgresql": _postgresql_triggers}[vendor]
    _run(schema_editor, [*make(_SHARE[vendor], _COLUMNS), _BACKFILL])


def uncount_n_slot_votes(apps, schema_editor):
    """Back: the count taken out through the new triggers (so the counters
    lose it), then PostgreSQL's old functions and trigger; SQLite's
    triggers are dropped and the old ones return after the column is gone
    (restore_sqlite_triggers)."""
    schema_editor.execute(
        "UPDATE annotate_item SET votes_ranked = 0 WHERE votes_ranked > 0", params=None
    )
    if schema_editor.connection.vendor == "postgresql":
        _run(
            schema_editor,
            _postgresql_triggers(_INITIAL._SHARE["postgresql"], _INITIAL._COLUMNS),
        )
    else:
        # Triggers naming the column would refuse its removal (SQLite drops
        # it in place): restore_sqlite_triggers makes the old ones after.
        _run(schema_editor, _DROP_SQLITE)


def restore_sqlite_triggers(apps, schema_editor):
    """Back on SQLite, the column gone: 0022's triggers come back."""
    if schema_editor.connection.vendor == "sqlite":
        _run(schema_editor, _sqlite_triggers(_INITIAL._SHARE["sqlite"], _INITIAL._COLUMNS))


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0025_progress_stripe_per_backend"),
    ]

    operations = [
        migrations.RunPython(migrations.RunPython.noop, restore_sqlite_triggers),
        migrations.AddField(
            model_name="item",
            name="votes_ranked",
            field=models.PositiveSmallIntegerField(default=0),
        ),
        migrations.RunPython(count_n_slot_votes, uncount_n_slot_votes),
    ]
