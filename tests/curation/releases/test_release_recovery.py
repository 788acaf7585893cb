"""Builds whose worker died (issue 29): a stale heartbeat is taken over by the
periodic sweep within minutes (it waited 30 minutes, or the broker's hour),
and curators retry a failed or stalled build on the release page or the API
(audited, CSRF-protected; annotators and strangers cannot)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from config.celery import RecoverStalledBuilds
from config.celery import app as celery_app
from curation.models import AuditEvent, Release, ReleaseStatus
from curation.releases.recovery import GAVE_UP, recover_stalled_builds
from curation.tasks import requeue_unsent_work
from tests.curation.releases.test_releases import INCLUDED, make_release_project, new_release
from tests.factories import make_member, make_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(tmp_path):
    return make_release_project(tmp_path)


@pytest.fixture
def curator(project):
    return make_member(project, role="curator")


def building(release, *, silent_for: float, attempts: int = 1) -> None:
    """As a worker left it: building, its last heartbeat `silent_for` s ago."""
    now = timezone.now()
    Release.objects.filter(pk=release.pk).update(
        status=ReleaseStatus.BUILDING,
        started_at=now - timedelta(seconds=silent_for + 5),
        heartbeat_at=now - timedelta(seconds=silent_for),
        progress_total=len(INCLUDED),
        progress_done=3,
        attempts=attempts,
    )


# --- The sweep -----------------------------------------------------------------------------


def test_a_build_silent_for_two_minutes_is_taken_over_by_the_sweep_and_finishes(
    project, django_capture_on_commit_callbacks
):
    dead, live = new_release(project, "v1"), new_release(project, "v2")
    building(dead, silent_for=121)
    building(live, silent_for=30)
    with django_capture_on_commit_callbacks(execute=True):  # the task runs inline
        queued, failed = recover_stalled_builds()
    assert (queued, failed) == ([dead.pk], [])
    dead.refresh_from_db()
    assert dead.status == ReleaseStatus.READY, dead.error
    assert dead.attempts == 2 and dead.manifest["total"] == len(INCLUDED)
    assert Release.objects.get(pk=live.pk).status == ReleaseStatus.BUILDING  # left alone


def test_the_stale_time_is_a_setting(project, settings):
    release = new_release(project)
    building(release, silent_for=121)
    settings.RELEASE_STALE_SECONDS = 600
    assert recover_stalled_builds() == ([], [])
    settings.RELEASE_STALE_SECONDS = 60
    assert Release.objects.stalled().get() == release


def test_a_build_whose_worker_died_every_time_is_failed_not_requeued_forever(project, settings):
    settings.RELEASE_MAX_ATTEMPTS = 3
    release = new_release(project)
    building(release, silent_for=300, attempts=3)
    assert recover_stalled_builds() == ([], [release.pk])
    release.refresh_from_db()
    assert release.status == ReleaseStatus.FAILED
    assert release.error == GAVE_UP.format(attempts=3, seconds=settings.RELEASE_STALE_SECONDS)
    assert release.can_retry


def test_the_catch_up_sweep_takes_over_stalled_builds_too(
    project, django_capture_on_commit_callbacks
):
    release = new_release(project)
    building(release, silent_for=500)
    with django_capture_on_commit_callbacks(execute=True):  # its builds run inline (eager)
        requeue_unsent_work()
    release.refresh_from_db()
    assert release.status == ReleaseStatus.READY, release.error


def test_every_worker_sends_the_sweep_every_release_sweep_seconds_on_either_broker(settings):
    settings.RELEASE_SWEEP_SECONDS = 45
    assert RecoverStalledBuilds in celery_app.steps["consumer"]
    step = RecoverStalledBuilds.__new__(RecoverStalledBuilds)
    assert step.enabled() and step.seconds() == 45
    assert "curation.tasks.recover_stalled_builds" in celery_app.tasks


# --- Retry on the page -------------------------------------------------------------------------


def page_client(user) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


def csrf_token(page) -> str:
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode()).group(1)


def test_a_curator_retries_a_failed_build_from_its_page_and_the_retry_is_audited(
    project, curator, django_capture_on_commit_callbacks
):
    release = new_release(project)
    Release.objects.filter(pk=release.pk).update(
        status=ReleaseStatus.FAILED, error="OSError: No space left on device", attempts=1
    )
    client = page_client(curator)
    url = reverse("release_detail", args=[project.slug, release.pk])
    page = client.get(url)
    html = page.content.decode()
    assert "No space left on device" in html and "Retry the build" in html
    retry = reverse("release_retry", args=[project.slug, release.pk])
    assert f'action="{retry}"' in html
    assert client.post(retry).status_code == 403  # no CSRF token: nothing happens
    assert Release.objects.get(pk=release.pk).status == ReleaseStatus.FAILED
    with django_capture_on_commit_callbacks(execute=True):
        done = client.post(retry, {"csrfmiddlewaretoken": csrf_token(page)})
    assert done.status_code == 302 and done["Location"] == url
    release.refresh_from_db()
    assert release.status == ReleaseStatus.READY, release.error
    event = AuditEvent.objects.get(project=project, action="release_retried")
    assert event.actor == curator
    assert event.before["status"] == "failed"
    assert event.before["error"] == "OSError: No space left on device"
    assert event.after == {"status": "pending", "release": release.pk, "version": "v1.0"}
    assert "Retry the build" not in client.get(url).content.decode()
    log = client.get(reverse("audit_log", args=[project.slug]), {"action": "release_retried"})
    assert log.status_code == 200
    assert "release_retried" in log.content.decode() and curator.username in log.content.decode()


def test_a_stalled_build_shows_why_and_offers_retry_and_the_page_stops_polling(project, curator):
    release = new_release(project)
    building(release, silent_for=200)
    client = page_client(curator)
    html = client.get(reverse("release_detail", args=[project.slug, release.pk])).content.decode()
    assert f"stopped reporting at 3 of {len(INCLUDED)} records" in html
    assert "Retry the build" in html
    assert "hx-get" not in html  # the button keeps the focus: nothing replaces it
    progress = client.get(reverse("release_progress", args=[project.slug, release.pk]))
    assert progress.status_code == 204 and progress["HX-Refresh"] == "true"


def test_a_live_build_or_a_ready_release_cannot_be_retried(project, curator):
    release = new_release(project)
    building(release, silent_for=20)
    client = page_client(curator)
    url = reverse("release_detail", args=[project.slug, release.pk])
    page = client.get(url)
    assert "Retry the build" not in page.content.decode() and "hx-get" in page.content.decode()
    retry = reverse("release_retry", args=[project.slug, release.pk])
    refused = client.post(retry, {"csrfmiddlewaretoken": csrf_token(page)}, follow=True)
    assert "only a failed build" in refused.content.decode()
    assert Release.objects.get(pk=release.pk).status == ReleaseStatus.BUILDING
    assert not AuditEvent.objects.filter(action="release_retried").exists()


def test_annotators_and_strangers_cannot_retry(project):
    release = new_release(project)
    Release.objects.filter(pk=release.pk).update(status=ReleaseStatus.FAILED)
    retry = reverse("release_retry", args=[project.slug, release.pk])
    annotator, stranger = Client(), Client()
    annotator.force_login(make_member(project))
    stranger.force_login(make_member(make_project(), role="curator"))
    assert annotator.post(retry).status_code == 403
    assert stranger.post(retry).status_code == 404
    assert Release.objects.get(pk=release.pk).status == ReleaseStatus.FAILED


# --- Retry through the API ---------------------------------------------------------------------


def test_the_api_retries_a_stalled_build_and_refuses_a_ready_one(
    project, curator, django_capture_on_commit_callbacks
):
    release = new_release(project)
    building(release, silent_for=200)
    api = APIClient()
    api.force_authenticate(curator)
    detail = reverse("api_release", args=[project.slug, release.pk])
    assert api.get(detail).json()["stalled"] is True
    url = reverse("api_release_retry", args=[project.slug, release.pk])
    with django_capture_on_commit_callbacks(execute=True):
        answer = api.post(url)
    assert answer.status_code == 202
    body = api.get(detail).json()
    assert body["status"] == "ready" and body["stalled"] is False
    again = api.post(url)
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "not_retryable"
    event = AuditEvent.objects.get(action="release_retried")
    assert event.actor == curator and event.before["stalled"] is True
