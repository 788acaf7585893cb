"""Drop indexes that others already cover (each one is written again by every
claim and vote): the foreign-key indexes of Item.project, Assignment.item,
Assignment.annotator and Judgement.assignment, and (project, domain), a
prefix of annotate_item_tally_idx.

Altering Judgement.assignment's index makes PostgreSQL's schema editor drop
every single-column index on assignment_id, including the partial unique
index behind annotate_judgement_one_current_per_assignment; the constraint is
removed first and added back after, so it exists at the end on both
databases (tests/annotate/test_schema_indexes.py)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0006_membership_judged"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="item",
            name="annotate_item_domain_idx",
        ),
        migrations.AlterField(
            model_name="assignment",
            name="annotator",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="assignments",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AlterField(
            model_name="assignment",
            name="item",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="assignments",
                to="annotate.item",
            ),
        ),
        migrations.AlterField(
            model_name="item",
            name="project",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="items",
                to="annotate.project",
            ),
        ),
        migrations.RemoveConstraint(
            model_name="judgement",
            name="annotate_judgement_one_current_per_assignment",
        ),
        migrations.AlterField(
            model_name="judgement",
            name="assignment",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="judgements",
                to="annotate.assignment",
            ),
        ),
        migrations.AddConstraint(
            model_name="judgement",
            constraint=models.UniqueConstraint(
                condition=models.Q(("is_current", True)),
                fields=("assignment",),
                name="annotate_judgement_one_current_per_assignment",
            ),
        ),
    ]
