"""The assignment's content as parts in the API (issue 24): text and images
in displayed order, images served by where they are displayed; still blind
(no ID, model name, source benchmark, image path, nor which side is
response A: issue 29)."""

import pytest

from annotate.importing.formats.mmrb2 import import_mmrb2_from_paths
from annotate.models import Assignment, Item
from tests.annotate.importing.test_mmrb2 import published_fixture
from tests.api.test_annotation_api import token_client
from tests.factories import make_assignment, make_item, make_member, make_project

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
    base = f"/api/v1/assignments/{assignment.pk}/images"
    for side in ("left", "right"):
        urls = [p["url"] for p in body["content"][side] if "url" in p]
        assert urls == [f"{base}/{side}/{n}/" for n in range(len(urls))]
        for url in urls:
            image = client.get(url)
            assert image.status_code == 200 and image["Content-Type"] == "image/jpeg"
    assert client.get(f"{base}/left/9/").status_code == 404
    assert client.get(f"{base}/middle/0/").status_code == 404


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


def test_image_urls_do_not_tell_which_displayed_side_is_response_a(tmp_path):
    """Two annotators shown one item in opposite orders get the same URLs
    for what sits on the same displayed side, and each URL serves the
    image displayed there: nothing in a URL follows the canonical order."""
    published_fixture(tmp_path)
    project = make_project(votes_per_item=2)
    import_mmrb2_from_paths(project=project, dataset=tmp_path / "interleaved.json")
    item = Item.objects.get(project=project, external_id="isg_3")
    answers = {}
    for swapped in (False, True):
        annotator = make_member(project)
        client = token_client(annotator)
        assignment = make_assignment(item, annotator, shown_swapped=swapped)
        body = client.get(f"/api/v1/assignments/{assignment.pk}/").json()
        shapes = {
            side: [p["url"].split("/images/")[1] for p in body["content"][side] if "url" in p]
            for side in ("left", "right")
        }
        served = {
            side: [client.get(p["url"]).getvalue() for p in body["content"][side] if "url" in p]
            for side in ("left", "right")
        }
        answers[swapped] = (shapes, served)
    (shapes_a, served_a), (shapes_b, served_b) = answers[False], answers[True]
    # The names follow the displayed side only ...
    for shapes in (shapes_a, shapes_b):
        for side in ("left", "right"):
            assert shapes[side] == [f"{side}/{n}/" for n in range(len(shapes[side]))]
    # ... and what they serve follows the swap: the same images, sides exchanged.
    assert served_a["left"] == served_b["right"] and served_a["right"] == served_b["left"]
    assert served_a["left"] != served_a["right"]
