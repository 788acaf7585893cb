"""{% slot_parts item "response_1" "Response 1" %}: one slot of an item's
content, part by part (issues 24 and 32), for every page that shows items
(the curators' pages: images link to their full size).
{% more_responses item as more %}: the item's response slots past the
second, as (slot, label), for the pages that show pairs to show them all."""

from django import template

from annotate.models import parts_by_slot, shown_parts
from annotate.models.parts import response_slots, slot_order

register = template.Library()


def _content(item) -> dict:
    # One query per item, kept on the instance for the page's other slots
    # (a list sets it for all its items at once: annotate.models.parts_by_item).
    cached = getattr(item, "content_by_slot", None)
    if cached is None:
        cached = item.content_by_slot = parts_by_slot(item)
    return cached


@register.inclusion_tag("annotate/_parts.html")
def slot_parts(item, slot: str, label: str) -> dict:
    return {"parts": shown_parts(_content(item).get(slot, []), label), "full_size": True}


@register.simple_tag
def more_responses(item) -> list[tuple[str, str]]:
    return [(slot, f"Response {slot_order(slot)}") for slot in response_slots(_content(item))[2:]]
