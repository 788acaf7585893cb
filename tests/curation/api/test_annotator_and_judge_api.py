"""/api/v1/: per-annotator statistics (the agreement page's numbers, none
derived again) and the judge runner (endpoints with write-only keys; runs
started, followed, cancelled and resumed through the pages' services)."""

from __future__ import annotations

import csv
import io
import json
import random
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse
from rest_framework.test import APIClient

from annotate.loop.service import Vote, claim_next_item, submit_judgement
from curation.agreement import reports
from curation.agreement import stats as agreement
from curation.benchmarks.mrb import scoring_input
from curation.models import AuditEvent, JudgeEndpoint, JudgeRun, JudgeRunStatus
from tests.curation.agreement.test_dashboard import voted_project
from tests.curation.evaluation.fake_openai import FakeJudge
from tests.curation.releases.test_releases import built, make_release_project
from tests.factories import make_item, make_member, make_project

pytestmark = pytest.mark.django_db

API_KEY = "sk-api-secret-7d1e"
MODEL = "fake-judge-1"


def api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


# --- per-annotator statistics ---------------------------------------------------------------


def value(stat):
    """What the page's figure is: a float, or Undefined (the API's null + reason)."""
    if stat is None:
        return None
    if stat["value"] is None:
        return ("undefined", stat["undefined"])
    return stat["value"]


def same(api_stat, page_value):
    if isinstance(page_value, agreement.Undefined):
        return value(api_stat) == ("undefined", page_value.reason)
    if page_value is None:
        return api_stat is None
    return value(api_stat) == float(page_value)


def test_annotator_statistics_are_the_pages_numbers(client):
    project = voted_project(n_items=16, n_annotators=4)
    reports.refresh_cache(project=project)
    curator = make_member(project, role="curator")
    response = api(curator).get(reverse("api_agreement_annotators", args=[project.slug]))
    assert response.status_code == 200
    body = response.json()
    assert body["alpha_delta_computed_at"] is not None and body["alpha_delta_stale"] is False
    rows = {r.name: r for r in reports.build_report(project).annotators}
    assert [a["annotator"] for a in body["annotators"]] == list(rows)  # the page's order
    for a in body["annotators"]:
        page, s = rows[a["annotator"]], rows[a["annotator"]].stats
        assert a["votes"] == s.n_votes and a["sided_votes"] == s.n_sided
        assert same(a["choice"]["agreement"], s.choice.agreement)
        assert same(a["choice"]["kappa"], s.choice.kappa)
        assert same(a["choice"]["alpha_delta"], page.alpha_delta)
        assert same(a["correctness"]["alpha_delta"], page.correctness_alpha_delta)
        assert same(a["gold_accuracy"], s.gold_accuracy) and a["gold_items"] == s.n_gold
        assert same(a["left_pick_rate"], s.left_pick_rate)
        ci = a["left_pick_ci95"]
        assert (ci["low"], ci["high"]) == (s.left_pick_ci.low, s.left_pick_ci.high)
        assert same(a["left_pick_p"], s.left_pick_p)
        assert same(a["left_pick_p_adjusted"], s.left_pick_p_adjusted)
        assert a["side_bias"] is page.left_bias
        assert same(a["tie_rate"], s.tie_rate)
        assert same(a["median_seconds"], s.median_seconds)
        assert a["crowdlab_quality"] is None  # no label-quality analysis yet
    # ... and the page's CSV, cell by cell where both have a number
    client.force_login(curator)
    page = client.get(reverse("agreement", args=[project.slug]), {"download": "annotators"})
    table = {r["annotator"]: r for r in csv.DictReader(io.StringIO(page.content.decode()))}
    for a in body["annotators"]:
        row = table[a["annotator"]]
        assert int(row["votes"]) == a["votes"]
        assert row["left_pick_rate"] == reports.fmt(value(a["left_pick_rate"]), 6)
        assert row["alpha_delta"] == reports.fmt(value(a["choice"]["alpha_delta"]), 6)
        assert row["kappa_vs_majority"] == (
            reports.fmt(value(a["choice"]["kappa"]), 6)
            if a["choice"]["kappa"]["value"] is not None
            else "undefined"
        )
        assert row["left_bias"] == str(int(a["side_bias"]))


def test_a_left_leaning_annotator_is_flagged_by_the_adjusted_side_test():
    rng = random.Random(4)
    project = make_project(votes_per_item=2, escalation_votes=0)
    for _ in range(40):
        make_item(project, domain=project.domains.get(slug="general_preference"))
    leaner, fair = make_member(project, pseudonym="leaner"), make_member(project, pseudonym="fair")
    for user in (leaner, fair):
        while (a := claim_next_item(project=project, annotator=user)) is not None:
            left = "2" if a.shown_swapped else "1"
            choice = left if user == leaner else rng.choice(["1", "2"])
            submit_judgement(assignment_id=a.pk, annotator=user, vote=Vote(choice=choice))
    body = (
        api(make_member(project, role="curator"))
        .get(reverse("api_agreement_annotators", args=[project.slug]))
        .json()
    )
    by_name = {a["annotator"]: a for a in body["annotators"]}
    assert by_name["leaner"]["left_pick_rate"]["value"] == 1.0
    assert by_name["leaner"]["left_pick_p_adjusted"]["value"] < body["side_bias_fdr"]
    assert by_name["leaner"]["side_bias"] is True
    assert by_name["fair"]["side_bias"] is False
    # before the background computation, alpha_delta is null (not a made-up number)
    assert by_name["fair"]["choice"]["alpha_delta"] is None
    assert body["alpha_delta_computed_at"] is None


def test_annotator_statistics_run_a_constant_number_of_queries(django_assert_max_num_queries):
    project = voted_project(n_items=8, n_annotators=3)
    client = api(make_member(project, role="curator"))
    url = reverse("api_agreement_annotators", args=[project.slug])
    client.get(url)
    with django_assert_max_num_queries(12):
        assert client.get(url).status_code == 200


# --- judge endpoints ----------------------------------------------------------------------


@pytest.fixture
def release(tmp_path):
    return built(make_release_project(tmp_path, slug="japi"))


@pytest.fixture
def fake(release):
    records = scoring_input.load_release_records(Path(settings.MEDIA_ROOT) / release.folder)
    with FakeJudge(api_key=API_KEY, model=MODEL, records=records) as server:
        yield server
    assert server.problems == []


def add_endpoint(client, release, fake, **overrides):
    body = {"name": "fake", "base_url": fake.base_url, "model": MODEL, "api_key": API_KEY}
    body.update(overrides)
    url = reverse("api_judge_endpoints", args=[release.project.slug])
    return client.post(url, body, format="json")


def test_an_admin_adds_an_endpoint_and_the_key_never_comes_back(release, fake):
    project = release.project
    admin, curator = make_member(project, role="admin"), make_member(project, role="curator")
    response = add_endpoint(api(admin), release, fake)
    assert response.status_code == 201, response.content
    created = response.json()
    assert created["has_api_key"] is True and created["temperature"] is None
    assert (created["max_tokens"], created["timeout_seconds"]) == (1024, 120.0)  # the form's
    endpoint = JudgeEndpoint.objects.get(pk=created["id"])
    assert endpoint.api_key() == API_KEY and API_KEY not in endpoint.api_key_encrypted
    listing = api(curator).get(reverse("api_judge_endpoints", args=[project.slug]))
    assert listing.status_code == 200 and listing.json()["count"] == 1
    for text in (response.content, listing.content):
        assert API_KEY.encode() not in text and b"api_key" not in text.replace(b"has_api_key", b"")
    event = AuditEvent.objects.get(action="judge_endpoint_created")
    assert API_KEY not in json.dumps(event.after)
    # curators may list, not add
    assert add_endpoint(api(curator), release, fake, name="other").status_code == 403


def test_endpoint_errors_name_their_fields(release, fake, settings):
    admin = make_member(release.project, role="admin")
    client = api(admin)
    settings.JUDGE_ALLOWED_NETWORKS = []
    refused = add_endpoint(client, release, fake)  # a loopback address
    assert refused.status_code == 400
    assert "base_url" in refused.json()["error"]["fields"]
    settings.JUDGE_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    hot = add_endpoint(client, release, fake, temperature=2.5)
    assert "temperature" in hot.json()["error"]["fields"]
    assert add_endpoint(client, release, fake, temperature=0.2).json()["temperature"] == 0.2
    twice = add_endpoint(client, release, fake, temperature=0.2)
    assert twice.status_code == 400 and "already exists" in twice.json()["error"]["message"]


# --- judge runs ---------------------------------------------------------------------------


def start_run(client, release, endpoint_id, **overrides):
    body = {"endpoint": endpoint_id, "name": "api judge", "concurrency": 2, **overrides}
    url = reverse("api_judge_runs", args=[release.project.slug, release.pk])
    return client.post(url, body, format="json")


def run_url(release, run_id, action=""):
    name = f"api_judge_run_{action}" if action else "api_judge_run"
    return reverse(name, args=[release.project.slug, run_id])


def test_a_curator_starts_a_run_follows_it_and_it_reaches_the_leaderboard(
    release, fake, django_capture_on_commit_callbacks
):
    admin, annotator = make_member(release.project, role="admin"), make_member(release.project)
    endpoint = add_endpoint(api(admin), release, fake).json()
    client = api(make_member(release.project, role="curator"))
    assert start_run(api(annotator), release, endpoint["id"]).status_code == 403
    with django_capture_on_commit_callbacks(execute=True):
        started = start_run(client, release, endpoint["id"], swapped=True)
    assert started.status_code == 202, started.content
    assert started.json()["status"] == "pending"
    run = client.get(run_url(release, started.json()["id"])).json()
    assert run["status"] == "complete" and run["evaluation"] is not None
    assert run["progress"]["done"] == run["progress"]["total"] == 2 * release.manifest["total"]
    assert run["temperature"] is None and fake.temperatures == {"absent"}
    stored = JudgeRun.objects.get(pk=run["id"])
    assert run["seed"] == stored.seed and 0 <= run["seed"] < 2**53
    runs = client.get(reverse("api_judge_runs", args=[release.project.slug, release.pk]))
    assert [r["id"] for r in runs.json()["results"]] == [run["id"]]
    evaluation = client.get(
        reverse("api_evaluation", args=[release.project.slug, release.pk, run["evaluation"]])
    ).json()
    assert evaluation["name"] == "api judge" and evaluation["accuracy"] == 1.0
    # the same name cannot run twice; an unknown endpoint is a field error
    again = start_run(client, release, endpoint["id"])
    assert again.status_code == 400 and "already" in again.json()["error"]["message"]
    unknown = start_run(client, release, 999999, name="x")
    assert "endpoint" in unknown.json()["error"]["fields"]
    too_many = start_run(client, release, endpoint["id"], name="y", concurrency=10_000)
    assert "concurrency" in too_many.json()["error"]["fields"]


def test_cancel_and_resume_through_the_api(release, fake, django_capture_on_commit_callbacks):
    admin = make_member(release.project, role="admin")
    endpoint = add_endpoint(api(admin), release, fake).json()
    client = api(make_member(release.project, role="curator"))
    with django_capture_on_commit_callbacks(execute=False) as queued:
        run_id = start_run(client, release, endpoint["id"]).json()["id"]
    assert len(queued) == 1  # queued, not run
    assert client.post(run_url(release, run_id, "resume")).status_code == 409  # pending
    cancelled = client.post(run_url(release, run_id, "cancel"))
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    again = client.post(run_url(release, run_id, "cancel"))
    assert again.status_code == 409 and again.json()["error"]["code"] == "conflict"
    with django_capture_on_commit_callbacks(execute=True):
        resumed = client.post(run_url(release, run_id, "resume"))
    assert resumed.status_code == 202 and resumed.json()["status"] == "pending"
    finished = client.get(run_url(release, run_id)).json()
    assert finished["status"] == JudgeRunStatus.COMPLETE
    assert JudgeRun.objects.get(pk=run_id).evaluation.accuracy == 1.0


def test_runs_of_another_project_are_not_found(release, fake):
    admin = make_member(release.project, role="admin")
    endpoint = add_endpoint(api(admin), release, fake).json()
    run_id = start_run(api(admin), release, endpoint["id"]).json()["id"]
    other = make_project()
    stranger = make_member(other, role="admin")
    url = reverse("api_judge_run", args=[other.slug, run_id])
    assert api(stranger).get(url).status_code == 404


def test_a_run_takes_how_videos_go_and_refuses_0_or_65_frames(release, fake):
    admin = make_member(release.project, role="admin")
    endpoint = add_endpoint(api(admin), release, fake).json()
    client = api(make_member(release.project, role="curator"))
    for frames in (0, 65):
        refused = start_run(client, release, endpoint["id"], video_frames=frames)
        assert refused.status_code == 400 and "video_frames" in refused.json()["error"]["fields"]
    gif = start_run(client, release, endpoint["id"], video_as="gif")
    assert gif.status_code == 400 and "video_as" in gif.json()["error"]["fields"]
    assert not JudgeRun.objects.exists()
    default = start_run(client, release, endpoint["id"]).json()
    assert (default["video_as"], default["video_frames"]) == ("frames", 8)
    chosen = start_run(client, release, endpoint["id"], name="v", video_as="video", video_frames=3)
    assert chosen.status_code == 202
    assert (chosen.json()["video_as"], chosen.json()["video_frames"]) == ("video", 3)
    stored = JudgeRun.objects.get(name="v")
    assert (stored.video_as, stored.video_frames) == ("video", 3)
