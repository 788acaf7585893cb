"""Judge runs over a project's benchmark items (issue 36 item 3) against the
fake OpenAI-compatible server: both orders, votes in canonical terms with the
stated confidence, never Judgements and never shown to annotators; the
calibration page and API for curators."""

from __future__ import annotations

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from annotate.models import Item, Judgement
from curation.evaluation import calibration
from curation.evaluation.calibration_report import calibration_for, human_votes, judge_votes
from curation.evaluation.judge_runs import resume_judge_run, run_judge, save_endpoint
from curation.evaluation.project_judging import (
    ProjectJudgeError,
    confidence_of,
    start_project_judge_run,
)
from curation.models import JudgeRun, JudgeRunStatus, JudgeVote
from tests.curation.evaluation.fake_openai import FakeJudge
from tests.factories import (
    make_assignment,
    make_item,
    make_judgement,
    make_member,
    make_project,
    png_bytes,
)

pytestmark = pytest.mark.django_db

API_KEY = "sk-test-calibration-77c1"
MODEL = "fake-judge-secret-model"
N_ITEMS = 24
BIASED = 4  # the first items: the fake answers "A" in both orders


@pytest.fixture(autouse=True)
def _fast(settings):
    settings.JUDGE_BACKOFF_BASE = 0.01
    settings.JUDGE_BACKOFF_MAX = 0.05
    settings.JUDGE_MAX_RETRIES = 2
    settings.JUDGE_HEARTBEAT_SECONDS = 0.2


class World:
    def __init__(self):
        self.project = make_project(slug="cal", votes_per_item=3)
        self.annotators = [make_member(self.project) for _ in range(3)]
        self.curator = make_member(self.project, role="curator")
        self.admin = make_member(self.project, role="admin")
        self.items, self.truth, self.records = [], {}, []
        for n in range(N_ITEMS):
            item = make_item(self.project, response_1=f"first answer {n}", response_2=f"second {n}")
            default_storage.save(item.image.file, ContentFile(png_bytes()))
            truth = "1" if n % 2 else "2"
            self.items.append(item)
            self.truth[item.external_id] = truth
            self.records.append(
                {
                    "ID": item.external_id,
                    "Output1": f"first answer {n}",
                    "Output2": f"second {n}",
                    "Better": "Output1" if truth == "1" else "Output2",
                }
            )
            # Annotators 1 and 2 always right; 3 wrong on every fourth item.
            for k, annotator in enumerate(self.annotators):
                wrong = k == 2 and n % 4 == 0
                choice = ("2" if truth == "1" else "1") if wrong else truth
                self.vote(item, annotator, choice)
        # A gold check item: never judged, never counted.
        self.check = make_item(
            self.project,
            purpose="check",
            gold_choice="1",
            response_1="check one",
            response_2="check two",
        )

    def vote(self, item, annotator, choice):
        assignment = make_assignment(
            item, annotator, status="submitted", submitted_at=timezone.now()
        )
        make_judgement(assignment, choice=choice)

    def endpoint(self, fake):
        existing = self.project.judge_endpoints.first()
        if existing is not None:
            return existing
        return save_endpoint(
            project=self.project,
            actor=self.admin,
            name="fake",
            base_url=fake.base_url,
            model=MODEL,
            temperature=0.0,
            max_tokens=64,
            timeout_seconds=5.0,
            api_key=API_KEY,
        )


@pytest.fixture
def world():
    return World()


@pytest.fixture
def fake(world):
    with FakeJudge(api_key=API_KEY, model=MODEL, records=world.records) as server:
        biased = {r["ID"] for r in world.records[:BIASED]}
        server.decide = lambda ext, order, right: "A" if ext in biased else right
        server.after_verdict = lambda ext, order: " Confidence: 90%"
        yield server
    assert server.problems == []


def start(world, fake, **kwargs):
    return start_project_judge_run(
        project=world.project,
        endpoint=world.endpoint(fake),
        name=kwargs.pop("name", "judge-on-project"),
        concurrency=kwargs.pop("concurrency", 3),
        user=world.curator,
        enqueue=False,
        **kwargs,
    )


def test_a_project_run_votes_on_every_benchmark_item_in_both_orders(world, fake):
    judgements = Judgement.objects.count()
    tallies = list(Item.objects.order_by("pk").values_list("votes_1", "votes_2", "votes_tie"))
    run = run_judge(run_id=start(world, fake).pk)
    assert run.status == JudgeRunStatus.COMPLETE, run.error
    assert run.evaluation is None and run.release is None and run.swapped
    assert run.progress_done == run.progress_total == 2 * N_ITEMS
    ids = {i.external_id for i in world.items}
    assert set(fake.requests) == {(i, o) for i in ids for o in ("original", "swapped")}
    assert world.check.external_id not in {i for i, _ in fake.requests}
    votes = {(v.item.external_id, v.order): v for v in JudgeVote.objects.select_related("item")}
    assert len(votes) == 2 * N_ITEMS
    for n, item in enumerate(world.items):
        original = votes[(item.external_id, "original")]
        swapped = votes[(item.external_id, "swapped")]
        if n < BIASED:  # "A" both times: response 1 first, then response 2
            assert (original.choice, swapped.choice) == ("1", "2")
        else:
            assert original.choice == swapped.choice == world.truth[item.external_id]
        assert original.confidence == swapped.confidence == pytest.approx(0.9)
    # Never votes of the annotation loop: no judgement, no tally changed.
    assert Judgement.objects.count() == judgements
    assert (
        list(Item.objects.order_by("pk").values_list("votes_1", "votes_2", "votes_tie")) == tallies
    )


def test_the_report_is_the_pure_computation_over_the_stored_votes(world, fake):
    run = run_judge(run_id=start(world, fake).pk)
    (report,) = calibration_for(world.project)
    assert report["run"] == run
    overall = report["rows"][0]
    assert overall["domain"] is None
    expected = calibration.figures(human_votes(world.project), judge_votes(run))
    assert overall == {"domain": None, **expected.summary()}
    assert overall["n_majority"] == N_ITEMS and overall["n_votes"] == 2 * N_ITEMS
    # Biased items: one order right, one wrong.
    assert overall["accuracy"] == pytest.approx((2 * N_ITEMS - BIASED) / (2 * N_ITEMS))
    assert overall["position_consistency"] == pytest.approx((N_ITEMS - BIASED) / N_ITEMS)
    assert overall["ece"] == pytest.approx(abs(0.9 - overall["accuracy"]))
    assert [r["domain"] for r in report["rows"]] == [None, "vqa"]


def test_human_majority_reads_only_current_own_votes_of_benchmark_items(world):
    item = world.items[0]
    imported = make_member(world.project)
    assignment = make_assignment(item, imported, status="submitted", submitted_at=timezone.now())
    make_judgement(assignment, choice="tie", imported=True)
    old = make_assignment(
        item, make_member(world.project), status="submitted", submitted_at=timezone.now()
    )
    make_judgement(old, choice="tie", is_current=False)
    votes = human_votes(world.project)
    assert len(votes[item.pk]) == 3 and "tie" not in {c for _, c in votes[item.pk]}
    assert world.check.pk not in votes


def test_a_resumed_project_run_sends_only_what_is_missing(world, fake):
    run = start(world, fake)
    fake.always = "bad_request"  # every request refused: the run stops
    run = run_judge(run_id=run.pk)
    assert run.status == JudgeRunStatus.FAILED
    fake.always = None
    assert resume_judge_run(run=run, enqueue=False)
    run = run_judge(run_id=run.pk)
    assert run.status == JudgeRunStatus.COMPLETE
    assert JudgeVote.objects.filter(run=run).exclude(choice="").count() == 2 * N_ITEMS


def test_starting_a_project_run_refuses_what_the_rules_refuse(world, fake):
    start(world, fake, name="once")
    with pytest.raises(ProjectJudgeError, match="already exists"):
        start(world, fake, name="once")
    with pytest.raises(ProjectJudgeError, match="cannot judge"):
        start(world, fake, name="other", scoring="rewardbench2")
    with pytest.raises(ProjectJudgeError, match="shape"):  # judges items, none of them here
        start(world, fake, name="other", scoring="mmrb2")
    with pytest.raises(ProjectJudgeError, match="Concurrency"):
        start(world, fake, name="third", concurrency=0)
    other = make_project(slug="other")
    with pytest.raises(ProjectJudgeError, match="another project"):
        start_project_judge_run(
            project=other,
            endpoint=JudgeRun.objects.get().endpoint,
            name="x",
            concurrency=1,
            user=None,
            enqueue=False,
        )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[[A]] Confidence: 0.8", 0.8),
        ("[[B]]\nconfidence = 75%", 0.75),
        ("Confidence level: 7/10 [[A]]", 0.7),
        ("Confidence: 85", 0.85),
        ("[[A]]", None),
        ("Confidence: 250", None),
    ],
)
def test_a_stated_confidence_is_read_as_a_probability(text, expected):
    got = confidence_of(text)
    assert got == (pytest.approx(expected) if expected is not None else None)


def test_annotators_never_see_the_judges_votes(world, fake, client):
    run_judge(run_id=start(world, fake).pk)
    annotator = make_member(world.project)
    item = world.items[1]
    assignment = make_assignment(item, annotator)
    client.force_login(annotator)
    page = client.get(reverse("work_item", args=[assignment.pk])).content.decode()
    api = APIClient()
    api.force_authenticate(annotator)
    detail = api.get(f"/api/v1/assignments/{assignment.pk}/").content.decode()
    for text in (page, detail):
        assert MODEL not in text and "judge-on-project" not in text
        assert "Confidence: 90%" not in text and "read carefully" not in text
    # Nor the pages or endpoints that show them.
    assert client.get(reverse("calibration", args=[world.project.slug])).status_code == 403
    assert api.get(f"/api/v1/projects/{world.project.slug}/calibration/").status_code == 403
    assert api.get(f"/api/v1/projects/{world.project.slug}/judge-runs/").status_code == 403


def test_curator_judges_the_project_from_the_page_and_reads_the_report(
    world, fake, client, django_capture_on_commit_callbacks
):
    world.endpoint(fake)
    client.force_login(world.curator)
    url = reverse("calibration", args=[world.project.slug])
    page = client.get(url).content.decode()
    assert "Judge this project" in page and "No judge votes yet" in page
    endpoint = world.project.judge_endpoints.get()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("project_judge_run_new", args=[world.project.slug]),
            {"endpoint": endpoint.pk, "name": "page run", "scoring": "mrb", "concurrency": "2"},
        )
    run = JudgeRun.objects.get(project=world.project)
    assert response.status_code == 302
    assert response["Location"] == reverse("judge_run", args=[world.project.slug, run.pk])
    assert run.status == JudgeRunStatus.COMPLETE
    detail = client.get(response["Location"]).content.decode()
    assert "Its calibration report" in detail
    page = client.get(url).content.decode()
    assert "page run" in page and "All domains" in page and "Position consistency" in page
    assert "83.3%" in page  # position consistency: 20 of 24 items
    bad = client.post(
        reverse("project_judge_run_new", args=[world.project.slug]),
        {"endpoint": endpoint.pk, "name": "page run", "scoring": "mrb", "concurrency": "2"},
    )
    assert bad.status_code == 400 and "already exists" in bad.content.decode()


def test_the_api_starts_a_project_run_and_reports_its_calibration(
    world, fake, django_capture_on_commit_callbacks
):
    endpoint = world.endpoint(fake)
    api = APIClient()
    api.force_authenticate(world.curator)
    base = f"/api/v1/projects/{world.project.slug}/"
    with django_capture_on_commit_callbacks(execute=True):
        started = api.post(base + "judge-runs/", {"endpoint": endpoint.pk, "name": "api run"})
    assert started.status_code == 202, started.content
    assert started.json()["project_items"] is True and started.json()["release"] is None
    listed = api.get(base + "judge-runs/").json()
    assert [r["name"] for r in listed["results"]] == ["api run"]
    run = api.get(base + f"judge-runs/{started.json()['id']}/").json()
    assert run["status"] == "complete"
    body = api.get(base + "calibration/").json()
    assert body["computed_at"] and body["computing"] is False and body["votes_since"] == 0
    assert body["n_votes"] == 3 * N_ITEMS
    (report,) = body["runs"]
    assert report["run"]["name"] == "api run"
    overall = report["rows"][0]
    assert overall["domain"] is None and overall["n_votes"] == 2 * N_ITEMS
    assert overall["kappa"] is not None and overall["verdict"]
    refused = api.post(base + "judge-runs/", {"endpoint": endpoint.pk, "name": "api run"})
    assert refused.status_code == 400
