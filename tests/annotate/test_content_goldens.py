"""The compare page's content and the API's content of an MRB-shaped item
and of MMRB2-shaped items (interleaved text and images; pictures alone)
are what they were before the parts became the item (issue 32): recorded
from main, byte for byte (assignment ids replaced by a placeholder)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from annotate.importing.mmrb2 import import_mmrb2_from_paths
from django.urls import reverse
from rest_framework.test import APIClient

from annotate.importing.service import import_items_from_paths
from annotate.loop.service import claim_next_item
from annotate.models import Assignment
from tests.annotate.importing.test_import import write_mrb
from tests.annotate.importing.test_mmrb2 import published_fixture
from tests.factories import make_member, make_project, mrb_record, png_bytes

pytestmark = pytest.mark.django_db

GOLDENS = Path(__file__).parent / "goldens"
# Set to record the goldens again (only ever from main's code).
RECORD = False


def _assignment(project, swapped: bool) -> Assignment:
    annotator = make_member(project)
    assignment = claim_next_item(project=project, annotator=annotator)
    Assignment.objects.filter(pk=assignment.pk).update(shown_swapped=swapped)
    assignment.refresh_from_db()
    return assignment


def _content(client, assignment) -> str:
    """The compare page's content: the stage (prompt) and the responses."""
    client.force_login(assignment.annotator)
    page = client.get(reverse("work_item", args=[assignment.pk])).content.decode()
    stage = page[page.index('<section class="stage') : page.index("<form id=")]
    responses = page[page.index('<section class="responses') : page.index('<div class="decide">')]
    layout = re.search(r'data-layout="[^"]*"', page).group(0)
    return _blind(assignment, f"{layout}\n{stage}\n{responses}")


def _api(assignment) -> str:
    client = APIClient()
    client.force_authenticate(assignment.annotator)
    body = client.get(reverse("api_assignment", args=[assignment.pk])).json()
    body = {
        key: body[key]
        for key in (
            "prompt",
            "image_url",
            "image_width",
            "image_height",
            "left",
            "right",
            "content",
        )
    }
    return _blind(assignment, json.dumps(body, indent=1, sort_keys=True))


def _blind(assignment, text: str) -> str:
    return text.replace(f"/assignments/{assignment.pk}/", "/assignments/<id>/")


def _check(name: str, text: str) -> None:
    path = GOLDENS / name
    if RECORD:
        path.write_text(text)
    assert text == path.read_text()


@pytest.mark.parametrize("swapped", [False, True])
def test_mrb_item_content_is_as_before(client, tmp_path, swapped):
    project = make_project(votes_per_item=1)
    record = mrb_record(
        "vqa_1",
        Text="What is **shown**?\n\n- one\n- two",
        Output1="A red *square*. <script>x</script>",
        Output2="A blue circle.\n\n```\ncode\n```",
    )
    dataset = write_mrb(tmp_path, [record], images={"images/red.png": png_bytes()})
    import_items_from_paths(project=project, dataset=dataset, images=tmp_path)
    assignment = _assignment(project, swapped)
    _check(f"mrb_page_{swapped}.html", _content(client, assignment))
    _check(f"mrb_api_{swapped}.json", _api(assignment))


@pytest.mark.parametrize("task", ["interleaved", "t2i", "edit", "reasoning"])
@pytest.mark.parametrize("swapped", [False, True])
def test_mmrb2_item_content_is_as_before(client, tmp_path, task, swapped):
    published_fixture(tmp_path)
    project = make_project(votes_per_item=1)
    import_mmrb2_from_paths(project=project, dataset=tmp_path / f"{task}.json")
    assignments = [_assignment(project, swapped) for _ in range(project.items.count())]
    for assignment in sorted(assignments, key=lambda a: a.item.external_id):
        name = f"mmrb2_{task}_{assignment.item.external_id.replace(':', '_')}"
        _check(f"{name}_page_{swapped}.html", _content(client, assignment))
        _check(f"{name}_api_{swapped}.json", _api(assignment))
