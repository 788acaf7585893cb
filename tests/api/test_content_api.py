"""The assignment's content as parts in the API (issue 24): text and images
in displayed order, images served by index; still blind (no ID, model name,
source benchmark or image path)."""

import pytest

from annotate.importing.mmrb2 import import_mmrb2_from_paths
from annotate.models import Assignment
from tests.annotate.importing.test_mmrb2 import published_fixture
from tests.api.test_annotation_api import token_client
from tests.factories import make_item, make_member, make_project

pytestmark = pytest.mark.django_db


def test_an_interleaved_assignment_lists_its_parts_in_displayed_order(tmp_path):
    published_fixture(tmp_path)
    project = make_project(votes_per_item=1)
    import_mmrb2_from_paths(project=project, dataset=tmp_path / "interleaved.json")
    client = token_client(make_member(project))
    response = client.post(f"/api/v1/projects/{project.slug}/assignments/next/")
    assert response.status_code == 200
    body = response.json()
    text = response.content.decode()
    for secret in ("isg_3", "GPTGeminiAgent", "chameleon", "isgbench", "images/isg_3", ".jpg"):
        assert secret not in text
    assert body["image_url"] is None
    assignment = Assignment.objects.get(pk=body["id"])
    agent = body["content"]["right" if assignment.shown_swapped else "left"]
    assert [p["kind"] for p in agent] == ["text", "image", "text", "image"]
    assert agent[0]["text"] == "Step 1: mix <image1> with the flour."
    assert agent[2]["text"] == "\n\n  "
    assert body["content"]["prompt"] == [
        {"kind": "text", "text": "Show me how to bake bread, with pictures."}
    ]
    urls = [p["url"] for side in ("left", "right") for p in body["content"][side] if "url" in p]
    assert sorted(urls) == [f"/api/v1/assignments/{assignment.pk}/images/{n}/" for n in range(3)]
    image = client.get(urls[0])
    assert image.status_code == 200 and image["Content-Type"] == "image/jpeg"
    assert client.get(f"/api/v1/assignments/{assignment.pk}/images/3/").status_code == 404


def test_an_mrb_item_has_the_same_content_from_its_columns(tmp_path):
    project = make_project()
    item = make_item(project)
    client = token_client(make_member(project))
    body = client.post(f"/api/v1/projects/{project.slug}/assignments/next/").json()
    assert body["content"]["prompt"] == [
        {"kind": "image", "url": body["image_url"], "width": 32, "height": 24},
        {"kind": "text", "text": item.prompt},
    ]
    assert body["content"]["left"] == [{"kind": "text", "text": body["left"]}]
