"""Content as parts (issue 24): an MRB or pairs import writes each item's
parts from its record (prompt = [image, text], responses = [text]); an
--update replaces them with the item."""

import pytest

from annotate.importing.service import import_items_from_paths
from annotate.models import Item, ItemPart
from tests.annotate.importing.test_import import write_jsonl, write_mrb
from tests.factories import make_project, mrb_record, pairs_record, png_bytes

pytestmark = pytest.mark.django_db


def parts_of(item: Item) -> list[tuple]:
    return list(
        item.content_parts.order_by("slot", "position").values_list(
            "slot", "position", "kind", "text", "image_id", "source_path"
        )
    )


def mrb_parts_of(item: Item) -> list[tuple]:
    return [
        ("prompt", 0, "image", "", item.image_id, item.image_path),
        ("prompt", 1, "text", item.prompt, None, ""),
        ("response_1", 0, "text", item.response_1, None, ""),
        ("response_2", 0, "text", item.response_2, None, ""),
    ]


def test_mrb_import_writes_each_items_parts_from_its_record(tmp_path):
    project = make_project()
    path = write_mrb(tmp_path, [mrb_record(f"r{n}") for n in range(3)])
    import_items_from_paths(project=project, dataset=path, images=tmp_path)
    assert ItemPart.objects.count() == 12
    for item in Item.objects.all():
        assert parts_of(item) == mrb_parts_of(item)


def test_pairs_import_writes_parts_in_canonical_order(tmp_path):
    project = make_project()
    path = write_jsonl(tmp_path, [pairs_record(f"p{n}") for n in range(2)])
    import_items_from_paths(project=project, dataset=path, images=tmp_path, domain="vqa")
    for item in Item.objects.all():
        assert parts_of(item) == mrb_parts_of(item)


def test_update_replaces_the_parts_with_the_item(tmp_path):
    project = make_project()
    import_items_from_paths(
        project=project, dataset=write_mrb(tmp_path, [mrb_record("a")]), images=tmp_path
    )
    changed = mrb_record("a", Output1="A crimson square.", Image="images/blue.png")
    path = write_mrb(tmp_path, [changed], {"images/blue.png": png_bytes(color=(0, 0, 255))})
    import_items_from_paths(project=project, dataset=path, images=tmp_path, update=True)
    item = Item.objects.get()
    assert parts_of(item) == mrb_parts_of(item)
    assert ItemPart.objects.count() == 4
