"""Issue 31: one import attempt reports every kind of problem once, with a
count and the first record numbers, however many records share it."""

from __future__ import annotations

import pytest

from annotate.importing.options import ImportOptions, parse_mapping
from annotate.importing.records import ImportFailed
from annotate.importing.service import import_items_from_paths
from tests.annotate.importing.public_sets import VL_DOMAIN_MAP, vl_rewardbench
from tests.factories import make_project

pytestmark = pytest.mark.django_db


def refusal(tmp_path, **options) -> ImportFailed:
    vl = vl_rewardbench()
    path = tmp_path / "vl.jsonl"
    path.write_bytes(vl.jsonl())
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(project=make_project(), dataset=path, **options)
    return failure.value


def test_published_vl_rewardbench_without_options_names_each_kind_once(tmp_path):
    # No images, no domain, repeated IDs: three kinds, three problems.
    failure = refusal(tmp_path, options=ImportOptions(surface="form"))
    problems = failure.problems
    assert not failure.truncated
    assert [(p.field, p.count) for p in problems] == [("category", 105), ("id", 1), ("image", 80)]
    missing, repeated, images = (str(p) for p in problems)
    assert missing.startswith(
        "vl.jsonl:1: record 0: field 'category': is missing; give \"Domain\" for the whole file"
    )
    assert missing.endswith("(and 104 more records: 1, 2, 3, 4, 5, …)")
    assert "25 IDs occur more than once (50 records)" in repeated
    assert images == (
        "vl.jsonl:1: record 0: field 'image': image 'vl_reward/img/image_0.jpg': "
        "no image folder or archive was given (and 79 more records: 1, 2, 3, 4, 5, …)"
    )


def test_unmapped_prefixes_duplicates_and_missing_images_come_in_one_report(tmp_path):
    options = ImportOptions(
        domain_from="id-prefix",
        domain_map=parse_mapping("hallucination=vqa,wildvision=general_preference"),
        surface="api",
    )
    failure = refusal(tmp_path, options=options)
    kinds = [p.message.split(":")[0] for p in failure.problems]
    assert kinds == [
        "3 values of the ID prefixes name no domain",
        "25 IDs occur more than once (50 records)",
        "no image folder or archive was given",
    ]
    unmapped = failure.problems[0].message
    for prefix in ("'RLAIF' (21 records", "'mathverse' (21 records", "'mmmu_pro' (21 records"):
        assert prefix in unmapped
    # The records refused for their domain still had their images checked.
    assert failure.problems[2].count == 80
    assert "duplicates=keep-first" in failure.problems[1].message


def test_unknown_categories_are_one_problem_listing_each_value(tmp_path):
    vl = vl_rewardbench()
    for n, row in enumerate(vl.rows):
        row["category"] = ("charts", "maps", "vqa")[n % 3]
    vl.write(tmp_path, "vl.jsonl")
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(
            project=make_project(),
            dataset=tmp_path / "vl.jsonl",
            images=tmp_path,
            options=ImportOptions(duplicates="suffix"),
        )
    [problem] = failure.value.problems
    assert problem.field == "category"
    assert problem.message.startswith(
        "2 values of the field 'category' name no domain: 'charts' (35 records: 0, 3, 6, 9, 12, "
        "…), 'maps' (35 records: 1, 4, 7, 10, 13, …); map each to a domain with --domain-map"
    )


def test_the_same_file_with_its_options_fixed_imports(tmp_path):
    vl = vl_rewardbench()
    vl.write(tmp_path, "vl.jsonl")
    result = import_items_from_paths(
        project=make_project(),
        dataset=tmp_path / "vl.jsonl",
        images=tmp_path,
        options=ImportOptions(
            duplicates="suffix", domain_from="id-prefix", domain_map=parse_mapping(VL_DOMAIN_MAP)
        ),
    )
    assert (result.created, result.duplicates_renamed) == (105, 25)
