"""Scoring uploaded predictions against a release, and the leaderboard."""

import csv
import io
import json
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from curation.benchmarks.mrb import scoring, scoring_input
from curation.models import Evaluation
from tests.curation.releases.test_releases import built, make_release_project
from tests.factories import make_member, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def release(tmp_path):
    return built(make_release_project(tmp_path, slug="lb"))


def records_of(release):
    with (Path(settings.MEDIA_ROOT) / release.folder / "all_data.json").open() as fh:
        return json.load(fh)


def judge_lines(records, wrong=()):
    lines = []
    for r in records:
        right = "A" if r["Better"] == "Output1" else "B"
        pick = ("B" if right == "A" else "A") if r["ID"] in wrong else right
        lines.append(json.dumps({"ID": r["ID"], "output": f"Verdict: [[{pick}]]"}))
    return "\n".join(lines).encode()


def upload(client, release, name, data, swapped=None):
    files = {"name": name, "predictions": SimpleUploadedFile("preds.jsonl", data)}
    if swapped is not None:
        files["swapped"] = SimpleUploadedFile("swapped.jsonl", swapped)
    return client.post(reverse("leaderboard", args=[release.project.slug, release.pk]), files)


def test_uploaded_predictions_are_scored_as_the_official_scorer_does(client, release):
    client.force_login(make_member(release.project, role="curator"))
    records = records_of(release)
    wrong = {records[0]["ID"], records[1]["ID"]}
    response = upload(client, release, "judge-x", judge_lines(records, wrong))
    assert response.status_code == 302
    evaluation = Evaluation.objects.get(release=release, name="judge-x")
    expected = scoring.score(
        records,
        scoring_input.parse_predictions(
            judge_lines(records, wrong).decode().split("\n"), filename="p"
        ),
    )
    assert evaluation.accuracy == pytest.approx((len(records) - 2) / len(records))
    assert evaluation.accuracy == expected.group("all").accuracy
    page = client.get(reverse("leaderboard", args=[release.project.slug, release.pk]))
    assert b"judge-x" in page.content and b"extra" in page.content


def test_leaderboard_sorts_and_downloads(client, release):
    client.force_login(make_member(release.project, role="curator"))
    records = records_of(release)
    upload(client, release, "weak", judge_lines(records, {r["ID"] for r in records[:4]}))
    upload(client, release, "strong", judge_lines(records))
    url = reverse("leaderboard", args=[release.project.slug, release.pk])
    rows = client.get(url).context["boards"][0].rows
    assert [r["evaluation"].name for r in rows] == ["strong", "weak"]
    table = list(csv.reader(io.StringIO(client.get(url + "?download=csv").content.decode())))
    assert table[0][0] == "model" and table[0][1] == "all" and len(table) == 3
    data = json.loads(client.get(url + "?download=json").content)
    assert {d["name"] for d in data} == {"strong", "weak"}
    assert "official" in data[0]["report"] and "extras" in data[0]["report"]


def test_bad_predictions_name_the_line_and_store_nothing(client, release):
    client.force_login(make_member(release.project, role="curator"))
    bad = b'{"ID": "x", "output": "[[A]]"}\n{"ID": 5, "output": "[[B]]"}\n'
    response = upload(client, release, "broken", bad)
    assert response.status_code == 400
    assert b"line 2" in response.content and b"ID" in response.content
    assert not Evaluation.objects.exists()
    again = upload(client, release, "broken", b"not json\n")
    assert again.status_code == 400 and b"line 1" in again.content


def test_the_same_name_cannot_be_scored_twice_on_a_release(client, release):
    client.force_login(make_member(release.project, role="curator"))
    data = judge_lines(records_of(release))
    assert upload(client, release, "dup", data).status_code == 302
    response = upload(client, release, "dup", data)
    assert response.status_code == 400 and b"already on this release" in response.content


def test_swapped_predictions_give_position_consistency(client, release):
    client.force_login(make_member(release.project, role="curator"))
    records = records_of(release)
    swapped = []
    for r in records:  # a position-biased judge: always the first shown
        swapped.append(json.dumps({"ID": r["ID"], "output": "[[A]]"}))
    original = "\n".join(json.dumps({"ID": r["ID"], "output": "[[A]]"}) for r in records)
    upload(client, release, "biased", original.encode(), "\n".join(swapped).encode())
    report = Evaluation.objects.get(name="biased").report
    assert report["extras"]["consistency"]["rate"] == 0.0


@pytest.mark.parametrize(
    ("role", "status"), [("annotator", 403), ("curator", 200), ("admin", 200), (None, 404)]
)
def test_leaderboard_permissions(client, release, role, status):
    user = make_member(release.project, role=role) if role else make_user()
    client.force_login(user)
    url = reverse("leaderboard", args=[release.project.slug, release.pk])
    assert client.get(url).status_code == status
