"""{% slot_parts item "response_1" "Response 1" %}: one slot of an item's
content, part by part (issues 24 and 32), for every page that shows items
(the curators' pages: images link to their full size)."""

from django import template

from annotate.models import parts_by_slot, shown_parts

register = template.Library()


@register.inclusion_tag("annotate/_parts.html")
def slot_parts(item, slot: str, label: str) -> dict:
    # One query per item, kept on the instance for the page's other slots
    # (a list sets it for all its items at once: annotate.models.parts_by_item).
    cached = getattr(item, "content_by_slot", None)
    if cached is None:
        cached = item.content_by_slot = parts_by_slot(item)
    return {"parts": shown_parts(cached.get(slot, []), label), "full_size": True}
