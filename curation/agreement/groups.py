"""The agreement dashboard's group-level figure (issue 34).

A group (items sharing Item.group_key: one prompt's pairs, one pair under
several criteria) **reached consensus** when every one of its items' verdicts
is `agreed`: the annotators' votes met the project's agreement rule on
their own. An item a curator had to resolve, an excluded item or a
contested one makes its group fall short. The share is taken over the
**complete** groups, those none of whose items still needs votes; groups
still collecting are counted apart. decisions.md, "Item groups".

One aggregate query over the project's verdicts, grouped by the items'
group key; nothing for a project without groups.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q

from curation.models import Verdict, VerdictStatus


@dataclass(frozen=True)
class GroupConsensus:
    groups: int  # groups with at least one item
    complete: int  # groups none of whose items needs votes
    consensus: int  # complete groups whose every item is agreed

    @property
    def share(self) -> float | None:
        return self.consensus / self.complete if self.complete else None

    @property
    def collecting(self) -> int:
        return self.groups - self.complete


def group_consensus(project) -> GroupConsensus | None:
    """The figure, or None for a project without groups."""
    rows = (
        Verdict.objects.filter(project=project, item__project=project)
        .exclude(item__group_key="")
        .values("item__group_key")
        .annotate(
            total=Count("pk"),
            agreed=Count("pk", filter=Q(status=VerdictStatus.AGREED)),
            pending=Count("pk", filter=Q(status=VerdictStatus.NEEDS_VOTES)),
        )
        .values_list("total", "agreed", "pending")
        .order_by()
    )
    groups = complete = consensus = 0
    for total, agreed, pending in rows:
        groups += 1
        if pending == 0:
            complete += 1
            consensus += agreed == total
    if not groups:
        return None
    return GroupConsensus(groups=groups, complete=complete, consensus=consensus)
