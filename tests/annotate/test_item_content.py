"""The content API of annotate.models.parts (issue 32): one writer of parts
for any number of responses (at least two), one validator per kind, the
Item's columns derived by one rule, reads grouped by slot in constant
queries."""

import pytest
from django.core.exceptions import ValidationError

from annotate.models import (
    Item,
    ItemPart,
    Task,
    derive_item_text,
    image_part,
    parts_by_item,
    parts_by_slot,
    response_slot,
    text_part,
    write_item_content,
)
from annotate.models.parts import (
    ITEM_MAX_RESPONSES,
    PART_VALIDATORS,
    PartKind,
    slot_order,
    validate_part,
)
from tests.factories import make_image, make_item, make_project

pytestmark = pytest.mark.django_db


def _bare_item(project=None) -> Item:
    project = project or make_project()
    return Item.objects.create(
        project=project,
        domain=project.domains.get(slug="vqa"),
        external_id=f"x{Item.objects.count()}",
        content_hash="h",
        votes_needed=1,
    )


def test_an_item_of_the_most_responses_is_written_and_read_in_slot_order():
    item = _bare_item(make_project(task=Task.RANKING))
    image = make_image()
    n = ITEM_MAX_RESPONSES
    responses = [[text_part(f"answer **{k}**")] for k in range(1, n + 1)]
    responses[6].append(image_part(image.pk, "r7.png"))
    write_item_content(item, [text_part("Rank these")], responses)
    grouped = parts_by_slot(item)
    assert list(grouped) == ["prompt", *(response_slot(k) for k in range(1, n + 1))]
    assert [p.kind for p in grouped["response_7"]] == ["text", "image"]
    assert f"<strong>{n}</strong>" in grouped[response_slot(n)][0].html
    item.refresh_from_db()
    # Derived: the search column and the first two responses; no MRB image.
    assert (item.prompt, item.response_1, item.response_2) == (
        "Rank these",
        "answer **1**",
        "answer **2**",
    )
    assert (item.image_id, item.image_path) == (None, "")


def test_slots_are_read_in_number_order_past_nine():
    # The slot constraint names up to response_99 (rows an admin may add);
    # reads sort response_10 after response_9, not after response_1.
    item = _bare_item()
    ItemPart.objects.bulk_create(
        ItemPart(item=item, slot=response_slot(k), position=0, kind=PartKind.TEXT, text=str(k))
        for k in (12, 1, 10, 9, 2)
    )
    grouped = parts_by_slot(item)
    assert list(grouped) == ["prompt", *(response_slot(k) for k in (1, 2, 9, 10, 12))]


def test_the_derived_columns_follow_the_one_rule():
    item = _bare_item()
    image = make_image()
    write_item_content(
        item,
        [image_part(image.pk, "src/a.png"), text_part("What?")],
        [[text_part("one")], [text_part("two")]],
    )
    item.refresh_from_db()
    assert (item.prompt, item.image_id, item.image_path) == ("What?", image.pk, "src/a.png")
    # Another shape: joined texts, no image column.
    write_item_content(
        item,
        [text_part("Bake"), image_part(image.pk, "p.png")],
        [[text_part("a"), image_part(image.pk), text_part("b")], [image_part(image.pk)]],
    )
    item.refresh_from_db()
    assert (item.prompt, item.response_1, item.response_2) == ("Bake", "a\n\nb", "")
    assert (item.image_id, item.image_path) == (None, "")
    # Columns edited behind the parts' back come back from the parts.
    Item.objects.filter(pk=item.pk).update(prompt="stale", image=image)
    derive_item_text(item)
    item.refresh_from_db()
    assert (item.prompt, item.image_id) == ("Bake", None)


def test_fewer_than_two_responses_and_invalid_parts_are_refused_and_nothing_changes():
    item = make_item(prompt="kept")
    before = list(ItemPart.objects.filter(item=item).values_list("slot", "text"))
    with pytest.raises(ValidationError, match="has 1 responses; an item has at least 2"):
        write_item_content(item, [text_part("p")], [[text_part("only")]])
    with pytest.raises(ValidationError, match="A video part needs its video file"):
        write_item_content(
            item, [ItemPart(kind=PartKind.VIDEO)], [[text_part("a")], [text_part("b")]]
        )
    with pytest.raises(ValidationError, match="needs its image"):
        write_item_content(item, [ItemPart(kind=PartKind.IMAGE)], [[], []])
    assert list(ItemPart.objects.filter(item=item).values_list("slot", "text")) == before
    item.refresh_from_db()
    assert item.prompt == "kept"


def test_every_kind_has_its_validator_and_slots_are_checked():
    assert set(PART_VALIDATORS) == set(PartKind)
    for slot in ("answer", "response_0", "response_01", "response_100", "prompt "):
        with pytest.raises(ValidationError, match="is not a slot"):
            validate_part(ItemPart(slot=slot, kind=PartKind.TEXT))
    with pytest.raises(ValidationError, match="no image"):
        validate_part(ItemPart(slot="prompt", kind=PartKind.TEXT, source_path="x.png"))
    validate_part(ItemPart(slot="response_99", kind=PartKind.TEXT, text="ok"))
    assert sorted(["response_10", "prompt", "response_9"], key=slot_order) == [
        "prompt",
        "response_9",
        "response_10",
    ]


def test_parts_of_many_items_are_read_in_one_query(django_assert_num_queries):
    project = make_project()
    items = [make_item(project) for _ in range(5)]
    with django_assert_num_queries(1):
        grouped = parts_by_item([item.pk for item in items])
    assert set(grouped) == {item.pk for item in items}
    for item in items:
        assert [p.kind for p in grouped[item.pk]["prompt"]] == ["image", "text"]
        assert grouped[item.pk]["prompt"][0].image.width == 32  # joined, no query
