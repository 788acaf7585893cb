"""An item of more than two responses (issue 32 item 1, a best-of-N or
ranking project's) is shown whole, from its parts: the compare page and the
annotator API in the assignment's display order, named A, B, C, …, never by
canonical slot or model; the curators' pages every response in canonical
order. The page takes no pair vote on it."""

from __future__ import annotations

import re

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.models import Assignment, Task, image_part, text_part, write_item_content
from curation.models import Verdict
from tests.factories import make_assignment, make_image, make_item, make_member, make_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def four():
    """A best-of-N item of four responses (response 4 has an image too),
    displayed as 3, 1, 4, 2 to its annotator."""
    project = make_project(task=Task.BEST_OF_N)
    item = make_item(project=project, model_1="secret-model-1")
    image = make_image()
    default_storage.save(image.file, ContentFile(b"\x89PNG stored"))
    write_item_content(
        item,
        [text_part("Which answer is best?")],
        [
            [text_part("Answer one")],
            [text_part("Answer two")],
            [text_part("Answer three")],
            [text_part("Answer four"), image_part(image.pk, "models/secret-4.png")],
        ],
    )
    annotator = make_member(project)
    assignment = make_assignment(item, annotator, display_order="3142")
    return project, item, annotator, assignment


def test_the_compare_page_shows_every_response_in_display_order(client, four):
    _, _, annotator, assignment = four
    client.force_login(annotator)
    page = client.get(reverse("work_item", args=[assignment.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    names = re.findall(r"<h2[^>]*>Response ([A-Z])</h2>", html)
    assert names == ["A", "B", "C", "D"]
    shown = re.findall(r"Answer (one|two|three|four)", html)
    assert shown == ["three", "one", "four", "two"]
    # A best-of-N vote by position (issue 33), no pair vote.
    assert 'id="judge-form"' in html and 'name="choice"' not in html
    assert re.findall(r'id="pick-(\d)"', html) == ["1", "2", "3", "4"]
    assert 'alt="Response C, image"' in html  # response 4 is displayed third
    assert "secret" not in html  # neither a model name nor a source path


def test_the_api_gives_every_response_in_display_order(four):
    _, _, annotator, assignment = four
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=annotator).key}")
    body = client.get(f"/api/v1/assignments/{assignment.pk}/").json()
    content = body["content"]
    assert [r["name"] for r in content["responses"]] == ["A", "B", "C", "D"]
    texts = [r["parts"][0]["text"] for r in content["responses"]]
    assert texts == ["Answer three", "Answer one", "Answer four", "Answer two"]
    assert (content["left"], content["right"], body["left"], body["right"]) == ([], [], "", "")
    assert body["prompt"] == "Which answer is best?"
    [image] = [p for p in content["responses"][2]["parts"] if p["kind"] == "image"]
    assert image["url"].endswith(f"/assignments/{assignment.pk}/images/c/0/")
    got = client.get(image["url"])
    assert got.status_code == 200
    assert b"".join(got.streaming_content) == b"\x89PNG stored"
    # Its places are letters: a pair's left and right name nothing here.
    assert client.get(f"/api/v1/assignments/{assignment.pk}/images/left/0/").status_code == 404
    assert client.get(f"/api/v1/assignments/{assignment.pk}/images/a/0/").status_code == 404
    assert "secret" not in str(body)


def test_the_curators_page_shows_every_response_in_canonical_order(client, four):
    project, item, _, _ = four
    Verdict.objects.get_or_create(item=item, project=project)
    client.force_login(make_member(project, role="curator"))
    page = client.get(reverse("adjudicate", args=[project.slug, item.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    assert re.findall(r"<h2>Response (\d)</h2>", html) == ["1", "2", "3", "4"]
    assert re.findall(r"Answer (one|two|three|four)", html) == ["one", "two", "three", "four"]


def test_a_best_of_n_project_leases_its_items_with_all_their_responses_ordered(client, four):
    """Issue 33 lifts issue 32's "leases nothing yet": the page and the API
    lease a best-of-N item with a display order over its four responses."""
    project, item, _, _ = four
    other = make_member(project)
    client.force_login(other)
    page = client.post(reverse("work_start", args=[project.slug]))
    assert page.status_code == 302
    leased = Assignment.objects.get(item=item, annotator=other)
    assert sorted(leased.display_order) == ["1", "2", "3", "4"]
    api = APIClient()
    third = make_member(project)
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=third).key}")
    got = api.post(f"/api/v1/projects/{project.slug}/assignments/next/")
    assert got.status_code == 200, got.content
    assert got.json()["task"] == "best_of_n"
    assert len(got.json()["content"]["responses"]) == 4
