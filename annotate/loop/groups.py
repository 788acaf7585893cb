"""An item's place in its group (issue 34): the compare page's "Pair 2 of 4
of this prompt" and the API's `group`.

A group's items reach an annotator one after another, lowest id first (the
claim's `grouped` pick, annotate.loop.postgres), so an item's place is its
rank by id among the group's items. One query, and only for an item of a
group: an item of its own (the common case) costs nothing. The group key
itself is never shown to annotators (it may be a source ID)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q

from annotate.models import Item, Task


@dataclass(frozen=True)
class GroupPlace:
    position: int  # 1-based, by item id
    size: int
    noun: str  # what an item of the group is called: "Pair" or "Item"

    @property
    def label(self) -> str:
        return f"{self.noun} {self.position} of {self.size} of this prompt"

    def as_payload(self) -> dict:
        return {"position": self.position, "size": self.size, "label": self.label}


def group_place(item: Item, task: str) -> GroupPlace | None:
    """Where `item` sits in its group, or None for an item of its own."""
    if not item.group_key:
        return None
    counts = Item.objects.filter(project_id=item.project_id, group_key=item.group_key).aggregate(
        size=Count("pk"), position=Count("pk", filter=Q(pk__lte=item.pk))
    )
    return GroupPlace(
        position=counts["position"],
        size=counts["size"],
        noun="Pair" if task == Task.PAIRWISE else "Item",
    )
