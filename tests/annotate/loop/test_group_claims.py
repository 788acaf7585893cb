"""Issue 34: a group's items reach an annotator one after another.

After she judges an item of a group, her next claim (the submit's next, the
page's claim ahead, a claim naming the group) takes an item of that group
she may take, the lowest id first, whatever the claim order says; overlap,
leases and "never the same item twice" hold as for any claim.
"""

import pytest
from django.db import connection

from annotate.loop import postgres
from annotate.loop.service import (
    Vote,
    claim_ahead,
    claim_next_item,
    submit_and_claim_next,
)
from annotate.models import Assignment, Item, shuffle_key
from tests.conftest import requires_postgres
from tests.factories import make_item, make_member, make_project

pytestmark = pytest.mark.django_db


def vote():
    return Vote(choice="1", correct_1="yes", correct_2="no", confidence=2)


def grouped_world(votes=2):
    project = make_project(votes_per_item=votes)
    # The group's items come last in the shuffle; others come first.
    loose = [make_item(project, shuffle_key=k) for k in (1, 2, 3)]
    group = [make_item(project, shuffle_key=100, group_key="prompt-7") for _ in range(4)]
    return project, loose, group


def test_submit_and_next_stays_in_the_group_of_the_item_just_judged():
    project, loose, group = grouped_world()
    user = make_member(project)
    # She gets the group's first item (named by the caller's group)...
    first = claim_next_item(project=project, annotator=user, group="prompt-7")
    assert first.item_id == group[0].pk
    seen = [first.item_id]
    current = first
    for _ in range(3):
        _, current = submit_and_claim_next(assignment_id=current.pk, annotator=user, vote=vote())
        seen.append(current.item_id)
    assert seen == [item.pk for item in group]
    # ...and only then the claim order again (the loose items' shuffle).
    _, after = submit_and_claim_next(assignment_id=current.pk, annotator=user, vote=vote())
    assert after.item_id == loose[0].pk


def test_items_closer_to_completion_do_not_pull_her_out_of_her_group():
    project, loose, group = grouped_world(votes=3)
    user, other = make_member(project), make_member(project)
    # Another annotator started the loose items: they need fewer votes now,
    # so the plain claim order would send her there.
    for item in loose:
        Item.objects.filter(pk=item.pk).update(live_assignments=2)
    a = claim_next_item(project=project, annotator=user, group="prompt-7")
    assert a.item_id == group[0].pk
    _, nxt = submit_and_claim_next(assignment_id=a.pk, annotator=user, vote=vote())
    assert nxt.item_id == group[1].pk
    assert claim_next_item(project=project, annotator=other).item_id == loose[0].pk


def test_the_group_honours_overlap_and_never_gives_an_item_twice():
    project, _, group = grouped_world(votes=1)
    user, other = make_member(project), make_member(project)
    taken = claim_next_item(project=project, annotator=other, group="prompt-7")
    assert taken.item_id == group[0].pk  # its one vote is leased to `other`
    mine = claim_next_item(project=project, annotator=user, group="prompt-7")
    assert mine.item_id == group[1].pk
    _, nxt = submit_and_claim_next(assignment_id=mine.pk, annotator=user, vote=vote())
    assert nxt.item_id == group[2].pk
    assert Assignment.objects.filter(item=group[0]).count() == 1


def test_the_pages_claim_ahead_keeps_the_next_item_of_the_group_ready():
    project, loose, group = grouped_world()
    for item in loose:
        Item.objects.filter(pk=item.pk).update(live_assignments=1)
    user = make_member(project)
    holding = claim_next_item(project=project, annotator=user, group="prompt-7")
    ahead = claim_ahead(project=project, annotator=user, holding=holding.pk)
    assert ahead.item_id == group[1].pk


def test_an_empty_group_means_the_plain_claim_order():
    project, loose, _ = grouped_world()
    user = make_member(project)
    assert claim_next_item(project=project, annotator=user).item_id == loose[0].pk


def test_a_groups_items_share_one_shuffle_key_from_the_group():
    assert shuffle_key(7, "a", "g") == shuffle_key(7, "b", "g")
    assert shuffle_key(7, "a", "g") != shuffle_key(7, "a", "h")
    assert shuffle_key(7, "a") == shuffle_key(7, "a", "")
    assert shuffle_key(7, "a", "g") != shuffle_key(8, "a", "g")


@requires_postgres
def test_the_group_pick_and_the_claim_order_use_their_indexes():
    project, loose, _ = grouped_world()
    user = make_member(project)
    # A project of a realistic size (1,000 groups of three), analysed.
    template = Item.objects.get(pk=loose[0].pk)
    many = []
    for n in range(3000):
        clone = Item.objects.get(pk=template.pk)
        clone.pk, clone.external_id, clone.group_key = None, f"bulk-{n}", f"g-{n // 3}"
        clone.shuffle_key = shuffle_key(1, clone.external_id, clone.group_key)
        many.append(clone)
    Item.objects.bulk_create(many)
    sql = postgres.CLAIM_SQL
    parameters = postgres.claim_parameters(
        project=project,
        annotator=user,
        order="12",
        now=project.created_at,
        lease_expires_at=project.created_at,
        check_stale=False,
        group="prompt-7",
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE annotate_item")
        cursor.execute("EXPLAIN " + sql, parameters)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "annotate_item_group_idx" in plan, plan
    assert "annotate_item_claim_order_idx" in plan
