"""The one place an import writes what annotators see: an item's parts, and
the flat copy of them on the Item row (search, the admin, curation lists).

`write_item_content` writes the parts of items already inserted (and, for
an item being updated, its flat copy); `content_columns` is that flat copy
for a new item's INSERT (one statement per batch, not an UPDATE per item).
Merging the parts-only content model (issue 32 item 1) changes this module
only.

The flat copy: each slot's text parts joined by a blank line; the item's
image is the prompt's image only when the item has the Multimodal
RewardBench shape (prompt = [image, text], one text per response).
"""

from __future__ import annotations

from annotate.importing.formats import IMAGE, ParsedItem
from annotate.models import Item, ItemPart
from annotate.models.parts import TEXT_JOINER
from common.bulk import insert_rows

CONTENT_COLUMNS = ("prompt", "image_id", "image_path", "response_1", "response_2")
_PART_FIELDS = ("item_id", "slot", "position", "kind", "text", "image_id", "source_path")
# A replaced prompt or response makes the stored HTML stale.
_NOT_RENDERED = {
    "prompt_html": "",
    "response_1_html": "",
    "response_2_html": "",
    "rendered_version": 0,
}


def _mrb_shaped(item: ParsedItem) -> bool:
    kinds = [[p.kind for p in slot] for slot in item.slots().values()]
    return kinds == [[IMAGE, "text"], ["text"], ["text"]]


def content_columns(item: ParsedItem, image_id) -> tuple:
    """The flat copy, in CONTENT_COLUMNS order. `image_id(ref)` gives the
    stored image of an image part."""

    def text(parts) -> str:
        return TEXT_JOINER.join(p.text for p in parts if p.kind != IMAGE)

    image, path = None, ""
    if _mrb_shaped(item):
        image, path = image_id(item.prompt[0].ref), item.prompt[0].source_path
    return (text(item.prompt), image, path, text(item.responses[0]), text(item.responses[1]))


def write_item_content(items: list[tuple[int, ParsedItem]], image_id, *, replace=False) -> None:
    """Store the parts of (item pk, parsed item)s. `replace`: the items
    exist; their parts and flat copy are written anew (the stored HTML is
    made again by the import's task)."""
    if replace:
        for pk, item in items:
            columns = dict(zip(CONTENT_COLUMNS, content_columns(item, image_id), strict=True))
            Item.objects.filter(pk=pk).update(**columns, **_NOT_RENDERED)
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
                part.text if part.kind != IMAGE else "",
                image_id(part.ref) if part.kind == IMAGE else None,
                part.source_path if part.kind == IMAGE else "",
            )
            for pk, item in items
            for slot, parts in item.slots().items()
            for position, part in enumerate(parts)
        ],
    )
