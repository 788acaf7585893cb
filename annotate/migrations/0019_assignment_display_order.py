"""Issue 32: an assignment stores the order its item's response slots were
displayed in (`display_order`, a permutation: "12" or "21" for a pair)
instead of `shown_swapped` (True: response 2 on the left, i.e. "21").
Forward and backward: shown_swapped comes back from the order."""

import django.db.models.functions.text
import django.db.models.lookups
from django.conf import settings
from django.db import migrations, models


def orders_from_swaps(apps, schema_editor):
    Assignment = apps.get_model("annotate", "Assignment")
    Assignment.objects.filter(shown_swapped=True).update(display_order="21")
    Assignment.objects.filter(shown_swapped=False).update(display_order="12")


def swaps_from_orders(apps, schema_editor):
    Assignment = apps.get_model("annotate", "Assignment")
    pairs = Assignment.objects.filter(display_order__in=("12", "21"))
    if Assignment.objects.exclude(pk__in=pairs.values("pk")).exists():
        raise RuntimeError(
            "Assignments of items with more than two response slots cannot go back to "
            "shown_swapped (a pair's left/right)."
        )
    Assignment.objects.filter(display_order="21").update(shown_swapped=True)
    Assignment.objects.filter(display_order="12").update(shown_swapped=False)


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0018_judgement_imported"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="assignment",
            name="display_order",
            field=models.CharField(default="12", max_length=9),
            preserve_default=False,
        ),
        # A default while both columns exist, so that going back can add
        # shown_swapped to existing rows before filling it.
        migrations.AlterField(
            model_name="assignment",
            name="shown_swapped",
            field=models.BooleanField(default=False),
        ),
        migrations.RunPython(orders_from_swaps, swaps_from_orders),
        migrations.RemoveField(model_name="assignment", name="shown_swapped"),
        migrations.AddConstraint(
            model_name="assignment",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("display_order__in", ("12", "21")),
                    models.Q(
                        django.db.models.lookups.GreaterThanOrEqual(
                            django.db.models.functions.text.Length("display_order"), 2
                        ),
                        django.db.models.lookups.LessThanOrEqual(
                            django.db.models.functions.text.Length("display_order"), 9
                        ),
                        models.Q(
                            django.db.models.lookups.LessThan(
                                django.db.models.functions.text.Length("display_order"), 1
                            ),
                            ("display_order__contains", "1"),
                            _connector="OR",
                        ),
                        models.Q(
                            django.db.models.lookups.LessThan(
                                django.db.models.functions.text.Length("display_order"), 2
                            ),
                            ("display_order__contains", "2"),
                            _connector="OR",
                        ),
                        models.Q(
                            django.db.models.lookups.LessThan(
                                django.db.models.functions.text.Length("display_order"), 3
                            ),
                            ("display_order__contains", "3"),
                            _connector="OR",
                        ),
                        models.Q(
                            django.db.models.lookups.LessThan(
                                django.db.models.functions.text.Length("display_order"), 4
                            ),
                            ("display_order__contains", "4"),
                            _connector="OR",
                        ),
                        models.Q(
                            django.db.models.lookups.LessThan(
                                django.db.models.functions.text.Length("display_order"), 5
                            ),
                            ("display_order__contains", "5"),
                            _connector="OR",
                        ),
                        models.Q(
                            django.db.models.lookups.LessThan(
                                django.db.models.functions.text.Length("display_order"), 6
                            ),
                            ("display_order__contains", "6"),
                            _connector="OR",
                        ),
                        models.Q(
                            django.db.models.lookups.LessThan(
                                django.db.models.functions.text.Length("display_order"), 7
                            ),
                            ("display_order__contains", "7"),
                            _connector="OR",
                        ),
                        models.Q(
                            django.db.models.lookups.LessThan(
                                django.db.models.functions.text.Length("display_order"), 8
                            ),
                            ("display_order__contains", "8"),
                            _connector="OR",
                        ),
                        models.Q(
                            django.db.models.lookups.LessThan(
                                django.db.models.functions.text.Length("display_order"), 9
                            ),
                            ("display_order__contains", "9"),
                            _connector="OR",
                        ),
                    ),
                    _connector="OR",
                ),
                name="annotate_assignment_display_order_permutation",
            ),
        ),
    ]
