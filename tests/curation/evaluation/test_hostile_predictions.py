"""Hostile predictions files (issue 29): every predictions format (MRB's JSONL,
MMRB2's object of pair IDs) and the sniffer that tells them apart answer
nested, huge and wrong-typed input with a clear error naming the file, the
line and the field; the page and the API answer 400 and store nothing."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from curation.benchmarks.mmrb2 import scoring as mmrb2_scoring
from curation.benchmarks.mmrb2.scoring import PredictionsError, looks_like_predictions
from curation.benchmarks.mrb import scoring_input
from curation.benchmarks.mrb.scoring_input import ScoringInputError, parse_predictions
from curation.models import Evaluation
from tests.curation.evaluation.test_mmrb2_evaluation import mmrb2_release
from tests.factories import make_member


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


# --- The sniffer --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "mmrb2"),
    [
        ('{"ID": ' + nested(3000) + "}", False),  # an MRB line: its reader says why
        (nested(3000), False),
        ('{"x": {"forward": ' + nested(3000) + "}}", True),
    ],
)
def test_sniffer_survives_a_line_nested_3000_deep(line, mmrb2):
    assert looks_like_predictions(line) is mmrb2


# --- MMRB2 predictions --------------------------------------------------------------


def test_mmrb2_entry_nested_3000_deep_names_line_and_pair():
    text = '{\n"a": {"forward": []},\n"b": {"forward": ' + nested(3000) + "}}"
    with pytest.raises(PredictionsError, match=r"p\.json, line 3: prediction 'b': .*nested"):
        mmrb2_scoring.read_predictions(text, "p.json")


def test_mmrb2_entry_larger_than_the_bound_is_refused_before_it_is_decoded():
    """Eight million characters of empty lists (~150 MB once decoded) are
    refused from a window of the text, not decoded whole."""
    text = '{"a": {"forward": [' + ",".join(["[]"] * 4_000_000) + "]}}"
    with pytest.raises(PredictionsError) as caught:
        mmrb2_scoring.read_predictions(text, "p.json")
    assert str(caught.value) == (
        "p.json, line 1: prediction 'a': larger than 1048576 characters, "
        "the most one prediction may hold"
    )


def test_mmrb2_file_with_more_pair_ids_than_a_release_holds_is_refused():
    text = json.dumps({f"p{n}": {} for n in range(12)})
    with pytest.raises(PredictionsError, match="more than 10 pair IDs"):
        mmrb2_scoring.read_predictions(text, "p.json", max_entries=10)
    # A repeated ID is not one more (the last one wins, as json.load does).
    repeated = "{" + ", ".join(['"p": {}'] * 12) + "}"
    assert mmrb2_scoring.read_predictions(repeated, "p.json", max_entries=10) == ({"p": {}}, 11)


def test_mmrb2_number_with_too_many_digits_is_a_predictions_error():
    text = '{"a": {"forward": [{"judgement": ' + "9" * 5000 + "}]}}"
    with pytest.raises(PredictionsError, match="prediction 'a': not valid JSON: a number has too"):
        mmrb2_scoring.read_predictions(text, "p.json")


def test_mmrb2_wrong_types_name_pair_and_field():
    with pytest.raises(PredictionsError, match="prediction 'a': field 'forward' must be a list"):
        mmrb2_scoring.read_predictions('{"a": {"forward": {"judgement": "A"}}}', "p.json")
    with pytest.raises(PredictionsError, match="expected a JSON object mapping pair IDs"):
        mmrb2_scoring.read_predictions("[1, 2]", "p.json")


# --- MRB predictions (JSONL) --------------------------------------------------------


def test_mrb_line_nested_3000_deep_names_the_line():
    lines = ['{"ID": "a", "Label": "A"}', '{"ID": ' + nested(3000) + "}"]
    with pytest.raises(ScoringInputError, match=r"p\.jsonl, line 2: not valid JSON: .*nested"):
        parse_predictions(lines, filename="p.jsonl")


def test_mrb_file_with_more_lines_than_the_bound_is_refused_at_that_line():
    lines = [json.dumps({"ID": f"r{n}", "Label": "A"}) for n in range(6)]
    with pytest.raises(ScoringInputError) as caught:
        parse_predictions(lines, filename="p.jsonl", max_lines=5)
    assert str(caught.value).startswith("p.jsonl, line 6: more than 5 predictions")
    assert scoring_input.MAX_PREDICTION_LINES >= 200_000  # a release's records, at least


def test_mrb_wrong_types_name_line_and_field():
    with pytest.raises(ScoringInputError, match=r"p\.jsonl, line 1, field 'score_1'"):
        parse_predictions(['{"ID": "a", "score_1": "high", "score_2": 1}'], filename="p.jsonl")
    with pytest.raises(ScoringInputError, match=r"p\.jsonl, line 1: .*too many digits"):
        parse_predictions(['{"ID": "a", "score_1": ' + "1" * 5000 + "}"], filename="p.jsonl")


# --- The page and the API -----------------------------------------------------------

DEEP_UPLOADS = {
    "object-line": ('{"ID": ' + nested(3000) + "}\n").encode(),
    "array-line": (nested(3000) + "\n").encode(),
}


@pytest.mark.django_db
def test_deep_predictions_are_a_400_on_the_page_and_the_api(client, tmp_path):
    release = mmrb2_release(tmp_path)
    curator = make_member(release.project, role="curator")
    client.force_login(curator)
    page = reverse("leaderboard", args=[release.project.slug, release.pk])
    api = APIClient()
    api.force_authenticate(curator)
    api_url = reverse("api_evaluations", args=[release.project.slug, release.pk])
    for shape, data in DEEP_UPLOADS.items():
        upload = SimpleUploadedFile("deep.jsonl", data)
        response = client.post(page, {"name": f"page-{shape}", "predictions": upload})
        assert response.status_code == 400, shape
        assert "nested too deeply" in response.content.decode(), shape
        upload = SimpleUploadedFile("deep.jsonl", data)
        response = api.post(
            api_url, {"name": f"api-{shape}", "predictions": upload}, format="multipart"
        )
        assert response.status_code == 400, (shape, response.content)
        assert "nested too deeply" in json.dumps(response.json()), shape
    assert not Evaluation.objects.exists()
