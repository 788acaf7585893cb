"""The label-quality API: per-item results, the analysis, the queue, decisions."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from curation.models import Evaluation, LabelQualityRun, Verdict
from curation.quality.service import compute_label_quality
from tests.curation.evaluation.test_evaluations import judge_lines, records_of, upload
from tests.curation.quality.conftest import needs_quality_extra
from tests.curation.quality.test_label_quality_job import PLANTED, make_world
from tests.curation.releases.test_releases import built, make_release_project
from tests.factories import make_member

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore::DeprecationWarning")]


def api_for(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def test_evaluation_items_api_lists_the_wrong_items(client, tmp_path):
    release = built(make_release_project(tmp_path, slug="lqapi"))
    curator = make_member(release.project, role="curator")
    client.force_login(curator)
    records = records_of(release)
    wrong = {records[1]["ID"], records[4]["ID"]}
    upload(client, release, "j", judge_lines(records, wrong))
    evaluation = Evaluation.objects.get(name="j")
    api = api_for(curator)
    base = f"/api/v1/projects/{release.project.slug}/releases/{release.pk}/evaluations/"
    data = api.get(f"{base}{evaluation.pk}/items/").json()
    assert data["count"] == 2 and {r["external_id"] for r in data["results"]} == wrong
    assert all(r["correct"] is False and r["choice"] != r["chosen"] for r in data["results"])
    everything = api.get(f"{base}{evaluation.pk}/items/", {"show": "all"}).json()
    assert everything["count"] == len(records)
    item_id = data["results"][0]["item_id"]
    per_item = api.get(f"/api/v1/projects/{release.project.slug}/items/{item_id}/predictions/")
    assert [r["evaluation"] for r in per_item.json()] == [evaluation.pk]
    assert api.get(f"{base}999999/items/").status_code == 404


@needs_quality_extra
def test_refresh_queue_and_decisions_through_the_api():
    project, entries, items, team = make_world()
    for u in team:
        project.memberships.filter(user=u).update(pseudonym=f"P{u.pk}")
    curator = make_member(project, role="curator")
    api = api_for(curator)
    base = f"/api/v1/projects/{project.slug}/label-quality/"
    assert api.get(base).json()["status"] == "never"
    refused = api.post(f"{base}refresh/", {"evaluations": [999999]}, format="json")
    assert refused.status_code == 400 and "evaluations" in refused.json()["error"]["fields"]
    queued = api.post(f"{base}refresh/", {"evaluations": [e.pk for e in entries]}, format="json")
    assert queued.status_code == 202 and queued.json()["status"] == "pending"
    compute_label_quality(project_id=project.pk)
    analysis = api.get(base).json()
    assert analysis["status"] == "ready" and analysis["summary"]["n_items"] == 40
    assert len(analysis["annotators"]) == 4
    assert {a["pseudonym"] for a in analysis["annotators"].values()} == {f"P{u.pk}" for u in team}
    suspects = api.get(f"{base}suspects/").json()
    top = suspects["results"][:3]
    assert {r["item_id"] for r in top} == {items[n].pk for n in PLANTED}
    assert top[0]["label_quality"] <= top[1]["label_quality"] <= top[2]["label_quality"]

    first = top[0]
    url = f"{base}suspects/{first['item_id']}/decision/"
    no_reason = api.post(url, {"action": "overturn", "version": first["version"]}, format="json")
    assert no_reason.status_code == 400
    stale = api.post(url, {"action": "confirm", "version": first["version"] + 5}, format="json")
    assert stale.status_code == 409 and stale.json()["error"]["code"] == "stale"
    done = api.post(
        url,
        {"action": "overturn", "reason": "models agree", "version": first["version"]},
        format="json",
    )
    assert done.status_code == 200
    verdict = Verdict.objects.get(item_id=first["item_id"])
    assert verdict.final_choice != first["label"] and verdict.provenance == "adjudicated"
    second = top[1]
    confirm = api.post(
        f"{base}suspects/{second['item_id']}/decision/",
        {"action": "confirm", "version": second["version"]},
        format="json",
    )
    assert confirm.status_code == 200 and confirm.json()["provenance"] == "reviewed"
    remaining = {r["item_id"] for r in api.get(f"{base}suspects/").json()["results"]}
    assert first["item_id"] not in remaining and second["item_id"] not in remaining


@needs_quality_extra
def test_suspects_api_runs_constant_queries():
    project, entries, *_ = make_world()
    api = api_for(make_member(project, role="curator"))
    api.post(
        f"/api/v1/projects/{project.slug}/label-quality/refresh/",
        {"evaluations": [e.pk for e in entries]},
        format="json",
    )
    compute_label_quality(project_id=project.pk)
    url = f"/api/v1/projects/{project.slug}/label-quality/suspects/"
    counts = []
    for size in (2, 40):
        with CaptureQueriesContext(connection) as ctx:
            assert api.get(url, {"page_size": size}).status_code == 200
        counts.append(len(ctx))
    assert counts[0] == counts[1]


def test_refresh_says_so_when_the_extra_is_missing(monkeypatch):
    from curation.api import quality as apis

    project, _entries, *_ = make_world()
    monkeypatch.setattr(apis, "libraries_available", lambda: False)
    api = api_for(make_member(project, role="curator"))
    base = f"/api/v1/projects/{project.slug}/label-quality/"
    assert api.get(base).json()["available"] is False
    response = api.post(f"{base}refresh/", {"evaluations": []}, format="json")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "quality_extra_missing"
    assert not LabelQualityRun.objects.filter(project=project, status="pending").exists()
