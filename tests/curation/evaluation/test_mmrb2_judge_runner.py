"""The judge runner on an MMRB2 release (issue 24 item 5): every pair is sent
forward (A first) and reverse (B first), the prompt built from its parts
(text as text, images as data URLs) with no ID or model name in it; verdicts
are read into A/B and the run scores with the MMRB2 rules. A fake
OpenAI-compatible server on 127.0.0.1, no network."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest
from django.conf import settings

from curation.benchmarks.mmrb2 import judge as mmrb2_judge
from curation.benchmarks.mmrb2 import scoring as mmrb2_scoring
from curation.benchmarks.mmrb2.evaluation import mmrb2_records, predictions_file
from curation.evaluation.judge_runs import JudgeRunError, run_judge, run_outputs, start_judge_run
from curation.models import JudgeOutput, JudgeRunStatus
from tests.curation.evaluation.fake_openai import FakeJudge
from tests.curation.evaluation.test_judge_runner import API_KEY, make_endpoint
from tests.curation.evaluation.test_mmrb2_evaluation import folder_of, mmrb2_release

pytestmark = pytest.mark.django_db
TASKS = ("t2i", "edit", "interleaved", "reasoning")


@pytest.fixture
def release(tmp_path):
    return mmrb2_release(tmp_path)


@pytest.fixture(autouse=True)
def _fast(settings):
    settings.JUDGE_BACKOFF_BASE = 0.01
    settings.JUDGE_BACKOFF_MAX = 0.05
    settings.JUDGE_MAX_RETRIES = 1
    settings.JUDGE_HEARTBEAT_SECONDS = 0.2


def task_files(release) -> dict[str, list[dict]]:
    root = folder_of(release) / "mmrb2"
    return {t: json.loads((root / f"{t}.json").read_text())["pairs"] for t in TASKS}


class FakeMmrb2Judge(FakeJudge):
    """Recognises a pair and the order from the content list: the parts
    shown after [RESPONSE A:] are one response's, as text and image digests."""

    def __init__(self, *, api_key: str, model: str, tasks: dict[str, list[dict]], root: Path):
        super().__init__(api_key=api_key, model=model, records=[])
        self.root = root
        self.by_content: dict = {}
        self.secrets: set[str] = set()
        self.seen_parts: dict[tuple[str, str], list[tuple[str, str]]] = {}
        for pairs in tasks.values():
            for pair in pairs:
                prompt = self.fingerprint(pair["prompt_content"])
                a = self.fingerprint(pair["response_a"]["response_content"])
                b = self.fingerprint(pair["response_b"]["response_content"])
                self.by_content[(prompt, a, b)] = (pair["id"], "original", pair["chosen"])
                flipped = "B" if pair["chosen"] == "A" else "A"
                self.by_content[(prompt, b, a)] = (pair["id"], "swapped", flipped)
                self.secrets.update(
                    [pair["id"], pair["response_a"]["model_name"], pair["prompt_source"]]
                )
                self.secrets.add(pair["response_b"]["model_name"])

    def fingerprint(self, content) -> tuple:
        out = []
        for kind, value in content:
            if kind == "image":
                data = (self.root / value).read_bytes()
                out.append(("image", hashlib.sha256(data).hexdigest()))
            else:
                out.append(("text", value))
        return tuple(out)

    def _check(self, payload: dict) -> tuple[str, str, str]:
        assert payload["model"] == self.model, f"model {payload['model']!r}"
        (message,) = payload["messages"]
        content = message["content"]
        assert content[0]["type"] == "text" and content[0]["text"].startswith("You are an")
        assert content[1] == {"type": "text", "text": "[ORIGINAL PROMPT TO MODEL:]"}
        sections: list[list] = [[]]
        for part in content[2:]:
            if part["type"] == "text" and part["text"] in ("[RESPONSE A:]", "[RESPONSE B:]"):
                sections.append([])
                continue
            if part["type"] == "image_url":
                url = part["image_url"]["url"]
                assert url.startswith("data:image/jpeg;base64,"), url[:40]
                data = base64.b64decode(url.split(",", 1)[1])
                assert data[:2] == b"\xff\xd8", "not a JPEG"
                sections[-1].append(("image", hashlib.sha256(data).hexdigest()))
            else:
                assert part["type"] == "text"
                sections[-1].append(("text", part["text"]))
                # Labels never reach the judge: no ID, model name or source in a text part.
                assert not any(s in part["text"] for s in self.secrets), part["text"]
        assert len(sections) == 3, "prompt, response A, response B"
        ext_id, order, right = self.by_content[tuple(map(tuple, sections))]
        with self.lock:
            self.seen_parts[(ext_id, order)] = sections[1]
        return ext_id, order, right


@pytest.fixture
def fake(release):
    root = folder_of(release) / "mmrb2"
    with FakeMmrb2Judge(
        api_key=API_KEY, model="fake-judge-1", tasks=task_files(release), root=root
    ) as server:
        yield server
    assert server.problems == []


def start(release, endpoint, **kwargs):
    return start_judge_run(
        release=release,
        endpoint=endpoint,
        name=kwargs.pop("name", "mmrb2 judge"),
        swapped=False,
        concurrency=2,
        user=None,
        enqueue=False,
        **kwargs,
    )


def test_a_run_sends_every_pair_in_both_orders_and_scores_mmrb2_style(release, fake):
    fake.decide = fake.always_a  # A every time: right forward iff chosen A, reverse iff B
    fake.plan["isg_3"] = ["bad_request"]  # its first request fails for good
    run = start(release, make_endpoint(release, fake))
    assert run.scoring == "mmrb2" and run.swapped
    assert run.progress_total == 2 * 6
    run = run_judge(run_id=run.pk)
    assert run.status == JudgeRunStatus.COMPLETE, run.error
    pairs = task_files(release)
    ids = [p["id"] for t in TASKS for p in pairs[t]]
    assert set(fake.requests) == {(i, o) for i in ids for o in ("original", "swapped")}
    # Forward shows response A first, reverse response B first.
    t2i = pairs["t2i"][1]
    a = fake.fingerprint(t2i["response_a"]["response_content"])
    b = fake.fingerprint(t2i["response_b"]["response_content"])
    assert tuple(fake.seen_parts[(t2i["id"], "original")]) == a
    assert tuple(fake.seen_parts[(t2i["id"], "swapped")]) == b
    # Interleaved text and image parts keep their order.
    interleaved = [k for k, _ in fake.seen_parts[("isg_3", "swapped")]]
    assert interleaved == ["image"]  # response B (image-only) first in reverse
    assert run.n_errors == 1

    # The evaluation equals the pure scorer on the predictions built independently.
    evaluation = run.evaluation
    assert evaluation.scoring == "mmrb2"
    predictions = {}
    for pair_id in ids:
        entry = {}
        for order, direction in (("original", "forward"), ("swapped", "reverse")):
            out = JudgeOutput.objects.get(run=run, external_id=pair_id, order=order)
            verdict = "A" if "[[A]]" in out.output else None
            entry[direction] = [{"judgement": verdict}]
        predictions[pair_id] = entry
    (failed,) = JudgeOutput.objects.filter(run=run).exclude(error="")
    direction = "forward" if failed.order == "original" else "reverse"
    assert failed.external_id == "isg_3" and failed.output == "None"
    assert predictions["isg_3"][direction] == [{"judgement": None}]
    expected = mmrb2_scoring.score_tasks([(t, pairs[t], predictions) for t in TASKS])
    # Always A: one right per pair of the two orders (isg_3, chosen A: its forward
    # one); the failed request is skipped.
    right = 6 - (direction == "forward")
    assert (expected.overall.correct, expected.overall.judged) == (right, 11)
    report = evaluation.report["mmrb2"]
    assert (report["overall"]["correct"], report["overall"]["judged"]) == (right, 11)
    assert abs(evaluation.accuracy - right / 11) < 1e-9
    for got, want in zip(report["tasks"], expected.tasks, strict=True):
        assert (got["task"], got["correct"], got["judged"]) == (
            want.task,
            want.tally.correct,
            want.tally.judged,
        )
    # The stored predictions file is the upload format and scores the same.
    stored = (Path(settings.MEDIA_ROOT) / evaluation.predictions).read_text()
    parsed, _ = mmrb2_scoring.read_predictions(stored, "stored")
    again = mmrb2_scoring.score_tasks([(t, pairs[t], parsed) for t in TASKS])
    assert again.overall.correct == right and again.overall.judged == 11


def test_a_correct_judge_scores_every_pair_right(release, fake):
    run = run_judge(run_id=start(release, make_endpoint(release, fake)).pk)
    assert run.status == JudgeRunStatus.COMPLETE, run.error
    assert run.evaluation.report["mmrb2"]["overall"]["percent"] == "100.00"
    assert run.evaluation.report["mmrb2"]["overall"]["judged"] == 12
    answers = json.loads(predictions_file(run_outputs(run), mmrb2_records(release)))
    assert len(answers) == 6  # every pair present


def test_mrb_scoring_of_an_mmrb2_release_judges_its_mrb_records(release, fake):
    run = start(release, make_endpoint(release, fake), scoring="mrb")
    assert run.scoring == "mrb" and not run.swapped and run.progress_total == 1
    with pytest.raises(JudgeRunError, match="Unknown scoring"):
        start(release, make_endpoint(release, fake, name="other"), scoring="x", name="y")


@pytest.mark.parametrize(
    "text, verdict",
    [
        ('Reasons…\n```json\n{"reasoning": {"a": "x"}, "better_response": "B"}\n```', "B"),
        ('{"score": 5, "better_response": "A", "confidence": 0.4}', "A"),
        ('cut off: "better_response": "B", "confid', "B"),
        ("Verdict: [[B]]", "B"),
        ("[[A]] and [[B]]", "A"),
        ('{"better_response": "tie"}', None),
        ("I cannot decide.", None),
        ("None", None),
    ],
)
def test_verdicts_are_read_into_a_or_b(text, verdict):
    assert mmrb2_judge.parse_verdict(text) == verdict


def test_the_page_and_the_api_start_mmrb2_runs(client, release, fake):
    from django.urls import reverse
    from rest_framework.test import APIClient

    from tests.factories import make_member

    endpoint = make_endpoint(release, fake)
    curator = make_member(release.project, role="curator")
    api = APIClient()
    api.force_authenticate(curator)
    url = reverse("api_judge_runs", args=[release.project.slug, release.pk])
    response = api.post(url, {"endpoint": endpoint.pk, "name": "by api"}, format="json")
    assert response.status_code == 202, response.content
    assert response.json()["scoring"] == "mmrb2" and response.json()["swapped"] is True
    response = api.post(
        url, {"endpoint": endpoint.pk, "name": "mrb api", "scoring": "mrb"}, format="json"
    )
    assert response.json()["scoring"] == "mrb" and response.json()["swapped"] is False
    client.force_login(curator)
    page = reverse("judge_run_new", args=[release.project.slug, release.pk])
    body = {"endpoint": endpoint.pk, "name": "by page", "concurrency": 2, "scoring": "mmrb2"}
    assert client.post(page, body).status_code == 302
    from curation.models import JudgeRun

    run = JudgeRun.objects.get(name="by page")
    assert run.scoring == "mmrb2" and run.progress_total == 12
