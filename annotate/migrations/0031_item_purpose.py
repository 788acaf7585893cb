"""Item.purpose, is_attention and explanation (issue 36): qualification and
check items. Adding a constraint on SQLite rebuilds the item table, which drops
its triggers: the progress counters' triggers (0026's) are made again after it,
with annotate.sqlite_triggers."""

from django.db import migrations, models

from annotate.sqlite_triggers import keeping_item_triggers


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0030_media_parts"),
    ]

    operations = keeping_item_triggers(
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
    )
