"""Ongoing checks (issue 36 item 2): the project's check settings, the
annotators' pauses, and qualification and check items taken out of the vote
pool and the progress counters (votes_needed 0, which the new constraint
holds). The data step is an UPDATE of the items, so the counters' triggers
take exactly those items' shares out. Adding a constraint on SQLite rebuilds
the item table, which drops its triggers: made again after it (as 0031),
with annotate.sqlite_triggers."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from annotate.sqlite_triggers import keeping_item_triggers


def gates_need_no_votes(apps, schema_editor):
    """Qualification and check items leave the pool: no votes needed, no
    live leases counted (a check's lease is not a benchmark vote's)."""
    Item = apps.get_model("annotate", "Item")
    Item.objects.exclude(purpose="benchmark").update(votes_needed=0, live_assignments=0)


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0032_qualification"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = keeping_item_triggers(
        migrations.RunPython(gates_need_no_votes, migrations.RunPython.noop),
        migrations.CreateModel(
            name="ProjectPause",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("paused_at", models.DateTimeField()),
                ("reason", models.TextField()),
                ("right", models.PositiveIntegerField()),
                ("total", models.PositiveIntegerField()),
                ("low", models.FloatField()),
                ("high", models.FloatField()),
                ("threshold", models.FloatField()),
                ("minimum", models.PositiveSmallIntegerField()),
                ("reinstated_at", models.DateTimeField(blank=True, null=True)),
            ],
            options={
                "ordering": ["-paused_at", "-id"],
            },
        ),
        migrations.AddField(
            model_name="project",
            name="check_minimum",
            field=models.PositiveSmallIntegerField(
                default=10, help_text="Checks answered before anyone can be paused."
            ),
        ),
        migrations.AddField(
            model_name="project",
            name="check_rate",
            field=models.FloatField(
                default=0.0,
                help_text="Share of each annotator's items that are check items (0 to 1; 0: off).",
            ),
        ),
        migrations.AddField(
            model_name="project",
            name="check_threshold",
            field=models.FloatField(
                default=0.7,
                help_text=(
                    "Pause an annotator when even the upper end of their check accuracy's "
                    "95 % interval is below this (0 to 1)."
                ),
            ),
        ),
        migrations.AddConstraint(
            model_name="item",
            constraint=models.CheckConstraint(
                condition=models.Q(("purpose", "benchmark"), ("votes_needed", 0), _connector="OR"),
                name="annotate_item_gate_needs_no_votes",
            ),
        ),
        migrations.AddConstraint(
            model_name="project",
            constraint=models.CheckConstraint(
                condition=models.Q(("check_rate__gte", 0), ("check_rate__lte", 1)),
                name="annotate_project_check_rate_range",
            ),
        ),
        migrations.AddConstraint(
            model_name="project",
            constraint=models.CheckConstraint(
                condition=models.Q(("check_threshold__gte", 0), ("check_threshold__lte", 1)),
                name="annotate_project_check_threshold_range",
            ),
        ),
        migrations.AddField(
            model_name="projectpause",
            name="annotator",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="project_pauses",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="projectpause",
            name="project",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="pauses",
                to="annotate.project",
            ),
        ),
        migrations.AddField(
            model_name="projectpause",
            name="reinstated_by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddConstraint(
            model_name="projectpause",
            constraint=models.UniqueConstraint(
                condition=models.Q(("reinstated_at__isnull", True)),
                fields=("project", "annotator"),
                name="annotate_projectpause_one_open",
            ),
        ),
        migrations.AddConstraint(
            model_name="projectpause",
            constraint=models.CheckConstraint(
                condition=models.Q(("right__lte", models.F("total"))),
                name="annotate_projectpause_right_within_total",
            ),
        ),
    )
