"""Issue 24, graded preference in set-up: the project's preference scale on
the create and settings pages and in the API, changeable only while the
project has no votes; a domain's letter-grade question, on or off like the
correctness wording, fixed once the domain has votes."""

import re

import pytest
from django.urls import reverse

from annotate.loop.service import Vote, claim_next_item, submit_judgement
from annotate.models import Domain, Project, SetupEvent
from annotate.setup import service
from tests.annotate.setup.test_service import creator  # noqa: F401 (fixture)
from tests.api.test_annotation_api import token_client
from tests.factories import make_item, make_member, make_project

pytestmark = pytest.mark.django_db


def test_a_project_is_created_with_a_graded_scale_on_the_page(client, creator):  # noqa: F811
    client.force_login(creator)
    page = client.get(reverse("project_new")).content.decode()
    assert 'name="preference_scale"' in page and "Multimodal RewardBench 2" in page
    response = client.post(
        reverse("project_new"),
        {
            "name": "Graded",
            "slug": "graded",
            "votes_per_item": 3,
            "escalation_votes": 2,
            "agree_share": 0.8,
            "lease_minutes": 30,
            "seed": 0,
            "preset": "mrb",
            "preference_scale": "graded6",
        },
    )
    assert response.status_code == 302
    assert Project.objects.get(slug="graded").preference_scale == "graded6"


def test_the_scale_changes_on_the_settings_page_only_while_nobody_voted(client):
    project = make_project(preference_scale="graded6")
    admin = make_member(project, role="admin")
    client.force_login(admin)
    url = reverse("project_settings", args=[project.slug])
    # As the page posts them: its checkboxes as they are (an unchecked box is not sent).
    page = client.get(url).content.decode()
    assert re.search(r'<input type="checkbox" name="allow_none_pick"[^>]* checked>', page)
    fields = {
        "name": project.name, "lease_minutes": 30, "seed": 0, "allow_tie": "on",
        "allow_none_pick": "on",
    }  # fmt: skip
    assert client.post(url, {**fields, "preference_scale": "graded7"}).status_code == 302
    project.refresh_from_db()
    assert project.preference_scale == "graded7"
    event = SetupEvent.objects.filter(action="project_updated").latest("pk")
    assert event.after == {"preference_scale": "graded7"}

    item = make_item(project, domain=project.domains.get(slug="general_preference"))
    voter = make_member(project)
    a = claim_next_item(project=project, annotator=voter)
    assert a.item_id == item.pk
    submit_judgement(assignment_id=a.pk, annotator=voter, vote=Vote(choice="2", strength=-1))
    response = client.post(url, {**fields, "preference_scale": "ab"})
    assert response.status_code == 400
    assert "its preference scale (what annotators were asked) cannot change" in (
        response.content.decode()
    )
    project.refresh_from_db()
    assert project.preference_scale == "graded7"
    # Left out (an older client), the scale stays as it is.
    assert client.post(url, {**fields, "name": "Renamed"}).status_code == 302
    project.refresh_from_db()
    assert (project.name, project.preference_scale) == ("Renamed", "graded7")


def test_the_api_creates_and_changes_the_scale_and_refuses_an_unknown_one(creator):  # noqa: F811
    api = token_client(creator)
    r = api.post("/api/v1/projects/", {"name": "G", "preference_scale": "graded7"}, format="json")
    assert r.status_code == 201, r.json()
    assert r.json()["preference_scale"] == "graded7" and r.json()["consensus_strength"] is None
    r = api.patch("/api/v1/projects/g/", {"preference_scale": "graded6"}, format="json")
    assert r.status_code == 200 and r.json()["preference_scale"] == "graded6"
    r = api.patch("/api/v1/projects/g/", {"preference_scale": "likert"}, format="json")
    assert r.status_code == 400
    listed = api.get("/api/v1/projects/").json()["results"]
    assert listed[0]["preference_scale"] == "graded6"


def test_an_ab_scale_is_refused_while_the_rule_has_a_consensus_strength():
    project = make_project(preference_scale="graded6", consensus_strength=1.5)
    admin = make_member(project, role="admin")
    with pytest.raises(service.SetupError, match="consensus strength needs a graded scale"):
        service.update_project(actor=admin, project=project, preference_scale="ab")


def test_a_domain_asks_grades_with_its_own_wording_through_page_and_api(client):
    project = make_project()
    admin = make_member(project, role="admin")
    client.force_login(admin)
    url = reverse("domain_edit", args=[project.slug, "reasoning"])
    domain = Domain.objects.get(project=project, slug="reasoning")
    data = {
        "slug": "reasoning",
        "title": domain.title,
        "export_category": domain.export_category,
        "kind": domain.kind,
        "asks_grade": "on",
        "grade_question": "",
    }
    assert client.post(url, data).status_code == 302
    domain.refresh_from_db()
    assert domain.asks_grade and domain.grade_question == "Grade of response {response}"

    api = token_client(admin)
    r = api.patch(
        f"/api/v1/projects/{project.slug}/domains/reasoning/",
        {"grade_question": "Letter for {response}?"},
        format="json",
    )
    assert r.status_code == 200 and r.json()["asks_grade"] is True
    assert r.json()["grade_question"] == "Letter for {response}?"
    listed = api.get(f"/api/v1/projects/{project.slug}/domains/").json()["results"]
    assert {d["slug"]: d["asks_grade"] for d in listed}["reasoning"] is True

    item = make_item(project, domain=domain)
    voter = make_member(project)
    a = claim_next_item(project=project, annotator=voter)
    assert a.item_id == item.pk
    submit_judgement(
        assignment_id=a.pk,
        annotator=voter,
        vote=Vote(choice="1", correct_1="yes", correct_2="no", grade_1="A", grade_2="B"),
    )
    with pytest.raises(service.SetupError, match="grade question"):
        service.update_domain(actor=admin, domain=domain, asks_grade=False)
