"""Hugging Face parquet imports (annotate.importing.hfparquet): the published
layouts of VL-RewardBench and MM-RLHF-RewardBench, image structs and lists of
them, responses as a list with a ranking, the studio's own release parquet,
and problems that name the file, the row and the column.

The fixture files are written by the tests from the published layouts (see
the module doc of hfparquet): VL-RewardBench on the Hub has `id, query,
response (2 strings), image ({bytes, path}), human_ranking ([0, 1] = the
first is better), models, judge, rationale, query_source, ground_truth`;
MM-RLHF-RewardBench has its JSONL's columns `id, prompt, chosen, rejected,
image, chosen_reason, rejected_reason` with the image bytes in the row."""

from __future__ import annotations

import hashlib
from pathlib import Path
from types import SimpleNamespace

import pytest

from annotate.importing import hfparquet
from annotate.importing.records import ImportFailed
from annotate.importing.service import import_items_from_paths
from annotate.models import ImageAsset, Item
from tests.factories import make_project, png_bytes

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

pytestmark = pytest.mark.django_db

IMAGE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])


def write_parquet(path: Path, columns: dict[str, list], types: dict[str, object] | None = None):
    types = types or {}
    arrays = {name: pa.array(values, type=types.get(name)) for name, values in columns.items()}
    pq.write_table(pa.table(arrays), path, row_group_size=2)
    return path


def vl_rewardbench(tmp_path: Path, rows: int = 4) -> Path:
    colours = [(200, 30, 30), (30, 200, 30), (30, 30, 200), (200, 200, 30)]
    return write_parquet(
        tmp_path / "test-00000-of-00001.parquet",
        {
            "id": [f"mathverse_{n}" for n in range(rows)],
            "query": [f"What is shown in picture {n}?" for n in range(rows)],
            "response": [[f"first answer {n}", f"second answer {n}"] for n in range(rows)],
            "image": [
                {"bytes": png_bytes(color=colours[n % 4]), "path": f"img_{n}.png"}
                for n in range(rows)
            ],
            "human_ranking": [[0, 1] if n % 2 == 0 else [1, 0] for n in range(rows)],
            "models": [["model-a", "model-b"] for _ in range(rows)],
            "judge": ["human"] * rows,
            "rationale": [f"because {n}" for n in range(rows)],
            "query_source": ["mathverse"] * rows,
            "ground_truth": ["B"] * rows,
        },
        {"image": IMAGE},
    )


def test_vl_rewardbench_layout_imports_with_ranking_and_image_bytes(tmp_path):
    project = make_project()
    result = import_items_from_paths(
        project=project, dataset=vl_rewardbench(tmp_path), domain="reasoning"
    )
    assert (result.created, result.images_stored) == (4, 4)
    items = {i.external_id: i for i in Item.objects.filter(project=project)}
    first, second = items["mathverse_0"], items["mathverse_1"]
    # [0, 1]: the first response is preferred; [1, 0]: the second one.
    chosen_0 = first.response_1 if first.meta["original_label"] == "1" else first.response_2
    chosen_1 = second.response_1 if second.meta["original_label"] == "1" else second.response_2
    assert chosen_0 == "first answer 0"
    assert chosen_1 == "second answer 1"
    assert first.prompt == "What is shown in picture 0?"
    assert {first.model_1, first.model_2} == {"model-a", "model-b"}
    assert first.meta["source"]["rationale"] == "because 0"
    assert first.meta["source"]["human_ranking"] == [0, 1]
    assert first.image_path == "img_0.png"
    assert first.image.sha256 == hashlib.sha256(png_bytes(color=(200, 30, 30))).hexdigest()
    again = import_items_from_paths(
        project=project, dataset=vl_rewardbench(tmp_path), domain="reasoning"
    )
    assert (again.created, again.unchanged) == (0, 4)


def test_mm_rlhf_layout_with_duplicate_image_bytes_stores_each_image_once(tmp_path):
    project = make_project()
    same = png_bytes(color=(1, 2, 3))
    path = write_parquet(
        tmp_path / "mm.parquet",
        {
            "id": ["mcq_1", "mcq_2", "long_3"],
            "prompt": ["p1", "p2", "p3"],
            "chosen": ["c1", "c2", "c3"],
            "rejected": ["r1", "r2", "r3"],
            # HF `datasets` often writes no path, or the same name for every row.
            "image": [
                {"bytes": same, "path": None},
                {"bytes": same, "path": "image.png"},
                {"bytes": png_bytes(color=(9, 9, 9)), "path": "image.png"},
            ],
            "chosen_reason": ["good", "good", "good"],
            "rejected_reason": ["bad", "bad", "bad"],
        },
        {"image": IMAGE},
    )
    result = import_items_from_paths(project=project, dataset=path, domain="knowledge")
    assert (result.created, result.images_stored) == (3, 2)
    assert ImageAsset.objects.count() == 2
    paths = dict(Item.objects.values_list("external_id", "image_path"))
    assert paths["mcq_1"].startswith("by-sha256/")  # no path: named by its content
    assert paths["mcq_2"] == "image.png"
    assert paths["long_3"].startswith("by-sha256/")  # same name, other bytes


def test_images_list_column_and_category_column(tmp_path):
    project = make_project()
    path = write_parquet(
        tmp_path / "list.parquet",
        {
            "id": ["a_1"],
            "prompt": ["p"],
            "chosen": ["c"],
            "rejected": ["r"],
            "images": [[{"bytes": png_bytes(), "path": "x/a.png"}]],
            "category": ["vqa"],
        },
        {"images": pa.list_(IMAGE)},
    )
    result = import_items_from_paths(project=project, dataset=path)
    assert result.created == 1
    assert Item.objects.get().image_path == "x/a.png"


def test_image_struct_without_bytes_reads_the_path_from_the_images_folder(tmp_path):
    project = make_project()
    (tmp_path / "imgs").mkdir()
    (tmp_path / "imgs" / "a.png").write_bytes(png_bytes())
    path = write_parquet(
        tmp_path / "paths.parquet",
        {
            "id": ["a_1"],
            "prompt": ["p"],
            "chosen": ["c"],
            "rejected": ["r"],
            "image": [{"bytes": None, "path": "a.png"}],
        },
        {"image": IMAGE},
    )
    result = import_items_from_paths(
        project=project, dataset=path, images=tmp_path / "imgs", domain="vqa"
    )
    assert result.created == 1


def test_problems_name_file_row_and_column(tmp_path):
    project = make_project()
    path = write_parquet(
        tmp_path / "bad.parquet",
        {
            "id": ["a_1", "a_2", "a_3"],
            "query": ["q", "", "q"],
            "response": [["x", "y"], ["x", "y"], ["x", "y"]],
            "image": [
                {"bytes": png_bytes(), "path": "a.png"},
                {"bytes": png_bytes(), "path": "a.png"},
                {"bytes": b"not an image", "path": "b.png"},
            ],
            "human_ranking": [[0, 1], [0, 1], [1, 0]],
        },
        {"image": IMAGE},
    )
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(project=project, dataset=path, domain="vqa")
    messages = [str(p) for p in failure.value.problems]
    assert "bad.parquet: row 1: column 'query': is empty" in messages
    assert any(m.startswith("bad.parquet: row 2: column 'image': image 'b.png'") for m in messages)
    assert Item.objects.count() == 0


def test_wrong_response_count_and_bad_ranking_are_row_problems(tmp_path):
    project = make_project()
    path = write_parquet(
        tmp_path / "bad.parquet",
        {
            "id": ["a_1", "a_2"],
            "query": ["q", "q"],
            "response": [["x", "y", "z"], ["x", "y"]],
            "image": [{"bytes": png_bytes(), "path": "a.png"}] * 2,
            "human_ranking": [[0, 1], [0]],
        },
        {"image": IMAGE},
    )
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(project=project, dataset=path, domain="vqa")
    assert [str(p) for p in failure.value.problems] == [
        "bad.parquet: row 0: column 'response': has 3 responses; this layout holds pairs, "
        "exactly two per row (more responses need a format of their own)",
        "bad.parquet: row 1: column 'human_ranking': must be two ranks such as [0, 1] "
        "(lower is better), not '[0]'",
    ]


def test_studio_release_parquet_imports_as_its_records(tmp_path):
    from curation.releases import parquet as release_parquet

    project = make_project()
    writer = release_parquet.ParquetWriter(tmp_path, domains=["vqa"])
    record = {
        "ID": "vqa_1",
        "Text": "What colour?",
        "Image": "images/src/red.png",
        "Output1": "Red.",
        "Output2": "Blue.",
        "Better": "Output1",
        "Category": "vqa",
    }
    image = tmp_path / "red.png"
    image.write_bytes(png_bytes())
    writer.write(SimpleNamespace(domain="vqa"), record, image)
    writer.close()
    path = tmp_path / "parquet" / "vqa.parquet"
    result = import_items_from_paths(project=project, dataset=path)
    assert (result.format, result.created) == ("mrb", 1)
    item = Item.objects.get()
    assert (item.image_path, item.response_1, item.meta["prior_better"]) == (
        "images/src/red.png",
        "Red.",
        "Output1",
    )


def test_without_pyarrow_the_error_says_how_to_install(tmp_path, monkeypatch):
    project = make_project()
    path = vl_rewardbench(tmp_path)
    monkeypatch.setattr(hfparquet, "available", lambda: False)
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(project=project, dataset=path, domain="vqa")
    assert "pip install 'triplet-studio[parquet]'" in str(failure.value)


def test_not_a_parquet_file_is_a_clear_error(tmp_path):
    project = make_project()
    path = tmp_path / "junk.parquet"
    path.write_bytes(b"not parquet at all")
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(project=project, dataset=path, domain="vqa")
    assert "junk.parquet: not a readable parquet file" in str(failure.value)


def test_the_command_imports_parquet(tmp_path):
    from django.core.management import call_command

    project = make_project(slug="cli-parquet")
    call_command(
        "import_items", "cli-parquet", str(vl_rewardbench(tmp_path)), "--domain", "vqa", verbosity=0
    )
    assert project.items.count() == 4


def test_the_api_takes_a_parquet_upload(tmp_path):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    from tests.factories import make_member

    project = make_project(slug="api-parquet")
    api = APIClient()
    token = Token.objects.create(user=make_member(project, role="admin"))
    api.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    upload = SimpleUploadedFile("vl.parquet", vl_rewardbench(tmp_path).read_bytes())
    r = api.post(
        "/api/v1/projects/api-parquet/imports/",
        {"dataset": upload, "domain": "vqa"},
        format="multipart",
    )
    assert r.status_code == 200, r.content
    assert r.json()["created"] == 4


def test_record_level_options_apply_to_parquet_rows(tmp_path):
    project = make_project()
    path = write_parquet(
        tmp_path / "mapped.parquet",
        {
            "id": ["a_1"],
            "question": ["p"],
            "chosen": ["c"],
            "rejected": ["r"],
            "picture": [{"bytes": png_bytes(), "path": "a.png"}],
            "subset": ["vqa"],
        },
        {"picture": IMAGE},
    )
    result = import_items_from_paths(
        project=project,
        dataset=path,
        field_map={"prompt": "question", "image": "picture", "category": "subset"},
        gold_from_label=True,
    )
    assert result.created == 1
    item = Item.objects.get()
    assert (item.prompt, item.domain.slug, item.image_path) == ("p", "vqa", "a.png")
    assert item.gold_choice == item.meta["original_label"]


def test_issue_22_options_apply_to_a_parquet_file_with_repeated_ids(tmp_path):
    """VL-RewardBench repeats IDs and names its sources by ID prefix: its parquet
    imports as it is with duplicates=suffix and the domain from the ID's prefix."""
    from annotate.importing.options import ImportOptions, parse_domain_from, parse_mapping

    project = make_project()
    path = write_parquet(
        tmp_path / "vl.parquet",
        {
            "id": ["mathverse_1", "mathverse_1", "wildvision_2"],
            "query": ["q1", "q1 again", "q2"],
            "response": [["a", "b"], ["c", "d"], ["e", "f"]],
            "image": [
                {"bytes": png_bytes(color=(n * 60, 10, 10)), "path": f"i{n}.png"} for n in range(3)
            ],
            "human_ranking": [[0, 1], [1, 0], [0, 1]],
        },
        {"image": IMAGE},
    )
    with pytest.raises(ImportFailed) as refused:
        import_items_from_paths(project=project, dataset=path, domain="reasoning")
    assert "mathverse_1" in str(refused.value) and Item.objects.count() == 0
    options = ImportOptions(
        duplicates="suffix",
        domain_from=parse_domain_from("id-prefix"),
        domain_map=parse_mapping("mathverse=reasoning,wildvision=general_correctness"),
    )
    result = import_items_from_paths(project=project, dataset=path, options=options)
    assert result.created == 3
    items = {i.external_id: i for i in Item.objects.select_related("domain")}
    assert set(items) == {"mathverse_1", "mathverse_1#2", "wildvision_2"}
    assert items["mathverse_1#2"].meta["original_id"] == "mathverse_1"
    assert items["mathverse_1#2"].prompt == "q1 again"
    assert items["wildvision_2"].domain.slug == "general_correctness"
    assert items["mathverse_1"].domain.slug == "reasoning"
