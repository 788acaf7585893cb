"""The parts are the item (issue 32).

- Every item has parts: an item made without them (outside the importers,
  which always wrote them) gets them from its columns, as migration 0015
  did: prompt = [image, text] (no image part without an image),
  response_1 = [text], response_2 = [text].
- Every item's columns are derived from its parts by the one rule
  (annotate.models.parts.derived_columns, written out here so the migration
  does not change with the model): each text column is its slot's text parts
  joined by a blank line; image/image_path are the prompt's image when the
  parts have the MRB shape, null otherwise. Only rows that differ are written.
- The item's stored HTML columns go (the parts keep their own HTML).
- Slots are `prompt` and `response_1` … `response_99`; kinds gain video and
  audio (refused by the content check until they have storage).

Going back re-adds the HTML columns empty (rendered_version 0: the page of
that release renders them on first view), keeps the parts and columns, and
refuses if an item has a response slot beyond the second (the earlier schema
cannot hold it).
"""

import django.db.models.deletion
from django.db import migrations, models

BATCH = 2000
JOINER = "\n\n"


def _derived(parts):
    """The derived columns of one item's parts: (slot, position, kind, text,
    image_id, source_path) rows in slot and position order."""
    by_slot = {}
    for slot, _, kind, text, image_id, source_path in parts:
        by_slot.setdefault(slot, []).append((kind, text, image_id, source_path))
    kinds = {slot: [p[0] for p in slot_parts] for slot, slot_parts in by_slot.items()}
    mrb = kinds == {"prompt": ["image", "text"], "response_1": ["text"], "response_2": ["text"]}

    def text(slot):
        return JOINER.join(p[1] for p in by_slot.get(slot, ()) if p[0] == "text")

    image = by_slot["prompt"][0] if mrb else None
    return {
        "prompt": text("prompt"),
        "response_1": text("response_1"),
        "response_2": text("response_2"),
        "image_id": image[2] if image else None,
        "image_path": image[3] if image else "",
    }


def parts_for_items_without(apps, schema_editor):
    Item = apps.get_model("annotate", "Item")
    ItemPart = apps.get_model("annotate", "ItemPart")
    bare = Item.objects.exclude(pk__in=ItemPart.objects.values("item_id")).order_by("pk")
    rows = bare.values_list("pk", "image_id", "image_path", "prompt", "response_1", "response_2")
    batch = []
    for pk, image_id, image_path, prompt, response_1, response_2 in rows.iterator(BATCH):
        if image_id is not None:
            batch.append(
                ItemPart(
                    item_id=pk,
                    slot="prompt",
                    position=0,
                    kind="image",
                    image_id=image_id,
                    source_path=image_path,
                )
            )
        at = 0 if image_id is None else 1
        batch += [
            ItemPart(item_id=pk, slot="prompt", position=at, kind="text", text=prompt),
            ItemPart(item_id=pk, slot="response_1", position=0, kind="text", text=response_1),
            ItemPart(item_id=pk, slot="response_2", position=0, kind="text", text=response_2),
        ]
        if len(batch) >= BATCH:
            ItemPart.objects.bulk_create(batch)
            batch = []
    if batch:
        ItemPart.objects.bulk_create(batch)


def derive_columns(apps, schema_editor):
    Item = apps.get_model("annotate", "Item")
    ItemPart = apps.get_model("annotate", "ItemPart")
    columns = ("prompt", "response_1", "response_2", "image_id", "image_path")
    pks = list(Item.objects.order_by("pk").values_list("pk", flat=True))
    for start in range(0, len(pks), BATCH):
        chunk = pks[start : start + BATCH]
        parts = {pk: [] for pk in chunk}
        rows = (
            ItemPart.objects.filter(item_id__in=chunk)
            .order_by("item_id", "slot", "position")
            .values_list("item_id", "slot", "position", "kind", "text", "image_id", "source_path")
        )
        for item_id, *row in rows:
            parts[item_id].append(row)
        stored = Item.objects.filter(pk__in=chunk).values_list("pk", *columns)
        for pk, *values in stored:
            derived = _derived(parts[pk])
            if dict(zip(columns, values)) != derived:
                Item.objects.filter(pk=pk).update(**derived)


def refuse_more_than_two_responses(apps, schema_editor):
    ItemPart = apps.get_model("annotate", "ItemPart")
    extra = ItemPart.objects.exclude(slot__in=("prompt", "response_1", "response_2"))
    if extra.exists():
        raise RuntimeError(
            f"{extra.values('item_id').distinct().count()} items have more than two "
            "responses: the schema before annotate 0019 cannot hold them."
        )


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0020_judgement_slots"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="itempart",
            name="annotate_itempart_slot_valid",
        ),
        migrations.RemoveField(
            model_name="item",
            name="prompt_html",
        ),
        migrations.RemoveField(
            model_name="item",
            name="rendered_version",
        ),
        migrations.RemoveField(
            model_name="item",
            name="response_1_html",
        ),
        migrations.RemoveField(
            model_name="item",
            name="response_2_html",
        ),
        migrations.AlterField(
            model_name="item",
            name="image",
            field=models.ForeignKey(
                blank=True,
                editable=False,
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
                editable=False,
                help_text="The image's path in the source dataset, kept for export.",
                max_length=500,
            ),
        ),
        migrations.AlterField(
            model_name="item",
            name="prompt",
            field=models.TextField(editable=False),
        ),
        migrations.AlterField(
            model_name="item",
            name="response_1",
            field=models.TextField(editable=False),
        ),
        migrations.AlterField(
            model_name="item",
            name="response_2",
            field=models.TextField(editable=False),
        ),
        migrations.AlterField(
            model_name="itempart",
            name="kind",
            field=models.CharField(
                choices=[
                    ("text", "Text"),
                    ("image", "Image"),
                    ("video", "Video"),
                    ("audio", "Audio"),
                ],
                max_length=5,
            ),
        ),
        migrations.AlterField(
            model_name="itempart",
            name="slot",
            field=models.CharField(help_text="prompt, response_1, response_2, …", max_length=12),
        ),
        migrations.AddConstraint(
            model_name="itempart",
            constraint=models.CheckConstraint(
                condition=models.Q(("slot__regex", "\\A(prompt|response_[1-9][0-9]?)\\Z")),
                name="annotate_itempart_slot_valid",
            ),
        ),
        # Data after the schema (PostgreSQL alters no table with pending
        # deferred-constraint checks of rows written in the same transaction).
        migrations.RunPython(parts_for_items_without, migrations.RunPython.noop),
        migrations.RunPython(derive_columns, migrations.RunPython.noop),
        # Reversed first: nothing of the earlier schema changes before this check.
        migrations.RunPython(migrations.RunPython.noop, refuse_more_than_two_responses),
    ]
