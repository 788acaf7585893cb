"""The API's read of an item's parts: the raw statement equals its ORM twin.

annotate.loop.postgres.item_parts (one raw statement, PostgreSQL's and
SQLite's) and annotate.loop.orm.item_parts (the reference QuerySet) read the
same random items, of text and image parts in every slot, pairs and more
responses; each part comes back with the same values, the same image and
its HTML deferred, on whichever database the suite runs.
"""

from __future__ import annotations

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotate.loop import orm, postgres, service
from annotate.models import Task
from annotate.models.parts import group_by_slot, image_part, text_part, write_item_content
from tests.factories import make_image, make_item, make_project

pytestmark = pytest.mark.django_db

# A slot's parts as drawn: text (its Markdown) or an image (which of three).
PART = st.one_of(
    st.text(alphabet="ab *_\n#`$x", max_size=30).map(lambda text: ("text", text)),
    st.integers(0, 2).map(lambda n: ("image", n)),
)
SLOT = st.lists(PART, min_size=1, max_size=4)
ITEMS = st.lists(st.tuples(SLOT, st.lists(SLOT, min_size=2, max_size=4)), min_size=1, max_size=3)


def _part(drawn, images):
    kind, value = drawn
    return text_part(value) if kind == "text" else image_part(images[value].pk, f"src/{value}.png")


def _values(parts) -> list[tuple]:
    """Every value read of each part (its HTML excepted) and of its image
    (its created_at excepted), and which fields were left deferred."""
    rows = []
    for part in parts:
        fields = {
            f.attname: getattr(part, f.attname)
            for f in part._meta.concrete_fields
            if f.attname not in part.get_deferred_fields()
        }
        image = None
        if part.image_id is not None:
            image = {
                f.attname: getattr(part.image, f.attname)
                for f in part.image._meta.concrete_fields
                if f.attname != "created_at"
            }
        rows.append((sorted(fields.items()), sorted(part.get_deferred_fields()), image))
    return sorted(rows, key=repr)


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(items=ITEMS)
def test_both_reads_return_the_same_parts_and_images(items):
    with transaction.atomic():
        project = make_project(task=Task.RANKING)  # (items of 2 to 4 responses)
        images = [make_image() for _ in range(3)]
        made = []
        for prompt, responses in items:
            item = make_item(project, image=None)
            write_item_content(
                item,
                [_part(p, images) for p in prompt],
                [[_part(p, images) for p in slot] for slot in responses],
                render=False,
            )
            made.append(item)
        for item in made:
            read = postgres.item_parts(item.pk)
            reference = orm.item_parts(item.pk)
            assert _values(read) == _values(reference)
            assert len(read) == item.content_parts.count()
            assert all("html" in part.get_deferred_fields() for part in read)
            assert group_by_slot(read).keys() == group_by_slot(reference).keys()
        transaction.set_rollback(True)


def test_the_api_reads_an_items_parts_in_one_statement(django_assert_num_queries):
    item = make_item(make_project())
    with django_assert_num_queries(1):
        by_slot = service.parts_to_send(item)
    assert [part.kind for part in by_slot["prompt"]] == ["image", "text"]
    assert by_slot["prompt"][0].image.width == 32
    assert [part.text for part in by_slot["response_1"]] == ["A red square."]
