"""What curation's outputs read of an item's content: its parts (issue 32).

`item_contents(item_ids)` is the one function release builds, training
mixes and any other exporter use to read what annotators saw: one query for
a chunk of items, plain rows (no model instances: a release reads 100,000
items), grouped by slot and flattened by annotate's own rule
(`annotate.models.parts.derived_columns` / `slot_text`). The Item's flat
columns are that same rule's copy for search and lists; outputs read the
parts.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from annotate.models import ItemPart
from annotate.models.parts import (
    Slot,
    derived_columns,
    group_by_slot,
    response_slots,
    slot_text,
)


class PartRow(NamedTuple):
    """A part as a plain row (what derived_columns reads of an ItemPart,
    and its image's stored name)."""

    item_id: int
    slot: str
    position: int
    kind: str
    text: str
    image_id: int | None
    source_path: str
    image_sha256: str | None
    image_file: str | None


class ItemContent(NamedTuple):
    """An item's content as a flat record: the prompt's text, each response
    slot's text in canonical order, and the record's one image (the prompt's
    image of an item of the Multimodal RewardBench shape; None otherwise)."""

    prompt: str
    responses: tuple[str, ...]
    image_sha256: str | None
    image_file: str | None
    image_path: str
    slots: dict[str, list[PartRow]]  # every part, grouped by slot

    @property
    def response_1(self) -> str:
        return self.responses[0] if self.responses else ""

    @property
    def response_2(self) -> str:
        return self.responses[1] if len(self.responses) > 1 else ""

    @property
    def image_ext(self) -> str:
        return (self.image_file or "").rsplit(".", 1)[-1]


_FIELDS = (
    "item_id",
    "slot",
    "position",
    "kind",
    "text",
    "image_id",
    "source_path",
    "image__sha256",
    "image__file",
)


def item_contents(item_ids: Iterable[int]) -> dict[int, ItemContent]:
    """The content of the items, by id: one query whatever their number (a
    caller passes a chunk). An item without parts reads as empty."""
    item_ids = list(item_ids)
    rows: dict[int, list[PartRow]] = {pk: [] for pk in item_ids}
    for row in ItemPart.objects.filter(item_id__in=item_ids).values_list(*_FIELDS):
        rows[row[0]].append(PartRow(*row))
    return {pk: _content(group_by_slot(parts)) for pk, parts in rows.items()}


def _content(by_slot: dict[str, list[PartRow]]) -> ItemContent:
    columns = derived_columns(by_slot)
    image = by_slot[Slot.PROMPT][0] if columns["image_id"] is not None else None
    return ItemContent(
        prompt=columns["prompt"],
        responses=tuple(slot_text(by_slot[slot]) for slot in response_slots(by_slot)),
        image_sha256=image.image_sha256 if image else None,
        image_file=image.image_file if image else None,
        image_path=columns["image_path"],
        slots=by_slot,
    )
