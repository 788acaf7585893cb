"""MMRB2 in and out (issue 24): a fixture in the published layout, written
from the issue's facts (all four task shapes), imported and exported back
byte for byte; content as parts; the compare page shows the parts in order
and never an ID or a model name."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from django.urls import reverse

from annotate.importing.formats.mmrb2 import import_mmrb2_from_paths
from annotate.importing.formats.mmrb2.taskfile import write_task_file
from annotate.importing.records import ImportFailed
from annotate.loop.service import claim_next_item
from annotate.models import ImageAsset, Item, ItemPart
from curation.benchmarks.mmrb2.release_files import export_mmrb2
from curation.models import Verdict
from tests.factories import make_member, make_project, png_bytes

pytestmark = pytest.mark.django_db


def _jpeg(n: int) -> bytes:
    return png_bytes(size=(16 + n, 12), color=(n * 7 % 256, 90, 200 - n), fmt="JPEG")


def _pair(pid, a, b, chosen, annotations, source, metadata, prompt):
    return {
        "id": pid,
        "response_a": {"model_name": a[0], "response_content": a[1]},
        "response_b": {"model_name": b[0], "response_content": b[1]},
        "chosen": chosen,
        "human_annotations": annotations,
        "prompt_source": source,
        "prompt_metadata": metadata,
        "prompt_content": prompt,
    }


def agree_as_published(project, **fields) -> None:
    """Every verdict agreed on the side the imported pair's `chosen` names
    (a release writes the verdict's side as `chosen`)."""
    fields = {"status": "agreed", "provenance": "unanimous", **fields}
    for side, chosen in (("1", "A"), ("2", "B")):
        Verdict.objects.filter(project=project, item__meta__mmrb2__chosen=chosen).update(
            final_choice=side, **fields
        )


def published_fixture(root: Path) -> dict[str, list[dict]]:
    """The four task files and their images, as 4_finalize_release.py writes them."""
    n = iter(range(1, 200))
    images: dict[str, bytes] = {}

    def img(path: str) -> list[str]:
        images.setdefault(path, _jpeg(next(n)))
        return ["image", path]

    def resp(pid: str, k: int) -> list[str]:
        return img(f"images/{pid}_{k}.jpg")

    t2i_1 = "oneigbench_124_-8004320511907750318_imagen4_4116_imagen4_116"
    t2i_2 = "genai_7:gpt-image-1_flux"  # a colon in the ID and file names
    tasks = {
        "t2i": [
            _pair(
                t2i_1,
                ("imagen4", [resp(t2i_1, 0)]),
                ("imagen4", [resp(t2i_1, 1)]),  # the same model on both sides
                "B",
                [2, 2, 1],
                "oneigbench",
                {"id": "124", "category": "Text_Rendering"},
                [["text", "A sign that says \u201cOPEN\u201d, three red apples"]],
            ),
            _pair(
                t2i_2,
                ("gpt-image-1", [resp(t2i_2, 0), resp(t2i_2, 1), resp(t2i_2, 2)]),
                ("flux", [resp(t2i_2, 3), resp(t2i_2, 4)]),
                "A",
                [6, 5, 4],
                "genai",
                {},
                [["text", "Two cats"]],
            ),
        ],
        "edit": [
            _pair(
                "emu_edit_9_a_b",
                ("model-a", [resp("emu_edit_9_a_b", 0)]),
                ("model-b", [resp("emu_edit_9_a_b", 1)]),
                "A",
                [4, 4, 3],
                "emu-edit",
                {"task": "global", "idx": 2121},
                [
                    img("input_images/emu-edit_images_test_global_2121.jpg"),
                    ["text", "Make it snow"],
                ],
            ),
        ],
        "interleaved": [
            _pair(
                "isg_3",
                (
                    "GPTGeminiAgent",
                    [
                        ["text", "Step 1: mix <image1> with the flour."],
                        resp("isg_3", 0),
                        ["text", "\n\n  "],  # whitespace-only text item
                        resp("isg_3", 1),
                    ],
                ),
                ("chameleon", [resp("isg_3", 2)]),  # image-only
                "A",
                [5, 6, 6],
                "isgbench",
                {"category": "howto", "steps": [1, 2]},
                [["text", "Show me how to bake bread, with pictures."]],
            ),
        ],
        "reasoning": [
            _pair(
                "mindcube_gpt-4o_claude_1",
                ("gpt-4o", [["text", "The answer is (B) because\n- left\n- right"]]),
                ("claude", [["text", "I think it is **C**."]]),
                "A",
                {"response_a_ratings": ["A", "B", "A"], "response_b_ratings": ["C", "C", "B"]},
                "mindcube",
                {"question_id": 17},
                [img("input_images/mindcube_a:b.jpg"), ["text", "Which view is behind?"]],
            ),
            _pair(
                "vstar_claude_claude_2",
                ("claude", [["text", "Yes."]]),
                ("claude", [["text", "No."]]),
                "B",
                {"response_a_ratings": [], "response_b_ratings": []},
                "vstar",
                {},
                [["text", "Is the cup red?"], img("input_images/vstar_cup.jpg")],
            ),
        ],
    }
    for path, data in images.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    for task, pairs in tasks.items():
        with (root / f"{task}.json").open("w") as fh:
            json.dump({"pairs": pairs}, fh, indent=2)
    return tasks


def test_streamed_writer_matches_json_dump():
    import io

    for pairs in ([], [{"a": [1, {"b": []}], "c": "\u00e9"}], [{"x": 1}, {"y": {}}]):
        out = io.StringIO()
        write_task_file(iter(pairs), out)
        assert out.getvalue() == json.dumps({"pairs": pairs}, indent=2)


def test_published_layout_imports_and_exports_back_byte_identical(tmp_path):
    source = tmp_path / "release"
    tasks = published_fixture(source)
    project = make_project()
    for task in tasks:
        result = import_mmrb2_from_paths(project=project, dataset=source / f"{task}.json")
        assert result.created == len(tasks[task])
    out = tmp_path / "out"
    summary = export_mmrb2(project=project, folder=out)
    assert summary["tasks"] == {task: len(pairs) for task, pairs in tasks.items()}
    for task in tasks:
        assert (out / f"{task}.json").read_bytes() == (source / f"{task}.json").read_bytes()
    written = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    original = sorted(p.relative_to(source) for p in source.rglob("*") if p.is_file())
    assert written == original
    for path in original:
        assert (out / path).read_bytes() == (source / path).read_bytes()
    # Images went through the usual storage: one asset per distinct image.
    assert ImageAsset.objects.count() == len([p for p in original if p.suffix == ".jpg"])


def test_parts_keep_order_and_items_get_mrb_columns_only_when_mrb_shaped(tmp_path):
    published_fixture(tmp_path)
    project = make_project()
    for task in ("interleaved", "reasoning", "t2i"):
        import_mmrb2_from_paths(project=project, dataset=tmp_path / f"{task}.json")
    item = Item.objects.get(external_id="isg_3")
    assert item.domain.slug == "mmrb2-interleaved"
    assert item.image is None
    kinds = list(
        item.content_parts.filter(slot="response_1").values_list("kind", "text", "source_path")
    )
    assert kinds == [
        ("text", "Step 1: mix <image1> with the flour.", ""),
        ("image", "", "images/isg_3_0.jpg"),
        ("text", "\n\n  ", ""),
        ("image", "", "images/isg_3_1.jpg"),
    ]
    assert item.meta["mmrb2"]["prompt_source"] == "isgbench"
    assert item.model_1 == "GPTGeminiAgent"
    # A reasoning pair with prompt [image, text] and text responses is MRB-shaped.
    mrb = Item.objects.get(external_id="mindcube_gpt-4o_claude_1")
    assert mrb.image is not None and mrb.image_path == "input_images/mindcube_a:b.jpg"
    assert mrb.prompt == "Which view is behind?" and mrb.response_2 == "I think it is **C**."
    # Text before the image: not the MRB shape, its content in parts only.
    assert Item.objects.get(external_id="vstar_claude_claude_2").image is None
    # Re-import is a no-op.
    again = import_mmrb2_from_paths(project=project, dataset=tmp_path / "t2i.json")
    assert (again.created, again.unchanged) == (0, 2)


def test_zip_of_the_release_imports_too(tmp_path):
    published_fixture(tmp_path / "r")
    archive = tmp_path / "r.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in (tmp_path / "r").rglob("*"):
            if path.is_file():
                zf.write(path, path.relative_to(tmp_path / "r").as_posix())
    project = make_project()
    result = import_mmrb2_from_paths(
        project=project, dataset=tmp_path / "r" / "edit.json", images=archive
    )
    assert result.created == 1


def test_missing_image_or_bad_pair_writes_nothing(tmp_path):
    published_fixture(tmp_path)
    (tmp_path / "images" / "isg_3_1.jpg").unlink()
    project = make_project()
    with pytest.raises(ImportFailed, match=r"isg_3_1\.jpg"):
        import_mmrb2_from_paths(project=project, dataset=tmp_path / "interleaved.json")
    bad = tmp_path / "t2i.json"
    data = json.loads(bad.read_text())
    data["pairs"][1]["chosen"] = "tie"
    del data["pairs"][0]["prompt_content"]
    bad.write_text(json.dumps(data, indent=2))
    with pytest.raises(ImportFailed) as failed:
        import_mmrb2_from_paths(project=project, dataset=bad)
    assert "prompt_content" in str(failed.value) and "chosen" in str(failed.value)
    assert not Item.objects.exists() and not ItemPart.objects.exists()


def test_export_can_rekey_ids_and_response_image_names(tmp_path):
    published_fixture(tmp_path / "src")
    project = make_project()
    import_mmrb2_from_paths(project=project, dataset=tmp_path / "src" / "reasoning.json")
    import_mmrb2_from_paths(project=project, dataset=tmp_path / "src" / "t2i.json")
    summary = export_mmrb2(project=project, folder=tmp_path / "out", rekey=True, salt="s")
    text = (tmp_path / "out" / "t2i.json").read_text() + (
        tmp_path / "out" / "reasoning.json"
    ).read_text()
    for old in summary["ids"]:
        assert old not in text
    pairs = json.loads((tmp_path / "out" / "t2i.json").read_text())["pairs"]
    assert pairs[1]["response_b"]["response_content"][1] == [
        "image",
        f"images/{pairs[1]['id']}_4.jpg",
    ]
    assert (tmp_path / "out" / pairs[1]["response_b"]["response_content"][1][1]).is_file()


def test_compare_page_shows_parts_in_order_without_ids_or_model_names(client, tmp_path):
    published_fixture(tmp_path)
    project = make_project(votes_per_item=1)
    import_mmrb2_from_paths(project=project, dataset=tmp_path / "interleaved.json")
    annotator = make_member(project)
    assignment = claim_next_item(project=project, annotator=annotator)
    client.force_login(annotator)
    page = client.get(reverse("work_item", args=[assignment.pk])).content.decode()
    for secret in ("isg_3", "GPTGeminiAgent", "chameleon", "isgbench", "images/isg_3"):
        assert secret not in page
    assert "Show me how to bake bread" in page
    assert "Step 1: mix &lt;image1&gt; with the flour." in page
    left = "left" if not assignment.shown_swapped else "right"
    article = page.split(f'data-side="{left}"')[1].split("</article>")[0]
    first_text = article.index("Step 1")
    images = [i for i in range(len(article)) if article.startswith('class="part-img"', i)]
    assert len(images) == 2 and first_text < images[0]
    assert 'alt="Response A, image 1 of 2"' in page or 'alt="Response B, image 1 of 2"' in page
    assert 'decoding="async"' in page and 'width="' in page


def test_import_command_detects_a_task_file_and_reads_images_beside_it(tmp_path):
    from io import StringIO

    from django.core.management import call_command

    published_fixture(tmp_path)
    project = make_project()
    out = StringIO()
    call_command("import_items", project.slug, str(tmp_path / "edit.json"), stdout=out)
    assert "1 created" in out.getvalue()
    item = Item.objects.get(external_id="emu_edit_9_a_b")
    assert item.domain.export_category == "mmrb2/edit"
    prompt = list(item.content_parts.filter(slot="prompt").values_list("kind", "source_path"))
    assert prompt == [("image", "input_images/emu-edit_images_test_global_2121.jpg"), ("text", "")]


def test_upload_page_takes_a_task_file_with_an_images_zip(client, tmp_path):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from tests.factories import make_user

    published_fixture(tmp_path)
    buffer = tmp_path / "images.zip"
    with zipfile.ZipFile(buffer, "w") as zf:
        for folder in ("images", "input_images"):
            for path in (tmp_path / folder).iterdir():
                zf.write(path, f"{folder}/{path.name}")
    project = make_project()
    admin = make_user()
    make_member(project, admin, role="admin")
    client.force_login(admin)
    response = client.post(
        reverse("import", args=[project.slug]),
        {
            "dataset": SimpleUploadedFile(
                "reasoning.json", (tmp_path / "reasoning.json").read_bytes()
            ),
            "images": SimpleUploadedFile("images.zip", buffer.read_bytes()),
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Item.objects.filter(project=project, domain__slug="mmrb2-reasoning").count() == 2


def test_part_html_is_rendered_by_the_import_task_and_sanitised(tmp_path):
    from annotate.models.parts import render_parts_html

    published_fixture(tmp_path)
    project = make_project()
    result = import_mmrb2_from_paths(project=project, dataset=tmp_path / "reasoning.json")
    ItemPart.objects.filter(item_id__in=result.item_ids).update(html="", rendered_version=0)
    ItemPart.objects.filter(text="Yes.").update(text="Yes. <script>alert(1)</script>")
    assert render_parts_html(item_ids=result.item_ids) == 6  # the text parts
    html = ItemPart.objects.get(text__startswith="Yes.").html
    assert "<script>" not in html and "Yes." in html
    assert render_parts_html(item_ids=result.item_ids) == 0


def test_export_command_writes_the_layout_and_the_id_map_outside_it(tmp_path):
    from io import StringIO

    from django.core.management import call_command
    from django.core.management.base import CommandError

    published_fixture(tmp_path / "src")
    project = make_project()
    import_mmrb2_from_paths(project=project, dataset=tmp_path / "src" / "t2i.json")
    out = StringIO()
    call_command("export_benchmark", "mmrb2", project.slug, str(tmp_path / "same"), stdout=out)
    assert "t2i: 2;" in out.getvalue()
    assert (tmp_path / "same" / "t2i.json").read_bytes() == (
        tmp_path / "src" / "t2i.json"
    ).read_bytes()
    call_command(
        "export_benchmark",
        "mmrb2",
        project.slug,
        str(tmp_path / "rekeyed"),
        "--rekey",
        "--id-map",
        str(tmp_path / "ids.json"),
        stdout=out,
    )
    ids = json.loads((tmp_path / "ids.json").read_text())
    assert set(ids) == {
        p["id"] for p in json.loads((tmp_path / "src" / "t2i.json").read_text())["pairs"]
    }
    assert not (tmp_path / "rekeyed" / "ids.json").exists()
    # Only a benchmark that writes a layout of its own outside releases is offered.
    with pytest.raises(CommandError, match="invalid choice: 'mrb'"):
        call_command("export_benchmark", "mrb", project.slug, str(tmp_path / "mrb"))


def test_a_changed_pair_under_an_existing_id_is_refused(tmp_path):
    published_fixture(tmp_path)
    project = make_project()
    import_mmrb2_from_paths(project=project, dataset=tmp_path / "reasoning.json")
    path = tmp_path / "reasoning.json"
    data = json.loads(path.read_text())
    data["pairs"][1]["human_annotations"]["response_a_ratings"] = ["A", "A", "A"]
    path.write_text(json.dumps(data, indent=2))
    with pytest.raises(ImportFailed, match="already in the project with different content"):
        import_mmrb2_from_paths(project=project, dataset=path)
    assert Item.objects.count() == 2
