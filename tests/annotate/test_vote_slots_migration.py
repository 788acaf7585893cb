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


SLOTS = [("annotate", "0020_judgement_slots")]
# (shown_swapped, revision, is_current, choice, strength, correct_1, correct_2, grade_1, grade_2)
VOTES = [
    (False, 1, True, "1", None, "yes", "no", "", ""),
    (True, 1, False, "2", None, "no", "", "", ""),
    (True, 2, True, "tie", None, "", "unsure", "", ""),
    (False, 1, True, "2", -2, "", "", "A", "C"),
    (True, 1, True, "1", 1, "", "", "", ""),  # a preference vote: no per-slot answer
]


def old_votes(apps) -> list[int]:
    """Judgements as the models of 0018 made them (correct_1/2 and grade_1/2 columns)."""
    ids = old_assignments(apps, [v[0] for v in VOTES])
    Judgement = apps.get_model("annotate", "Judgement")
    made = []
    for assignment_id, (_, revision, current, choice, strength, c1, c2, g1, g2) in zip(
        ids, VOTES, strict=True
    ):
        made.append(
            Judgement.objects.create(
                assignment_id=assignment_id,
                revision=revision,
                is_current=current,
                choice=choice,
                strength=strength,
                correct_1=c1,
                correct_2=c2,
                grade_1=g1,
                grade_2=g2,
            ).pk
        )
    return made


def old_columns(apps, ids) -> list[tuple]:
    Judgement = apps.get_model("annotate", "Judgement")
    rows = dict(
        (pk, rest)
        for pk, *rest in Judgement.objects.values_list(
            "pk", "revision", "is_current", "choice", "strength", "correct_1", "correct_2",
            "grade_1", "grade_2",
        )
    )  # fmt: skip
    return [tuple(rows[pk]) for pk in ids]


@pytest.mark.django_db(transaction=True)
def test_pair_answers_move_to_slot_rows_and_back_unchanged():
    with migrated_to(BEFORE) as apps:
        ids = old_votes(apps)
        before = old_columns(apps, ids)

        apps = migrate(SLOTS)
        Judgement = apps.get_model("annotate", "Judgement")
        JudgementSlot = apps.get_model("annotate", "JudgementSlot")
        slots = sorted(
            (ids.index(j), slot, correctness, grade, rank)
            for j, slot, correctness, grade, rank in JudgementSlot.objects.values_list(
                "judgement_id", "slot", "correctness", "grade", "rank"
            )
        )
        assert slots == [
            (0, 1, "yes", "", None),
            (0, 2, "no", "", None),
            (1, 1, "no", "", None),
            (2, 2, "unsure", "", None),
            (3, 1, "", "A", None),
            (3, 2, "", "C", None),
        ]
        assert set(Judgement.objects.values_list("task", flat=True)) == {"pairwise"}
        choices = dict(Judgement.objects.values_list("pk", "choice"))
        assert [choices[pk] for pk in ids] == [v[3] for v in VOTES]

        apps = migrate(BEFORE)
        assert old_columns(apps, ids) == before


@pytest.mark.django_db(transaction=True)
def test_votes_that_are_no_pairs_refuse_to_go_back_and_change_nothing():
    with migrated_to(BEFORE) as apps:
        ids = old_votes(apps)
        apps = migrate(SLOTS)
        Judgement = apps.get_model("annotate", "Judgement")
        JudgementSlot = apps.get_model("annotate", "JudgementSlot")
        ranked = Judgement.objects.get(pk=ids[4])
        Judgement.objects.filter(pk=ranked.pk).update(task="ranking", choice="", strength=None)
        JudgementSlot.objects.create(judgement_id=ranked.pk, slot=1, rank=2)
        JudgementSlot.objects.create(judgement_id=ranked.pk, slot=2, rank=1)
        with pytest.raises(RuntimeError, match="not a pair's"):
            migrate(BEFORE)
        assert JudgementSlot.objects.filter(judgement_id=ranked.pk).count() == 2
        # Undo, so that the test database goes back to the latest migrations.
        JudgementSlot.objects.filter(judgement_id=ranked.pk).delete()
        Judgement.objects.filter(pk=ranked.pk).update(task="pairwise", choice="1", strength=1)
