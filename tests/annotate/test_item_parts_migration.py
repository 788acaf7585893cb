"""Migration 0015 gives every existing item its parts: prompt = [image, text],
each response = [text], from the item's own columns (issue 24)."""

import pytest

from tests.migrations import migrate, migrated_to

BEFORE = [("annotate", "0014_graded_preference")]
AFTER = [("annotate", "0015_item_parts")]


@pytest.mark.django_db(transaction=True)
def test_migration_writes_the_parts_of_existing_items_from_their_columns():
    with migrated_to(BEFORE) as apps:
        Project = apps.get_model("annotate", "Project")
        Domain = apps.get_model("annotate", "Domain")
        ImageAsset = apps.get_model("annotate", "ImageAsset")
        Item = apps.get_model("annotate", "Item")
        project = Project.objects.create(slug="old", name="Old")
        vqa = Domain.objects.create(
            project=project, slug="vqa", title="VQA", export_category="vqa", kind="correctness"
        )
        images = [
            ImageAsset.objects.create(
                sha256=f"{n:02x}" * 32,
                file=f"images/{n}.png",
                format="PNG",
                width=3,
                height=2,
                size_bytes=1,
            )
            for n in range(2)
        ]
        for n in range(3):
            Item.objects.create(
                project=project,
                domain=vqa,
                external_id=f"i{n}",
                prompt=f"What is **{n}**?",
                image=images[n % 2],
                image_path=f"src/{n}.png",
                response_1=f"one {n}",
                response_2=f"two {n}\n\n  ",
                content_hash=str(n),
                votes_needed=3,
            )
        apps = migrate(AFTER)
        Item = apps.get_model("annotate", "Item")
        ItemPart = apps.get_model("annotate", "ItemPart")
        assert ItemPart.objects.count() == 12
        for item in Item.objects.all():
            parts = list(
                ItemPart.objects.filter(item=item)
                .order_by("slot", "position")
                .values_list("slot", "position", "kind", "text", "image_id", "source_path")
            )
            assert parts == [
                ("prompt", 0, "image", "", item.image_id, item.image_path),
                ("prompt", 1, "text", item.prompt, None, ""),
                ("response_1", 0, "text", item.response_1, None, ""),
                ("response_2", 0, "text", item.response_2, None, ""),
            ]
        # Going back removes them (every item still has its image).
        apps = migrate(BEFORE)
        assert apps.get_model("annotate", "Item").objects.count() == 3
