"""Item.purpose, is_attention and explanation (issue 36): qualification and
check items. Adding a constraint on SQLite rebuilds the item table, which drops
its triggers: the progress counters' triggers (0026's) are made again after it,
with 0029's function."""

import importlib

from django.db import migrations, models

remake_sqlite_triggers = importlib.import_module(
    "annotate.migrations.0029_gold_choice_n_slots"
).remake_sqlite_triggers


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0030_media_parts"),
    ]

    operations = [
        # Going back, the table is rebuilt after this: the triggers are made last.
        migrations.RunPython(migrations.RunPython.noop, remake_sqlite_triggers),
        migrations.AddField(
            model_name="item",
            name="explanation",
            field=models.TextField(blank=True, default=""),
        ),
        migrations.AddField(
            model_name="item",
            name="is_attention",
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name="item",
            name="purpose",
            field=models.CharField(
                choices=[
                    ("benchmark", "Benchmark"),
                    ("qualification", "Qualification"),
                    ("check", "Gold check"),
                ],
                default="benchmark",
                max_length=13,
            ),
        ),
        migrations.AddConstraint(
            model_name="item",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("purpose", "benchmark"),
                    models.Q(("gold_choice", ""), _negated=True),
                    _connector="OR",
                ),
                name="annotate_item_gate_has_gold",
            ),
        ),
        migrations.AddConstraint(
            model_name="item",
            constraint=models.CheckConstraint(
                condition=models.Q(("purpose__in", ["benchmark", "qualification", "check"])),
                name="annotate_item_purpose_valid",
            ),
        ),
        migrations.RunPython(remake_sqlite_triggers, migrations.RunPython.noop),
    ]
