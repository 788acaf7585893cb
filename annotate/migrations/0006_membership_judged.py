from django.db import migrations, models
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce


def count_judged(apps, schema_editor):
    """Fill Membership.judged from the submitted assignments (one UPDATE)."""
    Membership = apps.get_model("annotate", "Membership")
    Assignment = apps.get_model("annotate", "Assignment")
    alias = schema_editor.connection.alias
    submitted = (
        Assignment.objects.using(alias)
        .filter(
            annotator_id=OuterRef("user_id"),
            item__project_id=OuterRef("project_id"),
            status="submitted",
        )
        .order_by()
        .values("annotator_id")
        .annotate(n=Count("pk"))
        .values("n")
    )
    Membership.objects.using(alias).update(judged=Coalesce(Subquery(submitted), 0))


class Migration(migrations.Migration):

    dependencies = [
        ("annotate", "0005_item_rendered_html"),
    ]

    operations = [
        migrations.AddField(
            model_name="membership",
            name="judged",
            field=models.PositiveIntegerField(default=0, editable=False),
        ),
        migrations.RunPython(count_judged, migrations.RunPython.noop, elidable=True),
    ]
