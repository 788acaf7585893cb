"""The Python client's judges, release filters, mixes, calibration, agreement
and label quality against a live server (issues 33 to 36): each method's
answer checked against what the server stored or computes itself."""

import json
from pathlib import Path

import pytest
from django.conf import settings
from django.db import transaction
from rest_framework.authtoken.models import Token
from triplet_client import (
    Client,
    Conflict,
    JudgeRunFailed,
    PermissionDenied,
    WaitTimeout,
)

from annotate.models import Item, Judgement
from curation.api.calibration import CalibrationRunSerializer
from curation.benchmarks.mrb import scoring_input
from curation.evaluation.calibration_report import calibration_for
from curation.models import JudgeRun, Mix, Verdict
from curation.quality.views import suspected_errors
from curation.verdicts.service import update_verdict
from tests.curation.evaluation.fake_openai import FakeJudge
from tests.curation.evaluation.test_project_judge_runs import N_ITEMS, World
from tests.curation.releases.test_releases import built, make_release_project
from tests.factories import make_member

pytestmark = pytest.mark.django_db(transaction=True)

API_KEY = "sk-client-test-5e2b"
MODEL = "fake-judge-for-the-client"


def client_for(live_server, user) -> Client:
    return Client(live_server.url, token=Token.objects.get_or_create(user=user)[0].key)


@pytest.fixture(autouse=True)
def _fast(settings):
    settings.JUDGE_BACKOFF_BASE = 0.01
    settings.JUDGE_BACKOFF_MAX = 0.05
    settings.JUDGE_MAX_RETRIES = 1
    settings.JUDGE_HEARTBEAT_SECONDS = 0.2
    settings.JUDGE_ALLOWED_NETWORKS = ["127.0.0.1/32"]  # the fake judge's


@pytest.fixture
def release(tmp_path):
    return built(make_release_project(tmp_path, slug="jcl"))


@pytest.fixture
def records(release):
    return scoring_input.load_release_records(Path(settings.MEDIA_ROOT) / release.folder)


@pytest.fixture
def fake(records):
    with FakeJudge(api_key=API_KEY, model=MODEL, records=records) as server:
        yield server
    assert server.problems == []


def test_judge_runs_on_a_release_feed_the_leaderboard_and_the_release_filters(
    live_server, release, records, fake, monkeypatch, tmp_path
):
    project = release.project
    admin = client_for(live_server, make_member(project, role="admin"))
    curator = client_for(live_server, make_member(project, role="curator"))
    annotator = client_for(live_server, make_member(project))

    endpoint = admin.add_judge_endpoint("jcl", "fake", fake.base_url, MODEL, api_key=API_KEY)
    assert (endpoint.model, endpoint.has_api_key, endpoint.temperature) == (MODEL, True, None)
    assert [e.id for e in curator.judge_endpoints("jcl")] == [endpoint.id]
    with pytest.raises(PermissionDenied):
        curator.add_judge_endpoint("jcl", "other", fake.base_url, MODEL)

    # The judge is wrong (in the original order) on two items: every other
    # pair is "too easy" for an ensemble of this one judge.
    hard = sorted(r["ID"] for r in records)[:2]
    fake.decide = lambda ext, order, right: (
        ("B" if right == "A" else "A") if ext in hard and order == "original" else right
    )
    with pytest.raises(PermissionDenied):
        annotator.start_judge_run("jcl", endpoint, "judge", release=release)
    run = curator.start_judge_run("jcl", endpoint, "judge-1", release=release, swapped=True)
    seen = []
    done = curator.wait_for_judge_run("jcl", run, on_progress=seen.append, timeout=60)
    assert done.status == "complete" and seen[-1] == done
    assert done.release == release.pk and not done.project_items and done.swapped
    assert done.progress.done == done.progress.total == 2 * len(records)
    assert done.seed == JudgeRun.objects.get(pk=run.id).seed
    entry = curator.evaluation("jcl", release, done.evaluation)
    assert entry.name == "judge-1"
    assert entry.accuracy == pytest.approx((len(records) - len(hard)) / len(records), abs=1e-12)
    assert [r.id for r in curator.judge_runs("jcl", release=release)] == [run.id]
    wrong = list(curator.evaluation_items("jcl", release, entry))  # show="wrong"
    assert sorted(p.external_id for p in wrong) == hard and not any(p.correct for p in wrong)
    assert len(list(curator.evaluation_items("jcl", release, entry, show="all"))) == len(records)
    (seen_by,) = curator.item_predictions("jcl", wrong[0].item_id)
    assert (seen_by.evaluation, seen_by.correct, seen_by.has_swapped) == (entry.id, False, True)
    assert list(curator.judge_runs("jcl")) == []  # none over the project's items

    # Cancel a queued run, wait on it (it failed), resume it to the end.
    monkeypatch.setattr("config.celery.enqueue_on_commit", lambda *a, **k: None)
    queued = curator.start_judge_run("jcl", endpoint, "judge-2", release=release)
    with pytest.raises(WaitTimeout):
        curator.wait_for_judge_run("jcl", queued, poll_seconds=0.05, timeout=0.2)
    with pytest.raises(Conflict):
        curator.resume_judge_run("jcl", queued)  # pending
    assert curator.cancel_judge_run("jcl", queued).status == "cancelled"
    with pytest.raises(JudgeRunFailed) as stopped:
        curator.wait_for_judge_run("jcl", queued, timeout=5)
    assert stopped.value.run.status == "cancelled"
    monkeypatch.undo()
    assert curator.resume_judge_run("jcl", queued).id == queued.id
    assert curator.wait_for_judge_run("jcl", queued, timeout=60).status == "complete"
    with pytest.raises(Conflict):
        curator.cancel_judge_run("jcl", queued)  # complete

    # A release without what the ensemble finds too easy, balance reported.
    cut = curator.create_release("jcl", "v2", too_easy=[entry], balance_report=True)
    assert cut.filters["too_easy"] == {"evaluations": [entry.id], "action": "drop"}
    ready = curator.wait_for_release("jcl", cut, timeout=60)
    assert ready.filter_report["too_easy"]["dropped"] == len(records) - len(hard)
    assert ready.balance_report is not None
    folder = curator.download_release("jcl", ready, tmp_path / "v2")
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["release_filters"] == ready.filter_report
    assert {r["ID"] for r in json.loads((folder / "all_data.json").read_text())} == set(hard)

    # A mix of the first release, built, listed and downloaded.
    mix = curator.create_mix("client-mix", "v1", [{"project": "jcl", "release": "v1.0"}])
    assert mix.sources[0]["project"] == "jcl"
    mixed = curator.wait_for_mix(mix, timeout=60)
    assert mixed.status == "ready" and mixed.sha256 == Mix.objects.get(pk=mix.id).sha256
    assert [m.id for m in curator.mixes()] == [mix.id]
    mix_folder = curator.download_mix(mixed, tmp_path / "mixes")
    assert mix_folder.is_dir() and (mix_folder / "README.md").exists()
    with pytest.raises(Conflict) as taken:
        curator.create_mix("client-mix", "v1", [{"project": "jcl", "release": "v1.0"}])
    assert taken.value.code == "exists"

    # A ready release is neither retried nor (kept IDs) mapped.
    with pytest.raises(Conflict) as retried:
        curator.retry_release("jcl", release.pk)
    assert retried.value.code == "not_retryable"
    with pytest.raises(Conflict) as kept:
        curator.release_id_map("jcl", release.pk)
    assert kept.value.code == "not_rekeyed"

    # Bulk actions from the grid, and the vote mode.
    outcome = curator.bulk_items("jcl", "exclude", [wrong[0].item_id], "broken", category="broken")
    assert outcome.done == 1 and outcome.skipped == {}
    assert Verdict.objects.get(item_id=wrong[0].item_id).status == "excluded"
    assert admin.adaptive("jcl").vote_mode == "fixed"
    changed = admin.set_vote_mode("jcl", "adaptive", base_votes=2, budget=5)
    assert (changed.vote_mode, changed.base_votes, changed.budget) == ("adaptive", 2, 5)
    assert curator.adaptive("jcl").budget == 5
    with pytest.raises(PermissionDenied):
        curator.set_vote_mode("jcl", "fixed")


def test_project_judge_runs_calibration_agreement_and_label_quality(live_server):
    world = World()
    for item in world.items:  # the votes counted and the rule run, as a vote does
        choices = Judgement.objects.filter(assignment__item=item).values_list("choice", flat=True)
        tally = {c: list(choices).count(c) for c in ("1", "2")}
        Item.objects.filter(pk=item.pk).update(votes_1=tally["1"], votes_2=tally["2"])
        item.refresh_from_db()
        Verdict.objects.get_or_create(item=item, project=world.project)
        with transaction.atomic():
            update_verdict(item=item)
    with FakeJudge(api_key=API_KEY, model=MODEL, records=world.records) as fake:
        fake.after_verdict = lambda ext, order: " Confidence: 80%"
        admin = client_for(live_server, world.admin)
        curator = client_for(live_server, world.curator)
        endpoint = admin.add_judge_endpoint("cal", "fake", fake.base_url, MODEL, api_key=API_KEY)
        run = curator.start_judge_run("cal", endpoint, "on-project", concurrency=2)
        assert run.project_items and run.release is None
        done = curator.wait_for_judge_run("cal", run, timeout=60)
    assert fake.problems == []
    assert done.progress.done == 2 * N_ITEMS and done.evaluation is None
    assert [r.id for r in curator.judge_runs("cal")] == [run.id]

    (report,) = curator.calibration("cal")
    (expected,) = CalibrationRunSerializer(calibration_for(world.project), many=True).data
    assert report.run.id == run.id
    assert [r.__dict__ for r in report.rows] == [dict(r) for r in expected["rows"]]
    overall = report.rows[0]
    assert overall.domain is None and overall.n_votes == 2 * N_ITEMS
    assert overall.accuracy == 1.0 and overall.ece == pytest.approx(0.2, abs=1e-9)
    assert curator.recompute_calibration("cal") is True  # queued (and run: eager here)
    with pytest.raises(PermissionDenied):
        client_for(live_server, world.annotators[0]).calibration("cal")

    # Agreement: the intervals computed on request, then not stale.
    before = curator.agreement("cal")
    assert before.intervals_computed_at is None
    refreshed = curator.refresh_agreement("cal", timeout=60, poll_seconds=0.1)
    assert refreshed.intervals_computed_at is not None and not refreshed.intervals_stale
    everything = next(d for d in refreshed.domains if d["domain"] == "all")
    assert (everything["n_items"], everything["n_votes"]) == (N_ITEMS, 3 * N_ITEMS)
    stats = curator.annotator_stats("cal")
    assert sorted(a["votes"] for a in stats.annotators) == [N_ITEMS] * 3

    # Label quality with the judge run as an extra labeller.
    assert curator.label_quality("cal").status == "never"
    quality = curator.refresh_label_quality("cal", judge_runs=[done], timeout=60)
    assert quality.status == "ready" and quality.judge_runs == [run.id]
    assert quality.summary["n_items"] > 0 and len(quality.annotators) == 3
    suspects = list(curator.suspects("cal"))
    expected_suspects = suspected_errors(world.project, {"view": "all"})
    assert [s.item_id for s in suspects] == [q.item_id for q in expected_suspects]
    assert suspects, "the seeded world has suspected labels"
    confirmed = curator.decide_suspect("cal", suspects[0], "confirm", "checked by hand")
    assert (confirmed.item_id, confirmed.provenance) == (suspects[0].item_id, "reviewed")
    with pytest.raises(Conflict) as stale:
        curator.decide_suspect("cal", suspects[0], "overturn", "changed my mind")
    assert stale.value.code == "stale"
