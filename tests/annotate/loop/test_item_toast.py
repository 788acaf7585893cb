"""Migration 0009 (PostgreSQL): an item's long text is stored out of line, so
the row that every claim and vote rewrites stays narrow."""

import pytest
from django.db import connection

from annotate.loop.service import Vote, claim_next_item, submit_judgement
from annotate.models import Item
from tests.factories import make_item, make_member, make_project
from tests.migrations import migrate, migrated_to

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="a PostgreSQL storage parameter"
)

BEFORE = [("annotate", "0008_claim_index_with_id")]
AFTER = [("annotate", "0009_item_toast_tuple_target")]

# About 1,500 characters that compress well, like a model's answer: the row
# exceeds PostgreSQL's 2 kB threshold, and compression alone brings it back
# under the default target, so without the setting nothing leaves the row.
LONG = " ".join(f"Step {n}: the cat sits on the mat." for n in range(45))


def toasted_values() -> int:
    """Values of annotate_item stored out of line (in its TOAST table)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT reltoastrelid::regclass::text FROM pg_class"
            " WHERE oid = 'annotate_item'::regclass"
        )
        (toast,) = cursor.fetchone()
        cursor.execute(f"SELECT count(DISTINCT chunk_id) FROM {toast}")
        return cursor.fetchone()[0]


@pytest.mark.django_db
def test_the_item_table_targets_narrow_rows():
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE oid = 'annotate_item'::regclass")
        assert "toast_tuple_target=128" in cursor.fetchone()[0]


@pytest.mark.django_db
def test_long_text_leaves_the_row_and_survives_claims_and_votes_unchanged():
    project = make_project(votes_per_item=2)
    domain = project.domains.get(slug="general_preference")
    before = toasted_values()
    item = make_item(project, domain=domain, prompt=LONG, response_1=LONG + "a", response_2=LONG)
    # The three text values went out of line (the HTML is on the parts since
    # migration 0019).
    moved = toasted_values()
    assert moved >= before + 3
    user = make_member(project)
    assignment = claim_next_item(project=project, annotator=user)
    submit_judgement(assignment_id=assignment.pk, annotator=user, vote=Vote(choice="1"))
    # The claim and the vote rewrote the row; its text stayed where it was.
    assert toasted_values() == moved
    stored = Item.objects.get(pk=item.pk)
    assert (stored.prompt, stored.response_1, stored.votes_1) == (LONG, LONG + "a", 1)


@pytest.mark.django_db(transaction=True)
def test_the_migration_moves_the_text_of_rows_already_there():
    with migrated_to(BEFORE) as apps:
        User = apps.get_model("auth", "User")  # noqa: F841 (the old registry loads)
        Project = apps.get_model("annotate", "Project")
        Domain = apps.get_model("annotate", "Domain")
        ImageAsset = apps.get_model("annotate", "ImageAsset")
        OldItem = apps.get_model("annotate", "Item")
        project = Project.objects.create(slug="p", name="p")
        domain = Domain.objects.create(
            project=project, slug="d", title="D", export_category="d", kind="preference"
        )
        image = ImageAsset.objects.create(
            sha256="ab" * 32, file="images/x.png", format="PNG", width=1, height=1, size_bytes=1
        )
        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE annotate_item RESET (toast_tuple_target)")
        old = OldItem.objects.create(
            project=project,
            domain=domain,
            external_id="x",
            prompt=LONG,
            image=image,
            image_path="x.png",
            response_1=LONG,
            response_2=LONG + "b",
            prompt_html=LONG,
            response_1_html=LONG,
            response_2_html=LONG,
            content_hash="x",
            votes_needed=3,
        )
        # The default target: compressed in the row, nothing out of line.
        assert toasted_values() == 0
        apps = migrate(AFTER)
        # The values moved: the three texts and their HTML (columns until 0019).
        assert toasted_values() >= 6
        stored = apps.get_model("annotate", "Item").objects.get(pk=old.pk)
        assert (stored.prompt, stored.response_2) == (LONG, LONG + "b")
