"""MMRB2 import, the smaller gaps of issue 24 item 4: `update` (the MRB
import's semantics), a zip holding the task file with its images, and
EXIF-rotated images (normalised on import; the export writes the stored
bytes)."""

from __future__ import annotations

import io
import json
import zipfile
from io import StringIO
from pathlib import Path

import pytest
from django.core.files.storage import default_storage
from django.core.management import call_command
from django.urls import reverse
from PIL import Image

from annotate.importing.formats.mmrb2 import import_mmrb2_from_paths
from annotate.importing.records import ImportFailed
from annotate.importing.service import import_items_from_paths
from annotate.models import ImageAsset, Item, ItemPart
from curation.benchmarks.mmrb2.release_files import export_mmrb2
from tests.annotate.importing.test_mmrb2 import published_fixture
from tests.factories import make_assignment, make_judgement, make_member, make_project, make_user

pytestmark = pytest.mark.django_db


def rewrite(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data["pairs"])
    path.write_text(json.dumps(data, indent=2))


def test_update_replaces_a_changed_pair_nobody_has_judged(tmp_path):
    published_fixture(tmp_path)
    project = make_project()
    import_mmrb2_from_paths(project=project, dataset=tmp_path / "reasoning.json")

    def change(pairs):
        pairs[1]["response_a"]["response_content"] = [["text", "Yes, it is **red**."]]
        pairs[1]["prompt_metadata"] = {"source_split": "val"}

    rewrite(tmp_path / "reasoning.json", change)
    with pytest.raises(ImportFailed, match="--conflicts=replace"):
        import_mmrb2_from_paths(project=project, dataset=tmp_path / "reasoning.json")
    result = import_mmrb2_from_paths(
        project=project, dataset=tmp_path / "reasoning.json", update=True
    )
    assert (result.created, result.updated, result.unchanged) == (0, 1, 1)
    item = Item.objects.get(external_id="vstar_claude_claude_2")
    assert item.response_1 == "Yes, it is **red**."
    part = ItemPart.objects.get(item=item, slot="response_1")
    assert part.text == "Yes, it is **red**." and part.rendered_version == 0
    from annotate.models.parts import render_parts_html

    render_parts_html(item_ids=[item.pk])
    assert "<strong>red</strong>" in ItemPart.objects.get(pk=part.pk).html
    # Exported again: the new file, byte for byte.
    export_mmrb2(project=project, folder=tmp_path / "out")
    assert (tmp_path / "out" / "reasoning.json").read_bytes() == (
        tmp_path / "reasoning.json"
    ).read_bytes()
    # Importing it again is a no-op.
    again = import_mmrb2_from_paths(
        project=project, dataset=tmp_path / "reasoning.json", update=True
    )
    assert (again.updated, again.unchanged) == (0, 2)


def test_update_of_a_judged_pair_changes_its_metadata_only(tmp_path):
    published_fixture(tmp_path)
    project = make_project()
    import_mmrb2_from_paths(project=project, dataset=tmp_path / "t2i.json")
    item = Item.objects.get(external_id="genai_7:gpt-image-1_flux")
    make_judgement(make_assignment(item, make_user()), "1")
    Item.objects.filter(pk=item.pk).update(live_assignments=1)

    def metadata(pairs):
        pairs[1]["human_annotations"] = [6, 6, 6]
        pairs[1]["response_b"]["model_name"] = "flux-1.1"
        pairs[1]["prompt_source"] = "genai-bench"

    rewrite(tmp_path / "t2i.json", metadata)
    result = import_mmrb2_from_paths(project=project, dataset=tmp_path / "t2i.json", update=True)
    assert result.updated == 1
    item.refresh_from_db()
    assert item.model_2 == "flux-1.1" and item.meta["mmrb2"]["prompt_source"] == "genai-bench"

    def content(pairs):
        pairs[1]["prompt_content"] = [["text", "Three cats"]]

    rewrite(tmp_path / "t2i.json", content)
    with pytest.raises(ImportFailed, match="claimed or voted on and cannot be replaced") as failed:
        import_mmrb2_from_paths(project=project, dataset=tmp_path / "t2i.json", update=True)
    # The one report: the file, the field, the record and what differs.
    assert str(failed.value).startswith("t2i.json: field 'id': 1 record has an ID already")
    assert "prompt_content differs on 1 record (first: 1)" in str(failed.value)
    assert Item.objects.get(pk=item.pk).prompt == "Two cats"


def test_the_form_and_the_api_pass_update_in_their_own_words(client, tmp_path):
    from django.core.files.uploadedfile import SimpleUploadedFile

    published_fixture(tmp_path)
    project = make_project()
    import_mmrb2_from_paths(project=project, dataset=tmp_path / "edit.json")
    rewrite(tmp_path / "edit.json", lambda pairs: pairs[0].update(chosen="B"))
    archive = tmp_path / "edit.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in tmp_path.rglob("*"):
            if path.is_file() and (path.suffix == ".jpg" or path.name == "edit.json"):
                zf.write(path, path.relative_to(tmp_path).as_posix())
    admin = make_user()
    make_member(project, admin, role="admin")
    client.force_login(admin)
    refused = client.post(
        reverse("api_import", args=[project.slug]),
        {"dataset": SimpleUploadedFile("edit.zip", archive.read_bytes())},
    )
    assert refused.status_code == 400, refused.content[:500]
    assert "conflicts=replace" in refused.content.decode()
    assert "--conflicts" not in refused.content.decode()
    done = client.post(
        reverse("api_import", args=[project.slug]),
        {"dataset": SimpleUploadedFile("edit.zip", archive.read_bytes()), "update": "true"},
    )
    assert done.status_code in (200, 201), done.content[:500]
    assert Item.objects.get(external_id="emu_edit_9_a_b").meta["mmrb2"]["chosen"] == "B"


def test_a_zip_holding_the_task_file_and_its_images_imports(tmp_path):
    published_fixture(tmp_path / "r")
    archive = tmp_path / "mmrb2-interleaved.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in (tmp_path / "r").rglob("*"):
            if path.is_file() and (path.suffix == ".jpg" or path.name == "interleaved.json"):
                zf.write(path, "release/" + path.relative_to(tmp_path / "r").as_posix())
    project = make_project()
    out = StringIO()
    call_command("import_items", project.slug, str(archive), stdout=out)
    assert "1 created" in out.getvalue()
    item = Item.objects.get(external_id="isg_3")
    assert item.domain.slug == "mmrb2-interleaved"
    assert item.content_parts.filter(kind="image").count() == 3
    export_mmrb2(project=project, folder=tmp_path / "out")
    assert (tmp_path / "out" / "interleaved.json").read_bytes() == (
        tmp_path / "r" / "interleaved.json"
    ).read_bytes()
    assert (tmp_path / "out" / "images" / "isg_3_1.jpg").read_bytes() == (
        tmp_path / "r" / "images" / "isg_3_1.jpg"
    ).read_bytes()
    # A task file named for no task is refused, naming the member.
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as zf:
        zf.write(tmp_path / "r" / "interleaved.json", "pairs.json")
    with pytest.raises(ImportFailed, match=r"bad\.zip:pairs\.json.*unknown MMRB2 task"):
        import_items_from_paths(project=project, dataset=bad)


def _rotated_jpeg() -> bytes:
    """A 40x20 JPEG whose EXIF orientation (6) says: turn it 90° clockwise."""
    img = Image.new("RGB", (40, 20), (200, 40, 40))
    img.paste((20, 40, 200), (0, 0, 10, 20))
    exif = Image.Exif()
    exif[0x0112] = 6
    out = io.BytesIO()
    img.save(out, format="JPEG", exif=exif.tobytes(), quality=90)
    return out.getvalue()


def test_exif_rotated_images_are_normalised_and_exported_as_stored(tmp_path):
    published_fixture(tmp_path / "src")
    original = _rotated_jpeg()
    rotated = tmp_path / "src" / "images" / "emu_edit_9_a_b_0.jpg"
    rotated.write_bytes(original)
    project = make_project()
    import_mmrb2_from_paths(project=project, dataset=tmp_path / "src" / "edit.json")
    part = ItemPart.objects.select_related("image").get(
        item__external_id="emu_edit_9_a_b", slot="response_1"
    )
    with default_storage.open(part.image.file, "rb") as fh:
        stored = fh.read()
    assert (part.image.width, part.image.height) == (20, 40)  # turned upright
    export_mmrb2(project=project, folder=tmp_path / "out")
    exported = (tmp_path / "out" / "images" / "emu_edit_9_a_b_0.jpg").read_bytes()
    # Not the input's bytes: the export writes the stored, normalised image.
    assert exported == stored != original
    with Image.open(io.BytesIO(exported)) as img:
        assert img.size == (20, 40) and img.getexif().get(0x0112, 1) == 1
    # Every other file is byte-identical, and the normalised export round-trips exactly.
    assert (tmp_path / "out" / "edit.json").read_bytes() == (
        tmp_path / "src" / "edit.json"
    ).read_bytes()
    again = make_project()
    import_mmrb2_from_paths(project=again, dataset=tmp_path / "out" / "edit.json")
    export_mmrb2(project=again, folder=tmp_path / "out2")
    assert (tmp_path / "out2" / "images" / "emu_edit_9_a_b_0.jpg").read_bytes() == exported
    assert ImageAsset.objects.filter(sha256=part.image.sha256).count() == 1
