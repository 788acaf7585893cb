"""The judge runner against a fake OpenAI-compatible server on 127.0.0.1:
request shape, retries, the concurrency bound, resuming after a crash, the
swapped pass, cancelling, and the evaluation it produces."""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone

from curation.benchmarks import registry
from curation.benchmarks.mrb import judge as mrb_judge
from curation.benchmarks.mrb import scoring, scoring_input, scoring_output
from curation.evaluation import judge_client, judge_runs
from curation.evaluation.judge_runs import (
    cancel_judge_run,
    resume_judge_run,
    run_judge,
    run_outputs,
    save_endpoint,
    start_judge_run,
)
from curation.evaluation.key_encryption import UndecryptableKey
from curation.models import JudgeEndpoint, JudgeOutput, JudgeRun, JudgeRunStatus
from tests.curation.evaluation.fake_openai import FakeJudge
from tests.curation.releases.test_releases import built, make_release_project
from tests.factories import make_member

pytestmark = pytest.mark.django_db

API_KEY = "sk-test-very-secret-4f9a1c"
MODEL = "fake-judge-1"


@pytest.fixture(autouse=True)
def _fast(settings):
    """Short backoff so retries cost milliseconds."""
    settings.JUDGE_BACKOFF_BASE = 0.01
    settings.JUDGE_BACKOFF_MAX = 0.05
    settings.JUDGE_MAX_RETRIES = 3
    settings.JUDGE_HEARTBEAT_SECONDS = 0.2


@pytest.fixture
def release(tmp_path):
    return built(make_release_project(tmp_path, slug="jr"))


@pytest.fixture
def records(release):
    return scoring_input.load_release_records(Path(settings.MEDIA_ROOT) / release.folder)


@pytest.fixture
def fake(records):
    with FakeJudge(api_key=API_KEY, model=MODEL, records=records) as server:
        yield server
    assert server.problems == []


def make_endpoint(release, fake, *, key=API_KEY, timeout=5.0, name="fake") -> JudgeEndpoint:
    admin = make_member(release.project, role="admin")
    return save_endpoint(
        project=release.project,
        actor=admin,
        name=name,
        base_url=fake.base_url,
        model=MODEL,
        temperature=0.0,
        max_tokens=256,
        timeout_seconds=timeout,
        api_key=key,
    )


def start(release, endpoint, *, name="fake judge", swapped=False, concurrency=2) -> JudgeRun:
    return start_judge_run(
        release=release,
        endpoint=endpoint,
        name=name,
        swapped=swapped,
        concurrency=concurrency,
        user=None,
        enqueue=False,
    )


def expected_report(run, records):
    """curation.benchmarks.mrb.scoring over the run's stored outputs, built here independently."""
    lines = {order: [] for order in run.passes}
    outputs = {(o.external_id, o.order): o.output for o in JudgeOutput.objects.filter(run=run)}
    for order in run.passes:
        for r in records:
            lines[order].append(json.dumps({"ID": r["ID"], "output": outputs[(r["ID"], order)]}))
    parsed = scoring_input.parse_predictions(lines["original"], filename="original")
    if run.swapped:
        parsed += scoring_input.parse_predictions(lines["swapped"], filename="s", order="swapped")
    return scoring.score(records, parsed)


def test_a_run_judges_every_item_once_and_becomes_an_evaluation(release, records, fake):
    run = run_judge(run_id=start(release, make_endpoint(release, fake)).pk)
    assert run.status == JudgeRunStatus.COMPLETE, run.error
    assert run.progress_done == run.progress_total == len(records)
    assert set(fake.requests) == {(r["ID"], "original") for r in records}
    assert set(fake.requests.values()) == {1}
    evaluation = run.evaluation
    assert evaluation.name == "fake judge" and evaluation.release == release
    assert evaluation.accuracy == 1.0
    assert evaluation.report["official"]["random_fallbacks"] == 0
    # Stored raw outputs are the judge's text, stripped as the official script does.
    output = JudgeOutput.objects.get(run=run, external_id=records[0]["ID"])
    assert output.output.startswith("Both answers") and output.output.endswith("]]")
    # The predictions file stored with the evaluation is the upload format.
    stored = (Path(settings.MEDIA_ROOT) / evaluation.predictions).read_text().splitlines()
    assert [json.loads(line)["ID"] for line in stored] == [r["ID"] for r in records]


def test_evaluation_accuracy_equals_scoring_over_the_same_outputs(release, records, fake):
    wrong = {records[1]["ID"], records[4]["ID"], records[7]["ID"]}
    fake.decide = lambda ext_id, order, right: (
        ("B" if right == "A" else "A") if ext_id in wrong else right
    )
    fake.plan = {records[2]["ID"]: ["bad_request"]}  # a 4xx: no retry, random fallback
    # One at a time, so the original-order request of that ID comes first and gets the 400.
    endpoint = make_endpoint(release, fake)
    run = run_judge(run_id=start(release, endpoint, swapped=True, concurrency=1).pk)
    assert run.status == JudgeRunStatus.COMPLETE and run.n_errors == 1
    failed = JudgeOutput.objects.exclude(error="").get(run=run)
    assert (failed.external_id, failed.order) == (records[2]["ID"], "original")
    assert failed.output == judge_client.OFFICIAL_FAILURE_OUTPUT and "HTTP 400" in failed.error
    expected = expected_report(run, records)
    assert run.evaluation.accuracy == expected.group("all").accuracy
    assert run.evaluation.report == scoring_output.report_as_dict(expected)
    assert run.evaluation.report["official"]["random_fallbacks"] == 1
    # Same numbers as uploading the files the benchmark builds from the answers.
    upload = registry.get(run.scoring).judge_predictions(run_outputs(run), records, run)
    assert upload.predictions.decode().count("\n") == len(records)
    assert upload.swapped is not None


def test_swapped_pass_sends_output2_as_assistant_a(release, records, fake):
    fake.decide = FakeJudge.always_a  # position-biased: always the first shown
    run = run_judge(run_id=start(release, make_endpoint(release, fake), swapped=True).pk)
    assert run.status == JudgeRunStatus.COMPLETE
    assert set(fake.requests) == {(r["ID"], o) for r in records for o in ("original", "swapped")}
    assert run.progress_total == 2 * len(records)
    consistency = run.evaluation.report["extras"]["consistency"]
    assert consistency["rate"] == 0.0 and consistency["pairs"] == len(records)
    first_better = sum(r["Better"] == "Output1" for r in records)
    assert run.evaluation.accuracy == first_better / len(records)
    assert run.evaluation.swapped_predictions


def test_timeouts_dropped_connections_429_and_500_are_retried(release, records, fake):
    ids = [r["ID"] for r in records]
    fake.plan = {ids[0]: ["429"], ids[1]: ["500", "500"], ids[2]: ["drop"], ids[3]: ["slow"]}
    endpoint = make_endpoint(release, fake, timeout=0.6)
    run = run_judge(run_id=start(release, endpoint, concurrency=4).pk)
    assert run.status == JudgeRunStatus.COMPLETE and run.n_errors == 0
    counts = {i: fake.requests[(i, "original")] for i in ids[:5]}
    assert counts == {ids[0]: 2, ids[1]: 3, ids[2]: 2, ids[3]: 2, ids[4]: 1}
    attempts = dict(JudgeOutput.objects.filter(run=run).values_list("external_id", "attempts"))
    assert [attempts[i] for i in ids[:5]] == [2, 3, 2, 2, 1]
    # Retry-After: 1 is honoured although the backoff alone would be ~10 ms.
    first, second = fake.times[(ids[0], "original")]
    assert second - first >= 0.9
    assert run.evaluation.accuracy == 1.0


def test_an_item_that_keeps_failing_gets_the_random_fallback(release, records, fake, settings):
    settings.JUDGE_MAX_RETRIES = 2
    fake.plan = {records[0]["ID"]: ["500"] * 10}
    run = run_judge(run_id=start(release, make_endpoint(release, fake)).pk)
    assert run.status == JudgeRunStatus.COMPLETE and run.n_errors == 1
    assert fake.requests[(records[0]["ID"], "original")] == 3  # first try + 2 retries
    row = JudgeOutput.objects.get(run=run, external_id=records[0]["ID"])
    assert row.error.startswith("after 3 attempts: HTTP 500") and row.output == "None"
    assert run.evaluation.report["official"]["random_fallbacks"] == 1
    assert run.evaluation.report["extras"]["coverage"]["missing"] == []


@pytest.mark.parametrize("concurrency", [1, 3])
def test_requests_in_flight_never_exceed_the_concurrency(release, records, fake, concurrency):
    fake.answer_delay = 0.1  # long enough for the requests in flight to overlap
    run = run_judge(run_id=start(release, make_endpoint(release, fake), concurrency=concurrency).pk)
    assert run.status == JudgeRunStatus.COMPLETE
    assert fake.max_in_flight == concurrency


def test_a_failing_endpoint_stops_the_run_and_resuming_sends_only_what_is_missing(
    release, records, fake, settings
):
    settings.JUDGE_MAX_RETRIES = 1
    settings.JUDGE_MAX_CONSECUTIVE_ERRORS = 3
    ids = [r["ID"] for r in records]
    fake.plan = {i: ["500"] * 50 for i in ids[5:]}  # the endpoint dies after five items
    run = run_judge(run_id=start(release, make_endpoint(release, fake), concurrency=1).pk)
    assert run.status == JudgeRunStatus.FAILED
    assert "3 requests in a row failed" in run.error and "HTTP 500" in run.error
    assert run.evaluation is None
    assert set(
        JudgeOutput.objects.filter(run=run, error="").values_list("external_id", flat=True)
    ) == set(ids[:5])
    fake.plan = {}  # the endpoint recovers
    assert resume_judge_run(run=run, enqueue=False)
    run = run_judge(run_id=run.pk)
    assert run.status == JudgeRunStatus.COMPLETE and run.n_errors == 0
    assert all(fake.requests[(i, "original")] == 1 for i in ids[:5])  # not sent again
    assert all(fake.answered[(i, "original")] == 1 for i in ids)
    assert run.evaluation.accuracy == 1.0


class WorkerKilled(BaseException):
    """Stands in for a worker process dying (not an Exception: nothing marks
    the run failed)."""


def test_a_run_whose_worker_died_is_taken_over_without_resending(
    release, records, fake, monkeypatch
):
    real_store = judge_runs._store
    stored = []

    def dying_store(*args):
        if len(stored) == 6:
            raise WorkerKilled
        real_store(*args)
        stored.append(args[1])

    monkeypatch.setattr(judge_runs, "_store", dying_store)
    run = start(release, make_endpoint(release, fake), concurrency=1)
    with pytest.raises(WorkerKilled):
        run_judge(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == JudgeRunStatus.RUNNING and run.progress_done == 6
    monkeypatch.setattr(judge_runs, "_store", real_store)
    # A redelivered message while the heartbeat is fresh leaves the run alone
    # (it could be a live worker past the broker's visibility timeout).
    assert run_judge(run_id=run.pk, take_over=True).progress_done == 6
    assert not resume_judge_run(run=run, enqueue=False)
    JudgeRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    run = run_judge(run_id=run.pk, take_over=True)
    assert run.status == JudgeRunStatus.COMPLETE
    for i, r in enumerate(records):
        # The seventh was in flight when the worker died: its answer was lost.
        assert fake.requests[(r["ID"], "original")] == (2 if i == 6 else 1)


def test_the_background_sweep_restarts_pending_and_dead_runs(release, records, fake):
    from curation.tasks import requeue_unsent_work

    endpoint = make_endpoint(release, fake)
    lost = start(release, endpoint, name="message lost")  # never queued
    dead = start(release, endpoint, name="worker died")
    now = timezone.now()
    JudgeRun.objects.filter(pk=dead.pk).update(
        status=JudgeRunStatus.RUNNING, started_at=now, heartbeat_at=now
    )
    requeue_unsent_work()  # eager: tasks run inline
    assert JudgeRun.objects.get(pk=lost.pk).status == JudgeRunStatus.COMPLETE
    assert JudgeRun.objects.get(pk=dead.pk).status == JudgeRunStatus.RUNNING  # alive, left alone
    JudgeRun.objects.filter(pk=dead.pk).update(heartbeat_at=now - timedelta(hours=1))
    requeue_unsent_work()
    assert JudgeRun.objects.get(pk=dead.pk).status == JudgeRunStatus.COMPLETE


def test_an_error_in_the_loop_fails_the_run_and_resume_continues(
    release, records, fake, monkeypatch
):
    real_store = judge_runs._store
    calls = []

    def flaky_store(*args):
        calls.append(1)
        if len(calls) == 4:
            raise RuntimeError("database went away")
        real_store(*args)

    monkeypatch.setattr(judge_runs, "_store", flaky_store)
    run = start(release, make_endpoint(release, fake), concurrency=1)
    with pytest.raises(RuntimeError):
        run_judge(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == JudgeRunStatus.FAILED and "database went away" in run.error
    assert resume_judge_run(run=run, enqueue=False)
    run = run_judge(run_id=run.pk)
    assert run.status == JudgeRunStatus.COMPLETE
    assert sum(fake.requests.values()) == len(records) + 1  # only the lost one again


def test_cancelling_stops_sending_and_resume_finishes(release, records, fake, monkeypatch):
    real_store = judge_runs._store
    run = start(release, make_endpoint(release, fake), concurrency=1)

    def store_then_cancel(*args):
        real_store(*args)
        if JudgeOutput.objects.filter(run=run).count() == 3:
            assert cancel_judge_run(run=run)

    monkeypatch.setattr(judge_runs, "_store", store_then_cancel)
    run = run_judge(run_id=run.pk)
    assert run.status == JudgeRunStatus.CANCELLED and run.evaluation is None
    assert sum(fake.requests.values()) <= 4
    monkeypatch.setattr(judge_runs, "_store", real_store)
    assert resume_judge_run(run=run, enqueue=False)
    run = run_judge(run_id=run.pk)
    assert run.status == JudgeRunStatus.COMPLETE
    assert set(fake.requests.values()) == {1}


def test_a_refused_key_fails_the_run_without_revealing_it(release, records, fake):
    endpoint = make_endpoint(release, fake, key="sk-wrong-key-0000-9999")
    run = run_judge(run_id=start(release, endpoint).pk)
    assert run.status == JudgeRunStatus.FAILED
    assert "HTTP 401" in run.error and "[redacted]" in run.error
    assert "sk-wrong-key-0000-9999" not in run.error
    assert sum(fake.requests.values()) <= 2  # stopped at once, not item by item


def test_redirects_are_not_followed_so_the_key_goes_nowhere_else(release, fake):
    fake.always = "redirect"
    run = run_judge(run_id=start(release, make_endpoint(release, fake)).pk)
    assert run.status == JudgeRunStatus.FAILED and "HTTP 307" in run.error
    # The fake records any request to another path as a problem (checked on exit).
    endpoint = judge_runs._client_endpoint(JudgeRun.objects.get(pk=run.pk))
    assert API_KEY not in repr(endpoint) and API_KEY not in str(endpoint)


def test_a_run_refuses_an_endpoint_changed_since_it_started(release, fake):
    endpoint = make_endpoint(release, fake)
    run = start(release, endpoint)
    JudgeEndpoint.objects.filter(pk=endpoint.pk).update(base_url="http://127.0.0.1:9/v1")
    run = run_judge(run_id=run.pk)
    assert run.status == JudgeRunStatus.FAILED and "changed since this run started" in run.error
    assert sum(fake.requests.values()) == 0


def test_run_names_are_unique_on_the_leaderboard(release, fake):
    endpoint = make_endpoint(release, fake)
    run_judge(run_id=start(release, endpoint, name="one").pk)
    with pytest.raises(judge_runs.JudgeRunError, match="already on this release"):
        start(release, endpoint, name="one")
    start(release, endpoint, name="two")
    with pytest.raises(judge_runs.JudgeRunError, match="already exists"):
        start(release, endpoint, name="two")
    with pytest.raises(judge_runs.JudgeRunError, match="between 1 and"):
        start(release, endpoint, name="three", concurrency=999)


def test_task_runs_the_judge(release, fake, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        run = start_judge_run(
            release=release,
            endpoint=make_endpoint(release, fake),
            name="via celery",
            swapped=False,
            concurrency=2,
            user=None,
        )
    run.refresh_from_db()
    assert run.status == JudgeRunStatus.COMPLETE and run.evaluation.accuracy == 1.0


# --- Keys at rest ---------------------------------------------------------------------


def test_api_keys_are_encrypted_at_rest_and_survive_key_rotation(release, fake, settings):
    endpoint = make_endpoint(release, fake)
    endpoint.refresh_from_db()
    assert API_KEY not in endpoint.api_key_encrypted and endpoint.api_key() == API_KEY
    old = settings.SECRET_KEY
    settings.SECRET_KEY, settings.SECRET_KEY_FALLBACKS = "a-new-secret-" * 5, [old]
    assert endpoint.api_key() == API_KEY
    settings.SECRET_KEY_FALLBACKS = []
    with pytest.raises(UndecryptableKey):
        endpoint.api_key()
    run = run_judge(run_id=start(release, endpoint).pk)
    assert run.status == JudgeRunStatus.FAILED and "enter it again" in run.error


def test_audit_events_say_whether_a_key_is_set_never_the_key(release, fake):
    from curation.models import AuditEvent

    endpoint = make_endpoint(release, fake)
    save_endpoint(
        project=release.project,
        actor=None,
        endpoint=endpoint,
        name="fake",
        base_url=fake.base_url,
        model=MODEL,
        temperature=0.5,
        max_tokens=100,
        timeout_seconds=3,
        clear_api_key=True,
    )
    events = list(AuditEvent.objects.filter(action__startswith="judge_endpoint"))
    assert [e.after["api_key_change"] for e in events[::-1]] == ["set", "cleared"]
    assert all(API_KEY not in json.dumps([e.before, e.after]) for e in events)


# --- The client on its own --------------------------------------------------------------


def test_the_prompt_is_the_benchmarks_template_with_output1_as_a():
    record = {"Text": "Q?", "Output1": "one", "Output2": "two"}
    prompt = mrb_judge.build_prompt(record, swapped=False)
    assert prompt.endswith(
        'output your final verdict by strictly following this format: "[[A]]" if assistant A '
        'is better, "[[B]]" if assistant B is better.\n\n[User Question]\nQ?\n\n'
        "[The Start of Assistant A's Answer]\none\n[The End of Assistant A's Answer]\n\n"
        "[The Start of Assistant B's Answer]\ntwo\n[The End of Assistant B's Answer]"
    )
    swapped = mrb_judge.build_prompt(record, swapped=True)
    assert "Answer]\ntwo\n[The End of Assistant A" in swapped


def test_retry_after_reads_seconds_and_http_dates():
    assert judge_client.retry_after_seconds("3") == 3.0
    assert judge_client.retry_after_seconds("0.5") == 0.5
    assert judge_client.retry_after_seconds(None) is None
    assert judge_client.retry_after_seconds("soon") is None
    date = "Wed, 21 Oct 2015 07:28:10 GMT"
    now = 1445412480.0  # 07:28:00
    assert judge_client.retry_after_seconds(date, now=now) == pytest.approx(10.0)


def test_stop_interrupts_a_retry_wait(release, records, fake):
    fake.always = "500"
    endpoint = judge_client.Endpoint(
        base_url=fake.base_url, model=MODEL, api_key=API_KEY, allowed_networks=("127.0.0.1/32",)
    )
    image = (Path(settings.MEDIA_ROOT) / release.folder / records[0]["Image"]).read_bytes()
    body = mrb_judge.request_body(records[0], image, endpoint, swapped=False)
    stop = threading.Event()
    stop.set()
    policy = judge_client.RetryPolicy(max_retries=5, backoff_base=30)
    with pytest.raises(judge_client.Stopped):
        judge_client.judge(body, endpoint, policy, stop=stop)
    assert fake.requests[(records[0]["ID"], "original")] == 1


def test_the_shell_command_runs_and_resumes_a_judge(release, records, fake, settings):
    from io import StringIO

    from django.core.management import CommandError, call_command

    settings.JUDGE_MAX_RETRIES = 0
    settings.JUDGE_MAX_CONSECUTIVE_ERRORS = 2
    make_endpoint(release, fake)
    fake.plan = {r["ID"]: ["500"] for r in records[3:]}  # dies after three items
    args = ["jr", "v1.0", "--endpoint", "fake", "--name", "shell", "--concurrency", "1"]
    with pytest.raises(CommandError, match="in a row failed"):
        call_command("judge_release", *args, stdout=StringIO())
    fake.plan = {}  # the endpoint recovers
    out = StringIO()
    call_command("judge_release", *args, stdout=out)
    assert "shell: complete" in out.getvalue() and "accuracy: 100.00%" in out.getvalue()
    assert all(fake.answered[(r["ID"], "original")] == 1 for r in records)
    assert sum(fake.requests[(r["ID"], "original")] for r in records[:3]) == 3
    with pytest.raises(CommandError, match="already complete"):
        call_command("judge_release", *args, stdout=StringIO())
