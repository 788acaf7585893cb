"""Item.copied_from and Item.retired_at (issue 36 follow-up): qualification
and check items a curator makes from settled benchmark items (curation.gold)
and retires. Adding a foreign key on SQLite rebuilds the item table, which
drops its triggers: the progress counters' triggers are made again after it,
with 0029's function, as 0031-0034 do."""

import importlib

import django.db.models.deletion
from django.db import migrations, models


remake_sqlite_triggers = importlib.import_module(
    "annotate.migrations.0029_gold_choice_n_slots"
).remake_sqlite_triggers


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0034_adaptive_votes"),
    ]

    operations = [
        # Going back, the table is rebuilt after this: the triggers are made last.
        migrations.RunPython(migrations.RunPython.noop, remake_sqlite_triggers),
        migrations.AddField(
            model_name="item",
            name="copied_from",
            field=models.ForeignKey(
                blank=True,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="copies",
                to="annotate.item",
            ),
        ),
        migrations.AddField(
            model_name="item",
            name="retired_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddIndex(
            model_name="item",
            index=models.Index(
                condition=models.Q(("copied_from__isnull", False)),
                fields=["copied_from"],
                name="annotate_item_copied_from_idx",
            ),
        ),
        migrations.RunPython(remake_sqlite_triggers, migrations.RunPython.noop),
    ]
