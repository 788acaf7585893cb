"""The compare page's HTML stored on the item (Item.prompt_html, …): equal to a
fresh render, re-rendered when the renderer version changes, refreshed by an
--update import, filled on first view, and never in what the exporter reads."""

import pytest
from django.urls import reverse

from annotate import rendering
from annotate.importing.service import import_items_from_paths, render_item_html
from annotate.loop.service import claim_next_item
from annotate.models import Item
from annotate.rendering import render_markdown
from tests.annotate.importing.test_import import write_mrb
from tests.annotate.test_rendering import XSS_CORPUS, assert_inert
from tests.factories import make_item, make_member, make_project, mrb_record

pytestmark = pytest.mark.django_db

MARKDOWN = "**Bold** and `code`\n\n```python\nprint('hi')\n```\n\n$x^2$ [link](https://a.example/)"


def stored(item: Item) -> tuple[str, str, str, int]:
    item.refresh_from_db()
    return (item.prompt_html, item.response_1_html, item.response_2_html, item.rendered_version)


def fresh(item: Item) -> tuple[str, str, str, int]:
    return (
        render_markdown(item.prompt),
        render_markdown(item.response_1),
        render_markdown(item.response_2),
        rendering.RENDERER_VERSION,
    )


def bulk_item(project, **fields) -> Item:
    """An item as bulk_create (the importer, the benches) leaves it: no HTML."""
    template = make_item(project)
    Item.objects.filter(pk=template.pk).update(
        prompt_html="", response_1_html="", response_2_html="", rendered_version=0, **fields
    )
    template.refresh_from_db()
    return template


def test_saved_item_stores_html_equal_to_a_fresh_render():
    item = make_item(prompt=MARKDOWN, response_1="- a\n- b", response_2="| x |\n|--:|\n| 1 |")
    assert stored(item) == fresh(item)
    assert "highlight" in item.prompt_html and 'class="align-right"' in item.response_2_html


def test_saving_another_field_keeps_the_html_and_saving_text_rerenders_it():
    item = make_item(response_1="old")
    item.votes_needed = 5
    item.save(update_fields=["votes_needed"])
    assert item.response_1_html == "<p>old</p>\n"
    item.response_1 = "**new**"
    item.save(update_fields=["response_1"])
    assert stored(item)[1] == "<p><strong>new</strong></p>\n"


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
    assert item.prompt_html in page
    # Served from the column now: a tampered column shows (the text does not).
    Item.objects.filter(pk=item.pk).update(prompt_html="<p>FROM THE COLUMN</p>")
    page = client.get(reverse("work_item", args=[assignment.pk])).content.decode()
    assert "FROM THE COLUMN" in page


def test_a_changed_renderer_version_rerenders_on_view_and_in_the_task(client, monkeypatch):
    project = make_project()
    item = make_item(project, prompt="**p**")
    Item.objects.filter(pk=item.pk).update(prompt_html="<p>OLD RENDERER</p>")
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
    Item.objects.filter(pk=other.pk).update(rendered_version=1)
    assert render_item_html(item_ids=[item.pk, other.pk]) == 2
    assert render_item_html(item_ids=[item.pk, other.pk]) == 0  # idempotent
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
    assert item.response_1_html == "<p><em>new</em></p>\n"
    # The raw text is what the exporter and the API read; it is unchanged.
    assert item.response_1 == "*new*"


def test_the_task_does_not_store_html_for_text_replaced_while_it_rendered(monkeypatch):
    item = bulk_item(make_project(), response_1="old text")
    original = Item.render_html

    def replaced_meanwhile(self):
        # An --update import commits new text while the task renders the old.
        Item.objects.filter(pk=self.pk).update(response_1="new text", content_hash="changed")
        original(self)

    monkeypatch.setattr(Item, "render_html", replaced_meanwhile)
    assert render_item_html(item_ids=[item.pk]) == 0
    assert stored(item) == ("", "", "", 0)


def test_stale_html_of_an_item_read_without_its_text_loads_the_text_in_one_query(
    django_assert_num_queries,
):
    """A raw read (the vote's lock) leaves the source text deferred; rendering
    again must read all of it at once, then store the HTML."""
    project = make_project()
    item = bulk_item(project, prompt="**p**", response_1="`one`", response_2="$x$")
    partial = Item.objects.defer("prompt", "response_1", "response_2").get(pk=item.pk)
    with django_assert_num_queries(2):  # the three sources, then the HTML's UPDATE
        html = partial.rendered()
    assert html["prompt"] == render_markdown("**p**")
    assert html["response_1"] == render_markdown("`one`")
    assert stored(Item.objects.get(pk=item.pk))[:3] == (
        render_markdown("**p**"),
        render_markdown("`one`"),
        render_markdown("$x$"),
    )
