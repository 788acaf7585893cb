"""Qualification (issue 36 item 1): the project's settings, the member's
admission, attempts and their answers. SQLite rebuilds tables for the new
constraints; the progress counters' triggers (on annotate_item) are made
again around them as in 0031, in case a rebuild touches them."""

import django.core.validators
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from annotate.sqlite_triggers import keeping_item_triggers


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0031_item_purpose"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = keeping_item_triggers(
        migrations.CreateModel(
            name="QualificationAnswer",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("display_order", models.CharField(max_length=8)),
                ("choice", models.CharField(max_length=3)),
                ("correct", models.BooleanField()),
                ("answered_at", models.DateTimeField()),
            ],
            options={
                "ordering": ["attempt", "id"],
            },
        ),
        migrations.CreateModel(
            name="QualificationAttempt",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("started_at", models.DateTimeField()),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                ("item_ids", models.JSONField(default=list)),
                ("right", models.PositiveIntegerField(default=0)),
                ("total", models.PositiveIntegerField(default=0)),
                ("pass_mark", models.FloatField(default=0.8)),
                ("passed", models.BooleanField(default=False)),
            ],
            options={
                "ordering": ["-started_at", "-id"],
            },
        ),
        migrations.AddField(
            model_name="membership",
            name="admitted_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="membership",
            name="admitted_by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="project",
            name="qualification_pass_mark",
            field=models.FloatField(
                default=0.8,
                validators=[
                    django.core.validators.MinValueValidator(0),
                    django.core.validators.MaxValueValidator(1),
                ],
                help_text="Share of qualification items answered right to be admitted (0 to 1).",
            ),
        ),
        migrations.AddField(
            model_name="project",
            name="qualification_required",
            field=models.BooleanField(
                default=False,
                help_text="Annotators pass the qualification before they get benchmark items.",
            ),
        ),
        migrations.AddField(
            model_name="project",
            name="qualification_retry_hours",
            field=models.PositiveIntegerField(
                default=24,
                help_text="Hours a failed qualification waits before a retry (0: at once).",
            ),
        ),
        migrations.AddConstraint(
            model_name="project",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("qualification_pass_mark__gte", 0), ("qualification_pass_mark__lte", 1)
                ),
                name="annotate_project_qualification_pass_mark_range",
            ),
        ),
        migrations.AddField(
            model_name="qualificationanswer",
            name="item",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="qualification_answers",
                to="annotate.item",
            ),
        ),
        migrations.AddField(
            model_name="qualificationattempt",
            name="annotator",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="qualification_attempts",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="qualificationattempt",
            name="project",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="qualification_attempts",
                to="annotate.project",
            ),
        ),
        migrations.AddField(
            model_name="qualificationanswer",
            name="attempt",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="answers",
                to="annotate.qualificationattempt",
            ),
        ),
        migrations.AddIndex(
            model_name="qualificationattempt",
            index=models.Index(
                fields=["project", "annotator", "-started_at"], name="annotate_qual_attempt_idx"
            ),
        ),
        migrations.AddConstraint(
            model_name="qualificationattempt",
            constraint=models.UniqueConstraint(
                condition=models.Q(("finished_at__isnull", True)),
                fields=("project", "annotator"),
                name="annotate_qualification_one_open_attempt",
            ),
        ),
        migrations.AddConstraint(
            model_name="qualificationattempt",
            constraint=models.CheckConstraint(
                condition=models.Q(("right__lte", models.F("total"))),
                name="annotate_qualification_right_within_total",
            ),
        ),
        migrations.AddConstraint(
            model_name="qualificationattempt",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("passed", False), ("finished_at__isnull", False), _connector="OR"
                ),
                name="annotate_qualification_passed_when_finished",
            ),
        ),
        migrations.AddConstraint(
            model_name="qualificationanswer",
            constraint=models.UniqueConstraint(
                fields=("attempt", "item"), name="annotate_qualification_one_answer_per_item"
            ),
        ),
    )
