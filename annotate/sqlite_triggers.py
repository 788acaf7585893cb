"""The progress counters' SQLite triggers (0026's), made again around a
migration that rebuilds annotate_item.

On SQLite, adding or changing a constraint rebuilds the table, which drops
its triggers. A migration that does so wraps its operations in
``keeping_item_triggers(...)``: the triggers are made again after the
operations going forward, and after them going back too (the first step, run
last when unapplied). This module is imported by migrations: what it makes
must stay what 0026 made.
"""

import importlib

from django.db import migrations

_M26 = importlib.import_module("annotate.migrations.0026_item_votes_ranked")


def remake_sqlite_triggers(apps, schema_editor) -> None:
    if schema_editor.connection.vendor == "sqlite":
        _M26._run(schema_editor, _M26._sqlite_triggers(_M26._SHARE["sqlite"], _M26._COLUMNS))


def keeping_item_triggers(*operations) -> list:
    """``operations`` between two remakes of the triggers: going back, the
    table is rebuilt after the first step, so that step remakes them last."""
    return [
        migrations.RunPython(migrations.RunPython.noop, remake_sqlite_triggers),
        *operations,
        migrations.RunPython(remake_sqlite_triggers, migrations.RunPython.noop),
    ]
