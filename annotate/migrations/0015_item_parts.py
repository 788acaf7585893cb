"""Items' content as ordered parts (issue 24).

Every existing item is of the Multimodal RewardBench shape and gets its parts
from its own columns: prompt = [image, text], response_1 = [text],
response_2 = [text] (annotate.models.parts.mrb_parts, written out here so
the migration does not change with the model). Item.image becomes nullable:
items of other shapes keep their images in their parts only.

Going back deletes the parts; it fails if an item without an image exists
(its content would not fit the old columns).
"""

import django.db.models.deletion
from django.db import migrations, models

BATCH = 2000


def add_parts(apps, schema_editor):
    Item = apps.get_model("annotate", "Item")
    ItemPart = apps.get_model("annotate", "ItemPart")
    rows = Item.objects.order_by("pk").values_list(
        "pk", "image_id", "image_path", "prompt", "response_1", "response_2"
    )
    batch = []
    for pk, image_id, image_path, prompt, response_1, response_2 in rows.iterator(BATCH):
        batch += [
            ItemPart(
                item_id=pk,
                slot="prompt",
                position=0,
                kind="image",
                image_id=image_id,
                source_path=image_path,
            ),
            ItemPart(item_id=pk, slot="prompt", position=1, kind="text", text=prompt),
            ItemPart(item_id=pk, slot="response_1", position=0, kind="text", text=response_1),
            ItemPart(item_id=pk, slot="response_2", position=0, kind="text", text=response_2),
        ]
        if len(batch) >= BATCH:
            ItemPart.objects.bulk_create(batch)
            batch = []
    if batch:
        ItemPart.objects.bulk_create(batch)


def remove_parts(apps, schema_editor):
    apps.get_model("annotate", "ItemPart").objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0014_graded_preference"),
    ]

    operations = [
        migrations.AlterField(
            model_name="item",
            name="image",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="items",
                to="annotate.imageasset",
            ),
        ),
        migrations.AlterField(
            model_name="item",
            name="image_path",
            field=models.CharField(
                blank=True,
                help_text="The image's path in the source dataset, kept for export.",
                max_length=500,
            ),
        ),
        migrations.CreateModel(
            name="ItemPart",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "slot",
                    models.CharField(
                        choices=[
                            ("prompt", "Prompt"),
                            ("response_1", "Response 1"),
                            ("response_2", "Response 2"),
                        ],
                        max_length=10,
                    ),
                ),
                ("position", models.PositiveSmallIntegerField()),
                (
                    "kind",
                    models.CharField(choices=[("text", "Text"), ("image", "Image")], max_length=5),
                ),
                ("text", models.TextField(blank=True, default="")),
                (
                    "source_path",
                    models.CharField(
                        blank=True,
                        default="",
                        help_text="The image's path in the source dataset.",
                        max_length=500,
                    ),
                ),
                ("html", models.TextField(blank=True, default="", editable=False)),
                ("rendered_version", models.PositiveSmallIntegerField(default=0, editable=False)),
                (
                    "image",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="parts",
                        to="annotate.imageasset",
                    ),
                ),
                (
                    "item",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="content_parts",
                        to="annotate.item",
                    ),
                ),
            ],
            options={
                "ordering": ["item", "slot", "position"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("item", "slot", "position"),
                        name="annotate_itempart_position_per_slot",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("slot__in", ["prompt", "response_1", "response_2"])),
                        name="annotate_itempart_slot_valid",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            models.Q(
                                ("image__isnull", True), ("kind", "text"), ("source_path", "")
                            ),
                            models.Q(("image__isnull", False), ("kind", "image")),
                            _connector="OR",
                        ),
                        name="annotate_itempart_kind_matches_content",
                    ),
                ],
            },
        ),
        migrations.RunPython(add_parts, remove_parts),
    ]
