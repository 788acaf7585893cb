"""Public preference sets import as they are published (issue 22): files
shaped like VL-RewardBench and MM-RLHF-RewardBench (tests/annotate/importing/
public_sets.py) through `import_items` and the upload page, with duplicate
IDs refused in one message, kept first or suffixed, and domains derived
from the ID's prefix or the image's folder. The API's side is in
tests/api/test_api_import_options.py."""

from __future__ import annotations

import io
import json
import zipfile
from collections import Counter

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotate.importing.options import (
    ImportOptions,
    Wording,
    id_prefix,
    image_folder,
    parse_domain_from,
    parse_mapping,
    suffixed_ids,
)
from annotate.importing.records import ImportFailed, ProblemLog
from annotate.importing.service import import_items_from_paths
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
from tests.factories import make_member, make_project, mrb_record, pairs_record, png_bytes

pytestmark = pytest.mark.django_db

VL_ROWS = VL_DISTINCT_IDS + VL_REPEATED_IDS


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("import_items", *args, stdout=out, verbosity=0)
    return out.getvalue()


def fails(*args: str) -> list[str]:
    """The problems of a refused import, one per line, after checking nothing was written."""
    with pytest.raises(CommandError) as failure:
        run(*args)
    lines = str(failure.value).splitlines()
    assert lines[0] == "import failed, nothing was written:"
    assert_nothing_written()
    return lines[1:]


def assert_nothing_written() -> None:
    assert Item.objects.count() == 0
    assert ImageAsset.objects.count() == 0
    assert not default_storage.exists("images")


def domains_by_id() -> dict[str, str]:
    return dict(Item.objects.values_list("external_id", "domain__slug"))


@pytest.fixture
def project():
    return make_project(slug="bench")


@pytest.fixture
def vl(tmp_path):
    return tmp_path / "vl", vl_rewardbench().write(tmp_path / "vl", "vl_rewardbench.jsonl")


@pytest.fixture
def mm(tmp_path):
    return tmp_path / "mm", mm_rlhf_rewardbench().write(tmp_path / "mm", "mm_rlhf.jsonl")


# --- VL-RewardBench through the command ---------------------------------------------------


def test_vl_rewardbench_as_published_is_refused_with_one_message_listing_the_repeated_ids(
    project, vl
):
    folder, path = vl
    (problem,) = fails("bench", str(path), "--images", str(folder), "--domain", "vqa")
    assert problem.startswith(
        f"vl_rewardbench.jsonl: field 'id': {VL_REPEATED_IDS} IDs occur more than once "
        f"({2 * VL_REPEATED_IDS} records): 'hallucination_pair-0' (2 records: 0, 80), "
        "'wildvision_battle_1' (2 records: 1, 81), "
    )
    assert problem.count(" records: ") == VL_REPEATED_IDS
    assert "use --duplicates=keep-first" in problem and "or --duplicates=suffix" in problem


def test_vl_rewardbench_imports_with_suffixed_ids_and_domains_from_the_id_prefix(project, vl):
    folder, path = vl
    output = run(
        "bench", str(path), "--images", str(folder), "--duplicates", "suffix",
        "--domain-from", "id-prefix", "--domain-map", VL_DOMAIN_MAP,
    )  # fmt: skip
    assert output == (
        f"vl_rewardbench.jsonl: {VL_ROWS} created, 0 updated, 0 unchanged; "
        f"{VL_ROWS} new images stored; {VL_REPEATED_IDS} records with a repeated ID renamed\n"
    )
    domains = domains_by_id()
    assert domains["hallucination_pair-0"] == domains["hallucination_pair-0#2"] == "vqa"
    assert domains["RLAIF-V_4"] == "vqa"  # the longest key, not "RLAIF"
    assert Counter(domains.values()) == {
        "vqa": 2 * 16 + 2 * 5,
        "general_preference": 16 + 5,
        "reasoning": 16 + 5,
        "knowledge": 16 + 5,
    }
    renamed = Item.objects.get(external_id="mathverse_2#2")
    assert renamed.meta["original_id"] == "mathverse_2"
    assert renamed.prompt == "Another question 2 on another picture."
    assert "original_id" not in Item.objects.get(external_id="mathverse_2").meta
    # Again: the same renames, so nothing changes.
    again = run(
        "bench", str(path), "--images", str(folder), "--duplicates=suffix",
        "--domain-from=id-prefix", f"--domain-map={VL_DOMAIN_MAP}",
    )  # fmt: skip
    assert f"0 created, 0 updated, {VL_ROWS} unchanged" in again


def test_keep_first_imports_the_first_record_of_each_id(project, vl):
    folder, path = vl
    output = run(
        "bench", str(path), "--images", str(folder), "--duplicates", "keep-first",
        "--domain-from", "id-prefix", "--domain-map", VL_DOMAIN_MAP,
    )  # fmt: skip
    assert f"{VL_DISTINCT_IDS} created" in output
    assert f"{VL_REPEATED_IDS} records with a repeated ID left out" in output
    assert Item.objects.get(external_id="mmmu_pro_3").prompt.startswith("Question 3:")


def test_id_prefixes_nobody_mapped_are_listed_once_each_with_their_counts(project, vl):
    folder, path = vl
    (problem,) = fails(
        "bench", str(path), "--images", str(folder), "--duplicates", "suffix",
        "--domain-from", "id-prefix", "--domain-map", "hallucination=vqa,mmmu=knowledge",
    )  # fmt: skip
    assert problem == (
        "vl_rewardbench.jsonl: field 'id': 3 values of the ID prefixes name no domain: "
        "'RLAIF' (21 records: 4, 9, 14, 19, 24, …), "
        "'mathverse' (21 records: 2, 7, 12, 17, 22, …), "
        "'wildvision_battle' (21 records: 1, 6, 11, 16, 21, …); "
        "map each to a domain with --domain-map (value=domain; domains: general_correctness, "
        "general_preference, knowledge, reasoning, safety, vqa)"
    )


# --- MM-RLHF-RewardBench through the command ----------------------------------------------


def test_mm_rlhf_rewardbench_imports_with_domains_from_the_image_folder(project, mm):
    folder, path = mm
    output = run(
        "bench", str(path), "--images", str(folder), "--duplicates", "suffix",
        "--domain-from", "image-folder", "--domain-map", MM_DOMAIN_MAP,
    )  # fmt: skip
    assert output.startswith(f"mm_rlhf.jsonl: {MM_ROWS} created, 0 updated, 0 unchanged;")
    assert f"{MM_ROWS - MM_IDS} records with a repeated ID renamed" in output
    domains = domains_by_id()
    assert domains["mm_000"] == "knowledge"  # mcq/
    assert domains["mm_001#4"] == "general_preference"  # short/
    assert domains["mm_002"] == "general_correctness"  # long/
    assert domains["mm_003#2"] == "safety"  # safety/: a domain slug needs no entry
    assert [i for i in domains if i.startswith("mm_000")] == [
        "mm_000",
        *(f"mm_000#{k}" for k in range(2, 5)),
    ]


def test_the_same_content_under_two_ids_is_two_items(project, mm):
    """Content duplicates are not merged: an item is its ID (the content hash
    includes it), as the file's authors published it."""
    folder, path = mm
    run(
        "bench", str(path), "--images", str(folder), "--duplicates", "suffix",
        "--domain-from", "image-folder", "--domain-map", MM_DOMAIN_MAP,
    )  # fmt: skip
    original = Item.objects.get(external_id="mm_000")
    copy = Item.objects.get(external_id="mm_copy_0")
    assert (original.prompt, original.image_id) == (copy.prompt, copy.image_id)
    assert {original.response_1, original.response_2} == {copy.response_1, copy.response_2}
    assert original.content_hash != copy.content_hash


def test_a_missing_category_on_every_record_is_one_problem_with_a_count(project, mm):
    folder, path = mm
    # The repeated IDs are named in the same report (issue 31).
    problem, repeated = fails("bench", str(path), "--images", str(folder))
    assert problem == (
        "mm_rlhf.jsonl:1: record 0: field 'category': is missing; give --domain for the whole "
        "file, derive one with --domain-from or map a field to 'category' with --field-map "
        f"(and {MM_ROWS - 1} more records: 1, 2, 3, 4, 5, …)"
    )
    assert "IDs occur more than once" in repeated and repeated.startswith(
        "mm_rlhf.jsonl: field 'id'"
    )


def test_domain_from_a_field_maps_its_values(project, tmp_path):
    rows = [pairs_record(f"p{n}", category=None, task=["chart", "ocr"][n % 2]) for n in range(4)]
    for row in rows:
        del row["category"]
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "red.png").write_bytes(png_bytes())
    run(
        "bench", str(path), "--images", str(tmp_path),
        "--domain-from", "field:task", "--domain-map", "chart=reasoning", "--domain-map", "ocr=vqa",
    )  # fmt: skip
    assert domains_by_id() == {"p0": "reasoning", "p1": "vqa", "p2": "reasoning", "p3": "vqa"}
    assert Item.objects.get(external_id="p0").meta["source"] == {"task": "chart"}


def test_a_domain_map_alone_maps_the_category_field_of_an_mrb_file(project, tmp_path):
    records = [mrb_record("a", Category="charts"), mrb_record("b", Category="vqa")]
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "red.png").write_bytes(png_bytes())
    path = tmp_path / "data.json"
    path.write_text(json.dumps(records))
    run("bench", str(path), "--images", str(tmp_path), "--domain-map", "charts=reasoning")
    assert domains_by_id() == {"a": "reasoning", "b": "vqa"}


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--domain-from", "folder"], "--domain-from must be field:<name>, id-prefix or "),
        (["--domain-map", "mcq"], "--domain-map: entry 1 is not value=domain: 'mcq'"),
    ],
)
def test_malformed_domain_options_are_command_errors(project, mm, args, expected):
    folder, path = mm
    with pytest.raises(CommandError, match=expected):
        run("bench", str(path), "--images", str(folder), *args)


def test_a_domain_map_naming_an_unknown_domain_is_refused_before_reading(project, mm):
    folder, path = mm
    (problem,) = fails(
        "bench", str(path), "--images", str(folder), "--domain-from", "image-folder",
        "--domain-map", "mcq=charts",
    )  # fmt: skip
    assert problem.startswith("mm_rlhf.jsonl: --domain-map maps 'mcq' to unknown domain 'charts'")


def test_a_fixed_domain_and_a_derived_one_are_refused_together(project, mm):
    folder, path = mm
    (problem,) = fails(
        "bench", str(path), "--images", str(folder), "--domain", "vqa",
        "--domain-from", "image-folder",
    )  # fmt: skip
    assert problem == (
        "mm_rlhf.jsonl: give either --domain (one domain for the whole file) or "
        "--domain-from/--domain-map, not both"
    )


# --- Unlabelled pairs ---------------------------------------------------------------------


def write_images(folder):
    (folder / "images").mkdir(exist_ok=True)
    (folder / "images" / "red.png").write_bytes(png_bytes())


def unlabelled(external_id: str, **extra) -> dict:
    return {
        "id": external_id,
        "prompt": f"Which is better for {external_id}?",
        "response_1": f"first answer {external_id}",
        "response_2": f"second answer {external_id}",
        "image": "images/red.png",
        "category": "vqa",
        **extra,
    }


def test_unlabelled_pairs_import_in_file_order_without_a_label(project, tmp_path):
    write_images(tmp_path)
    path = tmp_path / "u.jsonl"
    rows = [unlabelled(f"u{n}", model_1="m-a", model_2="m-b") for n in range(6)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run("bench", str(path), "--images", str(tmp_path), "--gold-from-label")
    for item in Item.objects.all():
        n = item.external_id
        assert (item.response_1, item.response_2) == (f"first answer {n}", f"second answer {n}")
        assert (item.model_1, item.model_2) == ("m-a", "m-b")
        assert item.gold_choice == ""
        assert item.meta == {"format": "pairs"}


def test_a_json_array_of_unlabelled_pairs_is_read_as_pairs(project, tmp_path):
    write_images(tmp_path)
    path = tmp_path / "u.json"
    path.write_text(json.dumps([unlabelled("a"), unlabelled("b")]))
    assert "2 created" in run("bench", str(path), "--images", str(tmp_path))


def test_unlabelled_fields_can_be_mapped(project, tmp_path):
    write_images(tmp_path)
    row = unlabelled("a")
    row["answer_a"], row["answer_b"] = row.pop("response_1"), row.pop("response_2")
    path = tmp_path / "u.jsonl"
    path.write_text(json.dumps(row) + "\n")
    run(
        "bench", str(path), "--images", str(tmp_path),
        "--field-map", "response_1=answer_a", "--field-map", "response_2=answer_b",
    )  # fmt: skip
    assert Item.objects.get().response_2 == "second answer a"


def test_a_record_with_both_a_label_and_unlabelled_responses_is_refused(project, tmp_path):
    write_images(tmp_path)
    path = tmp_path / "u.jsonl"
    path.write_text(json.dumps(unlabelled("a", chosen="x", rejected="y")) + "\n")
    assert fails("bench", str(path), "--images", str(tmp_path)) == [
        "u.jsonl:1: record 0: field 'response_1': cannot go with 'chosen'/'rejected': "
        "a record holds one pair"
    ]


def test_an_mrb_record_without_better_imports_without_a_prior(project, tmp_path):
    write_images(tmp_path)
    record = mrb_record("a")
    del record["Better"]
    path = tmp_path / "data.json"
    path.write_text(json.dumps([record]))
    run("bench", str(path), "--images", str(tmp_path))
    assert Item.objects.get().meta["prior_better"] is None


# --- The upload page ----------------------------------------------------------------------


def upload(client, project, public_set, name: str, **fields):
    return client.post(
        reverse("import", args=[project.slug]),
        {
            "dataset": SimpleUploadedFile(name, public_set.jsonl()),
            "images": SimpleUploadedFile("images.zip", public_set.images_zip()),
            **fields,
        },
    )


@pytest.fixture
def admin_client(client, project):
    client.force_login(make_member(project, role="admin"))
    return client


def test_the_upload_form_imports_mm_rlhf_with_its_options(admin_client, project):
    response = upload(
        admin_client, project, mm_rlhf_rewardbench(), "mm.jsonl",
        duplicates="suffix", domain_from="image-folder",
        domain_map=MM_DOMAIN_MAP.replace(",", "\n"),
    )  # fmt: skip
    assert response.status_code == 302, response.content.decode()[-2000:]
    assert Item.objects.count() == MM_ROWS
    assert Item.objects.get(external_id="mm_000#2").meta["original_id"] == "mm_000"


def test_the_upload_form_words_problems_in_its_own_terms(admin_client, project):
    response = upload(admin_client, project, vl_rewardbench(), "vl.jsonl", domain="vqa")
    assert response.status_code == 400
    (problem,) = response.context["problems"]
    assert 'use "Duplicate IDs": keep-first' in problem and '"Duplicate IDs": suffix' in problem
    assert "--" not in problem
    assert_nothing_written()


def test_the_upload_form_refuses_a_malformed_domain_source(admin_client, project):
    response = upload(admin_client, project, vl_rewardbench(), "vl.jsonl", domain_from="prefix")
    assert response.status_code == 400
    # A choice now (issue 31): anything but its options is refused.
    assert response.context["form"].errors["domain_from"] == [
        "Select a valid choice. prefix is not one of the available choices."
    ]


def test_the_upload_form_names_the_conflicts_choice_by_its_label(admin_client, project):
    data = mm_rlhf_rewardbench()
    options = {
        "duplicates": "keep-first",
        "domain_from": "image-folder",
        "domain_map": MM_DOMAIN_MAP,
    }
    assert upload(admin_client, project, data, "mm.jsonl", **options).status_code == 302
    data.rows[0]["prompt"] = "Changed."
    response = upload(admin_client, project, data, "mm.jsonl", **options)
    (problem,) = response.context["problems"]
    assert "prompt differs on 1 record (first: 0)" in problem
    assert problem.endswith(
        '"Existing IDs with different content": suffix (import them as new items ID#2, …) or '
        '"Existing IDs with different content": replace (replace the items; none is claimed '
        "or voted on yet)"
    )


# --- The options themselves ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("external_id", "prefix"),
    [
        ("hallucination_pair-123", "hallucination_pair"),
        ("wildvision_battle_12", "wildvision_battle"),
        ("mathverse12", "mathverse"),
        ("mmmu_pro_3", "mmmu_pro"),
        ("RLAIF-V_7", "RLAIF"),
        ("plain", "plain"),
        ("123", ""),
    ],
)
def test_the_id_prefix_is_its_leading_letters_and_underscores(external_id, prefix):
    assert id_prefix(external_id) == prefix


@pytest.mark.parametrize(
    ("ref", "folder"),
    [
        ("mcq/073712.png", "mcq"),
        ("vl_reward/img/image_0.jpg", "vl_reward"),
        ("./long/a.png", "long"),
        ("a.png", ""),
    ],
)
def test_the_image_folder_is_the_first_folder_of_the_path(ref, folder):
    assert image_folder(ref) == folder


def test_suffixes_skip_ids_the_file_already_uses():
    first = {"a": 0, "a#2": 2, "b": 3}
    renames = suffixed_ids(first, {"a": [1, 4, 5], "b": [6]})
    assert renames == {1: "a#3", 4: "a#4", 5: "a#5", 6: "b#2"}


def test_a_repeated_problem_is_counted_not_repeated_and_does_not_fill_the_cap():
    log = ProblemLog("f.jsonl", 2)
    for n in range(10):
        log.add("is missing", line=n + 1, index=n, field="category")
    log.add("is empty", line=3, index=2, field="prompt")
    assert not log.truncated
    first, second = log.problems
    assert (first.count, first.more, first.records) == (10, (1, 2, 3, 4, 5), [0, 1, 2, 3, 4, 5])
    assert str(first) == (
        "f.jsonl:1: record 0: field 'category': is missing (and 9 more records: 1, 2, 3, 4, 5, …)"
    )
    assert str(second) == "f.jsonl:3: record 2: field 'prompt': is empty"
    log.add("another", line=4, index=3)
    assert log.truncated and len(log.problems) == 2


def test_mappings_are_read_from_commas_or_lines():
    assert parse_mapping("a=x, b = y\nc=z\n") == {"a": "x", "b": "y", "c": "z"}
    with pytest.raises(ValueError, match="'a' is mapped twice"):
        parse_mapping("a=x,a=y")
    assert parse_domain_from(" field: task ") == "field:task"


@pytest.mark.parametrize(
    ("surface", "option", "setting"),
    [
        ("cli", "--domain-map", "--duplicates=suffix"),
        ("api", "field 'domain_map'", "duplicates=suffix"),
        ("form", '"Domain map"', '"Duplicate IDs": suffix'),
    ],
)
def test_each_surface_names_options_its_own_way(surface, option, setting):
    wording = Wording(surface)
    assert wording.option("domain_map") == option
    assert wording.setting("duplicates", "suffix") == setting


def test_options_apply_to_files_read_from_a_zip(project, tmp_path):
    data = mm_rlhf_rewardbench()
    bundle = tmp_path / "mm.zip"
    with zipfile.ZipFile(bundle, "w") as archive:
        archive.writestr("mm/mm.jsonl", data.jsonl())
        for ref, image in data.images.items():
            archive.writestr(f"mm/{ref}", image)
    options = ImportOptions(
        duplicates="keep-first", domain_from="image-folder", domain_map=parse_mapping(MM_DOMAIN_MAP)
    )
    result = import_items_from_paths(project=project, dataset=bundle, options=options)
    assert (result.created, result.duplicates_skipped) == (MM_IDS, MM_ROWS - MM_IDS)
    with pytest.raises(ImportFailed):
        import_items_from_paths(project=make_project(slug="other"), dataset=bundle)


def test_an_mrb_file_takes_its_domain_from_the_image_folder(project, tmp_path):
    images = {"charts/a.png": png_bytes(), "safety/b.png": png_bytes(color=(1, 2, 3))}
    for ref, data in images.items():
        (tmp_path / ref).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / ref).write_bytes(data)
    records = [mrb_record("a", Image="charts/a.png"), mrb_record("b", Image="safety/b.png")]
    path = tmp_path / "data.json"
    path.write_text(json.dumps(records))
    run(
        "bench", str(path), "--images", str(tmp_path),
        "--domain-from", "image-folder", "--domain-map", "charts=reasoning",
    )  # fmt: skip
    assert domains_by_id() == {"a": "reasoning", "b": "safety"}
    assert Item.objects.get(external_id="a").meta["source"] == {"Category": "vqa"}


def test_no_import_message_spells_a_shell_flag_outside_the_wording():
    """Messages reach API and form users: a flag must come from options.Wording."""
    import ast
    import re
    from pathlib import Path

    import annotate.importing

    folder = Path(annotate.importing.__file__).parent
    paths = [p for p in folder.glob("*.py") if p.name != "options.py"]
    paths.append(folder.parent / "api" / "imports.py")
    found = []
    for path in paths:
        tree = ast.parse(path.read_text())
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
            and node.body
            and isinstance(node.body[0], ast.Expr)
        }
        found += [
            f"{path.name}:{node.lineno}: {node.value!r}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and re.search(r"(^|\s|\()--[a-z]", node.value)
        ]
    assert found == []


def test_a_labelled_pair_keeps_unrelated_model_fields_in_its_metadata(project, tmp_path):
    write_images(tmp_path)
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps(pairs_record("a", model_1="kept")) + "\n")
    run("bench", str(path), "--images", str(tmp_path))
    assert Item.objects.get().meta["source"] == {"model_1": "kept"}
