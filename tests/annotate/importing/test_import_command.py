"""`manage.py import_items`: output on success, CommandError listing the
problems on failure, and parsing of its own options."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotate.importing.parse import pairs_swap
from annotate.models import ImageAsset, Item
from tests.factories import make_assignment, make_project, png_bytes

pytestmark = pytest.mark.django_db

CORPUS = Path(__file__).resolve().parents[3] / "tests" / "data" / "import"


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("import_items", *args, stdout=out, verbosity=0)
    return out.getvalue()


def fails(*args: str) -> str:
    with pytest.raises(CommandError) as failure:
        run(*args)
    return str(failure.value)


@pytest.fixture
def project():
    return make_project(slug="bench")


def test_success_prints_the_counts(project):
    output = run("bench", str(CORPUS / "valid.json"), "--images", str(CORPUS))
    assert output == "valid.json: 2 created, 0 updated, 0 unchanged; 2 new images stored\n"
    assert project.items.count() == 2


def test_second_run_of_the_same_file_changes_nothing(project):
    run("bench", str(CORPUS / "valid.json"), "--images", str(CORPUS))
    output = run("bench", str(CORPUS / "valid.json"), "--images", str(CORPUS))
    assert output == "valid.json: 0 created, 0 updated, 2 unchanged; 0 new images stored\n"
    assert (Item.objects.count(), ImageAsset.objects.count()) == (2, 2)


def test_progress_bar_does_not_break_the_import(project, capsys):
    out = io.StringIO()
    call_command(
        "import_items", "bench", str(CORPUS / "valid.json"), "--images", str(CORPUS), stdout=out
    )
    assert "2 created" in out.getvalue()
    assert "validating" in capsys.readouterr().err


def test_failure_raises_command_error_listing_every_problem(project):
    message = fails("bench", str(CORPUS / "missing_fields.json"), "--images", str(CORPUS))
    assert message.startswith("import failed, nothing was written:\n")
    assert message.splitlines()[1:] == [
        "missing_fields.json:2: record 0: field 'ID': is missing",
        "missing_fields.json:3: record 1: field 'Text': is missing",
        "missing_fields.json:4: record 2: field 'Image': is missing",
        "missing_fields.json:5: record 3: field 'Output1': is missing",
        "missing_fields.json:6: record 4: field 'Output2': is missing",
        "missing_fields.json:8: record 6: field 'Category': is missing",
    ]
    assert Item.objects.count() == 0


def test_failure_beyond_the_cap_says_where_it_stopped(project, settings):
    settings.IMPORT_MAX_ERRORS = 2
    message = fails("bench", str(CORPUS / "missing_fields.json"), "--images", str(CORPUS))
    assert message.splitlines()[-1] == "(stopped after 2 errors)"
    assert len(message.splitlines()) == 4


def test_zip_with_traversing_member_fails(project, tmp_path):
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("data.json", (CORPUS / "valid.json").read_bytes())
        zf.writestr("../evil.png", png_bytes())
    message = fails("bench", str(archive))
    assert "archive member '../evil.png' has an absolute path or '..'" in message
    assert Item.objects.count() == 0


def test_unknown_project_is_an_error():
    assert fails("nope", str(CORPUS / "valid.json")) == "no project with slug 'nope'"


def test_missing_dataset_file_is_an_error(project, tmp_path):
    assert "nope.json: file not found" in fails("bench", str(tmp_path / "nope.json"))


@pytest.mark.parametrize("bad", ["prompt", "=query", "prompt=", "prompt:query"])
def test_field_map_that_is_not_ours_equals_theirs_is_an_error(project, bad):
    message = fails(
        "bench", str(CORPUS / "query_field.jsonl"), "--images", str(CORPUS), "--field-map", bad
    )
    assert message == f"--field-map {bad!r} is not OURS=THEIRS"


def test_field_map_naming_an_unknown_field_of_ours_is_an_error(project):
    message = fails(
        "bench",
        str(CORPUS / "query_field.jsonl"),
        "--images",
        str(CORPUS),
        "--field-map",
        "promt=query",
    )
    assert "field map names unknown field 'promt'" in message


def test_repeated_field_maps_are_all_applied(project):
    output = run(
        "bench",
        str(CORPUS / "query_field.jsonl"),
        "--images",
        str(CORPUS),
        "--field-map",
        "id=qid",
        "--field-map",
        "prompt=query",
        "--field-map",
        "category=subset",
    )
    assert "2 created" in output
    assert set(project.items.values_list("external_id", "prompt")) == {
        ("mm_1", "Is the square red?"),
        ("mm_2", "Is the square blue?"),
    }


def test_domain_option_fills_in_a_missing_category(project):
    message = fails("bench", str(CORPUS / "no_category.jsonl"), "--images", str(CORPUS))
    assert "give --domain for the whole file" in message
    run("bench", str(CORPUS / "no_category.jsonl"), "--images", str(CORPUS), "--domain", "vqa")
    assert project.items.get().domain.slug == "vqa"


def test_seed_and_gold_from_label_options(project):
    run(
        "bench",
        str(CORPUS / "valid.jsonl"),
        "--images",
        str(CORPUS),
        "--seed",
        "41",
        "--gold-from-label",
    )
    for ext_id, gold, meta in project.items.values_list("external_id", "gold_choice", "meta"):
        assert meta["original_label"] == ("2" if pairs_swap(41, ext_id) else "1")
        assert gold == meta["original_label"]


def test_format_option_forces_the_reader(project):
    message = fails(
        "bench", str(CORPUS / "valid.json"), "--images", str(CORPUS), "--format", "pairs"
    )
    assert "valid.json:2: record 0: field 'id': is missing" in message


def test_update_option_replaces_changed_items_without_votes(project, tmp_path):
    run("bench", str(CORPUS / "valid.json"), "--images", str(CORPUS))
    changed = tmp_path / "valid.json"
    changed.write_text((CORPUS / "valid.json").read_text().replace("Red.", "Crimson."))

    message = fails("bench", str(changed), "--images", str(CORPUS))
    assert "1 record has an ID already in the project with different content" in message

    output = run("bench", str(changed), "--images", str(CORPUS), "--update")
    assert output.startswith("valid.json: 0 created, 1 updated, 1 unchanged")
    assert project.items.get(external_id="vqa_2").response_1 == "Crimson."


def test_update_option_leaves_items_with_votes_alone(project, tmp_path):
    run("bench", str(CORPUS / "valid.json"), "--images", str(CORPUS))
    item = project.items.get(external_id="vqa_2")
    make_assignment(item)
    Item.objects.filter(pk=item.pk).update(live_assignments=1)
    changed = tmp_path / "valid.json"
    changed.write_text((CORPUS / "valid.json").read_text().replace("Red.", "Crimson."))

    message = fails("bench", str(changed), "--images", str(CORPUS), "--update")

    assert "1 of these items is claimed or voted on and cannot be replaced" in message
    assert project.items.get(external_id="vqa_2").response_1 == "Red."
