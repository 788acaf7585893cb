"""Curator endpoints keep the HTML pages' rules: conflict of interest,
audited reasons, stale versions; evaluations refuse bad files clearly."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from curation.models import AuditEvent, Evaluation, Release, Verdict
from tests.curation.releases.test_releases import built, make_release_project
from tests.factories import make_assignment, make_item, make_judgement, make_member, make_project

pytestmark = pytest.mark.django_db


def client_for(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


@pytest.fixture
def contested():
    project = make_project(slug="cur")
    item = make_item(project, model_1="model-x", model_2="model-y", gold_choice="1")
    verdict = Verdict.objects.create(item=item, project=project, status="contested", version=4)
    return project, item, verdict


def decide(client, item, **body):
    return client.post(f"/api/v1/projects/cur/verdicts/{item.pk}/decision/", body, format="json")


def test_a_curator_who_voted_cannot_decide(contested):
    project, item, verdict = contested
    curator = make_member(project, role="curator")
    make_judgement(make_assignment(item, curator), "1")
    client = client_for(curator)
    r = decide(client, item, action="resolve", choice="1", reason="x", version=4)
    assert r.status_code == 403
    assert r.json()["error"]["code"] == "conflict_of_interest"
    verdict.refresh_from_db()
    assert verdict.status == "contested"
    detail = client.get(f"/api/v1/projects/cur/verdicts/{item.pk}/").json()
    assert detail["you_voted"] is True


def test_self_adjudication_when_the_project_allows_it(contested):
    project, item, _ = contested
    project.allow_self_adjudication = True
    project.save()
    curator = make_member(project, role="curator")
    make_judgement(make_assignment(item, curator), "1")
    r = decide(client_for(curator), item, action="resolve", choice="1", reason="x", version=4)
    assert r.status_code == 200


def test_a_decision_is_audited_with_its_reason(contested):
    project, item, _ = contested
    curator = make_member(project, role="curator")
    r = decide(
        client_for(curator),
        item,
        action="exclude",
        category="ambiguous",
        reason="both fine",
        version=4,
    )
    assert r.status_code == 200, r.content
    body = r.json()
    assert (body["status"], body["exclusion_category"], body["version"]) == (
        "excluded",
        "ambiguous",
        5,
    )
    assert body["item"]["model_1"] == "model-x"
    event = AuditEvent.objects.get(item=item, action="exclude")
    assert (event.actor, event.reason) == (curator, "both fine")


def test_decision_input_errors_name_fields(contested):
    project, item, _ = contested
    client = client_for(make_member(project, role="curator"))
    r = decide(client, item, action="resolve", reason="x", version=4)
    assert r.status_code == 400
    assert "choice" in r.json()["error"]["fields"]
    r = decide(client, item, action="exclude", reason="x", version=4)
    assert "category" in r.json()["error"]["fields"]
    assert not AuditEvent.objects.exists()


def test_agreement_reports_undefined_rather_than_numbers_without_votes(contested):
    project, _, _ = contested
    body = client_for(make_member(project, role="curator")).get("/api/v1/projects/cur/agreement/")
    assert body.status_code == 200
    domains = body.json()["domains"]
    assert [d["domain"] for d in domains][-1] == "all"
    alpha = domains[-1]["choice"]["alpha"]
    assert alpha["value"] is None and alpha["undefined"]
    assert domains[-1]["choice"]["alpha_ci95"] is None


def test_a_release_not_ready_is_409_for_download(contested):
    project, _, _ = contested
    client = client_for(make_member(project, role="curator"))
    release = Release.objects.create(project=project, version="v9", domains=["vqa"])
    r = client.get(f"/api/v1/projects/cur/releases/{release.pk}/download/")
    assert r.status_code == 409
    assert r.json()["error"]["code"] == "not_ready"
    r = client.post("/api/v1/projects/cur/releases/", {"version": "v9"}, format="json")
    assert r.status_code == 409
    assert r.json()["error"]["code"] == "exists"
    r = client.post("/api/v1/projects/cur/releases/", {"version": "../x"}, format="json")
    assert r.status_code == 400


@pytest.fixture
def ready(tmp_path):
    release = built(make_release_project(tmp_path, slug="evapi"))
    return release, client_for(make_member(release.project, role="curator"))


def upload(client, release, name, data: bytes):
    return client.post(
        f"/api/v1/projects/{release.project.slug}/releases/{release.pk}/evaluations/",
        {"name": name, "predictions": SimpleUploadedFile("p.jsonl", data)},
        format="multipart",
    )


def test_bad_predictions_name_the_line_and_store_nothing(ready):
    release, client = ready
    r = upload(client, release, "bad", b'{"ID": "x", "output": "[[A]]"}\nnot json\n')
    assert r.status_code == 400
    error = r.json()["error"]
    assert error["code"] == "evaluation_refused"
    assert "2" in error["message"]
    assert not Evaluation.objects.exists()


def test_predictions_over_the_limit_are_413(ready, monkeypatch):
    release, client = ready
    monkeypatch.setattr("curation.api.evaluation.MAX_PREDICTIONS_BYTES", 10)
    r = upload(client, release, "big", json.dumps({"ID": "x", "output": "[[A]]"}).encode())
    assert r.status_code == 413
    assert r.json()["error"]["code"] == "too_large"
    assert not Evaluation.objects.exists()
