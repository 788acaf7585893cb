"""The one place an import writes what annotators see: an item's parts, and
the flat copy of them on the Item row (search, the admin, curation lists).

`write_parsed_parts` writes the parts of items already inserted (and, for
an item being updated, its flat copy); `content_columns` is that flat copy
for a new item's INSERT (one statement per batch, not an UPDATE per item).

The flat copy is annotate.models.parts.derived_columns's, the one rule.
"""

from __future__ import annotations

from annotate.importing.formats import IMAGE, MEDIA, ParsedItem
from annotate.models import Item, ItemPart
from annotate.models.parts import DERIVED_COLUMNS, PartKind, derived_columns
from common.bulk import insert_rows

CONTENT_COLUMNS = DERIVED_COLUMNS
_PART_FIELDS = (
    "item_id", "slot", "position", "kind", "text", "image_id", "media_id", "source_path",
)  # fmt: skip


def _part(p, image_id) -> ItemPart:
    if p.kind == IMAGE:
        return ItemPart(kind=PartKind.IMAGE, image_id=image_id(p.ref), source_path=p.source_path)
    if p.kind in MEDIA:
        return ItemPart(kind=p.kind, media_id=image_id(p.ref), source_path=p.source_path)
    return ItemPart(kind=PartKind.TEXT, text=p.text)


def _by_slot(item: ParsedItem, image_id) -> dict[str, list[ItemPart]]:
    """The parsed item's parts as unsaved ItemParts grouped by slot.
    `image_id(ref)` gives an image part's ImageAsset id, or a video or audio
    part's MediaAsset id."""
    return {slot: [_part(p, image_id) for p in parts] for slot, parts in item.slots().items()}


def content_columns(item: ParsedItem, image_id) -> tuple:
    """The flat copy, in CONTENT_COLUMNS order, by the one rule
    (annotate.models.parts.derived_columns). `image_id(ref)` gives the
    stored image of an image part."""
    columns = derived_columns(_by_slot(item, image_id))
    return tuple(columns[name] for name in CONTENT_COLUMNS)


def write_parsed_parts(items: list[tuple[int, ParsedItem]], image_id, *, replace=False) -> None:
    """Store the parts of (item pk, parsed item)s. `replace`: the items
    exist; their parts and flat copy are written anew (the parts' HTML is
    made again by the import's task)."""
    if replace:
        for pk, item in items:
            columns = dict(zip(CONTENT_COLUMNS, content_columns(item, image_id), strict=True))
            Item.objects.filter(pk=pk).update(**columns)
        ItemPart.objects.filter(item_id__in=[pk for pk, _ in items]).delete()
    insert_rows(
        ItemPart,
        _PART_FIELDS,
        [
            (
                pk,
                slot,
                position,
                part.kind,
                part.text if part.kind not in (IMAGE, *MEDIA) else "",
                image_id(part.ref) if part.kind == IMAGE else None,
                image_id(part.ref) if part.kind in MEDIA else None,
                part.source_path if part.kind in (IMAGE, *MEDIA) else "",
            )
            for pk, item in items
            for slot, parts in item.slots().items()
            for position, part in enumerate(parts)
        ],
    )
