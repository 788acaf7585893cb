"""POST /api/v1/projects/<slug>/imports/ with the import-as-is options
(issue 22): duplicates, domain_from, domain_map; problems aggregated (count,
records) and worded in the API's terms, never in shell flags."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.models import ImageAsset, Item
from tests.annotate.importing.public_sets import (
    MM_DOMAIN_MAP,
    MM_IDS,
    MM_ROWS,
    VL_DISTINCT_IDS,
    VL_DOMAIN_MAP,
    VL_REPEATED_IDS,
    mm_rlhf_rewardbench,
    vl_rewardbench,
)
from tests.factories import make_member, make_project

pytestmark = pytest.mark.django_db

URL = "/api/v1/projects/bench/imports/"


@pytest.fixture
def admin():
    project = make_project(slug="bench")
    client = APIClient()
    user = make_member(project, role="admin")
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def post(client, public_set, name: str, **fields):
    return client.post(
        URL,
        {
            "dataset": SimpleUploadedFile(name, public_set.jsonl()),
            "images": SimpleUploadedFile("images.zip", public_set.images_zip()),
            **fields,
        },
        format="multipart",
    )


def refused(response) -> dict:
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "import_failed"
    assert "--" not in json.dumps(error), "API texts must not name shell flags"
    assert Item.objects.count() == ImageAsset.objects.count() == 0
    return error


def test_vl_rewardbench_imports_keeping_the_first_of_each_id(admin):
    response = post(
        admin, vl_rewardbench(), "vl.jsonl",
        duplicates="keep-first", domain_from="id-prefix", domain_map=VL_DOMAIN_MAP,
    )  # fmt: skip
    assert response.status_code == 200, response.content
    assert response.json() == {
        "format": "pairs",
        "created": VL_DISTINCT_IDS,
        "updated": 0,
        "unchanged": 0,
        "images_stored": VL_DISTINCT_IDS,
        "votes_cast": 0,
        "duplicates_skipped": VL_REPEATED_IDS,
        "duplicates_renamed": 0,
    }


def test_mm_rlhf_rewardbench_imports_with_suffixes_and_domains_from_folders(admin):
    response = post(
        admin, mm_rlhf_rewardbench(), "mm.jsonl",
        duplicates="suffix", domain_from="image-folder", domain_map=MM_DOMAIN_MAP,
    )  # fmt: skip
    assert response.status_code == 200, response.content
    assert response.json()["created"] == MM_ROWS
    assert response.json()["duplicates_renamed"] == MM_ROWS - MM_IDS
    assert set(Item.objects.values_list("domain__slug", flat=True)) == {
        "knowledge",
        "general_preference",
        "general_correctness",
        "safety",
    }


def test_repeated_ids_are_one_problem_in_the_apis_terms(admin):
    error = refused(post(admin, vl_rewardbench(), "vl.jsonl", domain="vqa"))
    (problem,) = error["problems"]
    assert problem["field"] == "id"
    assert problem["message"].startswith(f"{VL_REPEATED_IDS} IDs occur more than once")
    assert "use duplicates=keep-first" in problem["message"]
    assert "or duplicates=suffix" in problem["message"]
    assert error["message"] == "The import was refused (1 problems); nothing was written."


def test_unmapped_folders_are_listed_once_each_with_their_counts(admin):
    error = refused(
        post(
            admin,
            mm_rlhf_rewardbench(),
            "mm.jsonl",
            duplicates="suffix",
            domain_from="image-folder",
            domain_map="mcq=knowledge",
        )
    )
    (problem,) = error["problems"]
    assert problem["field"] == "image"
    message = problem["message"]
    assert message.startswith("2 values of the image folders name no domain: 'long' (")
    assert "'short' (" in message and "'safety'" not in message
    assert message.count("'long'") == 1
    assert "with field 'domain_map'" in message


def test_a_problem_on_every_record_comes_once_with_its_count_and_first_records(admin):
    error = refused(post(admin, mm_rlhf_rewardbench(), "mm.jsonl"))
    problem, repeated = error["problems"]  # and the repeated IDs, in the same answer
    assert repeated["field"] == "id" and "IDs occur more than once" in repeated["message"]
    assert (problem["field"], problem["line"], problem["index"]) == ("category", 1, 0)
    assert (problem["count"], problem["records"]) == (MM_ROWS, [0, 1, 2, 3, 4, 5])
    assert problem["message"] == (
        "is missing; give field 'domain' for the whole file, derive one with field "
        "'domain_from' or map a field to 'category' with field 'field_map'"
    )


def test_a_changed_item_names_the_field_and_offers_the_conflicts_options(admin):
    data = mm_rlhf_rewardbench()
    options = {"duplicates": "keep-first", "domain_from": "image-folder"}
    options["domain_map"] = MM_DOMAIN_MAP
    assert post(admin, data, "mm.jsonl", **options).status_code == 200
    data.rows[0]["chosen"] = "Changed."
    response = post(admin, data, "mm.jsonl", **options)
    assert response.status_code == 400
    (problem,) = response.json()["error"]["problems"]
    assert "chosen/rejected differs on 1 record (first: 0)" in problem["message"]
    assert problem["message"].endswith(
        "to import them, use conflicts=suffix (import them as new items ID#2, …) or "
        "conflicts=replace (replace the items; none is claimed or voted on yet)"
    )
    assert "--" not in response.content.decode()


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        (
            {"domain_from": "folder"},
            "domain_from",
            "must be field:<name>, id-prefix or image-folder, not 'folder'",
        ),
        ({"domain_map": "mcq"}, "domain_map", "entry 1 is not value=domain: 'mcq'"),
        (
            {"duplicates": "merge"},
            "duplicates",
            '"merge" is not a valid choice.',
        ),
    ],
)
def test_malformed_options_are_field_errors(admin, fields, field, message):
    response = post(admin, mm_rlhf_rewardbench(), "mm.jsonl", **fields)
    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {field: [message]}


def test_an_unknown_domain_in_the_map_names_the_api_field(admin):
    error = refused(post(admin, mm_rlhf_rewardbench(), "mm.jsonl", domain_map="mcq=charts"))
    (problem,) = error["problems"]
    assert problem["message"].startswith("field 'domain_map' maps 'mcq' to unknown domain")
