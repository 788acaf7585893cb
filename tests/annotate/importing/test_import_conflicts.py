"""Issue 31: a re-import that differs names the fields and how many records,
and the `conflicts` option chooses what fits; what annotators saw never
changes silently."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.importing.options import ImportOptions
from annotate.importing.records import ImportFailed
from annotate.importing.service import import_items_from_paths
from annotate.models import Item
from tests.factories import make_member, make_project, mrb_record, png_bytes

pytestmark = pytest.mark.django_db


def write(tmp_path, records):
    import json

    (tmp_path / "images").mkdir(exist_ok=True)
    (tmp_path / "images" / "red.png").write_bytes(png_bytes())
    path = tmp_path / "data.json"
    path.write_text(json.dumps(records))
    return path


def records(**changes_by_index):
    rows = [mrb_record(f"vqa_{n}", Image="images/red.png") for n in range(12)]
    for n, change in changes_by_index.items():
        rows[int(n[1:])].update(change)
    return rows


def imported(tmp_path, rows, conflicts="refuse", surface="cli"):
    return import_items_from_paths(
        project=Item.objects.first().project if Item.objects.exists() else PROJECT[0],
        dataset=write(tmp_path, rows),
        images=tmp_path,
        options=ImportOptions(conflicts=conflicts, surface=surface),
    )


PROJECT: list = []


@pytest.fixture(autouse=True)
def project():
    PROJECT[:] = [make_project(slug="bench")]
    return PROJECT[0]


def refusal(tmp_path, rows, **kwargs) -> ImportFailed:
    with pytest.raises(ImportFailed) as failure:
        imported(tmp_path, rows, **kwargs)
    return failure.value


def snapshot():
    return list(Item.objects.order_by("pk").values_list("external_id", "response_2", "model_1"))


def test_a_changed_field_is_named_with_its_count_and_first_records(tmp_path):
    imported(tmp_path, records())
    before = snapshot()
    changed = records(**{f"r{n}": {"Output2": "Changed."} for n in (3, 7, 8, 9, 10, 11)})
    changed[5]["Text"] = "Another question?"
    [problem] = refusal(tmp_path, changed).problems
    assert str(problem) == (
        "data.json: field 'ID': 7 records have IDs already in the project with different "
        "content: Output2 differs on 6 records (first: 3, 7, 8, 9, 10, …); Text differs on 1 "
        "(first: 5); to import them, use --conflicts=suffix (import them as new items ID#2, …) "
        "or --conflicts=replace (replace the items; none is claimed or voted on yet)"
    )
    assert snapshot() == before


def test_metadata_only_updates_what_annotators_never_saw(tmp_path):
    imported(tmp_path, records())
    item = Item.objects.get(external_id="vqa_2")
    item.live_assignments = 1  # claimed: seen by an annotator
    item.save(update_fields=["live_assignments"])
    changed = records(r2={"Better": "Output2"})
    [problem] = refusal(tmp_path, changed).problems
    assert "Better differs on 1 record (first: 2)" in problem.message
    assert "--conflicts=metadata (update what annotators never saw)" in problem.message
    assert "--conflicts=replace" not in problem.message  # it is claimed

    result = imported(tmp_path, changed, conflicts="metadata")
    assert (result.updated, result.unchanged, result.created) == (1, 11, 0)
    assert Item.objects.get(external_id="vqa_2").meta["prior_better"] == "Output2"
    again = imported(tmp_path, changed, conflicts="metadata")
    assert (again.updated, again.unchanged) == (0, 12)


def test_metadata_refuses_a_record_whose_seen_content_differs(tmp_path):
    imported(tmp_path, records())
    before = snapshot()
    changed = records(r0={"Output2": "Changed."}, r1={"Better": "Output2"})
    [problem] = refusal(tmp_path, changed, conflicts="metadata").problems
    assert "Better differs on 1 record (first: 1); Output2 differs on 1 (first: 0)" in (
        problem.message
    )
    assert "--conflicts=metadata cannot change what annotators saw" in problem.message
    assert snapshot() == before


def test_suffix_adds_new_items_and_a_second_import_changes_nothing(tmp_path):
    imported(tmp_path, records())
    before = snapshot()
    changed = records(r4={"Output2": "Changed."})
    result = imported(tmp_path, changed, conflicts="suffix")
    assert (result.created, result.unchanged) == (1, 11)
    new = Item.objects.get(external_id="vqa_4#2")
    assert (new.response_2, new.meta["original_id"]) == ("Changed.", "vqa_4")
    assert snapshot()[: len(before)] == before  # the existing items are untouched
    again = imported(tmp_path, changed, conflicts="suffix")
    assert (again.created, again.unchanged) == (0, 12)


def test_replace_refuses_items_annotators_have_claimed(tmp_path):
    imported(tmp_path, records())
    Item.objects.filter(external_id="vqa_1").update(live_assignments=1)
    before = snapshot()
    [problem] = refusal(tmp_path, records(r1={"Output2": "x"}), conflicts="replace").problems
    assert "1 of these items is claimed or voted on and cannot be replaced" in problem.message
    assert snapshot() == before


def test_the_api_gives_the_same_report_and_takes_the_option(tmp_path, project):
    imported(tmp_path, records())
    client = APIClient()
    user = make_member(project, role="admin")
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    changed = write(tmp_path, records(r3={"Output2": "Changed."}))
    images = tmp_path / "images" / "red.png"

    def post(**fields):
        import io
        import zipfile

        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as archive:
            archive.writestr("images/red.png", images.read_bytes())
        return client.post(
            "/api/v1/projects/bench/imports/",
            {
                "dataset": SimpleUploadedFile("data.json", changed.read_bytes()),
                "images": SimpleUploadedFile("images.zip", out.getvalue()),
                **fields,
            },
            format="multipart",
        )

    response = post()
    assert response.status_code == 400
    [problem] = response.json()["error"]["problems"]
    with pytest.raises(ImportFailed) as failure:
        imported(tmp_path, records(r3={"Output2": "Changed."}), surface="api")
    assert problem["text"] == str(failure.value.problems[0])
    assert "Output2 differs on 1 record (first: 3)" in problem["message"]
    assert "conflicts=suffix" in problem["message"]
    accepted = post(conflicts="suffix")
    assert accepted.status_code == 200, accepted.content
    assert accepted.json()["created"] == 1
