"""Migration 0019 (issue 32): items made by the code before it (columns and
parts kept equal by sync functions, or items without parts) come out with
parts and with columns derived from the parts by the one rule; going back
restores the earlier schema (the stored HTML empty, rendered on first view)
and refuses an item with a third response."""

import pytest
from django.db import connection

from tests.migrations import migrate, migrated_to

BEFORE = [("annotate", "0020_judgement_slots")]
AFTER = [("annotate", "0021_item_content_is_parts")]


def _columns(table: str) -> set[str]:
    with connection.cursor() as cursor:
        return {c.name for c in connection.introspection.get_table_description(cursor, table)}


def _old_items(apps):
    """Items as the code before 0019 wrote them."""
    Project = apps.get_model("annotate", "Project")
    Domain = apps.get_model("annotate", "Domain")
    ImageAsset = apps.get_model("annotate", "ImageAsset")
    Item = apps.get_model("annotate", "Item")
    ItemPart = apps.get_model("annotate", "ItemPart")
    project = Project.objects.create(slug="old", name="Old")
    vqa = Domain.objects.create(
        project=project, slug="vqa", title="VQA", export_category="vqa", kind="correctness"
    )
    image = ImageAsset.objects.create(
        sha256="ab" * 32, file="images/ab.png", format="PNG", width=3, height=2, size_bytes=1
    )
    common = {"project": project, "domain": vqa, "content_hash": "h", "votes_needed": 3}
    # MRB import: columns, stored HTML, and its four parts.
    mrb = Item.objects.create(
        external_id="mrb",
        prompt="What is **it**?",
        image=image,
        image_path="src/a.png",
        response_1="one",
        response_2="two\n\n  ",
        prompt_html="<p>What is <strong>it</strong>?</p>\n",
        rendered_version=3,
        **common,
    )
    for slot, position, kind, text, image_id, path in (
        ("prompt", 0, "image", "", image.pk, "src/a.png"),
        ("prompt", 1, "text", "What is **it**?", None, ""),
        ("response_1", 0, "text", "one", None, ""),
        ("response_2", 0, "text", "two\n\n  ", None, ""),
    ):
        ItemPart.objects.create(
            item=mrb,
            slot=slot,
            position=position,
            kind=kind,
            text=text,
            image_id=image_id,
            source_path=path,
        )
    # MMRB2 import: interleaved parts, text columns joined, no Item.image.
    mmrb2 = Item.objects.create(
        external_id="mmrb2", prompt="Bake", response_1="Step 1\n\n\n\n  ", response_2="", **common
    )
    for slot, position, kind, text, image_id, path in (
        ("prompt", 0, "text", "Bake", None, ""),
        ("response_1", 0, "text", "Step 1", None, ""),
        ("response_1", 1, "image", "", image.pk, "images/x_0.jpg"),
        ("response_1", 2, "text", "\n\n  ", None, ""),
        ("response_2", 0, "image", "", image.pk, "images/x_1.jpg"),
    ):
        ItemPart.objects.create(
            item=mmrb2,
            slot=slot,
            position=position,
            kind=kind,
            text=text,
            image_id=image_id,
            source_path=path,
        )
    # Made outside the importers: columns only, with and without an image.
    Item.objects.create(
        external_id="bare-image",
        prompt="P",
        image=image,
        image_path="p.png",
        response_1="A",
        response_2="B",
        **common,
    )
    Item.objects.create(
        external_id="bare-text", prompt="T", response_1="C", response_2="D", **common
    )
    # Parts no longer of the MRB shape (the admin deleted the image part)
    # while the column kept the image: the derived column drops it.
    stale = Item.objects.create(
        external_id="stale", prompt="S", image=image, response_1="E", response_2="F", **common
    )
    for slot, text in (("prompt", "S"), ("response_1", "E"), ("response_2", "F")):
        ItemPart.objects.create(item=stale, slot=slot, position=0, kind="text", text=text)
    return image


def _parts(apps, external_id):
    ItemPart = apps.get_model("annotate", "ItemPart")
    return list(
        ItemPart.objects.filter(item__external_id=external_id)
        .order_by("slot", "position")
        .values_list("slot", "position", "kind", "text", "image_id", "source_path")
    )


def _derived(apps, external_id):
    Item = apps.get_model("annotate", "Item")
    return Item.objects.filter(external_id=external_id).values_list(
        "prompt", "response_1", "response_2", "image_id", "image_path"
    )[0]


@pytest.mark.django_db(transaction=True)
def test_migration_moves_items_of_the_old_code_forward_and_back():
    with migrated_to(BEFORE) as apps:
        image = _old_items(apps)
        mrb_parts_before = _parts(apps, "mrb")
        mmrb2_parts_before = _parts(apps, "mmrb2")

        apps = migrate(AFTER)
        assert not {"prompt_html", "response_1_html", "response_2_html", "rendered_version"} & (
            _columns("annotate_item")
        )
        assert _parts(apps, "mrb") == mrb_parts_before
        assert _parts(apps, "mmrb2") == mmrb2_parts_before
        assert _derived(apps, "mrb") == (
            "What is **it**?",
            "one",
            "two\n\n  ",
            image.pk,
            "src/a.png",
        )
        assert _derived(apps, "mmrb2") == ("Bake", "Step 1\n\n\n\n  ", "", None, "")
        assert _parts(apps, "bare-image") == [
            ("prompt", 0, "image", "", image.pk, "p.png"),
            ("prompt", 1, "text", "P", None, ""),
            ("response_1", 0, "text", "A", None, ""),
            ("response_2", 0, "text", "B", None, ""),
        ]
        assert _derived(apps, "bare-image") == ("P", "A", "B", image.pk, "p.png")
        assert _parts(apps, "bare-text") == [
            ("prompt", 0, "text", "T", None, ""),
            ("response_1", 0, "text", "C", None, ""),
            ("response_2", 0, "text", "D", None, ""),
        ]
        assert _derived(apps, "bare-text") == ("T", "C", "D", None, "")
        assert _derived(apps, "stale") == ("S", "E", "F", None, "")

        # Back: the earlier schema, the content as it is now, HTML to render.
        apps = migrate(BEFORE)
        assert {"prompt_html", "rendered_version"} <= _columns("annotate_item")
        Item = apps.get_model("annotate", "Item")
        mrb = Item.objects.get(external_id="mrb")
        assert (mrb.prompt_html, mrb.rendered_version) == ("", 0)
        assert _parts(apps, "mrb") == mrb_parts_before
        assert _derived(apps, "mrb") == (
            "What is **it**?",
            "one",
            "two\n\n  ",
            image.pk,
            "src/a.png",
        )


@pytest.mark.django_db(transaction=True)
def test_going_back_refuses_an_item_with_a_third_response():
    with migrated_to(AFTER) as apps:
        _old_items_after = apps.get_model("annotate", "Item")
        Project = apps.get_model("annotate", "Project")
        Domain = apps.get_model("annotate", "Domain")
        ItemPart = apps.get_model("annotate", "ItemPart")
        project = Project.objects.create(slug="n", name="N")
        domain = Domain.objects.create(
            project=project, slug="g", title="G", export_category="g", kind="preference"
        )
        item = _old_items_after.objects.create(
            project=project, domain=domain, external_id="x", content_hash="h", votes_needed=1
        )
        for n in (1, 2, 3):
            ItemPart.objects.create(
                item=item, slot=f"response_{n}", position=0, kind="text", text=str(n)
            )
        with pytest.raises(RuntimeError, match="more than two responses"):
            migrate(BEFORE)
        ItemPart.objects.filter(slot="response_3").delete()
        migrate(BEFORE)
