"""An N-slot item's gold may be any of its slots (1..8): the gold CheckConstraint
widens. On SQLite a constraint change rebuilds annotate_item, which drops its
triggers: the progress counters' triggers (0026's) are made again after it,
and after going back too."""

from django.db import migrations, models

# remake_sqlite_triggers stays importable from here: migrations written before
# keeping_item_triggers (on other branches) import it from this module.
from annotate.sqlite_triggers import keeping_item_triggers, remake_sqlite_triggers


class Migration(migrations.Migration):

    dependencies = [
        ('annotate', '0028_item_group_criterion'),
    ]

    operations = keeping_item_triggers(
        migrations.RemoveConstraint(
            model_name='item',
            name='annotate_item_gold_valid',
        ),
        migrations.AlterField(
            model_name='item',
            name='gold_choice',
            field=models.CharField(blank=True, choices=[('', 'None'), ('1', 'Response 1'), ('2', 'Response 2'), ('3', 'Response 3'), ('4', 'Response 4'), ('5', 'Response 5'), ('6', 'Response 6'), ('7', 'Response 7'), ('8', 'Response 8')], default='', max_length=1),
        ),
        migrations.AddConstraint(
            model_name='item',
            constraint=models.CheckConstraint(condition=models.Q(('gold_choice__in', ['', '1', '2', '3', '4', '5', '6', '7', '8'])), name='annotate_item_gold_valid'),
        ),
    )
