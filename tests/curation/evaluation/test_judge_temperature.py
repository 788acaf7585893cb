"""The judge runner sends `temperature` only when the endpoint sets one (the
benchmark's judge script sends none)."""

from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from curation.benchmarks.mrb import judge as mrb_judge
from curation.benchmarks.mrb import scoring_input
from curation.evaluation import judge_client
from curation.evaluation.judge_runs import run_judge, save_endpoint
from curation.models import JudgeEndpoint, JudgeRunStatus
from tests.curation.evaluation.fake_openai import FakeJudge
from tests.curation.evaluation.test_judge_runner import API_KEY, MODEL, start
from tests.curation.releases.test_releases import built, make_release_project
from tests.factories import make_member


@pytest.fixture
def release(tmp_path):
    return built(make_release_project(tmp_path, slug="jt"))


@pytest.fixture
def fake(release):
    records = scoring_input.load_release_records(Path(settings.MEDIA_ROOT) / release.folder)
    with FakeJudge(api_key=API_KEY, model=MODEL, records=records) as server:
        yield server
    assert server.problems == []


RECORD = {
    "ID": "vqa_1",
    "Text": "What is shown?",
    "Image": "images/x/1.png",
    "Output1": "a cat",
    "Output2": "a dog",
    "Better": "Output1",
    "Category": "vqa",
}


def body(**endpoint):
    return mrb_judge.request_body(
        RECORD, b"\x89PNG", judge_client.Endpoint(base_url="https://x/v1", model="m", **endpoint),
        swapped=False,
    )  # fmt: skip


def test_the_request_body_has_no_temperature_unless_one_is_set():
    unset = body()
    assert "temperature" not in unset
    assert set(unset) == {"model", "messages", "max_tokens"}
    assert body(temperature=0.0)["temperature"] == 0.0
    assert body(temperature=0.7)["temperature"] == 0.7
    # everything else is the same request
    assert {k: v for k, v in body(temperature=0.7).items() if k != "temperature"} == unset


def endpoint_with(release, fake, temperature, name="fake"):
    return save_endpoint(
        project=release.project,
        actor=make_member(release.project, role="admin"),
        name=name,
        base_url=fake.base_url,
        model=MODEL,
        temperature=temperature,
        max_tokens=64,
        timeout_seconds=5,
        api_key=API_KEY,
    )


@pytest.mark.django_db
@pytest.mark.parametrize(("temperature", "sent"), [(None, "absent"), (0.0, 0.0), (0.3, 0.3)])
def test_a_run_sends_the_endpoints_temperature_only_when_set(release, fake, temperature, sent):
    endpoint = endpoint_with(release, fake, temperature)
    run = start(release, endpoint)
    assert run.temperature == temperature  # the run records what it sends
    assert run_judge(run_id=run.pk).status == JudgeRunStatus.COMPLETE
    assert fake.temperatures == {sent}


@pytest.mark.django_db
def test_an_endpoint_saved_without_a_temperature_sends_none(client, release, fake):
    client.force_login(make_member(release.project, role="admin"))
    url = reverse("judge_endpoints", args=[release.project.slug])
    data = {
        "name": "blank",
        "base_url": fake.base_url,
        "model": MODEL,
        "temperature": "",
        "max_tokens": "64",
        "timeout_seconds": "5",
    }
    assert client.post(url, data).status_code == 302
    assert JudgeEndpoint.objects.get(project=release.project, name="blank").temperature is None
    assert b"not sent" in client.get(url).content
