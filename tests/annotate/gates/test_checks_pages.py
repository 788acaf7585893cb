"""Issue 36 item 2 at the edges: a check looks like any item on the page and
in the API; a paused annotator is told so on the page and refused by the
API; curators see the annotator table (page and API) and reinstate; the
project's check settings through the settings page and the API."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotate import checks
from annotate.models import Assignment, ItemPurpose, Project, ProjectPause
from tests.factories import make_item, make_member, make_project, make_user

pytestmark = pytest.mark.django_db

SAME = {"prompt": "Which shape is red?", "response_1": "The square.", "response_2": "The circle."}


def api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def next_url(project):
    return reverse("api_next_assignment", args=[project.slug])


def shape(value):
    """The JSON's structure: keys and value types, not values."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shape(v) for v in value[:1]]
    return type(value).__name__


def one_of_each(rate: float):
    """A project whose annotator's first claim is a check (rate 1) or a
    benchmark item (rate 0); both items of the same content."""
    project = make_project(check_rate=rate, check_minimum=99)
    make_item(project, image=None, **SAME)
    make_item(project, image=None, purpose=ItemPurpose.CHECK, gold_choice="1", **SAME)
    return project, make_member(project)


def test_a_check_and_a_benchmark_item_look_the_same_in_the_api():
    bodies = {}
    for rate in (1.0, 0.0):
        project, user = one_of_each(rate)
        body = api(user).post(next_url(project)).json()
        item = Assignment.objects.get(pk=body["id"]).item
        bodies[item.purpose] = body
    check, bench = bodies[ItemPurpose.CHECK], bodies[ItemPurpose.BENCHMARK]
    assert shape(check) == shape(bench)
    assert {k: v for k, v in check.items() if k not in ("id", "project", "lease_expires_at")} | {
        "left": "",
        "right": "",
        "content": "",
    } == {k: v for k, v in bench.items() if k not in ("id", "project", "lease_expires_at")} | {
        "left": "",
        "right": "",
        "content": "",
    }


def _normalised(html: str) -> str:
    html = re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", html)
    html = re.sub(r'nonce="[^"]+"', "", html)
    html = re.sub(r"project-\d+|Project \d+", "P", html)
    return re.sub(r"\d+", "N", html)


def test_a_check_and_a_benchmark_item_render_the_same_page(client):
    pages = {}
    for rate in (1.0, 0.0):
        project, user = one_of_each(rate)
        client.force_login(user)
        client.post(reverse("work_start", args=[project.slug]))
        a = Assignment.objects.get(annotator=user)
        Assignment.objects.filter(pk=a.pk).update(display_order="12")
        pages[a.item.purpose] = client.get(reverse("work_item", args=[a.pk])).content.decode()
    assert _normalised(pages[ItemPurpose.CHECK]) == _normalised(pages[ItemPurpose.BENCHMARK])


def paused_annotator(rate=0.5):
    project = make_project(check_rate=rate, check_threshold=0.8, check_minimum=3)
    make_item(project)
    user = make_member(project)
    acc = checks.CheckAccuracy(right=0, total=3, low=0.0, high=0.56)
    checks.pause_annotator(project=project, annotator=user, accuracy=acc)
    return project, user


def test_a_paused_annotator_sees_why_and_gets_no_item(client):
    project, user = paused_annotator()
    client.force_login(user)
    response = client.post(reverse("work_start", args=[project.slug]), follow=True)
    text = response.content.decode()
    assert "is paused" in text and "0/3" in text
    assert not Assignment.objects.filter(annotator=user).exists()


def test_the_api_refuses_a_paused_annotator_with_a_clear_error():
    project, user = paused_annotator()
    response = api(user).post(next_url(project))
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "paused" and "0/3" in error["message"]


def test_with_checks_off_a_pause_stops_nobody():
    project, user = paused_annotator(rate=0.0)
    Project.objects.filter(pk=project.pk).update(check_rate=0.0)
    assert api(user).post(next_url(project)).status_code == 200


def test_curators_see_the_annotator_table_and_reinstate_from_it(client):
    project, user = paused_annotator()
    curator = make_member(project, role="curator")
    client.force_login(curator)
    page = client.get(reverse("annotators", args=[project.slug])).content.decode()
    assert "Paused" in page and "Reinstate" in page and "0/3" in page
    overview = client.get(reverse("project", args=[project.slug])).content.decode()
    assert "1 annotator paused" in overview
    response = client.post(reverse("annotator_reinstate", args=[project.slug, user.pk]))
    assert response.status_code == 302
    pause = ProjectPause.objects.get(annotator=user)
    assert pause.reinstated_by == curator and pause.reinstated_at is not None
    page = client.get(reverse("annotators", args=[project.slug])).content.decode()
    assert "Reinstate" not in page
    client.force_login(user)
    assert client.post(reverse("work_start", args=[project.slug])).url.startswith("/a/")


def test_the_annotator_api_shows_figures_and_reinstates():
    project, user = paused_annotator()
    curator = make_member(project, role="curator")
    rows = api(curator).get(reverse("api_annotators", args=[project.slug])).json()["results"]
    (row,) = rows
    assert row["user_id"] == user.pk and row["paused"] is True
    assert row["pause"]["total"] == 3 and row["pause"]["threshold"] == 0.8
    assert (row["checks_total"], row["check_accuracy"]) == (0, None)
    url = reverse("api_annotator_reinstate", args=[project.slug, user.pk])
    reinstated = api(curator).post(url)
    assert reinstated.status_code == 200 and reinstated.json()["paused"] is False
    again = api(curator).post(url)
    assert again.status_code == 409 and again.json()["error"]["code"] == "not_paused"
    assert api(user).get(reverse("api_annotators", args=[project.slug])).status_code == 403


def test_check_settings_through_the_api_and_the_settings_page(client):
    project = make_project()
    admin = make_member(project, make_user(), role="admin")
    url = reverse("api_project", args=[project.slug])
    changed = api(admin).patch(url, {"check_rate": 0.1, "check_minimum": 20}, format="json")
    assert changed.status_code == 200
    assert (changed.json()["check_rate"], changed.json()["check_minimum"]) == (0.1, 20)
    assert api(admin).patch(url, {"check_rate": 1.5}, format="json").status_code == 400
    client.force_login(admin)
    page = client.get(reverse("project_settings", args=[project.slug])).content.decode()
    assert 'name="check_rate"' in page and 'name="check_threshold"' in page
    refused = client.post(
        reverse("project_settings", args=[project.slug]),
        {"name": project.name, "lease_minutes": 30, "seed": 0, "check_rate": 2},
    )
    assert refused.status_code == 400
    project.refresh_from_db()
    assert project.check_rate == 0.1
