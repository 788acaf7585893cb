"""The compare page's HTML stored on the item's text parts (ItemPart.html,
issue 32: the item keeps none of its own): equal to a fresh render,
re-rendered when the renderer version changes, refreshed by an --update
import, filled on first view, and never in what the exporter reads."""

import pytest
from django.urls import reverse

from annotate import rendering
from annotate.importing.service import import_items_from_paths
from annotate.loop.service import claim_next_item
from annotate.models import Item, ItemPart
from annotate.models.parts import render_parts_html
from annotate.rendering import render_markdown
from tests.annotate.importing.test_import import write_mrb
from tests.annotate.test_rendering import XSS_CORPUS, assert_inert
from tests.factories import make_item, make_member, make_project, mrb_record

pytestmark = pytest.mark.django_db

MARKDOWN = "**Bold** and `code`\n\n```python\nprint('hi')\n```\n\n$x^2$ [link](https://a.example/)"
SLOTS = ("prompt", "response_1", "response_2")


def stored(item: Item) -> tuple[str, str, str, int]:
    """The stored HTML of the item's text parts (one per slot) and the
    oldest renderer version among them."""
    parts = {p.slot: p for p in ItemPart.objects.filter(item=item, kind="text")}
    return (
        *(parts[slot].html for slot in SLOTS),
        min(p.rendered_version for p in parts.values()),
    )


def fresh(item: Item) -> tuple[str, str, str, int]:
    item.refresh_from_db()
    return (
        render_markdown(item.prompt),
        render_markdown(item.response_1),
        render_markdown(item.response_2),
        rendering.RENDERER_VERSION,
    )


def bulk_item(project, **fields) -> Item:
    """An item as the bulk import leaves it: parts without HTML."""
    item = make_item(project, **fields)
    ItemPart.objects.filter(item=item).update(html="", rendered_version=0)
    return item


def test_written_content_stores_html_equal_to_a_fresh_render():
    item = make_item(prompt=MARKDOWN, response_1="- a\n- b", response_2="| x |\n|--:|\n| 1 |")
    assert stored(item) == fresh(item)
    assert "highlight" in stored(item)[0] and 'class="align-right"' in stored(item)[2]


# PostgreSQL text cannot hold NUL, so no item's text can contain one.
STORABLE_XSS = {name: text for name, text in XSS_CORPUS.items() if "\x00" not in text}


@pytest.mark.parametrize("payload", STORABLE_XSS.values(), ids=STORABLE_XSS.keys())
def test_stored_html_of_hostile_text_is_the_sanitised_render(payload):
    item = make_item(prompt=payload, response_1=f"ok\n\n{payload}", response_2=payload)
    html = stored(item)
    assert html == fresh(item)
    for part in html[:3]:
        assert_inert(part)


def test_first_view_fills_missing_html_and_later_views_read_it(client):
    project = make_project()
    item = bulk_item(project, prompt=MARKDOWN)
    user = make_member(project, role="annotator")
    client.force_login(user)
    assignment = claim_next_item(project=project, annotator=user)
    assert assignment.item.pk == item.pk

    page = client.get(reverse("work_item", args=[assignment.pk])).content.decode()

    assert stored(item) == fresh(item)
    assert stored(item)[0] in page
    # Served from the part now: a tampered part's HTML shows (the text does not).
    ItemPart.objects.filter(item=item, slot="prompt", kind="text").update(
        html="<p>FROM THE PART</p>"
    )
    page = client.get(reverse("work_item", args=[assignment.pk])).content.decode()
    assert "FROM THE PART" in page


def test_a_changed_renderer_version_rerenders_on_view_and_in_the_task(client, monkeypatch):
    project = make_project()
    item = make_item(project, prompt="**p**")
    ItemPart.objects.filter(item=item, slot="prompt", kind="text").update(
        html="<p>OLD RENDERER</p>"
    )
    user = make_member(project, role="annotator")
    client.force_login(user)
    assignment = claim_next_item(project=project, annotator=user)
    page = client.get(reverse("work_item", args=[assignment.pk])).content.decode()
    assert "OLD RENDERER" in page  # same version: the stored HTML is used

    monkeypatch.setattr(rendering, "RENDERER_VERSION", rendering.RENDERER_VERSION + 1)
    page = client.get(reverse("work_item", args=[assignment.pk])).content.decode()
    assert "OLD RENDERER" not in page and "<strong>p</strong>" in page
    assert stored(item) == fresh(item)

    monkeypatch.setattr(rendering, "RENDERER_VERSION", rendering.RENDERER_VERSION + 1)
    other = make_item(project)
    ItemPart.objects.filter(item=other).update(rendered_version=1)
    assert render_parts_html(item_ids=[item.pk, other.pk]) == 6  # three text parts each
    assert render_parts_html(item_ids=[item.pk, other.pk]) == 0  # idempotent
    assert stored(item) == fresh(item) and stored(other) == fresh(other)


def test_import_leaves_html_to_the_task_and_update_refreshes_it(
    tmp_path, django_capture_on_commit_callbacks
):
    project = make_project()
    with django_capture_on_commit_callbacks(execute=True):
        import_items_from_paths(
            project=project,
            dataset=write_mrb(tmp_path, [mrb_record("a", Output1="**old**")]),
            images=tmp_path,
        )
    item = Item.objects.get()
    assert stored(item)[1] == "<p><strong>old</strong></p>\n"

    changed = write_mrb(tmp_path, [mrb_record("a", Output1="*new*")])
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        import_items_from_paths(project=project, dataset=changed, images=tmp_path, update=True)
    # Before the task runs the old HTML is gone (a view would render afresh).
    assert stored(item) == ("", "", "", 0)
    for callback in callbacks:
        callback()
    assert stored(item) == fresh(item)
    assert stored(item)[1] == "<p><em>new</em></p>\n"
    # The raw text is what the exporter and the API read; it is unchanged.
    item.refresh_from_db()
    assert item.response_1 == "*new*"
