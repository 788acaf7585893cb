"""An item's content: its parts (issues 24 and 32). The parts ARE the item.

An item has a prompt slot and N >= 2 response slots (`response_1`,
`response_2`, … `response_<n>`), each an ordered list of parts whose kind is
text, image, video or audio (a video or audio part holds a MediaAsset, issue
35; PART_VALIDATORS says what each kind holds). Parts are the only writable content:

- write_item_content(item, prompt, responses) replaces an item's parts and
  derives its columns (the one writer; importers, the demo, tests);
- derive_item_text(item) derives the Item's columns from its stored parts
  (after the admin edits parts);
- parts_by_slot(item) / parts_by_item(item_ids) read the parts grouped by
  slot, each text part with its sanitised HTML (one query; one for a list);
- shown_parts(parts, label) is what the pages show of a slot.

The Item's columns `prompt`, `response_1`, `response_2`, `image` and
`image_path` are a denormalisation of the parts, written by derived_columns()
alone: each text column holds its slot's text parts joined by a blank line
(`prompt` is the search column, trigram-indexed); `image`/`image_path` are
the prompt's image when the item has the Multimodal RewardBench shape
(prompt = [image, text], one text per response; see is_mrb_shaped), null
otherwise: the MRB record's image the MRB release reads, the grid's
thumbnail and the API's `image_url`. The HTML lives on the parts only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.db.models import Q
from django.utils.safestring import mark_safe

from annotate import rendering
from annotate.models.items import ImageAsset, Item, MediaAsset


class Slot(models.TextChoices):
    """The slots every item has. Response slots beyond the second are
    `response_<n>` (response_slot(n)); SLOT_PATTERN says which are valid."""

    PROMPT = "prompt", "Prompt"
    RESPONSE_1 = "response_1", "Response 1"
    RESPONSE_2 = "response_2", "Response 2"


# At most 99 response slots can be named: `response_1` … `response_99`, no
# leading zero (the slot constraint).
MAX_RESPONSES = 99
# How many responses an item may have (the writer's rule, response_count_problem):
# at least a pair, at most what a page can show side by side and a display
# order can hold (rules.MAX_SLOTS is 9); RewardBench 2 has four.
ITEM_MIN_RESPONSES = 2
ITEM_MAX_RESPONSES = 8
SLOT_PATTERN = r"\A(prompt|response_[1-9][0-9]?)\Z"
_SLOT_RE = re.compile(SLOT_PATTERN)


def response_count_problem(n: int, task: str | None = None) -> str | None:
    """Why an item of `n` responses may not be written (None: it may), for a
    project of `task` (annotate.models.Task; None: any task). The one rule:
    2 to ITEM_MAX_RESPONSES responses, exactly two for a pairwise task."""
    if n < ITEM_MIN_RESPONSES:
        return f"has {n} responses; an item has at least {ITEM_MIN_RESPONSES}"
    if n > ITEM_MAX_RESPONSES:
        return f"has {n} responses; an item has at most {ITEM_MAX_RESPONSES}"
    if task == "pairwise" and n != 2:
        return (
            f"has {n} responses; a pairwise project's items have exactly two "
            f"(a best-of-N or ranking project takes up to {ITEM_MAX_RESPONSES})"
        )
    return None


def response_slot(n: int) -> str:
    """The slot of response n (1-based)."""
    if not 1 <= n <= MAX_RESPONSES:
        raise ValueError(f"response {n}: an item has responses 1 to {MAX_RESPONSES}")
    return f"response_{n}"


def slot_order(slot: str) -> int:
    """The prompt first (0), then response n at n: slots sort by this, not
    by name (`response_10` comes after `response_9`)."""
    return 0 if slot == Slot.PROMPT else int(slot.removeprefix("response_"))


def response_slots(by_slot: dict[str, list]) -> list[str]:
    """The response slots of grouped parts, in order."""
    return sorted((slot for slot in by_slot if slot != Slot.PROMPT), key=slot_order)


class PartKind(models.TextChoices):
    TEXT = "text", "Text"
    IMAGE = "image", "Image"
    VIDEO = "video", "Video"
    AUDIO = "audio", "Audio"


# The separator of a slot's text parts in the Item's text column.
TEXT_JOINER = "\n\n"


class ItemPart(models.Model):
    # No index of its own: the unique constraint below starts with item_id.
    item = models.ForeignKey(
        Item, on_delete=models.CASCADE, related_name="content_parts", db_index=False
    )
    slot = models.CharField(max_length=12, help_text="prompt, response_1, response_2, …")
    position = models.PositiveSmallIntegerField()
    kind = models.CharField(max_length=5, choices=PartKind.choices)
    # Markdown of a text part, kept verbatim (whitespace-only text included).
    text = models.TextField(blank=True, default="")
    # Indexed (Django's default): deleting an ImageAsset checks PROTECT here.
    image = models.ForeignKey(
        ImageAsset, on_delete=models.PROTECT, null=True, blank=True, related_name="parts"
    )
    # A video or audio part's file (issue 35). Indexed: PROTECT, and the media
    # view's membership check.
    media = models.ForeignKey(
        MediaAsset, on_delete=models.PROTECT, null=True, blank=True, related_name="parts"
    )
    source_path = models.CharField(
        max_length=500,
        blank=True,
        default="",
        help_text="The image's (or video's, audio's) path in the source dataset.",
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
            # \A and \Z: see ImageAsset's constraint.
            models.CheckConstraint(
                condition=Q(slot__regex=SLOT_PATTERN), name="annotate_itempart_slot_valid"
            ),
            # A text part has no file; an image part has its image; a video or
            # audio part its media (whose own kind the validator checks).
            models.CheckConstraint(
                condition=Q(
                    kind=PartKind.TEXT, image__isnull=True, media__isnull=True, source_path=""
                )
                | Q(kind=PartKind.IMAGE, image__isnull=False, media__isnull=True)
                | Q(
                    kind__in=[PartKind.VIDEO, PartKind.AUDIO],
                    image__isnull=True,
                    media__isnull=False,
                ),
                name="annotate_itempart_kind_matches_content",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.item_id} {self.slot}[{self.position}] {self.kind}"

    @property
    def is_image(self) -> bool:
        return self.kind == PartKind.IMAGE

    @property
    def is_media(self) -> bool:
        """A video or audio part (its file is `media`)."""
        return self.kind in (PartKind.VIDEO, PartKind.AUDIO)

    def clean(self) -> None:
        validate_part(self)

    def render_html(self) -> None:
        """Set the stored HTML of a text part (not saved)."""
        with rendering.render_budget():
            self.html = rendering.render_markdown(self.text) if self.kind == PartKind.TEXT else ""
        self.rendered_version = rendering.RENDERER_VERSION


# One validator per kind, in this one place: what a part of that kind holds.
def _valid_text(part: ItemPart) -> None:
    if part.image_id is not None or part.media_id is not None or part.source_path:
        raise ValidationError("A text part has no image, no media and no source path.")


def _valid_image(part: ItemPart) -> None:
    if part.image_id is None:
        raise ValidationError("An image part needs its image.")
    if part.media_id is not None:
        raise ValidationError("An image part has no video or audio.")
    if part.text:
        raise ValidationError("An image part has no text.")


def _valid_media(part: ItemPart) -> None:
    if part.media_id is None:
        raise ValidationError(f"A {part.kind} part needs its {part.kind} file.")
    if part.image_id is not None or part.text:
        raise ValidationError(f"A {part.kind} part has no image and no text.")
    # The asset's own kind matches: media_part() and the import writer take
    # the part's kind from the asset (no query per part here).


PART_VALIDATORS = {
    PartKind.TEXT: _valid_text,
    PartKind.IMAGE: _valid_image,
    PartKind.VIDEO: _valid_media,
    PartKind.AUDIO: _valid_media,
}


def validate_part(part: ItemPart) -> None:
    """Raise ValidationError unless the part's slot and content are valid."""
    if not _SLOT_RE.search(part.slot or ""):
        raise ValidationError(f"{part.slot!r} is not a slot: prompt or response_1 … response_99.")
    validator = PART_VALIDATORS.get(part.kind)
    if validator is None:
        raise ValidationError(f"{part.kind!r} is not a part kind.")
    validator(part)


def text_part(text: str) -> ItemPart:
    """An unsaved text part (write_item_content places it)."""
    return ItemPart(kind=PartKind.TEXT, text=text)


def image_part(image_id: int, source_path: str = "") -> ItemPart:
    """An unsaved image part (write_item_content places it)."""
    return ItemPart(kind=PartKind.IMAGE, image_id=image_id, source_path=source_path)


def media_part(media: MediaAsset, source_path: str = "") -> ItemPart:
    """An unsaved video or audio part of the stored `media` (its kind is the
    asset's; write_item_content places it)."""
    return ItemPart(kind=media.kind, media=media, source_path=source_path)


def is_mrb_shaped(by_slot: dict[str, list[ItemPart]]) -> bool:
    """Prompt = [image, text] and exactly two responses of one text each:
    the Multimodal RewardBench record's shape."""
    kinds = {slot: [part.kind for part in parts] for slot, parts in by_slot.items() if parts}
    return kinds == {
        Slot.PROMPT: [PartKind.IMAGE, PartKind.TEXT],
        Slot.RESPONSE_1: [PartKind.TEXT],
        Slot.RESPONSE_2: [PartKind.TEXT],
    }


# The Item columns derived from its parts (derived_columns).
DERIVED_COLUMNS = ("prompt", "response_1", "response_2", "image_id", "image_path")


def slot_text(parts: Iterable) -> str:
    """A slot's text: its text parts joined by TEXT_JOINER (the rule of the
    Item's text columns, and of every flat record made from parts)."""
    return TEXT_JOINER.join(p.text for p in parts if p.kind == PartKind.TEXT)


def derived_columns(by_slot: dict[str, list[ItemPart]]) -> dict:
    """The Item's derived columns from its parts grouped by slot (the one
    rule; see the module's docstring)."""

    image = by_slot[Slot.PROMPT][0] if is_mrb_shaped(by_slot) else None
    return {
        "prompt": slot_text(by_slot.get(Slot.PROMPT, ())),
        "response_1": slot_text(by_slot.get(Slot.RESPONSE_1, ())),
        "response_2": slot_text(by_slot.get(Slot.RESPONSE_2, ())),
        "image_id": image.image_id if image else None,
        "image_path": image.source_path if image else "",
    }


def derive_item_text(item: Item, by_slot: dict[str, list[ItemPart]] | None = None) -> None:
    """Write the item's derived columns from its parts (read if not given);
    the instance follows. Only these columns: the row's tallies may move."""
    if by_slot is None:
        by_slot = group_by_slot(item.content_parts.all())
    columns = derived_columns(by_slot)
    for name, value in columns.items():
        setattr(item, name, value)
    Item.objects.filter(pk=item.pk).update(**columns)


def write_item_content(
    item: Item,
    prompt: Sequence[ItemPart],
    responses: Sequence[Sequence[ItemPart]],
    *,
    render: bool = True,
) -> dict[str, list[ItemPart]]:
    """Replace the saved item's content: its prompt parts and its responses'
    parts (response 1 first, 2 to ITEM_MAX_RESPONSES; exactly two in a
    pairwise project), unsaved parts from text_part() and image_part().
    Validates every part, stores them with their HTML (`render=False` leaves
    it to render_parts_html, an import's task) and derives the item's
    columns. Returns the parts grouped by slot."""
    # A pair suits every task: the project is read only for other counts.
    task = item.project.task if len(responses) != 2 else None
    problem = response_count_problem(len(responses), task)
    if problem:
        raise ValidationError(f"The item {problem}.")
    by_slot = {Slot.PROMPT.value: list(prompt)}
    for n, parts in enumerate(responses, start=1):
        by_slot[response_slot(n)] = list(parts)
    rows = []
    for slot, parts in by_slot.items():
        for position, part in enumerate(parts):
            part.pk, part.item_id, part.slot, part.position = None, item.pk, slot, position
            validate_part(part)
            if render:
                part.render_html()
            rows.append(part)
    with transaction.atomic():
        ItemPart.objects.filter(item_id=item.pk).delete()
        ItemPart.objects.bulk_create(rows)
        derive_item_text(item, by_slot)
    return by_slot


def group_by_slot(parts: Iterable) -> dict[str, list]:
    """Parts (ItemParts, or any rows with `slot` and `position`) grouped by
    slot in slot order (prompt, response 1, 2, … even when empty), each
    slot's parts by position."""
    grouped: dict[str, list[ItemPart]] = {Slot.PROMPT: [], Slot.RESPONSE_1: [], Slot.RESPONSE_2: []}
    for part in sorted(parts, key=lambda p: (slot_order(p.slot), p.position)):
        grouped.setdefault(part.slot, []).append(part)
    return dict(sorted(grouped.items(), key=lambda kv: slot_order(kv[0])))


def _fresh_html(parts: list[ItemPart]) -> None:
    """Render and store the HTML of text parts that lack it for this renderer."""
    stale = [
        p
        for p in parts
        if p.kind == PartKind.TEXT and p.rendered_version != rendering.RENDERER_VERSION
    ]
    for part in stale:
        part.render_html()
    if stale:
        ItemPart.objects.bulk_update(stale, ["html", "rendered_version"], batch_size=500)


def parts_by_slot(item: Item, *, html: bool = True) -> dict[str, list[ItemPart]]:
    """The item's parts grouped by slot, in order (one query), each text part
    with its HTML (rendered and stored first if missing or stale; not with
    `html=False`, for readers of the Markdown)."""
    parts = list(ItemPart.objects.filter(item_id=item.pk).select_related("image", "media"))
    if html:
        _fresh_html(parts)
    return group_by_slot(parts)


def parts_by_item(
    item_ids: Iterable[int], *, html: bool = True
) -> dict[int, dict[str, list[ItemPart]]]:
    """parts_by_slot of many items, by item id: one query (and one update
    for stale HTML) whatever their number."""
    item_ids = list(item_ids)
    parts = list(ItemPart.objects.filter(item_id__in=item_ids).select_related("image", "media"))
    if html:
        _fresh_html(parts)
    by_item: dict[int, list[ItemPart]] = {pk: [] for pk in item_ids}
    for part in parts:
        by_item[part.item_id].append(part)
    return {pk: group_by_slot(item_parts) for pk, item_parts in by_item.items()}


def first_images(item_ids: Iterable[int]) -> dict[int, ImageAsset]:
    """Each item's first picture, the prompt's before the responses' (a list's
    thumbnail: an item whose pictures are all answers has one too), by item
    id; one query whatever their number. Items without a picture are left out."""
    first: dict[int, ImageAsset] = {}
    parts = (
        ItemPart.objects.filter(item_id__in=list(item_ids), kind=PartKind.IMAGE)
        .select_related("image")
        .order_by("item_id", "slot", "position")  # "prompt" sorts before "response_…"
    )
    for part in parts:
        first.setdefault(part.item_id, part.image)
    return first


def shown_parts(parts: list[ItemPart], label: str) -> list[dict]:
    """Parts as annotate/_parts.html shows them: text as its sanitised HTML
    (whitespace-only text left out), images with their alternative text
    ("{label}, image 2 of 3"), videos and audio files with their accessible
    name ("{label}, video"). Never a source path: it may name a model."""
    n_images = sum(part.is_image for part in parts)
    shown, seen = [], 0
    for part in parts:
        if part.is_media:
            shown.append({part.kind: part.media, "label": f"{label}, {part.kind}"})
        elif part.is_image:
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
            .only("pk", "kind", "text")
        )
        for part in parts:
            part.render_html()
        ItemPart.objects.bulk_update(parts, ["html", "rendered_version"], batch_size=500)
        rendered += len(parts)
    return rendered
