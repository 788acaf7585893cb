"""The stored calibration report (issue 36 follow-up): computed in the
background when a project run completes, when votes changed enough, or on
Recompute; the page and the API serve it as stored, with its age, the votes
since and the progress of a running computation, in a fixed number of
statements whatever the project's size."""

from __future__ import annotations

import random

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from config import celery as celery_config
from curation.evaluation import calibration_cache
from curation.evaluation.calibration_cache import refresh, request_refresh, stored_report
from curation.evaluation.calibration_report import calibration_for
from curation.models import CalibrationCache, JudgeRun, JudgeRunStatus, JudgeVote
from curation.tasks import requeue_unsent_work
from tests.factories import (
    make_assignment,
    make_item,
    make_judgement,
    make_member,
    make_project,
)

pytestmark = pytest.mark.django_db


class World:
    def __init__(self, n_items: int, seed: int = 3):
        rng = random.Random(seed)
        self.project = make_project(votes_per_item=3)
        self.annotators = [make_member(self.project) for _ in range(4)]
        self.curator = make_member(self.project, role="curator")
        self.runs = [self.run(name) for name in ("judge b", "judge a")]
        domains = list(self.project.domains.all()[:2])
        self.items = []
        for n in range(n_items):
            item = make_item(self.project, domain=domains[n % 2])
            self.items.append(item)
            truth = rng.choice("12")
            for annotator in rng.sample(self.annotators, 3):
                choice = truth if rng.random() < 0.8 else rng.choice(["1", "2", "tie"])
                self.vote(item, annotator, choice)
            for run in self.runs:
                for order in ("original", "swapped"):
                    choice = truth if rng.random() < 0.75 else rng.choice(["1", "2", ""])
                    JudgeVote.objects.create(
                        run=run,
                        item=item,
                        order=order,
                        choice=choice,
                        confidence=round(rng.uniform(0.5, 1.0), 3) if choice else None,
                    )

    def run(self, name):
        return JudgeRun.objects.create(
            project=self.project,
            name=name,
            base_url="http://127.0.0.1:1/v1",
            model="secret-model",
            max_tokens=16,
            timeout_seconds=1,
            swapped=True,
            status=JudgeRunStatus.COMPLETE,
        )

    def vote(self, item, annotator, choice):
        assignment = make_assignment(
            item, annotator, status="submitted", submitted_at=timezone.now()
        )
        return make_judgement(assignment, choice=choice)

    def new_votes(self, n):
        """n more votes by a fifth annotator."""
        late = make_member(self.project)
        for item in self.items[:n]:
            self.vote(item, late, "1")


def curator_client(client, world):
    client.force_login(world.curator)
    return client


def test_the_stored_report_is_the_live_computation_exactly(django_capture_on_commit_callbacks):
    world = World(30)
    with django_capture_on_commit_callbacks(execute=True):
        assert request_refresh(project=world.project)
    cache = CalibrationCache.objects.get(project=world.project)
    assert cache.computed_at and cache.requested_at is None and cache.error == ""
    assert cache.n_votes == 90 and cache.progress_done == cache.progress_total == 3
    live = calibration_for(world.project)
    stored = stored_report(world.project)
    # Every figure as computed (floats through JSON unchanged), runs by name.
    assert [r["run"].name for r in stored.reports] == ["judge a", "judge b"]
    assert [(r["run"], r["rows"]) for r in stored.reports] == [(r["run"], r["rows"]) for r in live]
    assert stored.votes_since == 0 and not stored.stale


def test_page_and_api_read_a_fixed_number_of_statements(client):
    counts = []
    for n_items in (6, 40):
        world = World(n_items, seed=n_items)
        refresh(project=world.project)
        world.new_votes(2)  # a few votes since, below the threshold: nothing queued
        web = curator_client(client, world)
        api = APIClient()
        api.force_authenticate(world.curator)
        url = reverse("calibration", args=[world.project.slug])
        with CaptureQueriesContext(connection) as page:
            response = web.get(url)
        assert response.status_code == 200
        text = response.content.decode()
        assert "2 votes since" in text and "judge a" in text and "All domains" in text
        with CaptureQueriesContext(connection) as body:
            data = api.get(f"/api/v1/projects/{world.project.slug}/calibration/").json()
        assert data["votes_since"] == 2 and len(data["runs"]) == 2
        assert data["runs"][0]["rows"][0]["n_items"] == n_items
        counts.append((len(page), len(body)))
    assert counts[0] == counts[1], counts
    assert counts[0] == (7, 4), (
        counts
    )  # page: session, user, membership, endpoints, runs, report row, vote mark


def test_first_time_a_view_queues_it_and_shows_its_progress(client):
    world = World(8)
    web = curator_client(client, world)
    url = reverse("calibration", args=[world.project.slug])
    text = web.get(url).content.decode()  # on_commit never runs here: queued, not run
    assert "being computed for the first time" in text and "Computing the report" in text
    assert "No judge votes yet" not in text
    cache = CalibrationCache.objects.get(project=world.project)
    assert cache.requested_at is not None and cache.computed_at is None
    status = web.get(reverse("calibration_status", args=[world.project.slug]))
    assert status.status_code == 200 and "queued" in status.content.decode()
    CalibrationCache.objects.filter(pk=cache.pk).update(progress_done=1, progress_total=3)
    status = web.get(reverse("calibration_status", args=[world.project.slug]))
    assert 'value="33"' in status.content.decode() and "step 1 of 3" in status.content.decode()
    refresh(project=world.project)
    done = web.get(reverse("calibration_status", args=[world.project.slug]))
    assert done.status_code == 204 and done["HX-Refresh"] == "true"
    text = web.get(url).content.decode()
    assert "Computed " in text and "none since" in text and "Recompute" in text


def test_a_project_without_runs_says_so_and_queues_nothing(client):
    project = make_project()
    curator = make_member(project, role="curator")
    client.force_login(curator)
    text = client.get(reverse("calibration", args=[project.slug])).content.decode()
    assert "has not been computed yet" in text and "No judge votes yet" in text
    assert CalibrationCache.objects.get(project=project).requested_at is None


def test_enough_changed_votes_queue_a_recomputation(client, django_capture_on_commit_callbacks):
    world = World(30)
    refresh(project=world.project)
    web = curator_client(client, world)
    url = reverse("calibration", args=[world.project.slug])
    world.new_votes(calibration_cache.CHANGED_MIN - 1)
    web.get(url)
    assert CalibrationCache.objects.get(project=world.project).requested_at is None
    world.new_votes(1)  # 20 votes since: CHANGED_MIN (5 % of 90 is fewer)
    with django_capture_on_commit_callbacks(execute=True) as queued:
        text = web.get(url).content.decode()
    assert len(queued) == 1  # and run (eagerly) once the response was made
    assert "20 votes since" in text and "Computing the report" in text
    cache = CalibrationCache.objects.get(project=world.project)
    assert cache.n_votes == 110 and cache.requested_at is None
    assert "none since" in web.get(url).content.decode()


def test_a_revised_vote_counts_as_a_vote_since():
    world = World(10)
    refresh(project=world.project)
    judgement = world.items[0].assignments.first().judgements.get(is_current=True)
    judgement.is_current = False
    judgement.save(update_fields=["is_current"])
    make_judgement(judgement.assignment, choice="2", revision=judgement.revision + 1)
    stored = stored_report(world.project)
    assert stored.stale and stored.votes_since == 1  # given again: one newer


def test_recompute_queues_once_and_a_request_while_running_runs_again(
    client, django_capture_on_commit_callbacks, monkeypatch
):
    world = World(6)
    web = curator_client(client, world)
    refresh_url = reverse("calibration_refresh", args=[world.project.slug])
    with django_capture_on_commit_callbacks() as first:
        assert web.post(refresh_url).status_code == 302
    with django_capture_on_commit_callbacks() as second:
        web.post(refresh_url)  # still queued: the one queued reads what this one would
    assert len(first) == 1 and second == []
    with django_capture_on_commit_callbacks() as again:
        refresh(project=world.project)
    assert again == []
    # Asked while it computes (after it read the votes): one more when it ends.
    reads = calibration_cache.human_votes

    def read_then_click(project):
        votes = reads(project)
        assert request_refresh(project=project) is False
        return votes

    monkeypatch.setattr(calibration_cache, "human_votes", read_then_click)
    request_refresh(project=world.project)
    with django_capture_on_commit_callbacks() as again:
        refresh(project=world.project)
    assert len(again) == 1
    cache = CalibrationCache.objects.get(project=world.project)
    assert cache.requested_at is not None and not cache.again and cache.computed_at


def test_a_completed_project_run_queues_the_report(django_capture_on_commit_callbacks):
    from curation.evaluation.project_judging import finish_project_run

    world = World(4)
    run = world.runs[0]
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRunStatus.RUNNING)
    run.refresh_from_db()
    with django_capture_on_commit_callbacks() as queued:
        finish_project_run(run, [])
    assert len(queued) == 1
    assert CalibrationCache.objects.get(project=world.project).requested_at is not None


def test_a_failed_computation_is_shown_and_can_be_asked_again(client, monkeypatch):
    world = World(4)
    request_refresh(project=world.project)

    def broken(*args):
        raise ValueError("disk on fire")

    monkeypatch.setattr(calibration_cache.calibration, "report", broken)
    with pytest.raises(ValueError):
        refresh(project=world.project)
    cache = CalibrationCache.objects.get(project=world.project)
    assert cache.requested_at is None and "disk on fire" in cache.error
    web = curator_client(client, world)
    monkeypatch.setattr(calibration_cache, "request_refresh", lambda **kw: False)
    text = web.get(reverse("calibration", args=[world.project.slug])).content.decode()
    assert "The last computation failed" in text and "Recompute" in text


def test_the_refresh_runs_isolated_and_a_lost_request_is_sent_again(monkeypatch):
    assert "curation.tasks.refresh_calibration" in celery_config.ISOLATED_TASKS
    assert "curation.tasks.refit_adaptive_task" in celery_config.ISOLATED_TASKS
    world = World(3)
    request_refresh(project=world.project)
    sent = []
    monkeypatch.setattr(
        "curation.tasks.refresh_calibration.delay", lambda project_id: sent.append(project_id)
    )
    requeue_unsent_work()
    assert sent == [world.project.pk]
