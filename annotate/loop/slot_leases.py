"""A best-of-N or ranking lease's display order (issue 33): the claim
(annotate.loop.service) draws a pair's order before it knows the item; a
new lease of an item of N responses gets a permutation of its N slots
instead, drawn the same way (rules.draw_order, uniform over the
permutations) and stored before any page shows it."""

from __future__ import annotations

from typing import Any

from annotate.loop.rules import draw_order, is_order
from annotate.models import Assignment, ItemPart, Slot


def fit_display_order(assignment: Assignment, rng: Any) -> None:
    """Give a lease of an item of N response slots an order over all N
    (drawn from `rng`), stored. One count (and one UPDATE on a new lease)
    beside the claim, for these tasks only; a resumed lease already has its
    order and keeps it."""
    n = (
        ItemPart.objects.filter(item_id=assignment.item_id)
        .exclude(slot=Slot.PROMPT)
        .values("slot")
        .distinct()
        .count()
    )
    if n < 2 or is_order(assignment.display_order, n):
        return
    assignment.display_order = draw_order(n, rng)
    Assignment.objects.filter(pk=assignment.pk).update(display_order=assignment.display_order)
