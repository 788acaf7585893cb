"""Adaptive votes shown to curators (issue 36, item 5): the project page and
the adaptive page say the rule in plain words, admins change it there or
through the API, annotators see none of it."""

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.loop import adaptive
from annotate.models import AdaptiveFit, Project, VoteMode
from curation.models import AuditEvent
from tests.factories import make_item, make_member, make_project

pytestmark = pytest.mark.django_db

RULE_WORDS = "Then the items whose label is least certain get one more vote at a time"


@pytest.fixture
def queued(monkeypatch):
    calls = []
    monkeypatch.setattr("config.celery.enqueue_on_commit", lambda task, pk: calls.append(pk))
    return calls


def api_for(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


def test_admin_switches_to_adaptive_on_the_page_and_a_refit_is_queued(client, queued):
    project = make_project(votes_per_item=3)
    make_item(project)
    admin = make_member(project, role="admin")
    client.force_login(admin)
    response = client.post(
        f"/p/{project.slug}/adaptive/settings/",
        {"vote_mode": "adaptive", "base_votes": 2, "budget": 4, "stop_certainty": 0.9},
    )
    assert response.status_code == 302
    project.refresh_from_db()
    assert (project.vote_mode, project.adaptive_budget) == (VoteMode.ADAPTIVE, 4)
    assert queued == [project.pk]
    assert AdaptiveFit.objects.get(project=project).queued
    assert AuditEvent.objects.filter(project=project, action="vote_mode").count() == 1
    page = client.get(f"/p/{project.slug}/adaptive/").content.decode()
    assert "This project is in adaptive mode" in page and RULE_WORDS in page
    assert "up to 4 votes" in page and "90%" in page


def test_settings_the_rule_refuses_are_form_errors(client, queued):
    project = make_project()
    client.force_login(make_member(project, role="admin"))
    response = client.post(
        f"/p/{project.slug}/adaptive/settings/",
        {"vote_mode": "adaptive", "base_votes": 4, "budget": 3, "stop_certainty": 0.9},
    )
    assert response.status_code == 400
    assert "The budget runs from the base votes" in response.content.decode()
    assert Project.objects.get(pk=project.pk).vote_mode == VoteMode.FIXED
    assert queued == []


def test_project_page_shows_the_rule_to_curators_not_annotators(client):
    project = make_project(vote_mode=VoteMode.ADAPTIVE, adaptive_stop_certainty=0.97)
    curator, annotator = make_member(project, role="curator"), make_member(project)
    client.force_login(curator)
    page = client.get(f"/p/{project.slug}/").content.decode()
    assert "Adaptive votes:" in page and RULE_WORDS in page and "97%" in page
    client.force_login(annotator)
    page = client.get(f"/p/{project.slug}/").content.decode()
    assert RULE_WORDS not in page
    assert client.get(f"/p/{project.slug}/adaptive/").status_code == 403


def test_page_says_when_the_fallback_estimates_certainty(client, monkeypatch):
    monkeypatch.setattr(adaptive, "dawid_skene_available", lambda: False)
    project = make_project(vote_mode=VoteMode.ADAPTIVE)
    client.force_login(make_member(project, role="curator"))
    page = client.get(f"/p/{project.slug}/adaptive/").content.decode()
    assert "crowd-kit (the optional <code>quality</code> extra) is not installed" in page


def test_api_shows_and_changes_the_rule(queued):
    project = make_project()
    admin, curator = make_member(project, role="admin"), make_member(project, role="curator")
    url = f"/api/v1/projects/{project.slug}/adaptive/"
    assert api_for(curator).get(url).json()["vote_mode"] == "fixed"
    data = api_for(admin).put(url, {"vote_mode": "adaptive", "budget": 6}, format="json").json()
    assert data["vote_mode"] == "adaptive" and data["budget"] == 6 and data["base_votes"] == 1
    assert "up to 6 votes" in data["rule"]
    assert set(data["items"]) == {"base", "open", "certain", "agreement", "budget"}
    refused = api_for(admin).put(url, {"vote_mode": "adaptive", "base_votes": 7}, format="json")
    assert refused.status_code == 400, refused.json()
    assert "budget" in refused.json()["error"]["fields"], refused.json()
    project_data = api_for(curator).get(f"/api/v1/projects/{project.slug}/").json()
    assert project_data["vote_mode"] == "adaptive"
    assert project_data["adaptive"]["budget"] == 6
    assert "up to 6 votes" in project_data["adaptive"]["rule"]
