"""Migration 0003 fills the new correctness-label tallies from the current
judgements that existed before it."""

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.migrations import migrate, migrated_to

BEFORE = [("annotate", "0002_project_allow_self_adjudication")]
AFTER = [("annotate", "0003_item_label_tallies")]


@pytest.mark.django_db(transaction=True)
def test_migration_counts_existing_current_labels_per_item():
    with migrated_to(BEFORE) as apps:
        User = apps.get_model("auth", "User")
        Project = apps.get_model("annotate", "Project")
        Domain = apps.get_model("annotate", "Domain")
        ImageAsset = apps.get_model("annotate", "ImageAsset")
        Item = apps.get_model("annotate", "Item")
        Assignment = apps.get_model("annotate", "Assignment")
        Judgement = apps.get_model("annotate", "Judgement")
        project = Project.objects.create(slug="old", name="Old")
        vqa = Domain.objects.create(
            project=project, slug="vqa", title="VQA", export_category="vqa", kind="correctness"
        )
        pref = Domain.objects.create(
            project=project, slug="pref", title="Pref", export_category="p", kind="preference"
        )
        image = ImageAsset.objects.create(
            sha256="ab" * 32, file="images/x.png", format="PNG", width=1, height=1, size_bytes=1
        )
        items = [
            Item.objects.create(
                project=project,
                domain=domain,
                external_id=f"i{n}",
                prompt="?",
                image=image,
                image_path="x.png",
                response_1="a",
                response_2="b",
                content_hash=str(n),
                votes_needed=3,
            )
            for n, domain in enumerate([vqa, vqa, pref])
        ]
        now = timezone.now()
        votes = [
            # assignment, item, revision, current, correct_1, correct_2
            (0, 0, 1, True, "yes", "no"),
            (1, 0, 1, False, "no", "no"),  # superseded: not counted...
            (1, 0, 2, True, "yes", "unsure"),  # ...its revision is
            (2, 1, 1, True, "unsure", "yes"),
            (3, 2, 1, True, "", ""),  # preference: no labels
        ]
        assignments = {}
        for key, item, revision, current, c1, c2 in votes:
            if key not in assignments:
                assignments[key] = Assignment.objects.create(
                    item=items[item],
                    annotator=User.objects.create(username=f"u{key}"),
                    status="submitted",
                    shown_swapped=False,
                    claimed_at=now,
                    lease_expires_at=now + timedelta(minutes=30),
                    submitted_at=now,
                )
            Judgement.objects.create(
                assignment=assignments[key],
                revision=revision,
                is_current=current,
                choice="1",
                correct_1=c1,
                correct_2=c2,
            )

        apps = migrate(AFTER)
        Item = apps.get_model("annotate", "Item")
        columns = [f"correct_{r}_{label}" for r in "12" for label in ("yes", "no", "unsure")]
        got = {
            item.external_id: {c: getattr(item, c) for c in columns if getattr(item, c)}
            for item in Item.objects.all()
        }
        assert got == {
            "i0": {"correct_1_yes": 2, "correct_2_no": 1, "correct_2_unsure": 1},
            "i1": {"correct_1_unsure": 1, "correct_2_yes": 1},
            "i2": {},
        }
