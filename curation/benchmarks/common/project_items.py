"""A project's items as the judge prompts read them (issue 36 item 3): the
parts of each item in plain terms, for a benchmark's `judge_project_records`.

A judge record made from an item names its files by their stored name (the
asset's file); the project run's reader reads those files and nothing else
(curation.evaluation.project_judging), so every record lists them under
``FILES``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

FILES = "_files"  # the stored files a project record may read


@dataclass(frozen=True)
class ItemParts:
    external_id: str
    prompt: str  # the prompt slot's text parts, joined as the Item's text column
    response_1: str
    response_2: str
    criterion: str  # the question asked of the pair (Item.criterion; "" when none)
    # The prompt's files in order: (stored name, kind "image" / "video" / "audio").
    media: list[tuple[str, str]] = field(default_factory=list)
    # Files of the responses (an interleaved or a media response), by slot.
    response_media: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    # Every slot's parts in order, (kind, text or stored name): interleaved content.
    content: dict[str, list[tuple[str, str]]] = field(default_factory=dict)

    def files(self, kind: str) -> list[str]:
        return [name for name, k in self.media if k == kind]

    @property
    def text_only_responses(self) -> bool:
        return not any(self.response_media.values())


def item_parts(items) -> list[ItemParts]:
    """The parts of `items` (a queryset or list of Items), in their order."""
    from annotate.models.parts import PartKind, Slot, parts_by_item, slot_text

    items = list(items)
    by_item = parts_by_item([i.pk for i in items], html=False)
    out = []
    for item in items:
        slots = by_item.get(item.pk, {})

        def files(slot: str, slots=slots) -> list[tuple[str, str]]:
            return [_file(part) for part in slots.get(slot, []) if part.kind != PartKind.TEXT]

        if Slot.PROMPT in slots:
            prompt, media = slot_text(slots[Slot.PROMPT]), files(Slot.PROMPT)
        else:  # items made before parts: the derived columns
            media = [(str(item.image.file), "image")] if item.image_id else []
            prompt = item.prompt
        out.append(
            ItemParts(
                external_id=item.external_id,
                prompt=prompt,
                response_1=item.response_1,
                response_2=item.response_2,
                criterion=item.criterion,
                media=media,
                response_media={
                    s: files(s) for s in (Slot.RESPONSE_1, Slot.RESPONSE_2) if files(s)
                },
                content={
                    str(slot): [
                        (str(p.kind), p.text if p.kind == PartKind.TEXT else _file(p)[0])
                        for p in parts
                    ]
                    for slot, parts in slots.items()
                },
            )
        )
    return out


def _file(part) -> tuple[str, str]:
    asset = part.image if part.image_id is not None else part.media
    return str(asset.file), str(part.kind)


def canonical(pick: str | None, call: str) -> str | None:
    """The item's response ("1"/"2") an "A"/"B" pick of a pass means
    ("original": response 1 shown as A; "swapped": response 2)."""
    if pick not in ("A", "B"):
        return None
    first = pick == "A"
    if call == "swapped":
        first = not first
    return "1" if first else "2"
