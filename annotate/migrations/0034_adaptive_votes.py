"""Adaptive votes (issue 36 item 5): the project's vote mode and adaptive
rule, each item's certainty (the claim's adaptive pick) and each project's
refit state. SQLite rebuilds the project table for the new constraints; the
progress counters' triggers (on annotate_item) are made again around it as
in 0031, in case a rebuild touches them."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from annotate.sqlite_triggers import keeping_item_triggers


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0033_checks"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = keeping_item_triggers(
        migrations.CreateModel(
            name="AdaptiveFit",
            fields=[
                (
                    "project",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="adaptive_fit",
                        serialize=False,
                        to="annotate.project",
                    ),
                ),
                ("votes_since", models.PositiveIntegerField(default=0)),
                ("offered", models.PositiveIntegerField(default=0)),
                ("queued", models.BooleanField(default=False)),
                ("fitted_at", models.DateTimeField(blank=True, null=True)),
                ("method", models.CharField(blank=True, max_length=12)),
                ("counts", models.JSONField(blank=True, default=dict)),
                ("judges", models.PositiveSmallIntegerField(default=0)),
            ],
        ),
        migrations.CreateModel(
            name="ItemCertainty",
            fields=[
                (
                    "item",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="certainty",
                        serialize=False,
                        to="annotate.item",
                    ),
                ),
                ("p1", models.FloatField()),
                ("certainty", models.FloatField()),
                ("open", models.BooleanField()),
                (
                    "reason",
                    models.CharField(
                        choices=[
                            ("base", "Collecting its base votes"),
                            ("open", "Uncertain: one more vote"),
                            ("certain", "Certain enough"),
                            ("agreement", "Humans and judges agree"),
                            ("budget", "Vote budget spent"),
                        ],
                        max_length=9,
                    ),
                ),
                (
                    "human_votes",
                    models.PositiveSmallIntegerField(help_text="Human votes at the refit."),
                ),
            ],
        ),
        migrations.AddField(
            model_name="project",
            name="adaptive_base_votes",
            field=models.PositiveSmallIntegerField(
                default=1, help_text="Adaptive mode: votes every item gets first."
            ),
        ),
        migrations.AddField(
            model_name="project",
            name="adaptive_budget",
            field=models.PositiveSmallIntegerField(
                default=5, help_text="Adaptive mode: most votes an item gets."
            ),
        ),
        migrations.AddField(
            model_name="project",
            name="adaptive_stop_certainty",
            field=models.FloatField(
                default=0.9,
                help_text="Adaptive mode: an item stops once its label is at least this certain (above 0.5, below 1).",
            ),
        ),
        migrations.AddField(
            model_name="project",
            name="vote_mode",
            field=models.CharField(
                choices=[
                    ("fixed", "Fixed votes per item"),
                    ("adaptive", "Adaptive: more votes where the label is uncertain"),
                ],
                default="fixed",
                help_text="Fixed: every item gets the votes per item. Adaptive: votes go where the label is least certain.",
                max_length=8,
            ),
        ),
        migrations.AddConstraint(
            model_name="project",
            constraint=models.CheckConstraint(
                condition=models.Q(("vote_mode__in", ["fixed", "adaptive"])),
                name="annotate_project_vote_mode_valid",
            ),
        ),
        migrations.AddConstraint(
            model_name="project",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("adaptive_base_votes__gte", 1),
                    ("adaptive_budget__gte", models.F("adaptive_base_votes")),
                    ("adaptive_budget__lte", 50),
                ),
                name="annotate_project_adaptive_votes_range",
            ),
        ),
        migrations.AddConstraint(
            model_name="project",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("adaptive_stop_certainty__gt", 0.5), ("adaptive_stop_certainty__lt", 1)
                ),
                name="annotate_project_adaptive_stop_range",
            ),
        ),
        migrations.AddField(
            model_name="itemcertainty",
            name="project",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="+", to="annotate.project"
            ),
        ),
        migrations.AddIndex(
            model_name="itemcertainty",
            index=models.Index(
                condition=models.Q(("open", True)),
                fields=["project", "certainty", "item"],
                name="annotate_certainty_queue_idx",
            ),
        ),
        migrations.AddConstraint(
            model_name="itemcertainty",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("certainty__gte", 0.5), ("certainty__lte", 1), ("p1__gte", 0), ("p1__lte", 1)
                ),
                name="annotate_itemcertainty_range",
            ),
        ),
        migrations.AddConstraint(
            model_name="itemcertainty",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("reason__in", ["base", "open", "certain", "agreement", "budget"])
                ),
                name="annotate_itemcertainty_reason_valid",
            ),
        ),
        migrations.AddConstraint(
            model_name="itemcertainty",
            constraint=models.CheckConstraint(
                condition=models.Q(("open", False), ("reason", "open"), _connector="OR"),
                name="annotate_itemcertainty_open_has_reason",
            ),
        ),
    )
