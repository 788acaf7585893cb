"""Issue 32 moves the vote to slot terms: migrations 0019 (an assignment's
display order as a permutation of its item's response slots, instead of
shown_swapped). Rows made by the models as they were go forward and back."""

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.migrations import migrate, migrated_to

BEFORE = [("annotate", "0018_judgement_imported")]
ORDER = [("annotate", "0019_assignment_display_order")]


def old_assignments(apps, swaps) -> list[int]:
    """Submitted assignments of one item each, shown swapped as given."""
    User = apps.get_model("auth", "User")
    Project = apps.get_model("annotate", "Project")
    Domain = apps.get_model("annotate", "Domain")
    Item = apps.get_model("annotate", "Item")
    Assignment = apps.get_model("annotate", "Assignment")
    project = Project.objects.create(slug="old", name="Old")
    domain = Domain.objects.create(
        project=project, slug="vqa", title="VQA", export_category="vqa", kind="correctness"
    )
    now = timezone.now()
    ids = []
    for n, swapped in enumerate(swaps):
        item = Item.objects.create(
            project=project,
            domain=domain,
            external_id=f"i{n}",
            prompt="?",
            response_1="a",
            response_2="b",
            content_hash=str(n),
            votes_needed=3,
        )
        ids.append(
            Assignment.objects.create(
                item=item,
                annotator=User.objects.create(username=f"u{n}"),
                status="submitted",
                shown_swapped=swapped,
                claimed_at=now,
                lease_expires_at=now + timedelta(minutes=30),
                submitted_at=now,
            ).pk
        )
    return ids


@pytest.mark.django_db(transaction=True)
def test_shown_swapped_becomes_the_display_order_and_comes_back():
    swaps = [False, True, True, False]
    with migrated_to(BEFORE) as apps:
        ids = old_assignments(apps, swaps)
        apps = migrate(ORDER)
        Assignment = apps.get_model("annotate", "Assignment")
        orders = dict(Assignment.objects.values_list("pk", "display_order"))
        assert [orders[pk] for pk in ids] == ["12", "21", "21", "12"]

        apps = migrate(BEFORE)
        Assignment = apps.get_model("annotate", "Assignment")
        back = dict(Assignment.objects.values_list("pk", "shown_swapped"))
        assert [back[pk] for pk in ids] == swaps


@pytest.mark.django_db(transaction=True)
def test_an_order_of_more_than_two_slots_refuses_to_go_back():
    with migrated_to(BEFORE) as apps:
        ids = old_assignments(apps, [False])
        apps = migrate(ORDER)
        Assignment = apps.get_model("annotate", "Assignment")
        Assignment.objects.filter(pk=ids[0]).update(display_order="312")
        with pytest.raises(RuntimeError, match="more than two response slots"):
            migrate(BEFORE)
        Assignment.objects.filter(pk=ids[0]).update(display_order="12")
