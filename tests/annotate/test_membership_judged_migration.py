"""Migration 0006 fills Membership.judged from the submitted assignments that
existed before it, per project."""

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.migrations import migrate, migrated_to

BEFORE = [("annotate", "0005_item_rendered_html")]
AFTER = [("annotate", "0006_membership_judged")]


@pytest.mark.django_db(transaction=True)
def test_migration_counts_each_members_submitted_assignments_per_project():
    with migrated_to(BEFORE) as apps:
        User = apps.get_model("auth", "User")
        Project = apps.get_model("annotate", "Project")
        Domain = apps.get_model("annotate", "Domain")
        ImageAsset = apps.get_model("annotate", "ImageAsset")
        Item = apps.get_model("annotate", "Item")
        Assignment = apps.get_model("annotate", "Assignment")
        Membership = apps.get_model("annotate", "Membership")
        image = ImageAsset.objects.create(
            sha256="cd" * 32, file="images/y.png", format="PNG", width=1, height=1, size_bytes=1
        )
        ann, bob, idle = (User.objects.create(username=n) for n in ("ann", "bob", "idle"))
        items = {}
        for slug in ("p", "q"):
            project = Project.objects.create(slug=slug, name=slug)
            domain = Domain.objects.create(
                project=project, slug="d", title="D", export_category="d", kind="preference"
            )
            items[slug] = [
                Item.objects.create(
                    project=project,
                    domain=domain,
                    external_id=f"{slug}{n}",
                    prompt="?",
                    image=image,
                    image_path="y.png",
                    response_1="a",
                    response_2="b",
                    content_hash=f"{slug}{n}",
                    votes_needed=3,
                )
                for n in range(4)
            ]
            for user in (ann, bob, idle):
                Membership.objects.create(project=project, user=user, role="annotator")
        now = timezone.now()
        # (user, project, item index, status)
        rows = [
            (ann, "p", 0, "submitted"),
            (ann, "p", 1, "submitted"),
            (ann, "p", 2, "open"),  # not judged yet
            (ann, "q", 0, "submitted"),
            (bob, "p", 0, "skipped"),
            (bob, "p", 1, "expired"),
            (bob, "q", 1, "submitted"),
            (bob, "q", 2, "submitted"),
            (bob, "q", 3, "submitted"),
        ]
        for user, slug, n, status in rows:
            Assignment.objects.create(
                item=items[slug][n],
                annotator=user,
                status=status,
                shown_swapped=False,
                claimed_at=now,
                lease_expires_at=now + timedelta(minutes=30),
                submitted_at=now if status == "submitted" else None,
            )

        apps = migrate(AFTER)
        Membership = apps.get_model("annotate", "Membership")
        got = {
            (m.user.username, m.project.slug): m.judged
            for m in Membership.objects.select_related("user", "project")
        }
        assert got == {
            ("ann", "p"): 2,
            ("ann", "q"): 1,
            ("bob", "p"): 0,
            ("bob", "q"): 3,
            ("idle", "p"): 0,
            ("idle", "q"): 0,
        }
