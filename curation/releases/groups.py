"""Item groups in releases and Acc+ (issue 34).

A release freezes each member's group key (ReleaseItem.group_key, from
Item.group_key when it was built). Where a release has groups, scorers
report **Acc+**: the share of groups whose every member is judged right
(MM-RLHF-RewardBench's definition: a prompt counts only when all its pairs
are correct).

Our rule, for every scorer that reports it (decisions.md, "Item groups"):

* Strict: a member's result counts right only when its prediction picks
  the chosen response; a tie (equal scores, no pick), an unparsed verdict
  left without a pick, or a member with no prediction at all is wrong, so
  the group is wrong.
* A member without a group key is a group of its own, so Acc+ covers every
  member of the release (on a release without any group key, Acc+ would
  equal the strict accuracy and is not reported).
* A ranked member decomposed into pairs is scored per item: its pairs form
  one group (all of them right, or the item is wrong), inside the item's
  own group when it has one.

No Django import at module level in the pure part (acc_plus); the two
helpers that read the database import what they need.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class AccPlus:
    correct_groups: int
    groups: int
    members: int

    @property
    def value(self) -> float | None:
        return self.correct_groups / self.groups if self.groups else None

    def as_dict(self) -> dict:
        return {
            "value": self.value,
            "correct_groups": self.correct_groups,
            "groups": self.groups,
            "members": self.members,
            "rule": "a group counts when all its members are right; a tie or a missing "
            "prediction is wrong; a member without a group is a group of its own",
        }


def acc_plus(
    members: Iterable[str], groups: Mapping[str, str], right: Mapping[str, bool | None]
) -> AccPlus:
    """Acc+ over `members` (IDs as the predictions name them): `groups` maps
    an ID to its group key ("" or absent: its own group), `right` an ID to
    whether its prediction picked the chosen response (None or absent:
    a tie or no prediction, wrong)."""
    verdict: dict[tuple[str, str], bool] = {}
    count = 0
    for member in members:
        count += 1
        group = groups.get(member, "")
        key = ("group", group) if group else ("own", member)
        verdict[key] = verdict.get(key, True) and right.get(member) is True
    return AccPlus(correct_groups=sum(verdict.values()), groups=len(verdict), members=count)


def release_groups(release) -> dict[str, str]:
    """{ID in the release's files: group key} of the members that have a
    group; empty for a release without groups (then no Acc+)."""
    from curation.models import ReleaseItem

    rows = (
        ReleaseItem.objects.filter(release=release)
        .exclude(group_key="")
        .values_list("external_id", "released_id", "group_key")
    )
    return {released or external: group for external, released, group in rows}


def freeze_group_keys(release) -> int:
    """Copy each member's item group key onto its ReleaseItem (one UPDATE,
    and only when the project has grouped items). The number of members
    that got one."""
    from django.db.models import OuterRef, Subquery

    from annotate.models import Item
    from curation.models import ReleaseItem

    grouped = Item.objects.filter(project_id=release.project_id).exclude(group_key="")
    if not grouped.exists():
        return 0
    key = Subquery(grouped.filter(pk=OuterRef("item_id")).values("group_key")[:1])
    ReleaseItem.objects.filter(release=release, item__in=grouped).update(group_key=key)
    return ReleaseItem.objects.filter(release=release).exclude(group_key="").count()
