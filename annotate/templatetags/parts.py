"""{% slot_parts item "response_1" "Response 1" %}: one slot of an item's
content, part by part (issue 24), for pages that show items of any shape."""

from django import template

from annotate.models import parts_by_slot, shown_parts

register = template.Library()


@register.inclusion_tag("annotate/_parts.html")
def slot_parts(item, slot: str, label: str) -> dict:
    # One query per item, kept on the instance for the page's other slots.
    cached = getattr(item, "content_by_slot", None)
    if cached is None:
        cached = item.content_by_slot = parts_by_slot(item)
    return {"parts": shown_parts(cached[slot], label)}
