"""A predictions line whose ID is not in the release: unscored by default
(the studio scores against the release), scored against the line's own
Label with official_compat (as the official script scores every line), from
the pure scorer, the `evaluate` command, the upload form and the API."""

import io
import json
import random

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse
from rest_framework.test import APIClient

from curation.benchmarks.mrb.scoring import score
from curation.benchmarks.mrb.scoring_input import parse_predictions
from curation.benchmarks.mrb.scoring_output import format_report, report_as_dict
from curation.models import Evaluation
from tests.curation.evaluation.test_scoring import judge, make_record, parse
from tests.curation.releases.test_releases import built, make_release_project
from tests.factories import make_member

RECORDS = [make_record("a", "Output1"), make_record("b", "Output2")]
# In the release: a right, b wrong. Not in it: x right by its own Label (and
# in reasoning/math by its Meta.Category and ID), y wrong by its Label, z
# without a Label (never scored), w a Label-only line (the studio reads that
# Label as the prediction, so it has no gold: never scored).
LINES = [
    judge("a", "A"),
    judge("b", "A"),
    judge("math_x", "B", Label="B", Meta={"Category": "reasoning"}),
    judge("y", "A", Label="B"),
    judge("z", "A"),
    {"ID": "w", "Label": "A"},
]


def official_script(lines):
    """The official scripts/2_get_accuracy.py reading, re-derived here: every
    judge line scored against the Label it carries."""
    random.seed(123)
    correct = total = 0
    for line in lines:
        if "output" not in line or "Label" not in line:
            continue
        text = line["output"]
        if "[[A]]" in text:
            pred = "A"
        elif "[[B]]" in text:
            pred = "B"
        else:
            pred = "A" if random.random() < 0.5 else "B"
        total += 1
        correct += pred == line["Label"]
    return correct, total


def test_by_default_a_line_not_in_the_release_is_listed_not_scored():
    report = score(RECORDS, parse(*LINES))
    overall = report.group("all")
    assert (overall.correct, overall.total) == (1, 2)
    assert report.coverage.unknown == ("math_x", "y", "z", "w")
    assert report.coverage.scored_by_label == 0
    assert report_as_dict(report)["official"]["official_compat"] is False
    assert "not in the release, not scored): 4" in format_report(report)


def test_official_compat_scores_unknown_lines_by_their_own_label():
    report = score(RECORDS, parse(*LINES), official_compat=True)
    overall = report.group("all")
    # a right, b wrong (release); math_x right, y wrong (own Label); z, w unscored
    assert (overall.correct, overall.total) == (2, 4)
    assert report.coverage.scored_by_label == 2
    assert report.coverage.unknown == ("math_x", "y", "z", "w")
    reasoning = report.group("reasoning")
    assert (reasoning.correct, reasoning.total) == (1, 1)
    assert report.group("reasoning/math").total == 1
    assert report.group("vqa").total == 2  # the release's lines, against the release
    as_dict = report_as_dict(report)
    assert as_dict["official"]["official_compat"] is True
    assert as_dict["extras"]["coverage"]["scored_by_label"] == 2


def test_official_compat_matches_the_official_script_on_a_file_of_unknown_ids():
    """A file judged on another data set entirely (no ID in the release), with
    verdict-less lines: the same numbers as the official script, draws included."""
    rng = random.Random(7)
    lines = [
        judge(f"other_{i}", rng.choice(["A", "B", None]), Label=rng.choice("AB"))
        for i in range(200)
    ]
    report = score(RECORDS, parse(*lines), official_compat=True)
    overall = report.group("all")
    assert (overall.correct, overall.total) == official_script(lines)
    assert report.random_fallbacks == sum("[[" not in line["output"] for line in lines)


def test_known_ids_are_scored_against_the_release_even_with_official_compat():
    # b's Label says A (another release's shuffle): the release says Output2.
    lines = [judge("b", "A", Label="A")]
    for compat in (False, True):
        report = score(RECORDS, parse(*lines), official_compat=compat)
        assert (report.group("all").correct, report.group("all").total) == (0, 1)
        assert len(report.coverage.mismatches) == 1


def test_swapped_unknown_lines_stay_unscored_with_official_compat():
    swapped = parse(judge("y", "B", Label="B"), order="swapped")
    report = score(RECORDS, parse(judge("a", "A")) + swapped, official_compat=True)
    assert report.coverage.scored_by_label == 0
    assert report.group("all").total == 1


def write(tmp_path):
    (tmp_path / "all_data.json").write_text(json.dumps(RECORDS))
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps(line) + "\n" for line in LINES))
    return str(tmp_path), str(preds)


def test_evaluate_command_offers_official_compat(tmp_path):
    release, preds = write(tmp_path)
    out = io.StringIO()
    call_command("evaluate", release, preds, "--json", stdout=out)
    default = json.loads(out.getvalue())
    assert default["official"]["groups"][0]["total"] == 2
    out = io.StringIO()
    call_command("evaluate", release, preds, "--json", "--official-compat", stdout=out)
    compat = json.loads(out.getvalue())
    assert compat["official"]["groups"][0]["total"] == 4
    assert compat["official"]["official_compat"] is True
    out = io.StringIO()
    call_command("evaluate", release, preds, "--official-compat", stdout=out)
    assert "--official-compat: lines with Label scored against it, 2 lines" in out.getvalue()


# --- upload form and API ------------------------------------------------------------------


@pytest.fixture
def release(tmp_path):
    return built(make_release_project(tmp_path, slug="compat"))


def predictions_for(release) -> bytes:
    from django.conf import settings

    path = settings.MEDIA_ROOT / release.folder / "all_data.json"
    records = json.loads(path.read_text())
    lines = [
        json.dumps({"ID": r["ID"], "output": "[[A]]" if r["Better"] == "Output1" else "[[B]]"})
        for r in records
    ]
    lines.append(json.dumps(judge("elsewhere_1", "A", Label="A")))
    return ("\n".join(lines) + "\n").encode(), len(records)


@pytest.mark.django_db
@pytest.mark.parametrize("compat", [False, True])
def test_the_upload_form_offers_official_compat(client, release, compat):
    client.force_login(make_member(release.project, role="curator"))
    data, n = predictions_for(release)
    form = {"name": "judge", "predictions": SimpleUploadedFile("p.jsonl", data)}
    if compat:
        form["official_compat"] = "on"
    response = client.post(reverse("leaderboard", args=[release.project.slug, release.pk]), form)
    assert response.status_code == 302
    report = Evaluation.objects.get(release=release, name="judge").report
    assert report["official"]["groups"][0]["total"] == n + compat
    assert report["official"]["official_compat"] is compat
    page = client.get(reverse("leaderboard", args=[release.project.slug, release.pk]))
    assert (b"official-compat</span>" in page.content) is compat


@pytest.mark.django_db
@pytest.mark.parametrize("compat", [False, True])
def test_the_api_offers_official_compat(release, compat):
    client = APIClient()
    client.force_authenticate(make_member(release.project, role="curator"))
    data, n = predictions_for(release)
    body = {"name": "judge", "predictions": SimpleUploadedFile("p.jsonl", data)}
    if compat:
        body["official_compat"] = "true"
    url = reverse("api_evaluations", args=[release.project.slug, release.pk])
    response = client.post(url, body, format="multipart")
    assert response.status_code == 201, response.content
    groups = response.json()["per_category"]
    assert groups[0]["total"] == n + compat
    assert response.json()["extras"]["coverage"]["scored_by_label"] == int(compat)


def test_parsed_lines_keep_label_and_category_for_official_compat():
    (p,) = parse_predictions(
        [json.dumps(judge("q", "A", Label="B", Meta={"Category": "safety"}))], filename="f"
    )
    assert (p.gold_label, p.meta_category) == ("B", "safety")
