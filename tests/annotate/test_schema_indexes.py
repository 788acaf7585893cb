"""After all migrations, the database has exactly the indexes and constraints
the models declare (migration 0007 drops covered indexes and must keep the
partial unique index behind one current judgement per assignment)."""

import pytest
from django.db import IntegrityError, connection, transaction

from annotate.loop.service import Vote, claim_next_item, submit_judgement
from annotate.models import Assignment, Item, Judgement
from tests.factories import make_item, make_member, make_project

pytestmark = pytest.mark.django_db


def index_columns(model) -> dict[str, tuple[list[str], bool]]:
    with connection.cursor() as cursor:
        found = connection.introspection.get_constraints(cursor, model._meta.db_table)
    return {
        name: (info["columns"], info["unique"])
        for name, info in found.items()
        if info["index"] or info["unique"]
    }


def test_covered_single_column_indexes_are_gone_and_the_covering_ones_stay():
    item = index_columns(Item)
    assert ["project_id"] not in [cols for cols, _ in item.values()]
    assert "annotate_item_domain_idx" not in item
    assert item["annotate_item_tally_idx"][0][:2] == ["project_id", "domain_id"]
    assignment = index_columns(Assignment)
    singles = [cols for cols, _ in assignment.values() if len(cols) == 1]
    assert ["item_id"] not in singles and ["annotator_id"] not in singles
    assert assignment["annotate_assignment_one_per_annotator"] == (
        ["item_id", "annotator_id"],
        True,
    )
    assert assignment["annotate_assignment_user_idx"][0] == ["annotator_id", "status"]
    judgement = index_columns(Judgement)
    assert judgement["annotate_judgement_one_current_per_assignment"] == (["assignment_id"], True)
    assert judgement["annotate_judgement_revision_unique"] == (
        ["assignment_id", "revision"],
        True,
    )


def test_a_second_current_judgement_is_still_refused_by_the_database():
    project = make_project(votes_per_item=1)
    make_item(project, domain=project.domains.get(slug="general_preference"))
    user = make_member(project)
    a = claim_next_item(project=project, annotator=user)
    j = submit_judgement(assignment_id=a.pk, annotator=user, vote=Vote(choice="1"))
    with pytest.raises(IntegrityError), transaction.atomic():
        Judgement.objects.create(assignment_id=a.pk, revision=2, is_current=True, choice="2")
    assert Judgement.objects.get(assignment_id=a.pk, is_current=True).pk == j.pk


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's plan")
def test_the_claim_reads_items_in_index_order_without_sorting():
    """The claim's ORDER BY is annotate_item_claim_order_idx's whole key: the
    scan can stop at the first item it may take. (With the shuffle key alone
    in the index, PostgreSQL read a batch of 32+ items to sort by id.)"""
    from datetime import timedelta

    from django.utils import timezone

    from annotate.loop.postgres import CLAIM_SQL, claim_parameters

    project = make_project(votes_per_item=2)
    for _ in range(3):
        make_item(project, domain=project.domains.get(slug="general_preference"))
    user = make_member(project)
    now = timezone.now()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # tiny tables: force the index path
        cursor.execute(
            "EXPLAIN " + CLAIM_SQL,
            claim_parameters(
                project=project,
                annotator=user,
                order="12",
                now=now,
                lease_expires_at=now + timedelta(minutes=5),
                check_stale=True,
            ),
        )
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "annotate_item_claim_order_idx" in plan
    # The claim order's pick (`ungrouped`; `grouped` sorts one group's few
    # items by id, issue 34) and the union of the two picks sort nothing.
    # (`uncertain`, adaptive votes' pick, is planned away: One-Time Filter false.)
    assert "Sort" not in plan.split("CTE ungrouped")[1].split("CTE uncertain")[0]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's plan")
def test_the_adaptive_claim_reads_certainty_in_index_order_without_sorting():
    """Adaptive votes (issue 36): past the base votes the claim takes the
    least certain open item through annotate_certainty_queue_idx, whose key
    is its whole ORDER BY, so the scan stops at the first item it may take."""
    from datetime import timedelta

    from django.utils import timezone

    from annotate.loop.postgres import CLAIM_SQL, claim_parameters
    from annotate.models import ItemCertainty

    project = make_project(votes_per_item=2, vote_mode="adaptive")
    for n in range(3):
        item = make_item(project, domain=project.domains.get(slug="general_preference"))
        ItemCertainty.objects.create(
            item=item, project=project, p1=0.6, certainty=0.6 + n / 10, open=True,
            reason="open", human_votes=2,
        )  # fmt: skip
    user = make_member(project)
    now = timezone.now()
    with transaction.atomic(), connection.cursor() as cursor:
        # Tiny tables: PostgreSQL would sort three rows rather than walk an
        # index; with sorting priced out, the plan shows the index gives the order.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute(
            "EXPLAIN " + CLAIM_SQL,
            claim_parameters(
                project=project,
                annotator=user,
                order="12",
                now=now,
                lease_expires_at=now + timedelta(minutes=5),
                check_stale=True,
            ),
        )
        plan = "\n".join(row[0] for row in cursor.fetchall())
    uncertain = plan.split("CTE uncertain")[1].split("CTE counted")[0]
    assert "annotate_certainty_queue_idx" in uncertain
    assert "Sort" not in uncertain
