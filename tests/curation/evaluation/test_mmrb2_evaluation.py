"""MMRB2 predictions end to end (issue 24 item 5): a release of the published
layout's four tasks, a predictions file with forward and reverse judgements
and missing pairs uploaded through the page, the API and the CLI; the
leaderboard page and the API give the numbers the pure scorer gives on the
release's task files, and the hand count."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse
from rest_framework.test import APIClient

from annotate.importing.mmrb2 import import_mmrb2_from_paths
from annotate.models import Project
from curation.benchmarks.mmrb2 import scoring as mmrb2_scoring
from curation.evaluation import service
from curation.models import Evaluation, ReleaseStatus
from curation.releases.build import build_release
from curation.releases.service import create_release
from tests.annotate.importing.test_mmrb2 import agree_as_published, published_fixture
from tests.factories import make_member

pytestmark = pytest.mark.django_db

T2I_1 = "oneigbench_124_-8004320511907750318_imagen4_4116_imagen4_116"  # chosen B
T2I_2 = "genai_7:gpt-image-1_flux"  # chosen A
EDIT = "emu_edit_9_a_b"  # chosen A
INTERLEAVED = "isg_3"  # chosen A, left out below: missing
MINDCUBE = "mindcube_gpt-4o_claude_1"  # chosen A
VSTAR = "vstar_claude_claude_2"  # chosen B

PREDICTIONS = {
    # forward B right; reverse A, flipped to B: right.
    T2I_1: {"forward": [{"judgement": "B"}], "reverse": [{"judgement": "A", "score": 2}]},
    # Only the first forward judgement counts; a null reverse is skipped.
    T2I_2: {"forward": [{"judgement": "A"}, {"judgement": "B"}], "reverse": [{"judgement": None}]},
    # Exact and case-sensitive: "tie" is wrong, "b" (not flipped) is wrong.
    EDIT: {"forward": [{"judgement": "tie"}], "reverse": [{"judgement": "b"}]},
    # An empty judgement is skipped; reverse B flipped to A: right.
    MINDCUBE: {"forward": [{"judgement": ""}], "reverse": [{"judgement": "B"}]},
    # Wrong forward; an empty reverse list adds nothing.
    VSTAR: {"forward": [{"judgement": "A"}], "reverse": []},
    "not-in-the-release": {"forward": [{"judgement": "A"}]},
}
# Counted by hand: (correct, judged, missing) per task.
HAND = {"t2i": (3, 3, 0), "edit": (0, 2, 0), "interleaved": (0, 0, 1), "reasoning": (1, 2, 0)}
HAND_PERCENT = {"t2i": "100.00", "edit": "0.00", "interleaved": "0.00", "reasoning": "50.00"}
# Overall pools judgements: 4 / 7 = 57.14 % (the mean of the tasks would be 37.50).
HAND_OVERALL = (4, 7, "57.14")


@pytest.fixture
def release(tmp_path):
    return mmrb2_release(tmp_path)


def mmrb2_release(tmp_path):
    """A ready release of the published fixture's four tasks, every pair agreed."""
    source = tmp_path / "mmrb2"
    published_fixture(source)
    project = Project.objects.create(slug="mm", name="MMRB2", seed=3)
    for task in ("t2i", "edit", "interleaved", "reasoning"):
        import_mmrb2_from_paths(project=project, dataset=source / f"{task}.json")
    agree_as_published(project)
    release = create_release(
        project=project,
        version="v1",
        notes="",
        domains=[f"mmrb2-{t}" for t in ("t2i", "edit", "interleaved", "reasoning")],
        seed=1,
        user=None,
        enqueue=False,
    )
    release = build_release(release_id=release.pk)
    assert release.status == ReleaseStatus.READY, release.error
    return release


def folder_of(release) -> Path:
    return Path(settings.MEDIA_ROOT) / release.folder


def pure_scores(release, predictions=PREDICTIONS) -> mmrb2_scoring.Scores:
    """The pure scorer on the release's own task files, read here."""
    tasks = []
    for task in ("t2i", "edit", "interleaved", "reasoning"):
        pairs = json.loads((folder_of(release) / "mmrb2" / f"{task}.json").read_text())["pairs"]
        tasks.append((task, pairs, predictions))
    return mmrb2_scoring.score_tasks(tasks)


def page_upload(client, release, data: bytes, *, name="judge-2", filename="preds.json", **extra):
    body = {"name": name, "predictions": SimpleUploadedFile(filename, data), **extra}
    return client.post(reverse("leaderboard", args=[release.project.slug, release.pk]), body)


def test_upload_leaderboard_and_api_give_the_official_numbers(client, release):
    curator = make_member(release.project, role="curator")
    client.force_login(curator)
    data = json.dumps(PREDICTIONS, indent=2).encode()
    response = page_upload(client, release, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    evaluation = Evaluation.objects.get(release=release, name="judge-2")
    assert evaluation.scoring == "mmrb2"

    expected = pure_scores(release)
    by_task = {t.task: t for t in expected.tasks}
    for task, (correct, judged, missing) in HAND.items():
        tally = by_task[task].tally
        assert (tally.correct, tally.judged, tally.missing_pairs) == (correct, judged, missing)
        assert tally.percent == HAND_PERCENT[task]
    overall = expected.overall
    assert (overall.correct, overall.judged, overall.percent) == HAND_OVERALL
    assert evaluation.accuracy == pytest.approx(4 / 7, abs=1e-12)

    # The leaderboard page: the MMRB2 table with the same figures.
    page = client.get(reverse("leaderboard", args=[release.project.slug, release.pk]))
    html = page.content.decode()
    assert 'aria-label="MMRB2 leaderboard"' in html
    row = html[html.index('<tr data-name="judge-2">') :]
    row = row[: row.index("</tr>")]
    for task in HAND:
        cell = row[row.index(f'data-task="{task}"') :]
        assert cell.split(">", 1)[1].startswith(f"{HAND_PERCENT[task]} ")
    assert '<td class="num" data-overall>57.14</td><td class="num">7</td>' in row
    assert '<td class="num">1</td><td class="num">1</td></tr>' in row + "</tr>"  # missing, unknown
    # Per prompt_source: t2i's two sources, reasoning's two.
    assert '<td>t2i</td><td>genai</td><td class="num">100.00</td>' in html
    assert '<td>reasoning</td><td>vstar</td><td class="num">0.00</td>' in html
    # Not an MRB row: the MRB table has none.
    assert 'aria-label="Leaderboard"' not in html

    # The API: the same numbers, equal to the pure scorer's.
    api = APIClient()
    api.force_authenticate(curator)
    url = reverse("api_evaluation", args=[release.project.slug, release.pk, evaluation.pk])
    body = api.get(url).json()
    assert body["scoring"] == "mmrb2" and body["accuracy"] == pytest.approx(4 / 7, abs=1e-12)
    report = body["mmrb2"]
    assert report["overall"]["judged"] == overall.judged
    assert report["overall"]["correct"] == overall.correct
    assert report["overall"]["percent"] == "57.14"
    assert report["unknown_ids"] == 1
    for got in report["tasks"]:
        want = by_task[got["task"]]
        assert (got["correct"], got["judged"], got["missing_pairs"], got["total_pairs"]) == (
            want.tally.correct,
            want.tally.judged,
            want.tally.missing_pairs,
            want.tally.total_pairs,
        )
        assert abs(got["accuracy"] - want.tally.accuracy) < 1e-9
        assert {s["source"]: (s["correct"], s["judged"]) for s in got["by_source"]} == {
            source: (t.correct, t.judged) for source, t in want.by_source.items()
        }
    assert report["summary"] == mmrb2_scoring.summary_lines(expected)
    listed = api.get(reverse("api_evaluations", args=[release.project.slug, release.pk])).json()
    assert [(e["name"], e["scoring"]) for e in listed["results"]] == [("judge-2", "mmrb2")]


def test_the_api_takes_mmrb2_predictions_with_an_explicit_format(release):
    api = APIClient()
    api.force_authenticate(make_member(release.project, role="curator"))
    url = reverse("api_evaluations", args=[release.project.slug, release.pk])
    compact = json.dumps(PREDICTIONS).encode()  # one line: the shape, not the layout, decides
    body = {"name": "api-judge", "predictions": SimpleUploadedFile("p.json", compact)}
    response = api.post(url, {**body, "predictions_format": "mmrb2"}, format="multipart")
    assert response.status_code == 201, response.content
    assert response.json()["mmrb2"]["overall"]["percent"] == "57.14"
    # The same file forced through the MRB rules is refused with the line and field.
    body = {"name": "as-mrb", "predictions": SimpleUploadedFile("p.json", compact)}
    response = api.post(url, {**body, "predictions_format": "mrb"}, format="multipart")
    assert response.status_code == 400
    assert "p.json, line 1" in json.dumps(response.json()), response.json()


@pytest.mark.parametrize(
    "data, message",
    [
        (b'{"x": {"forward": "A"}}', "preds.json, line 1: prediction 'x': field 'forward'"),
        (
            b'{\n  "a": {"forward": []},\n  "b": {"reverse": ["B"]}\n}',
            "preds.json, line 3: prediction 'b': field 'reverse[0]' must be an object",
        ),
        (b'{"a": 1}', "preds.json, line 1: prediction 'a': expected an object"),
        (b'{"a": {"forward": [}', "preds.json, line 1: prediction 'a': not valid JSON"),
        (b'{"a": {}} {}', "preds.json, line 1: extra data"),
        (b'{"a": {}}\xff', "preds.json: not valid UTF-8"),
    ],
)
def test_bad_files_name_the_file_pair_and_field_and_store_nothing(client, release, data, message):
    client.force_login(make_member(release.project, role="curator"))
    response = page_upload(client, release, data, format="mmrb2")
    assert response.status_code == 400
    assert message in response.content.decode().replace("&#x27;", "'")
    assert not Evaluation.objects.exists()


def test_a_file_over_the_size_limit_is_refused_unread(client, release, monkeypatch):
    monkeypatch.setattr(service, "MAX_PREDICTIONS_BYTES", 10)
    monkeypatch.setattr("curation.benchmarks.mmrb2.evaluation.MAX_PREDICTIONS_BYTES", 10)
    client.force_login(make_member(release.project, role="curator"))
    response = page_upload(client, release, json.dumps(PREDICTIONS).encode())
    assert response.status_code == 400
    assert "preds.json: larger than 10 bytes" in response.content.decode()
    assert not Evaluation.objects.exists()


def test_mrb_predictions_still_score_on_the_mrb_table(client, release):
    """The release's one MRB-shaped pair is in all_data.json: MRB lines score there."""
    client.force_login(make_member(release.project, role="curator"))
    records = json.loads((folder_of(release) / "all_data.json").read_text())
    line = json.dumps({"ID": records[0]["ID"], "output": "[[A]]"}).encode()
    assert page_upload(client, release, line, name="mrb", filename="p.jsonl").status_code == 302
    page_upload(client, release, json.dumps(PREDICTIONS).encode())
    html = client.get(reverse("leaderboard", args=[release.project.slug, release.pk])).content
    html = html.decode()
    mrb_table = html[html.index('aria-label="Leaderboard"') : html.index('id="mmrb2"')]
    assert ">mrb</a>" in mrb_table and "judge-2" not in mrb_table
    mmrb2_table = html[html.index('aria-label="MMRB2 leaderboard"') :]
    assert 'data-name="judge-2"' in mmrb2_table and 'data-name="mrb"' not in mmrb2_table
    assert Evaluation.objects.get(name="mrb").scoring == "mrb"
    # A swapped file or official_compat make no sense for MMRB2 predictions.
    response = page_upload(client, release, b"{}", name="x", official_compat="on")
    assert response.status_code == 400 and "MRB option" in response.content.decode()


def test_the_leaderboard_query_count_does_not_grow_with_entries(client, release):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client.force_login(make_member(release.project, role="curator"))
    url = reverse("leaderboard", args=[release.project.slug, release.pk])
    page_upload(client, release, json.dumps(PREDICTIONS).encode(), name="one")
    with CaptureQueriesContext(connection) as one:
        assert client.get(url).status_code == 200
    for n in range(3):
        page_upload(client, release, json.dumps(PREDICTIONS).encode(), name=f"more-{n}")
    with CaptureQueriesContext(connection) as four:
        assert client.get(url).content.decode().count("<tr data-name=") == 4
    assert len(one.captured_queries) > 0
    assert len(four.captured_queries) == len(one.captured_queries)


def test_the_evaluate_command_scores_per_task_files_as_compute_accuracy(release, tmp_path):
    """One file per task, as compute_accuracy.py --task all takes them."""
    files = []
    for task in ("t2i", "reasoning"):
        pairs = json.loads((folder_of(release) / "mmrb2" / f"{task}.json").read_text())["pairs"]
        ids = {p["id"] for p in pairs}
        path = tmp_path / f"{task}-preds.json"
        path.write_text(json.dumps({k: v for k, v in PREDICTIONS.items() if k in ids}, indent=2))
        files.append(str(path))
    out = tmp_path / "out.json"
    with out.open("w") as fh:
        call_command("evaluate", str(folder_of(release)), *files, "--json", stdout=fh)
    report = json.loads(out.read_text())
    # Without the edit predictions and the unknown ID: t2i 3/3, reasoning 1/2, edit all missing.
    assert report["overall"]["correct"] == 4 and report["overall"]["judged"] == 5
    assert [t["missing_pairs"] for t in report["tasks"]] == [0, 1, 1, 0]
    text = tmp_path / "out.txt"
    with text.open("w") as fh:
        call_command("evaluate", str(folder_of(release)), *files, stdout=fh)
    printed = text.read_text()
    assert f"{'Overall':<25}  80.00%" in printed
    assert "  genai" in printed
    # An ID in two files is refused, naming both.
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="is also in"):
        call_command("evaluate", str(folder_of(release)), files[0], files[0])
