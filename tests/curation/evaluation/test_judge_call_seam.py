"""The judge-call seam (issue 34's runners; curation.benchmarks.base
OptionalMembers): a toy benchmark, registered here and nowhere else, with
three calls per record (`judge_calls`), a request per call whose "position"
is drawn from the run's seed (`judge_call_request`) and a retry rule
(`judge_unparsed`, `judge_retries`), run through the judge runner against
the fake OpenAI server."""

from __future__ import annotations

import json
import random

import pytest

from curation.benchmarks import registry
from curation.benchmarks.base import Scored, Upload
from curation.evaluation import judge_calls, judge_client, judge_runs
from curation.evaluation.judge_runs import run_judge, start_judge_run
from curation.models import JudgeOutput, JudgeRun, JudgeRunStatus
from tests.curation.evaluation.fake_openai import FakeJudge
from tests.curation.evaluation.test_judge_runner import API_KEY, MODEL, make_endpoint
from tests.curation.releases.test_releases import built, make_release_project

pytestmark = pytest.mark.django_db

CALLS = ("run1", "run2", "perm-three")
RETRIES = 2


def position(seed: int, record_id: str, call: str) -> int:
    return random.Random(f"{seed}:{record_id}:{call}").randrange(1000)


class ToyCalls:
    """The pair layout's records (borrowed from the benchmark that releases
    them), judged three times each; an answer without "[[ok]]" is unparsed."""

    key = "toycalls"
    title = "Toy calls"
    judge_label = "toy"
    judge_both_orders = False
    judge_retries = RETRIES

    def _pairs(self):
        return registry.get("mrb")

    def serves(self, domains):
        return False

    def in_release(self, release):
        return self._pairs().in_release(release)

    def missing_message(self, release):
        return "none"

    def judge_item_count(self, release):
        raise AssertionError("a benchmark with judge_calls is counted by its calls")

    def judge_records(self, release):
        return self._pairs().judge_records(release)

    def judge_request(self, *args, **kwargs):
        raise AssertionError("judge_call_request is used instead")

    def judge_calls(self, record, seed, *, both_orders):
        return list(CALLS)

    def judge_call_request(self, record, read_image, endpoint, *, call, seed):
        text = json.dumps(
            {"id": record["ID"], "call": call, "pos": position(seed, record["ID"], call)}
        )
        return {"model": endpoint.model, "messages": [{"role": "user", "content": text}],
                "max_tokens": endpoint.max_tokens}  # fmt: skip

    def judge_unparsed(self, output):
        return "[[ok]]" not in output

    def judge_predictions(self, outputs, records, run):
        lines = [
            {"id": i, "call": c, "ok": "[[ok]]" in text} for (i, c), text in sorted(outputs.items())
        ]
        return Upload(predictions=json.dumps(lines).encode(), filename=f"run-{run.pk}.json")

    def score(self, release, upload):
        lines = json.loads(upload.predictions)
        return Scored(
            report={"toycalls": lines},
            accuracy=sum(line["ok"] for line in lines) / len(lines),
            files={".json": upload.predictions},
            store_items=lambda evaluation: None,
        )


class FakeCalls(FakeJudge):
    """Checks that each request's position is the one the run's seed gives."""

    seed: int | None = None

    def _check(self, payload):
        asked = json.loads(payload["messages"][0]["content"])
        assert asked["pos"] == position(self.seed, asked["id"], asked["call"]), "position"
        with self.lock:
            self.bodies.setdefault((asked["id"], asked["call"]), []).append(asked)
        return asked["id"], asked["call"], "ok"


@pytest.fixture
def toy(release):  # registered once the release is built: it has no files of its own
    benchmark = ToyCalls()
    registry.register(benchmark)
    yield benchmark
    registry.unregister(benchmark.key)


@pytest.fixture
def release(tmp_path, settings):
    settings.JUDGE_BACKOFF_BASE = 0.01
    settings.JUDGE_BACKOFF_MAX = 0.05
    settings.JUDGE_MAX_RETRIES = 1
    settings.JUDGE_HEARTBEAT_SECONDS = 0.2
    return built(make_release_project(tmp_path, slug="calls"))


@pytest.fixture
def fake():
    with FakeCalls(api_key=API_KEY, model=MODEL, records=[]) as server:
        server.bodies = {}
        yield server
    assert server.problems == []


def start(release, fake, name="toy run") -> JudgeRun:
    run = start_judge_run(
        release=release, endpoint=make_endpoint(release, fake, name=name), name=name,
        swapped=False, concurrency=2, user=None, enqueue=False, scoring="toycalls",
    )  # fmt: skip
    fake.seed = run.seed
    return run


def test_every_call_is_sent_once_and_stored_under_its_key(toy, release, fake):
    records = toy.judge_records(release)
    run = start(release, fake)
    assert 0 <= run.seed < 2**53 and run.progress_total == 3 * len(records)
    run = run_judge(run_id=run.pk)
    assert run.status == JudgeRunStatus.COMPLETE, run.error
    expected = {(r["ID"], c) for r in records for c in CALLS}
    assert set(fake.requests) == expected and set(fake.requests.values()) == {1}
    stored = set(JudgeOutput.objects.filter(run=run).values_list("external_id", "order"))
    assert stored == expected
    assert run.progress_done == run.progress_total == len(expected)
    # judge_predictions got the answers keyed by (ID, call key).
    lines = run.evaluation.report["toycalls"]
    assert {(line["id"], line["call"]) for line in lines} == expected
    assert run.evaluation.accuracy == 1.0


def test_resume_sends_only_the_missing_calls(toy, release, fake):
    records = toy.judge_records(release)
    run = start(release, fake)
    # As if a crash had happened after these answers were stored.
    done = {
        (records[0]["ID"], "run1"),
        (records[0]["ID"], "perm-three"),
        (records[1]["ID"], "run2"),
    }
    for ext_id, call in done:
        JudgeOutput.objects.create(run=run, external_id=ext_id, order=call, output="[[ok]] before")
    run = run_judge(run_id=run.pk)
    assert run.status == JudgeRunStatus.COMPLETE, run.error
    every = {(r["ID"], c) for r in records for c in CALLS}
    assert set(fake.requests) == every - done
    assert JudgeOutput.objects.get(run=run, external_id=records[1]["ID"], order="run2").output == (
        "[[ok]] before"
    )


def test_an_unparsed_answer_is_asked_again_up_to_the_limit(toy, release, fake):
    records = toy.judge_records(release)
    never, once = records[0]["ID"], records[1]["ID"]

    def decide(ext_id, call, right):
        if ext_id == never and call == "run1":
            return "no"  # unparsed every time
        if ext_id == once and call == "run2":
            return "ok" if fake.answered[(ext_id, call)] >= 1 else "no"  # parsed the 2nd time
        return right

    fake.decide = decide
    run = run_judge(run_id=start(release, fake).pk)
    assert run.status == JudgeRunStatus.COMPLETE, run.error
    assert fake.requests[(never, "run1")] == 1 + RETRIES
    assert fake.requests[(once, "run2")] == 2
    assert fake.requests[(never, "run2")] == 1
    last = JudgeOutput.objects.get(run=run, external_id=never, order="run1")
    assert "[[no]]" in last.output and last.attempts == 1 + RETRIES and last.error == ""
    assert "[[ok]]" in JudgeOutput.objects.get(run=run, external_id=once, order="run2").output
    assert run.n_errors == 0  # an unparsed answer is the judge's, not a failed request
    assert run.evaluation.accuracy == pytest.approx(1 - 1 / (3 * len(records)))


def test_the_seed_makes_the_requests_reproducible(toy, release, fake):
    records = toy.judge_records(release)
    first = start(release, fake, name="one")
    second = start(release, fake, name="two")
    second.seed = first.seed
    endpoint = judge_client.Endpoint(base_url=fake.base_url, model=MODEL)

    def bodies(run):
        return [judge_runs.request_body(run, r, None, endpoint, c) for r in records for c in CALLS]

    assert bodies(first) == bodies(second)
    second.seed = first.seed + 1
    assert bodies(first) != bodies(second)
    # What the fake received is what the seed gives (it checks every position).
    fake.seed = first.seed
    run = run_judge(run_id=first.pk)
    assert run.status == JudgeRunStatus.COMPLETE and fake.problems == []
    got = {k: v[0]["pos"] for k, v in fake.bodies.items()}
    assert got == {(r["ID"], c): position(first.seed, r["ID"], c) for r in records for c in CALLS}


def test_a_benchmark_without_the_seam_keeps_its_passes(release):
    class Plain:
        key = "plain"

    assert judge_calls.calls_for(Plain(), {"ID": "x"}, 1, False) == ["original"]
    assert judge_calls.calls_for(Plain(), {"ID": "x"}, 1, True) == ["original", "swapped"]
    assert judge_calls.retries_of(Plain()) == 0


def test_call_keys_too_long_or_repeated_are_refused(toy):
    class Bad(ToyCalls):
        def judge_calls(self, record, seed, *, both_orders):
            return self.keys

    bad = Bad()
    for keys in (["x" * 17], ["a", "a"], [""]):
        bad.keys = keys
        with pytest.raises(judge_calls.BadCallKeys, match="1 to 16 characters and unique"):
            judge_calls.calls_for(bad, {"ID": "r"}, 1, False)
