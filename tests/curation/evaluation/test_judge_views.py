"""Judge runner pages: endpoint settings (admins), starting and following a
run (curators), permissions for every URL, and the API key never shown."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from curation.benchmarks.mrb import scoring_input
from curation.evaluation.judge_runs import run_judge
from curation.models import AuditEvent, JudgeEndpoint, JudgeRun, JudgeRunStatus
from tests.curation.evaluation.fake_openai import FakeJudge
from tests.curation.evaluation.test_judge_runner import API_KEY, MODEL, make_endpoint, start
from tests.curation.releases.test_releases import built, make_release_project
from tests.factories import make_member, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fast(settings):
    settings.JUDGE_BACKOFF_BASE = 0.01
    settings.JUDGE_BACKOFF_MAX = 0.05
    settings.JUDGE_MAX_RETRIES = 2
    settings.JUDGE_HEARTBEAT_SECONDS = 0.2


@pytest.fixture
def release(tmp_path):
    return built(make_release_project(tmp_path, slug="jv"))


@pytest.fixture
def fake(release):
    records = scoring_input.load_release_records(Path(settings.MEDIA_ROOT) / release.folder)
    with FakeJudge(api_key=API_KEY, model=MODEL, records=records) as server:
        yield server
    assert server.problems == []


def endpoint_post(fake, **overrides):
    data = {
        "name": "fake",
        "base_url": fake.base_url,
        "model": MODEL,
        "api_key": API_KEY,
        "temperature": "0",
        "max_tokens": "512",
        "timeout_seconds": "5",
    }
    data.update(overrides)
    return data


def test_admin_adds_an_endpoint_and_the_key_is_never_shown_back(client, release, fake):
    project = release.project
    client.force_login(make_member(project, role="admin"))
    url = reverse("judge_endpoints", args=[project.slug])
    assert url in client.get(project.get_absolute_url()).content.decode()
    response = client.post(url, endpoint_post(fake))
    assert response.status_code == 302
    endpoint = JudgeEndpoint.objects.get(project=project)
    assert endpoint.api_key() == API_KEY and endpoint.base_url == fake.base_url
    pages = [
        client.get(url),
        client.get(reverse("judge_endpoint_edit", args=[project.slug, endpoint.pk])),
    ]
    for page in pages:
        assert page.status_code == 200
        assert API_KEY not in page.content.decode() and "set" in page.content.decode()
    # A form error re-renders without the key typed in.
    bad = client.post(url, endpoint_post(fake, name="other", base_url="ftp://x"))
    assert bad.status_code == 400 and API_KEY not in bad.content.decode()
    audit = client.get(reverse("audit_log", args=[project.slug]) + "?download=csv")
    assert API_KEY not in b"".join(audit.streaming_content).decode()
    assert not AuditEvent.objects.filter(after__icontains=API_KEY).exists()


def test_admin_replaces_clears_and_keeps_the_key(client, release, fake):
    project = release.project
    client.force_login(make_member(project, role="admin"))
    endpoint = make_endpoint(release, fake)
    url = reverse("judge_endpoint_edit", args=[project.slug, endpoint.pk])
    assert client.post(url, endpoint_post(fake, api_key="", temperature="0.7")).status_code == 302
    endpoint.refresh_from_db()
    assert endpoint.api_key() == API_KEY and endpoint.temperature == 0.7  # blank keeps it
    assert client.post(url, endpoint_post(fake, api_key="sk-new-one")).status_code == 302
    endpoint.refresh_from_db()
    assert endpoint.api_key() == "sk-new-one"
    both = client.post(url, endpoint_post(fake, api_key="sk-x", clear_api_key="on"))
    assert both.status_code == 400
    assert client.post(url, endpoint_post(fake, api_key="", clear_api_key="on")).status_code == 302
    endpoint.refresh_from_db()
    assert not endpoint.has_api_key
    assert "not set" in client.get(url).content.decode()
    delete = reverse("judge_endpoint_delete", args=[project.slug, endpoint.pk])
    assert client.post(delete).status_code == 302
    assert not JudgeEndpoint.objects.exists()


def test_curator_runs_a_judge_from_the_leaderboard_end_to_end(
    client, release, fake, django_capture_on_commit_callbacks
):
    project = release.project
    make_endpoint(release, fake)
    client.force_login(make_member(project, role="curator"))
    board = client.get(reverse("leaderboard", args=[project.slug, release.pk]))
    assert b"Run a judge" in board.content
    endpoint = JudgeEndpoint.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("judge_run_new", args=[project.slug, release.pk]),
            {"endpoint": endpoint.pk, "name": "fake judge", "swapped": "on", "concurrency": "3"},
        )
    run = JudgeRun.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("judge_run", args=[project.slug, run.pk])
    assert run.status == JudgeRunStatus.COMPLETE and run.swapped and run.concurrency == 3
    page = client.get(response["Location"]).content.decode()
    assert "Complete" in page and "On the leaderboard" in page and "100.0%" in page
    board = client.get(reverse("leaderboard", args=[project.slug, release.pk])).content.decode()
    assert "fake judge" in board and reverse("judge_run", args=[project.slug, run.pk]) in board
    assert API_KEY not in page + board


def test_the_run_form_refuses_bad_input_and_changes_nothing(client, release, fake):
    project = release.project
    endpoint = make_endpoint(release, fake)
    client.force_login(make_member(project, role="curator"))
    url = reverse("judge_run_new", args=[project.slug, release.pk])
    too_many = client.post(url, {"endpoint": endpoint.pk, "name": "x", "concurrency": "999"})
    assert too_many.status_code == 400 and b"concurrency" in too_many.content.lower()
    no_name = client.post(url, {"endpoint": endpoint.pk, "name": " ", "concurrency": "2"})
    assert no_name.status_code == 400
    other = make_release_project(Path(settings.MEDIA_ROOT) / "other", slug="other")
    foreign = make_endpoint(built(other), fake, name="foreign")
    wrong = client.post(url, {"endpoint": foreign.pk, "name": "x", "concurrency": "2"})
    assert wrong.status_code == 400
    assert not JudgeRun.objects.exists()


def test_progress_polls_while_running_and_reloads_when_done(client, release, fake):
    project = release.project
    client.force_login(make_member(project, role="curator"))
    run = start(release, make_endpoint(release, fake))
    url = reverse("judge_run_progress", args=[project.slug, run.pk])
    polled = client.get(url)
    assert polled.status_code == 200 and b'hx-trigger="every 1s"' in polled.content
    page = client.get(reverse("judge_run", args=[project.slug, run.pk])).content.decode()
    assert "judge-run-progress" in page and "<script>" not in page and "Cancel" in page
    run_judge(run_id=run.pk)
    done = client.get(url)
    assert done.status_code == 204 and done["HX-Refresh"] == "true"


def test_cancel_and_resume_from_the_run_page(
    client, release, fake, django_capture_on_commit_callbacks
):
    project = release.project
    client.force_login(make_member(project, role="curator"))
    run = start(release, make_endpoint(release, fake))
    cancel = reverse("judge_run_cancel", args=[project.slug, run.pk])
    assert client.post(cancel).status_code == 302
    run.refresh_from_db()
    assert run.status == JudgeRunStatus.CANCELLED
    page = client.get(reverse("judge_run", args=[project.slug, run.pk])).content.decode()
    assert "Resume" in page
    resume = reverse("judge_run_resume", args=[project.slug, run.pk])
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(resume).status_code == 302
    run.refresh_from_db()
    assert run.status == JudgeRunStatus.COMPLETE  # eager task, nothing pending in between
    assert client.post(resume).status_code == 302  # not resumable now: a message, no change
    assert JudgeRun.objects.get().status == JudgeRunStatus.COMPLETE


def test_a_failed_run_page_shows_the_error_without_the_key(client, release, fake):
    project = release.project
    client.force_login(make_member(project, role="curator"))
    wrong = "sk-wrong-key-that-the-server-echoes"
    run = run_judge(run_id=start(release, make_endpoint(release, fake, key=wrong)).pk)
    assert run.status == JudgeRunStatus.FAILED
    page = client.get(reverse("judge_run", args=[project.slug, run.pk])).content.decode()
    assert "HTTP 401" in page and wrong not in page and "Resume" in page


def test_failed_items_are_listed_on_the_run_page(client, release, fake):
    project = release.project
    client.force_login(make_member(project, role="curator"))
    records = scoring_input.load_release_records(Path(settings.MEDIA_ROOT) / release.folder)
    fake.plan = {records[0]["ID"]: ["500"] * 5}
    run = run_judge(run_id=start(release, make_endpoint(release, fake)).pk)
    page = client.get(reverse("judge_run", args=[project.slug, run.pk])).content.decode()
    assert "Failed requests" in page and records[0]["ID"] in page and "HTTP 500" in page
    assert f"seed <code>{run.seed}</code>" in page and "<th>Call</th>" in page


def test_leaderboard_queries_do_not_grow_with_runs(client, release, fake):
    project = release.project
    client.force_login(make_member(project, role="curator"))
    endpoint = make_endpoint(release, fake)
    url = reverse("leaderboard", args=[project.slug, release.pk])
    start(release, endpoint, name="one")
    with CaptureQueriesContext(connection) as few:
        assert client.get(url).status_code == 200
    for n in range(5):
        run_judge(run_id=start(release, endpoint, name=f"more {n}").pk)
    with CaptureQueriesContext(connection) as many:
        assert client.get(url).status_code == 200
    assert len(many) == len(few)


# --- Permissions: every URL, every kind of user ------------------------------------------


def urls(release, endpoint, run):
    slug = release.project.slug
    return [
        ("get", reverse("judge_endpoints", args=[slug]), "admin"),
        ("post", reverse("judge_endpoints", args=[slug]), "admin"),
        ("get", reverse("judge_endpoint_edit", args=[slug, endpoint.pk]), "admin"),
        ("post", reverse("judge_endpoint_edit", args=[slug, endpoint.pk]), "admin"),
        ("post", reverse("judge_endpoint_delete", args=[slug, endpoint.pk]), "admin"),
        ("get", reverse("judge_run_new", args=[slug, release.pk]), "curator"),
        ("post", reverse("judge_run_new", args=[slug, release.pk]), "curator"),
        ("get", reverse("judge_run", args=[slug, run.pk]), "curator"),
        ("get", reverse("judge_run_progress", args=[slug, run.pk]), "curator"),
        ("post", reverse("judge_run_cancel", args=[slug, run.pk]), "curator"),
        ("post", reverse("judge_run_resume", args=[slug, run.pk]), "curator"),
    ]


@pytest.mark.parametrize("who", ["anonymous", "outsider", "annotator", "curator", "admin"])
def test_every_judge_url_checks_role_and_membership(client, release, fake, who):
    endpoint = make_endpoint(release, fake)
    run = start(release, endpoint)
    if who == "outsider":
        client.force_login(make_user("outsider"))
    elif who != "anonymous":
        client.force_login(make_member(release.project, role=who))
    for method, url, needs in urls(release, endpoint, run):
        # POST bodies that would change nothing (invalid forms) keep every
        # endpoint and run in place for the next URL.
        data = {"name": ""} if method == "post" and "delete" not in url else {}
        if "delete" in url and who == "admin":
            continue  # checked in test_admin_replaces_clears_and_keeps_the_key
        if (
            method == "post"
            and ("cancel" in url or "resume" in url)
            and who in ("curator", "admin")
        ):
            continue  # allowed; exercised in test_cancel_and_resume_from_the_run_page
        response = getattr(client, method)(url, data)
        allowed = who == "admin" or (who == "curator" and needs == "curator")
        if who == "anonymous":
            assert response.status_code == 302 and "login" in response["Location"], url
        elif who == "outsider":
            assert response.status_code == 404, url
        elif not allowed:
            assert response.status_code == 403, (who, url)
        else:
            assert response.status_code in (200, 400), (who, url, response.status_code)
        body = response.content.decode()
        assert API_KEY not in body
    assert JudgeEndpoint.objects.filter(pk=endpoint.pk).exists()
    assert JudgeRun.objects.filter(pk=run.pk, status=JudgeRunStatus.PENDING).exists()


def test_endpoint_list_and_run_page_queries_do_not_grow(client, release, fake):
    project = release.project
    client.force_login(make_member(project, role="admin"))
    endpoint = make_endpoint(release, fake)
    run = start(release, endpoint)
    endpoints_url = reverse("judge_endpoints", args=[project.slug])
    run_url = reverse("judge_run", args=[project.slug, run.pk])
    with CaptureQueriesContext(connection) as few_endpoints:
        client.get(endpoints_url)
    with CaptureQueriesContext(connection) as few_errors:
        client.get(run_url)
    for n in range(4):
        make_endpoint(release, fake, name=f"more {n}")
    records = scoring_input.load_release_records(Path(settings.MEDIA_ROOT) / release.folder)
    fake.plan = {r["ID"]: ["bad_request"] for r in records[:6]}
    run_judge(run_id=run.pk)
    with CaptureQueriesContext(connection) as many_endpoints:
        client.get(endpoints_url)
    with CaptureQueriesContext(connection) as many_errors:
        page = client.get(run_url)
    assert page.content.decode().count("HTTP 400") == 6
    assert len(many_endpoints) == len(few_endpoints), [q["sql"] for q in many_endpoints]
    assert len(many_errors) == len(few_errors)


def test_the_run_form_takes_how_videos_go_and_refuses_0_or_65_frames(client, release, fake):
    project = release.project
    endpoint = make_endpoint(release, fake)
    client.force_login(make_member(project, role="curator"))
    url = reverse("judge_run_new", args=[project.slug, release.pk])
    form = client.get(url).content.decode()
    assert 'name="video_as"' in form and 'name="video_frames"' in form
    for frames in ("0", "65"):
        post = {"endpoint": endpoint.pk, "name": "x", "concurrency": "2", "video_frames": frames}
        refused = client.post(url, post)
        assert refused.status_code == 400 and b"video_frames" in refused.content
    gif = {"endpoint": endpoint.pk, "name": "x", "concurrency": "2", "video_as": "gif"}
    assert client.post(url, gif).status_code == 400
    assert not JudgeRun.objects.exists()
    post = {"endpoint": endpoint.pk, "name": "x", "concurrency": "2", "video_frames": "12"}
    response = client.post(url, post)
    run = JudgeRun.objects.get()
    assert response.status_code == 302 and (run.video_as, run.video_frames) == ("frames", 12)
    assert "videos as 12 frames" in client.get(response["Location"]).content.decode()
    post.update(name="y", video_as="video")
    client.post(url, post)
    run = JudgeRun.objects.get(name="y")
    assert run.video_as == "video"
    page = client.get(reverse("judge_run", args=[project.slug, run.pk])).content.decode()
    assert "videos as the video file" in page
