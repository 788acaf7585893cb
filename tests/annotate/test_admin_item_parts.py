"""The Django admin edits an item's content part by part (issue 32): an
edited part gets its HTML from the sanitised renderer, each part is checked
by its kind's validator, and the item's derived columns follow
(derive_item_text); the columns themselves are read-only."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotate.importing.formats.mmrb2 import import_mmrb2_from_paths
from annotate.models import Item, ItemPart
from tests.annotate.importing.test_mmrb2 import published_fixture
from tests.factories import make_item, make_project

pytestmark = pytest.mark.django_db


class _Form(HTMLParser):
    """The values a browser would post from the admin's change form."""

    def __init__(self):
        super().__init__()
        self.data: dict[str, list[str]] = {}
        self._textarea: str | None = None
        self._select: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        name = a.get("name")
        if tag == "input" and name and a.get("type") not in ("submit", "button", "file"):
            if a.get("type") in ("checkbox", "radio") and "checked" not in a:
                return
            self.data.setdefault(name, []).append(a.get("value") or "")
        elif tag == "textarea" and name:
            self._textarea = name
            self.data[name] = [""]
        elif tag == "select" and name:
            self._select = name
        elif tag == "option" and self._select and "selected" in a:
            self.data.setdefault(self._select, []).append(a.get("value") or "")

    def handle_endtag(self, tag):
        if tag == "textarea":
            self._textarea = None
        elif tag == "select":
            self._select = None

    def handle_data(self, data):
        if self._textarea:
            self.data[self._textarea][0] += data


def change_form(client, item) -> tuple[str, dict]:
    url = reverse("admin:annotate_item_change", args=[item.pk])
    parser = _Form()
    parser.feed(client.get(url).content.decode())
    data = {k: v if len(v) > 1 else v[0] for k, v in parser.data.items()}
    # The textarea's first newline is the HTML's, not the value's.
    for key, value in data.items():
        if isinstance(value, str) and value.startswith("\n"):
            data[key] = value[1:]
    data["audit_reason"] = "typo in the source"
    return url, data


@pytest.fixture
def admin_client(client):
    user = get_user_model().objects.create_superuser("root", "root@example.org", "pw")
    client.force_login(user)
    return client


def _prefix(data: dict, part: ItemPart) -> str:
    """The inline form prefix of a stored part."""
    return next(
        key.removesuffix("-id")
        for key, value in data.items()
        if key.endswith("-id") and value == str(part.pk)
    )


def test_editing_an_mrb_items_text_part_renders_it_sanitised_and_derives_the_column(
    admin_client,
):
    item = make_item(make_project(), response_1="old answer")
    url, data = change_form(admin_client, item)
    data["response_1"] = "ignored: the column is derived"
    part = ItemPart.objects.get(item=item, slot="response_1")
    data[f"{_prefix(data, part)}-text"] = "New **answer** <script>alert(1)</script>"
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:3000]
    part.refresh_from_db()
    assert part.text == "New **answer** <script>alert(1)</script>"
    assert "<strong>answer</strong>" in part.html and "<script>" not in part.html
    item.refresh_from_db()
    assert item.response_1 == part.text
    assert item.image_id is not None  # still of the MRB shape
    # Other slots untouched.
    assert ItemPart.objects.get(item=item, slot="prompt", kind="text").text == item.prompt
    from curation.models import AuditEvent

    event = AuditEvent.objects.get(item=item, action="item_changed")
    assert event.after == {"response_1": part.text}


def test_deleting_the_prompt_image_part_derives_no_item_image(admin_client):
    item = make_item(make_project())
    url, data = change_form(admin_client, item)
    image = ItemPart.objects.get(item=item, kind="image")
    data[f"{_prefix(data, image)}-DELETE"] = "on"
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:3000]
    item.refresh_from_db()
    assert (item.image_id, item.image_path) == (None, "")
    assert not ItemPart.objects.filter(item=item, kind="image").exists()


def test_a_part_its_kind_refuses_is_not_saved(admin_client):
    item = make_item(make_project())
    url, data = change_form(admin_client, item)
    text = ItemPart.objects.get(item=item, slot="response_2")
    data[f"{_prefix(data, text)}-kind"] = "video"
    refused = admin_client.post(url, data)
    assert refused.status_code == 200 and "A video part needs its video file" in (
        refused.content.decode()
    )
    data[f"{_prefix(data, text)}-kind"] = "text"
    data[f"{_prefix(data, text)}-slot"] = "answer"
    refused = admin_client.post(url, data)
    assert refused.status_code == 200 and "is not a slot" in refused.content.decode()
    assert ItemPart.objects.get(pk=text.pk).kind == "text"


def test_editing_one_of_several_text_parts_derives_the_joined_column(admin_client, tmp_path):
    published_fixture(tmp_path)
    project = make_project()
    import_mmrb2_from_paths(project=project, dataset=tmp_path / "interleaved.json")
    item = Item.objects.get(external_id="isg_3")
    url, data = change_form(admin_client, item)
    part = ItemPart.objects.get(item=item, slot="response_1", position=0)
    data[f"{_prefix(data, part)}-text"] = "Step 1: knead *well*."
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:3000]
    part.refresh_from_db()
    assert "<em>well</em>" in part.html
    item.refresh_from_db()
    assert item.response_1 == "Step 1: knead *well*.\n\n\n\n  "
    from curation.models import AuditEvent

    event = AuditEvent.objects.get(item=item, action="item_changed")
    assert event.after == {"response_1": item.response_1}
