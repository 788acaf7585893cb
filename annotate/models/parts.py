"""An item's content as ordered parts: its prompt and each of its two
responses are sequences of Markdown text and images (issue 24).

Every item has its parts. An item of the Multimodal RewardBench shape (one
image and a text prompt, one text per response) has the parts
prompt = [image, text], response_1 = [text], response_2 = [text]; its Item
columns (`image`, `image_path`, `prompt`, `response_1`, `response_2`) are
that same content, the record the MRB import reads and the MRB export
writes. Other items (MMRB2's image and interleaved responses, text-only
prompts) have no Item.image, and their text columns hold the slot's text
parts joined by a blank line (for search, the admin and curation lists).
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import models
from django.db.models import Q
from django.utils.safestring import mark_safe

from annotate import rendering
from annotate.models.items import ImageAsset, Item
from common.bulk import insert_rows


class Slot(models.TextChoices):
    PROMPT = "prompt", "Prompt"
    RESPONSE_1 = "response_1", "Response 1"
    RESPONSE_2 = "response_2", "Response 2"


class PartKind(models.TextChoices):
    TEXT = "text", "Text"
    IMAGE = "image", "Image"


# The separator of a slot's text parts in the Item's text column.
TEXT_JOINER = "\n\n"


class ItemPart(models.Model):
    # No index of its own: the unique constraint below starts with item_id.
    item = models.ForeignKey(
        Item, on_delete=models.CASCADE, related_name="content_parts", db_index=False
    )
    slot = models.CharField(max_length=10, choices=Slot.choices)
    position = models.PositiveSmallIntegerField()
    kind = models.CharField(max_length=5, choices=PartKind.choices)
    # Markdown of a text part, kept verbatim (whitespace-only text included).
    text = models.TextField(blank=True, default="")
    # Indexed (Django's default): deleting an ImageAsset checks PROTECT here.
    image = models.ForeignKey(
        ImageAsset, on_delete=models.PROTECT, null=True, blank=True, related_name="parts"
    )
    source_path = models.CharField(
        max_length=500, blank=True, default="", help_text="The image's path in the source dataset."
    )
    # The sanitised HTML of a text part, valid while rendered_version equals
    # rendering.RENDERER_VERSION (0: not rendered yet; the page renders it).
    html = models.TextField(blank=True, default="", editable=False)
    rendered_version = models.PositiveSmallIntegerField(default=0, editable=False)

    class Meta:
        ordering = ["item", "slot", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["item", "slot", "position"], name="annotate_itempart_position_per_slot"
            ),
            models.CheckConstraint(
                condition=Q(slot__in=Slot.values), name="annotate_itempart_slot_valid"
            ),
            # A text part has no image; an image part has one.
            models.CheckConstraint(
                condition=Q(kind=PartKind.TEXT, image__isnull=True, source_path="")
                | Q(kind=PartKind.IMAGE, image__isnull=False),
                name="annotate_itempart_kind_matches_content",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.item_id} {self.slot}[{self.position}] {self.kind}"

    @property
    def is_image(self) -> bool:
        return self.kind == PartKind.IMAGE

    def render_html(self) -> None:
        """Set the stored HTML of a text part (not saved)."""
        with rendering.render_budget():
            self.html = rendering.render_markdown(self.text) if not self.is_image else ""
        self.rendered_version = rendering.RENDERER_VERSION


def mrb_parts(
    *, item_id: int, image_id: int, image_path: str, prompt: str, response_1: str, response_2: str
) -> list[ItemPart]:
    """The parts of an item of the Multimodal RewardBench shape."""
    return [
        ItemPart(
            item_id=item_id,
            slot=Slot.PROMPT,
            position=0,
            kind=PartKind.IMAGE,
            image_id=image_id,
            source_path=image_path,
        ),
        ItemPart(item_id=item_id, slot=Slot.PROMPT, position=1, kind=PartKind.TEXT, text=prompt),
        ItemPart(
            item_id=item_id, slot=Slot.RESPONSE_1, position=0, kind=PartKind.TEXT, text=response_1
        ),
        ItemPart(
            item_id=item_id, slot=Slot.RESPONSE_2, position=0, kind=PartKind.TEXT, text=response_2
        ),
    ]


# The fields of an MRB-shaped item's part rows (mrb_part_rows), in order.
MRB_PART_FIELDS = ("item_id", "slot", "position", "kind", "text", "image_id", "source_path")


def mrb_part_rows(item_id: int, image_id: int, image_path: str, prompt: str, r1: str, r2: str):
    """mrb_parts as rows of MRB_PART_FIELDS (no model instances: an import
    writes 400,000 of them)."""
    text, image = PartKind.TEXT.value, PartKind.IMAGE.value
    return (
        (item_id, Slot.PROMPT.value, 0, image, "", image_id, image_path),
        (item_id, Slot.PROMPT.value, 1, text, prompt, None, ""),
        (item_id, Slot.RESPONSE_1.value, 0, text, r1, None, ""),
        (item_id, Slot.RESPONSE_2.value, 0, text, r2, None, ""),
    )


def write_mrb_parts(items: Iterable[Item], *, replace: bool = False) -> None:
    """Store the parts of items written from MRB-shaped records (the MRB and
    pairs imports): `replace` first removes the parts an --update replaces."""
    items = list(items)
    if replace:
        ItemPart.objects.filter(item__in=[item.pk for item in items]).delete()
    insert_rows(
        ItemPart,
        MRB_PART_FIELDS,
        [
            row
            for item in items
            for row in mrb_part_rows(
                item.pk,
                item.image_id,
                item.image_path,
                item.prompt,
                item.response_1,
                item.response_2,
            )
        ],
    )


# An item's text column per slot (the slot's text parts, joined).
SLOT_COLUMNS = {Slot.PROMPT: "prompt", Slot.RESPONSE_1: "response_1", Slot.RESPONSE_2: "response_2"}


def text_parts_by_slot(item: Item) -> dict[str, list[ItemPart]]:
    """The item's text parts per slot, in order (one query)."""
    grouped: dict[str, list[ItemPart]] = {slot: [] for slot in SLOT_COLUMNS}
    for part in item.content_parts.filter(kind=PartKind.TEXT).order_by("slot", "position"):
        grouped[part.slot].append(part)
    return grouped


def write_text_to_parts(item: Item, slots: Iterable[str]) -> None:
    """After an edit of the item's text columns (Django admin): each edited
    slot's one text part takes the column's text, its HTML rendered again
    by the sanitised renderer; a slot without text gets one text part at
    its end. A slot of several text parts is edited part by part
    (text_parts_by_slot tells; the admin form refuses the column edit).
    The MRB prompt image follows the item's image."""
    grouped = text_parts_by_slot(item)
    for slot in slots:
        text = getattr(item, SLOT_COLUMNS[slot])
        parts = grouped[slot]
        if len(parts) > 1:
            raise ValueError(f"{slot} has {len(parts)} text parts: edit them one by one")
        if parts:
            part = parts[0]
            part.text = text
        else:
            last = item.content_parts.filter(slot=slot).order_by("-position").first()
            part = ItemPart(
                item=item,
                slot=slot,
                position=0 if last is None else last.position + 1,
                kind=PartKind.TEXT,
                text=text,
            )
        part.render_html()
        part.save()
    if item.image_id is not None:
        item.content_parts.filter(slot=Slot.PROMPT, kind=PartKind.IMAGE, position=0).update(
            image_id=item.image_id, source_path=item.image_path
        )


def write_parts_to_text(item: Item) -> None:
    """After an edit of the item's parts (Django admin): text parts get their
    HTML again and the item's text columns hold each slot's text parts
    joined (its own HTML rendered by Item.save)."""
    stale = list(
        item.content_parts.filter(kind=PartKind.TEXT).exclude(
            rendered_version=rendering.RENDERER_VERSION
        )
    )
    for part in stale:
        part.render_html()
    ItemPart.objects.bulk_update(stale, ["html", "rendered_version"])
    for slot, parts in text_parts_by_slot(item).items():
        setattr(item, SLOT_COLUMNS[slot], TEXT_JOINER.join(part.text for part in parts))
    item.save(update_fields=list(SLOT_COLUMNS.values()))


def shown_parts(parts: list[ItemPart], label: str) -> list[dict]:
    """Parts as annotate/_parts.html shows them: text as its sanitised HTML
    (whitespace-only text left out), images with their alternative text
    ("{label}, image 2 of 3"). Never a source path: it may name a model."""
    n_images = sum(part.is_image for part in parts)
    shown, seen = [], 0
    for part in parts:
        if part.is_image:
            seen += 1
            alt = f"{label}, image {seen} of {n_images}" if n_images > 1 else f"{label}, image"
            shown.append({"image": part.image, "alt": alt})
        elif part.html.strip():
            # Only ItemPart.render_html() writes this column, and its output is sanitised.
            shown.append({"html": mark_safe(part.html)})
    return shown


def render_parts_html(*, item_ids: list[int]) -> int:
    """Store the HTML of the items' text parts that lack it for the current
    renderer (idempotent; an import's task). Returns how many were rendered."""
    rendered = 0
    for start in range(0, len(item_ids), 500):
        parts = list(
            ItemPart.objects.filter(item_id__in=item_ids[start : start + 500], kind=PartKind.TEXT)
            .exclude(rendered_version=rendering.RENDERER_VERSION)
            .only("pk", "text")
        )
        for part in parts:
            part.render_html()
        ItemPart.objects.bulk_update(parts, ["html", "rendered_version"], batch_size=500)
        rendered += len(parts)
    return rendered


def parts_by_slot(item: Item) -> dict[str, list[ItemPart]]:
    """The item's parts grouped by slot, in order (one query), each text part
    with its HTML (rendered and stored first if missing or stale)."""
    grouped: dict[str, list[ItemPart]] = {slot: [] for slot in Slot.values}
    stale = []
    for part in item.content_parts.select_related("image").order_by("slot", "position"):
        if part.kind == PartKind.TEXT and part.rendered_version != rendering.RENDERER_VERSION:
            part.render_html()
            stale.append(part)
        grouped[part.slot].append(part)
    if stale:
        ItemPart.objects.bulk_update(stale, ["html", "rendered_version"])
    return grouped
