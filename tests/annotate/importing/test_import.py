"""The dataset importer: every error class from the corpus of bad files under
tests/data/import/, atomicity, idempotent re-import, images and the seeded
shuffle of chosen/rejected pairs.

Large and malicious images (decompression bombs, oversized pictures) and
zips with `../` or absolute members are built at run time, never committed."""

from __future__ import annotations

import hashlib
import io
import json
import struct
import zipfile
import zlib
from pathlib import Path

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from PIL import Image

from annotate import signals
from annotate.importing import formats
from annotate.importing.parse import pairs_swap
from annotate.importing.records import ImportFailed
from annotate.importing.service import import_items, import_items_from_paths
from annotate.importing.sources import DirectoryImageSource
from annotate.models import ImageAsset, Item, ItemPart
from curation.models import Verdict
from tests.factories import make_assignment, make_project, mrb_record, pairs_record, png_bytes

pytestmark = pytest.mark.django_db

CORPUS = Path(__file__).resolve().parents[3] / "tests" / "data" / "import"
EXIF_ORIENTATION = 0x0112


# --- Helpers ------------------------------------------------------------------------


def write_images(folder: Path, images: dict[str, bytes]) -> None:
    for name, data in images.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def write_mrb(
    folder: Path, records: list, images: dict[str, bytes] | None = None, name: str = "data.json"
) -> Path:
    """A dataset file with one record per line (record n is on line n + 2)."""
    write_images(folder, {"images/red.png": png_bytes()} if images is None else images)
    path = folder / name
    lines = ",\n".join("  " + json.dumps(r) for r in records)
    path.write_text(f"[\n{lines}\n]\n")
    return path


def write_jsonl(
    folder: Path, records: list, images: dict[str, bytes] | None = None, name: str = "data.jsonl"
) -> Path:
    write_images(folder, {"images/red.png": png_bytes()} if images is None else images)
    path = folder / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def corpus_import(project, name: str, **options):
    return import_items_from_paths(project=project, dataset=CORPUS / name, images=CORPUS, **options)


def corpus_problems(project, name: str, **options) -> list[str]:
    with pytest.raises(ImportFailed) as failure:
        corpus_import(project, name, **options)
    assert_nothing_written()
    return [str(p) for p in failure.value.problems]


def stored_files(prefix: str = "images") -> list[Path]:
    root = Path(default_storage.location) / prefix
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def assert_nothing_written() -> None:
    assert Item.objects.count() == 0
    assert ImageAsset.objects.count() == 0
    assert Verdict.objects.count() == 0
    assert stored_files() == []


def zip_bytes(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)  # writestr keeps '../' and leading '/'
    return out.getvalue()


def png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_claiming(width: int, height: int) -> bytes:
    """A tiny PNG whose header claims the given dimensions."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + png_chunk(b"IHDR", header)
        + png_chunk(b"IDAT", zlib.compress(b"\x00\x00\x00\x00"))
        + png_chunk(b"IEND", b"")
    )


def noisy_png(size=(64, 64)) -> bytes:
    """A PNG that does not compress to a few bytes, so cutting it hits pixel data."""
    width, height = size
    pixels = bytes((x * 31 + y * 17 + x * y) % 251 for y in range(height) for x in range(width * 3))
    out = io.BytesIO()
    Image.frombytes("RGB", size, pixels).save(out, format="PNG")
    return out.getvalue()


def jpeg_with_orientation(size=(40, 20), orientation=6) -> bytes:
    image = Image.new("RGB", size, (250, 10, 10))
    image.paste((10, 10, 250), (0, 0, size[0] // 4, size[1]))  # a blue band on the left
    exif = Image.Exif()
    exif[EXIF_ORIENTATION] = orientation
    out = io.BytesIO()
    image.save(out, format="JPEG", exif=exif, quality=95)
    return out.getvalue()


# --- Valid files ---------------------------------------------------------------------


def test_valid_mrb_file_creates_items_images_and_verdicts():
    project = make_project()

    result = corpus_import(project, "valid.json")

    assert (result.format, result.created, result.images_stored) == ("mrb", 2, 2)
    item = Item.objects.get(external_id="mathvista_1")
    assert item.domain.slug == "reasoning"
    assert (item.prompt, item.response_1, item.response_2) == (
        "How many apples are on the table?",
        "Three apples.",
        "Four apples.",
    )
    assert item.image_path == "images/red.png"
    assert item.meta["prior_better"] == "Output1"
    assert Item.objects.get(external_id="vqa_2").domain.slug == "vqa"
    assert Verdict.objects.filter(status="needs_votes").count() == 2
    assert len(stored_files()) == 2


def test_category_may_be_the_export_string_or_the_domain_slug(tmp_path):
    project = make_project()
    records = [
        mrb_record("a", Category="open_generation/correctness_task"),
        mrb_record("b", Category="general_preference"),
    ]
    import_items_from_paths(project=project, dataset=write_mrb(tmp_path, records), images=tmp_path)
    assert dict(Item.objects.values_list("external_id", "domain__slug")) == {
        "a": "general_correctness",
        "b": "general_preference",
    }


def test_extra_source_fields_are_kept_in_meta(tmp_path):
    project = make_project()
    records = [mrb_record("a", Source="mathvista", Level=3)]
    import_items_from_paths(project=project, dataset=write_mrb(tmp_path, records), images=tmp_path)
    assert Item.objects.get().meta["source"] == {"Source": "mathvista", "Level": 3}


# --- Broken JSON and file-level problems -----------------------------------------------


def test_truncated_json_reports_line_and_writes_nothing():
    problems = corpus_problems(make_project(), "truncated.json")
    assert len(problems) == 1
    assert problems[0].startswith("truncated.json:3: record 1: invalid JSON: Unterminated string")


def test_json_array_that_is_not_closed_reports_the_last_line(tmp_path):
    path = write_mrb(tmp_path, [mrb_record()], name="open.json")
    path.write_text("[\n" + json.dumps(mrb_record()) + ",\n")
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(project=make_project(), dataset=path, images=tmp_path)
    assert [str(p) for p in failure.value.problems] == [
        "open.json:3: invalid JSON: the array is not closed (file truncated?)"
    ]
    assert_nothing_written()


def test_top_level_object_instead_of_array_is_refused():
    assert corpus_problems(make_project(), "not_array.json") == [
        "not_array.json:1: expected a JSON array of records at the top level"
    ]


def test_records_that_are_not_objects_are_each_reported():
    assert corpus_problems(make_project(), "record_not_object.json") == [
        "record_not_object.json:2: record 0: record must be a JSON object, not str",
        "record_not_object.json:3: record 1: record must be a JSON object, not int",
        "record_not_object.json:4: record 2: record must be a JSON object, not NoneType",
    ]


def test_non_utf8_file_reports_the_line_of_the_bad_byte():
    (problem,) = corpus_problems(make_project(), "latin1.json")
    assert problem.startswith("latin1.json:2: file is not valid UTF-8")


def test_utf8_byte_order_mark_is_accepted(tmp_path):
    path = write_mrb(tmp_path, [mrb_record()])
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    result = import_items_from_paths(project=make_project(), dataset=path, images=tmp_path)
    assert result.created == 1


def test_empty_file_is_refused():
    assert corpus_problems(make_project(), "empty.json") == ["empty.json:1: file is empty"]


def test_empty_array_is_refused():
    assert corpus_problems(make_project(), "empty_array.json") == [
        "empty_array.json: file has no records"
    ]


def test_unknown_format_is_refused():
    # Every registered format (and alias) is named, whichever modules exist.
    known = ", ".join(formats.names())
    assert {"mrb", "pairs", "parquet", "release", "mmrb2"} <= set(formats.names())
    assert corpus_problems(make_project(), "valid.json", fmt="csv") == [
        f"valid.json: unknown format 'csv' (known: {known})"
    ]


def test_missing_dataset_file_is_reported(tmp_path):
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(project=make_project(), dataset=tmp_path / "nope.json")
    assert "nope.json: file not found" in str(failure.value)


def test_missing_image_folder_is_reported(tmp_path):
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(
            project=make_project(), dataset=CORPUS / "valid.json", images=tmp_path / "nope"
        )
    assert "image folder or zip not found" in str(failure.value)


# --- Records: missing fields, wrong types, bad values ---------------------------------


def test_each_missing_field_is_reported_with_line_and_field():
    assert corpus_problems(make_project(), "missing_fields.json") == [
        "missing_fields.json:2: record 0: field 'ID': is missing",
        "missing_fields.json:3: record 1: field 'Text': is missing",
        "missing_fields.json:4: record 2: field 'Image': is missing",
        "missing_fields.json:5: record 3: field 'Output1': is missing",
        "missing_fields.json:6: record 4: field 'Output2': is missing",
        "missing_fields.json:8: record 6: field 'Category': is missing",
    ]


def test_wrong_field_types_are_reported_with_the_type_found():
    assert corpus_problems(make_project(), "wrong_types.json") == [
        "wrong_types.json:2: record 0: field 'ID': must be a string, not int",
        "wrong_types.json:3: record 1: field 'Text': must be a string, not list",
        "wrong_types.json:4: record 2: field 'Output1': must be a string, not dict",
        "wrong_types.json:5: record 3: field 'Better': must be a string, not bool",
    ]


def test_better_must_be_output1_or_output2():
    # One problem for both records (issue 31): the first one's value is shown.
    assert corpus_problems(make_project(), "bad_better.json") == [
        "bad_better.json:2: record 0: field 'Better': 'A': must be \"Output1\" or \"Output2\" "
        "(and 1 more record: 1)",
    ]


def test_empty_strings_and_padded_ids_are_refused(tmp_path):
    records = [mrb_record("a", Text="   "), mrb_record(" b"), mrb_record("c" * 201)]
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(
            project=make_project(), dataset=write_mrb(tmp_path, records), images=tmp_path
        )
    assert [str(p) for p in failure.value.problems] == [
        "data.json:2: record 0: field 'Text': is empty",
        "data.json:3: record 1: field 'ID': has leading or trailing whitespace",
        "data.json:4: record 2: field 'ID': is longer than 200 characters",
    ]
    assert_nothing_written()


def test_duplicate_ids_in_one_file_are_one_problem_naming_their_records():
    assert corpus_problems(make_project(), "duplicate_ids.json") == [
        "duplicate_ids.json: field 'ID': 1 ID occurs more than once (2 records): "
        "'vqa_1' (2 records: 0, 2); to import them, use --duplicates=keep-first "
        "(the first record of each ID) or --duplicates=suffix "
        "(every record, later ones renamed ID#2, ID#3, …)"
    ]


def test_unknown_category_lists_the_known_categories():
    (problem,) = corpus_problems(make_project(), "unknown_category.json")
    assert problem.startswith(
        "unknown_category.json: field 'Category': 1 value of the field 'Category' names no "
        "domain: 'chart_understanding' (1 record: 0); map each to a domain with --domain-map "
        "(value=domain; known: "
    )
    known = problem.split("known: ", 1)[1].rstrip(")").split(", ")
    for category in (
        "open_generation/correctness_task",
        "open_generation/preference_task",
        "knowledge",
        "reasoning",
        "safety",
        "vqa",
    ):
        assert category in known


def test_problem_strings_name_file_line_record_and_field():
    with pytest.raises(ImportFailed) as failure:
        corpus_import(make_project(), "wrong_types.json")
    problem = failure.value.problems[1]
    assert (problem.file, problem.line, problem.index, problem.field) == (
        "wrong_types.json",
        3,
        1,
        "Text",
    )
    assert str(problem) == "wrong_types.json:3: record 1: field 'Text': must be a string, not list"
    assert str(problem) in str(failure.value)


def test_all_errors_of_a_file_are_reported(tmp_path):
    records = [mrb_record(f"r{n}", Better=f"B{n}", Text=f"T{n}" * (n % 2)) for n in range(12)]
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(
            project=make_project(), dataset=write_mrb(tmp_path, records), images=tmp_path
        )
    assert [(p.line, p.field, p.count) for p in failure.value.problems] == [
        (2, "Text", 6),
        (2, "Better", 12),
    ]
    assert not failure.value.truncated


def test_errors_stop_at_the_cap_and_say_they_were_truncated(tmp_path, settings):
    settings.IMPORT_MAX_ERRORS = 3
    records = [mrb_record(f"r{n}", Text=" " * n) for n in range(2)]
    records += [mrb_record(f"s{n}", **{key: [n]}) for n in range(3) for key in ("Output1",)]
    records += [mrb_record(f"t{n}", Output2=[n], Better="B") for n in range(3)]
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(
            project=make_project(), dataset=write_mrb(tmp_path, records), images=tmp_path
        )
    assert len(failure.value.problems) == 3
    assert failure.value.truncated
    assert str(failure.value).endswith("(stopped after 3 errors)")
    assert_nothing_written()


def test_record_errors_and_image_errors_are_reported_together(tmp_path):
    records = [mrb_record("a", Better="B"), mrb_record("b", Image="images/gone.png")]
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(
            project=make_project(), dataset=write_mrb(tmp_path, records), images=tmp_path
        )
    assert [(p.line, p.field) for p in failure.value.problems] == [(2, "Better"), (3, "Image")]
    assert_nothing_written()


# --- Images ---------------------------------------------------------------------------


def test_missing_image_file_is_reported_and_nothing_is_written():
    (problem,) = corpus_problems(make_project(), "missing_image.json")
    assert problem.startswith("missing_image.json:3: record 1: field 'Image': image ")
    assert "images/nowhere.png" in problem
    assert "not found" in problem


def test_image_without_an_image_source_is_reported(tmp_path):
    path = write_mrb(tmp_path, [mrb_record()])
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(project=make_project(), dataset=path)
    assert "no image folder or archive was given" in str(failure.value)
    assert_nothing_written()


def test_html_file_named_png_is_not_an_image():
    assert corpus_problems(make_project(), "html_as_png.json") == [
        "html_as_png.json:3: record 1: field 'Image': "
        "image 'images/not_an_image.png': not an image Pillow can read"
    ]


@pytest.mark.parametrize("fmt", ["BMP", "TIFF"])
def test_disallowed_image_format_is_refused(tmp_path, fmt):
    path = write_mrb(tmp_path, [mrb_record()], {"images/red.png": png_bytes(fmt=fmt)})
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(project=make_project(), dataset=path, images=tmp_path)
    assert str(failure.value) == (
        "data.json:2: record 0: field 'Image': image 'images/red.png': "
        f"format {fmt} is not allowed (allowed: PNG, JPEG, WEBP, GIF)"
    )
    assert_nothing_written()


def test_image_over_the_pixel_limit_is_refused(tmp_path, settings):
    settings.IMAGE_MAX_PIXELS = 500  # the 32x24 picture has 768
    path = write_mrb(tmp_path, [mrb_record()], {"images/red.png": png_bytes(size=(32, 24))})
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(project=make_project(), dataset=path, images=tmp_path)
    message = str(failure.value)
    assert message.startswith("data.json:2: record 0: field 'Image': image 'images/red.png': ")
    assert "32x24 is 768 pixels, more than the limit of 500" in message
    assert_nothing_written()


def test_image_exactly_at_the_pixel_limit_is_accepted(tmp_path, settings):
    settings.IMAGE_MAX_PIXELS = 768
    path = write_mrb(tmp_path, [mrb_record()], {"images/red.png": png_bytes(size=(32, 24))})
    assert import_items_from_paths(project=make_project(), dataset=path, images=tmp_path).created


def test_decompression_bomb_is_refused_without_decoding(tmp_path):
    bomb = png_claiming(100_000, 100_000)  # 10 gigapixels in a few dozen bytes
    path = write_mrb(tmp_path, [mrb_record()], {"images/red.png": bomb})
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(project=make_project(), dataset=path, images=tmp_path)
    assert "decompression bomb" in str(failure.value)
    assert "data.json:2: record 0: field 'Image'" in str(failure.value)
    assert_nothing_written()


def test_default_pixel_limit_is_40_megapixels(tmp_path, settings):
    assert settings.IMAGE_MAX_PIXELS == 40_000_000
    images = {
        "images/ok.png": png_claiming(8000, 5000),  # header only: 40 MP exactly
        "images/big.png": png_claiming(8000, 5001),
    }
    records = [mrb_record("a", Image="images/ok.png"), mrb_record("b", Image="images/big.png")]
    path = write_mrb(tmp_path, records, images)
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(project=make_project(), dataset=path, images=tmp_path)
    too_big = [p for p in failure.value.problems if "limit" in p.message]
    assert [(p.line, p.detail, p.message) for p in too_big] == [
        (
            3,
            "image 'images/big.png'",
            "8000x5001 is 40008000 pixels, more than the limit of 40000000",
        )
    ]


def test_image_over_the_byte_limit_is_refused(tmp_path, settings):
    settings.IMAGE_MAX_BYTES = 50
    path = write_mrb(tmp_path, [mrb_record()], {"images/red.png": png_bytes()})
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(project=make_project(), dataset=path, images=tmp_path)
    assert "more than the limit of 50" in str(failure.value)
    assert_nothing_written()


def test_truncated_png_is_refused(tmp_path):
    data = noisy_png()
    path = write_mrb(tmp_path, [mrb_record()], {"images/red.png": data[: len(data) // 2]})
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(project=make_project(), dataset=path, images=tmp_path)
    assert "image data is corrupt or truncated" in str(failure.value)
    assert_nothing_written()


def test_png_with_a_corrupted_chunk_is_refused(tmp_path):
    data = bytearray(noisy_png())
    idat = data.index(b"IDAT")
    data[idat + 40] ^= 0xFF  # the chunk's CRC no longer matches
    path = write_mrb(tmp_path, [mrb_record()], {"images/red.png": bytes(data)})
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(project=make_project(), dataset=path, images=tmp_path)
    assert "image data is corrupt or truncated" in str(failure.value)


def test_truncated_jpeg_is_refused(tmp_path):
    out = io.BytesIO()
    Image.open(io.BytesIO(noisy_png())).save(out, format="JPEG")
    data = out.getvalue()
    path = write_mrb(tmp_path, [mrb_record()], {"images/red.png": data[: len(data) // 2]})
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(project=make_project(), dataset=path, images=tmp_path)
    assert "image data is corrupt or truncated" in str(failure.value)


def test_empty_image_file_is_refused(tmp_path):
    path = write_mrb(tmp_path, [mrb_record()], {"images/red.png": b""})
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(project=make_project(), dataset=path, images=tmp_path)
    assert str(failure.value).endswith("image 'images/red.png': file is empty")


def test_image_paths_that_leave_the_image_folder_are_refused():
    assert corpus_problems(make_project(), "image_path_escape.json") == [
        "image_path_escape.json:2: record 0: field 'Image': image path '../valid.json': "
        "image path is absolute or contains '..' (and 2 more records: 1, 2)",
    ]


def test_symlink_out_of_the_image_folder_is_refused(tmp_path):
    outside = tmp_path / "outside.png"
    outside.write_bytes(png_bytes())
    data = tmp_path / "data"
    data.mkdir()
    path = write_mrb(data, [mrb_record()], images={})
    (data / "images").mkdir()
    (data / "images" / "red.png").symlink_to(outside)
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(project=make_project(), dataset=path, images=data)
    assert "path leaves the image folder" in str(failure.value)
    assert_nothing_written()


def test_one_bad_image_among_good_ones_writes_nothing(tmp_path):
    images = {f"images/{n}.png": png_bytes(color=(n, 0, 0)) for n in range(5)}
    images["images/5.png"] = b"GIF89a but not really"
    records = [mrb_record(f"r{n}", Image=f"images/{n}.png") for n in range(6)]
    path = write_mrb(tmp_path, records, images)
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(project=make_project(), dataset=path, images=tmp_path)
    assert [p.line for p in failure.value.problems] == [7]
    assert_nothing_written()


def test_same_image_used_by_two_records_is_stored_once(tmp_path):
    records = [mrb_record("a"), mrb_record("b"), mrb_record("c", Image="./images/red.png")]
    result = import_items_from_paths(
        project=make_project(), dataset=write_mrb(tmp_path, records), images=tmp_path
    )
    assert (result.created, result.images_stored) == (3, 1)
    assert ImageAsset.objects.count() == 1
    assert len(set(Item.objects.values_list("image_id", flat=True))) == 1
    assert len(stored_files()) == 1


def test_identical_image_across_two_imports_is_stored_once(tmp_path):
    project = make_project()
    first, second = tmp_path / "first", tmp_path / "second"
    same = png_bytes(color=(9, 9, 9))
    path_1 = write_mrb(first, [mrb_record("a")], {"images/red.png": same})
    path_2 = write_mrb(
        second, [mrb_record("b", Image="pics/other-name.png")], {"pics/other-name.png": same}
    )
    import_items_from_paths(project=project, dataset=path_1, images=first)
    result = import_items_from_paths(project=project, dataset=path_2, images=second)
    assert (result.created, result.images_stored) == (1, 0)
    assert ImageAsset.objects.count() == 1
    assert len(stored_files()) == 1


def test_images_are_stored_under_their_sha256(tmp_path):
    data = png_bytes(color=(7, 7, 7))
    path = write_mrb(tmp_path, [mrb_record()], {"images/red.png": data})
    import_items_from_paths(project=make_project(), dataset=path, images=tmp_path)
    sha = hashlib.sha256(data).hexdigest()
    asset = ImageAsset.objects.get()
    assert (asset.sha256, asset.file, asset.format) == (sha, f"images/{sha[:2]}/{sha}.png", "PNG")
    assert (asset.width, asset.height, asset.size_bytes) == (32, 24, len(data))
    assert default_storage.open(asset.file).read() == data


def test_exif_orientation_is_applied_before_storing(tmp_path):
    path = write_mrb(tmp_path, [mrb_record()], {"images/red.png": jpeg_with_orientation()})
    import_items_from_paths(project=make_project(), dataset=path, images=tmp_path)
    asset = ImageAsset.objects.get()
    assert (asset.format, asset.width, asset.height) == ("JPEG", 20, 40)
    with default_storage.open(asset.file) as fh, Image.open(fh) as stored:
        assert stored.size == (20, 40)
        assert stored.getexif().get(EXIF_ORIENTATION, 1) == 1
        # Orientation 6 turns the picture clockwise: the blue band ends up on top.
        assert stored.getpixel((10, 2))[2] > 200
        assert stored.getpixel((10, 37))[0] > 200


def test_thumbnails_are_made_after_commit(tmp_path, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        corpus_import(make_project(), "valid.json")
    assert len(callbacks) == 2  # thumbnails, then the parts' HTML
    assert not ItemPart.objects.filter(kind="text", rendered_version=0).exists()
    for asset in ImageAsset.objects.all():
        # The corpus images are 8x8: already thumbnail-sized, so reused as they are.
        assert asset.thumbnail == asset.file
        assert default_storage.exists(asset.thumbnail)


def test_large_images_get_a_webp_thumbnail():
    from annotate.importing.service import THUMBNAIL_SIZE, make_thumbnails
    from tests.factories import png_bytes

    data = png_bytes(size=(900, 600))
    sha = hashlib.sha256(data).hexdigest()
    name = default_storage.save(f"images/{sha[:2]}/{sha}.png", ContentFile(data))
    asset = ImageAsset.objects.create(
        sha256=sha, file=name, format="PNG", width=900, height=600, size_bytes=len(data)
    )
    assert make_thumbnails(image_ids=[asset.pk]) == 1
    asset.refresh_from_db()
    assert asset.thumbnail == f"thumbs/{sha[:2]}/{sha}.webp"
    with default_storage.open(asset.thumbnail) as fh, Image.open(fh) as thumb:
        assert thumb.format == "WEBP"
        assert max(thumb.size) <= max(THUMBNAIL_SIZE)


def test_no_thumbnail_task_when_no_new_image_is_stored(django_capture_on_commit_callbacks):
    project = make_project()
    corpus_import(project, "valid.json")
    with django_capture_on_commit_callbacks() as callbacks:
        corpus_import(project, "valid.json")
    assert callbacks == []


# --- Zip archives -------------------------------------------------------------------


def test_dataset_inside_a_zip_with_its_images_is_imported(tmp_path):
    archive = tmp_path / "bundle.zip"
    archive.write_bytes(
        zip_bytes(
            {
                "bundle/data.json": (CORPUS / "valid.json").read_bytes(),
                "bundle/images/red.png": (CORPUS / "images" / "red.png").read_bytes(),
                "bundle/images/blue.png": (CORPUS / "images" / "blue.png").read_bytes(),
            }
        )
    )
    result = import_items_from_paths(project=make_project(), dataset=archive)
    assert (result.created, result.images_stored) == (2, 2)
    assert set(Item.objects.values_list("image_path", flat=True)) == {
        "images/red.png",
        "images/blue.png",
    }


def test_errors_in_a_zipped_dataset_name_the_archive_and_member(tmp_path):
    archive = tmp_path / "bundle.zip"
    archive.write_bytes(zip_bytes({"data.json": (CORPUS / "wrong_types.json").read_bytes()}))
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(project=make_project(), dataset=archive)
    assert str(failure.value.problems[0]) == (
        "bundle.zip:data.json:2: record 0: field 'ID': must be a string, not int"
    )


def test_images_may_come_from_a_separate_zip(tmp_path):
    images = tmp_path / "images.zip"
    images.write_bytes(
        zip_bytes(
            {
                "images/red.png": (CORPUS / "images" / "red.png").read_bytes(),
                "images/blue.png": (CORPUS / "images" / "blue.png").read_bytes(),
            }
        )
    )
    result = import_items_from_paths(
        project=make_project(), dataset=CORPUS / "valid.json", images=images
    )
    assert result.created == 2


def test_missing_image_in_a_zip_is_reported(tmp_path):
    images = tmp_path / "images.zip"
    images.write_bytes(zip_bytes({"images/red.png": png_bytes()}))
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(
            project=make_project(), dataset=CORPUS / "valid.json", images=images
        )
    assert [str(p) for p in failure.value.problems] == [
        "valid.json:3: record 1: field 'Image': image 'images/blue.png': not found in images.zip"
    ]
    assert_nothing_written()


@pytest.mark.parametrize("member", ["../evil.png", "/abs.png", "images/../../evil.png"])
def test_zip_with_a_traversing_member_is_refused_as_a_whole(tmp_path, member):
    archive = tmp_path / "bundle.zip"
    archive.write_bytes(
        zip_bytes(
            {
                "data.json": (CORPUS / "valid.json").read_bytes(),
                "images/red.png": (CORPUS / "images" / "red.png").read_bytes(),
                "images/blue.png": (CORPUS / "images" / "blue.png").read_bytes(),
                member: png_bytes(),
            }
        )
    )
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(project=make_project(), dataset=archive)
    assert [str(p) for p in failure.value.problems] == [
        f"bundle.zip: archive member '{member}' has an absolute path or '..'; "
        "the archive is refused"
    ]
    assert_nothing_written()


def test_image_zip_with_a_traversing_member_is_refused_as_a_whole(tmp_path):
    images = tmp_path / "images.zip"
    images.write_bytes(
        zip_bytes(
            {
                "images/red.png": (CORPUS / "images" / "red.png").read_bytes(),
                "images/blue.png": (CORPUS / "images" / "blue.png").read_bytes(),
                "../evil.png": png_bytes(),
                "/abs.png": png_bytes(),
            }
        )
    )
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(
            project=make_project(), dataset=CORPUS / "valid.json", images=images
        )
    assert {p.message.split("'")[1] for p in failure.value.problems} == {"../evil.png", "/abs.png"}
    assert_nothing_written()


def test_zip_without_exactly_one_dataset_is_refused(tmp_path):
    archive = tmp_path / "bundle.zip"
    archive.write_bytes(zip_bytes({"a.json": b"[]", "b.jsonl": b"", "images/x.png": png_bytes()}))
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(project=make_project(), dataset=archive)
    assert str(failure.value) == (
        "bundle.zip: expected exactly one .json or .jsonl dataset file in the archive, "
        "found a.json, b.jsonl"
    )


def test_file_named_zip_that_is_not_a_zip_is_refused(tmp_path):
    archive = tmp_path / "bundle.zip"
    archive.write_bytes(b"not a zip at all")
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(project=make_project(), dataset=archive)
    assert str(failure.value).startswith("bundle.zip: not a readable zip archive")


# --- Chosen/rejected JSONL ----------------------------------------------------------


def test_valid_jsonl_is_imported_with_models_and_reasons_in_canonical_order():
    project = make_project()
    result = corpus_import(project, "valid.jsonl")
    assert (result.format, result.created) == ("pairs", 2)
    item = Item.objects.get(external_id="pairs_1")
    assert item.domain.slug == "vqa"
    chosen_first = item.meta["original_label"] == "1"
    assert chosen_first == (not pairs_swap(project.seed, "pairs_1"))
    chosen, rejected = ("Yes, it is red.", "No, it is green.")
    expected = (chosen, rejected, "model-a", "model-b")
    if not chosen_first:
        expected = (rejected, chosen, "model-b", "model-a")
    assert (item.response_1, item.response_2, item.model_1, item.model_2) == expected
    other = Item.objects.get(external_id="pairs_2")
    label = other.meta["original_label"]
    assert other.meta["reasons"][label] == "accurate"
    assert other.meta["reasons"]["1" if label == "2" else "2"] == "hallucinated"
    assert other.gold_choice == ""


def test_jsonl_errors_report_their_line_numbers():
    assert corpus_problems(make_project(), "bad_lines.jsonl") == [
        "bad_lines.jsonl:2: record 1: invalid JSON: Expecting ',' delimiter (column 47)",
        "bad_lines.jsonl:4: record 2: field 'chosen': is missing",
        "bad_lines.jsonl:5: record 3: field 'rejected': must be a string, not int",
    ]


def test_jsonl_without_category_asks_for_a_domain():
    assert corpus_problems(make_project(), "no_category.jsonl") == [
        "no_category.jsonl:1: record 0: field 'category': is missing; give --domain for the "
        "whole file, derive one with --domain-from or map a field to 'category' with --field-map"
    ]


def test_missing_category_message_never_replaces_another_problem_at_the_cap(tmp_path, settings):
    settings.IMPORT_MAX_ERRORS = 2
    record = pairs_record()
    for name in ("prompt", "chosen", "category"):
        del record[name]
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(
            project=make_project(), dataset=write_jsonl(tmp_path, [record]), images=tmp_path
        )
    assert [p.field for p in failure.value.problems] == ["prompt", "chosen"]
    assert failure.value.truncated


def test_image_errors_of_one_kind_do_not_fill_the_cap(tmp_path, settings):
    settings.IMPORT_MAX_ERRORS = 3
    # Six missing images are one problem (issue 31); distinct problems fill the cap.
    records = [mrb_record(f"r{n}", Image=f"images/missing_{n}.png") for n in range(6)]
    records += [mrb_record("p", Image="/abs.png"), mrb_record("q", Image="x/" + "n" * 300)]
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(
            project=make_project(), dataset=write_mrb(tmp_path, records), images=tmp_path
        )
    assert [(p.field, p.count) for p in failure.value.problems] == [
        ("Image", 1),  # the over-long file name, found while parsing
        ("Image", 6),  # six missing images
        ("Image", 1),  # the absolute path
    ]
    assert not failure.value.truncated


def test_jsonl_without_category_imports_into_the_given_domain():
    result = corpus_import(make_project(), "no_category.jsonl", domain="knowledge")
    assert result.created == 1
    assert Item.objects.get().domain.slug == "knowledge"


def test_unknown_domain_lists_the_domains():
    problems = corpus_problems(make_project(), "no_category.jsonl", domain="charts")
    assert problems == [
        "no_category.jsonl: unknown domain 'charts'; known: general_correctness, "
        "general_preference, knowledge, reasoning, safety, vqa"
    ]


def test_jsonl_with_two_images_in_one_record_is_refused():
    assert corpus_problems(make_project(), "two_images.jsonl") == [
        "two_images.jsonl:1: record 0: field 'images': "
        "2 images: exactly one image per item is supported"
    ]


def test_jsonl_images_list_with_one_image_is_accepted(tmp_path):
    record = pairs_record()
    del record["image"]
    record["images"] = ["images/red.png"]
    path = write_jsonl(tmp_path, [record])
    import_items_from_paths(project=make_project(), dataset=path, images=tmp_path)
    assert Item.objects.get().image_path == "images/red.png"


def test_jsonl_numeric_ids_are_read_as_strings(tmp_path):
    path = write_jsonl(tmp_path, [pairs_record(7)])
    import_items_from_paths(project=make_project(), dataset=path, images=tmp_path)
    assert Item.objects.get().external_id == "7"


def test_jsonl_line_numbers_count_blank_lines_and_ignore_unicode_line_separators(tmp_path):
    records = [pairs_record("a", chosen="first\u2028second\x85third"), pairs_record("b", prompt=7)]
    path = tmp_path / "data.jsonl"
    write_images(tmp_path, {"images/red.png": png_bytes()})
    lines = [json.dumps(r, ensure_ascii=False) for r in records]
    path.write_text(lines[0] + "\n\n" + lines[1] + "\n", encoding="utf-8")
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(project=make_project(), dataset=path, images=tmp_path)
    assert [str(p) for p in failure.value.problems] == [
        "data.jsonl:3: record 1: field 'prompt': must be a string, not int"
    ]


def test_jsonl_with_windows_line_endings_is_read(tmp_path):
    path = write_jsonl(tmp_path, [pairs_record("a"), pairs_record("b")])
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    result = import_items_from_paths(project=make_project(), dataset=path, images=tmp_path)
    assert result.created == 2


def test_pairs_in_a_json_array_are_detected(tmp_path):
    path = tmp_path / "pairs.json"
    write_images(tmp_path, {"images/red.png": png_bytes()})
    path.write_text(json.dumps([pairs_record("a"), pairs_record("b")]))
    result = import_items_from_paths(project=make_project(), dataset=path, images=tmp_path)
    assert (result.format, result.created) == ("pairs", 2)


def test_field_map_reads_our_fields_from_the_files_names():
    project = make_project()
    field_map = {"id": "qid", "prompt": "query", "category": "subset"}
    result = corpus_import(project, "query_field.jsonl", field_map=field_map)
    assert result.created == 2
    item = Item.objects.get(external_id="mm_1")
    assert (item.prompt, item.domain.slug) == ("Is the square red?", "vqa")
    assert item.meta["source"] == {"source": "mm-rlhf"}


def test_without_the_field_map_the_files_own_names_are_missing_fields():
    problems = corpus_problems(make_project(), "query_field.jsonl")
    assert problems[:3] == [
        "query_field.jsonl:1: record 0: field 'id': is missing (and 1 more record: 1)",
        "query_field.jsonl:1: record 0: field 'prompt': is missing (and 1 more record: 1)",
        "query_field.jsonl:1: record 0: field 'category': is missing; give --domain for the "
        "whole file, derive one with --domain-from or map a field to 'category' with --field-map"
        " (and 1 more record: 1)",
    ]


def test_field_map_errors_name_the_files_field():
    problems = corpus_problems(make_project(), "bad_lines.jsonl", field_map={"chosen": "preferred"})
    assert (
        "bad_lines.jsonl:1: record 0: field 'preferred': is missing (and 2 more records: 2, 3)"
        in problems
    )


def test_field_map_with_an_unknown_field_of_ours_is_refused():
    assert corpus_problems(
        make_project(), "query_field.jsonl", field_map={"promt": "query", "id": "qid"}
    ) == [
        "query_field.jsonl: field map names unknown field 'promt'; ours are: "
        "id, prompt, chosen, rejected, image, category, chosen_reason, rejected_reason, "
        "chosen_model, rejected_model, reference_answer, response_1, response_2, model_1, model_2"
    ]


def write_forty_pairs(folder: Path) -> Path:
    return write_jsonl(folder, [pairs_record(f"pair_{n:02}") for n in range(40)])


def test_seeded_shuffle_puts_chosen_first_for_some_items_and_second_for_others(tmp_path):
    project = make_project(seed=1234)
    import_items_from_paths(project=project, dataset=write_forty_pairs(tmp_path), images=tmp_path)
    labels = []
    for item in Item.objects.all():
        label = item.meta["original_label"]
        chosen = f"chosen answer for {item.external_id}"
        rejected = f"rejected answer for {item.external_id}"
        landed = {"1": (chosen, rejected), "2": (rejected, chosen)}[label]
        assert (item.response_1, item.response_2) == landed
        assert (label == "2") == pairs_swap(1234, item.external_id)
        labels.append(label)
    assert 5 <= labels.count("1") <= 35
    assert 5 <= labels.count("2") <= 35


def test_gold_from_label_records_where_chosen_landed(tmp_path):
    import_items_from_paths(
        project=make_project(),
        dataset=write_forty_pairs(tmp_path),
        images=tmp_path,
        gold_from_label=True,
    )
    for gold, meta in Item.objects.values_list("gold_choice", "meta"):
        assert gold == meta["original_label"]
    assert set(Item.objects.values_list("gold_choice", flat=True)) == {"1", "2"}


def test_same_seed_gives_the_same_order_on_reimport(tmp_path):
    project = make_project(seed=5)
    path = write_forty_pairs(tmp_path)
    import_items_from_paths(project=project, dataset=path, images=tmp_path)
    before = dict(Item.objects.values_list("external_id", "response_1"))
    again = import_items_from_paths(project=project, dataset=path, images=tmp_path)
    assert (again.created, again.updated, again.unchanged) == (0, 0, 40)
    assert dict(Item.objects.values_list("external_id", "response_1")) == before


def test_shuffle_follows_the_item_id_not_its_position_in_the_file(tmp_path):
    project_a, project_b = make_project(seed=3), make_project(seed=3)
    records = [pairs_record(f"pair_{n:02}") for n in range(40)]
    first = write_jsonl(tmp_path / "a", records)
    second = write_jsonl(tmp_path / "b", list(reversed(records)))
    import_items_from_paths(project=project_a, dataset=first, images=tmp_path / "a")
    import_items_from_paths(project=project_b, dataset=second, images=tmp_path / "b")

    def labels(project):
        rows = project.items.values_list("external_id", "meta")
        return {ext_id: meta["original_label"] for ext_id, meta in rows}

    assert labels(project_a) == labels(project_b)


def test_another_seed_gives_another_order(tmp_path):
    path = write_forty_pairs(tmp_path)
    zero, other = make_project(seed=0), make_project(seed=0)
    import_items_from_paths(project=zero, dataset=path, images=tmp_path)
    import_items_from_paths(project=other, dataset=path, images=tmp_path, seed=99)
    assert set(zero.items.values_list("external_id", "response_1")) != set(
        other.items.values_list("external_id", "response_1")
    )
    for ext_id, meta in other.items.values_list("external_id", "meta"):
        assert (meta["original_label"] == "2") == pairs_swap(99, ext_id)


# --- Re-import and updates ----------------------------------------------------------


def test_reimporting_the_same_file_is_a_no_op():
    project = make_project()
    corpus_import(project, "valid.json")
    rows = list(Item.objects.values("pk", "content_hash", "updated_at", "image_id"))
    files = stored_files()

    again = corpus_import(project, "valid.json")

    assert (again.created, again.updated, again.unchanged, again.images_stored) == (0, 0, 2, 0)
    assert list(Item.objects.values("pk", "content_hash", "updated_at", "image_id")) == rows
    assert ImageAsset.objects.count() == 2
    assert Verdict.objects.count() == 2
    assert stored_files() == files


def test_reimport_with_new_records_adds_only_those(tmp_path):
    project = make_project()
    path = write_mrb(tmp_path, [mrb_record("a"), mrb_record("b")])
    import_items_from_paths(project=project, dataset=path, images=tmp_path)
    path = write_mrb(tmp_path, [mrb_record("a"), mrb_record("b"), mrb_record("c")])
    result = import_items_from_paths(project=project, dataset=path, images=tmp_path)
    assert (result.created, result.unchanged) == (1, 2)
    assert Item.objects.count() == 3


def test_same_id_with_different_content_is_an_error(tmp_path):
    project = make_project()
    import_items_from_paths(
        project=project, dataset=write_mrb(tmp_path, [mrb_record("a")]), images=tmp_path
    )
    changed = [mrb_record("new"), mrb_record("a", Output1="A crimson square.")]
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(
            project=project, dataset=write_mrb(tmp_path, changed), images=tmp_path
        )
    assert [str(p) for p in failure.value.problems] == [
        "data.json: field 'ID': 1 record has an ID already in the project with different "
        "content: Output1 differs on 1 record (first: 1); to import them, use "
        "--conflicts=suffix (import them as new items ID#2, …) or --conflicts=replace "
        "(replace the items; none is claimed or voted on yet)"
    ]
    assert list(Item.objects.values_list("external_id", "response_1")) == [("a", "A red square.")]


def test_same_id_with_different_content_is_replaced_with_update(tmp_path):
    project = make_project()
    import_items_from_paths(
        project=project, dataset=write_mrb(tmp_path, [mrb_record("a")]), images=tmp_path
    )
    item = Item.objects.get()
    changed = mrb_record("a", Output1="A crimson square.", Image="images/blue.png")
    path = write_mrb(tmp_path, [changed], {"images/blue.png": png_bytes(color=(0, 0, 255))})

    result = import_items_from_paths(project=project, dataset=path, images=tmp_path, update=True)

    assert (result.created, result.updated, result.images_stored) == (0, 1, 1)
    updated = Item.objects.get()
    assert updated.pk == item.pk
    assert (updated.response_1, updated.image_path) == ("A crimson square.", "images/blue.png")
    assert updated.image_id != item.image_id
    assert updated.content_hash != item.content_hash
    again = import_items_from_paths(project=project, dataset=path, images=tmp_path, update=True)
    assert (again.updated, again.unchanged) == (0, 1)


def test_update_is_refused_for_items_with_live_assignments(tmp_path):
    project = make_project()
    import_items_from_paths(
        project=project, dataset=write_mrb(tmp_path, [mrb_record("a")]), images=tmp_path
    )
    item = Item.objects.get()
    make_assignment(item)
    Item.objects.filter(pk=item.pk).update(live_assignments=1)
    changed = write_mrb(tmp_path, [mrb_record("b"), mrb_record("a", Output1="changed")])

    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(project=project, dataset=changed, images=tmp_path, update=True)

    assert [str(p) for p in failure.value.problems] == [
        "data.json: field 'ID': 1 record has an ID already in the project with different "
        "content: Output1 differs on 1 record (first: 1); 1 of these items is claimed or voted "
        "on and cannot be replaced (only metadata may change once annotators have seen an "
        "item); import them as new items with --conflicts=suffix"
    ]
    assert list(Item.objects.values_list("external_id", "response_1")) == [("a", "A red square.")]


def test_ids_are_unique_per_project_not_globally():
    import_a, import_b = make_project(), make_project()
    corpus_import(import_a, "valid.json")
    result = corpus_import(import_b, "valid.json")
    assert result.created == 2
    assert ImageAsset.objects.count() == 2


def test_failure_while_writing_rolls_back_rows_and_removes_new_files(tmp_path):
    def explode(**kwargs):
        raise RuntimeError("database went away")

    signals.items_imported.connect(explode, dispatch_uid="test_explode")
    try:
        with pytest.raises(RuntimeError):
            corpus_import(make_project(), "valid.json")
    finally:
        signals.items_imported.disconnect(dispatch_uid="test_explode")
    assert_nothing_written()


def test_import_items_accepts_bytes_and_an_image_source():
    result = import_items(
        project=make_project(),
        data=(CORPUS / "valid.json").read_bytes(),
        filename="upload.json",
        images=DirectoryImageSource(CORPUS),
    )
    assert result.created == 2


def test_png_with_intact_chunks_but_missing_pixel_data_is_refused(tmp_path):
    """Every chunk has a valid CRC, but IDAT holds far fewer bytes than the
    IHDR's 400x400 pixels need: only a full decode notices."""
    import struct
    import zlib

    from annotate.importing.images import inspect_image
    from annotate.importing.records import ImageLimits

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body))
            + kind
            + body
            + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
        )

    ihdr = struct.pack(">IIBBBBB", 400, 400, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00" + b"\x10" * 30)  # one partial row of 1,201 needed bytes
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")
    with pytest.raises(ValueError, match="corrupt or truncated"):
        inspect_image(png, "short.png", ImageLimits())


def test_created_updated_and_unchanged_records_across_write_batches_land_in_file_order(tmp_path):
    # The write decodes the file again and inserts 500 records at a time: a
    # file mixing new, replaced and unchanged records across several batches
    # stores each record's own text, and the new items in file order.
    project = make_project()
    first = [mrb_record(f"r{i}", Output1=f"old {i}") for i in range(0, 1300, 2)]
    import_items_from_paths(project=project, dataset=write_mrb(tmp_path, first), images=tmp_path)
    before = dict(Item.objects.values_list("external_id", "pk"))
    second = [
        mrb_record(f"r{i}", Output1=f"new {i}" if i % 4 == 0 else f"old {i}") for i in range(1300)
    ]

    result = import_items_from_paths(
        project=project, dataset=write_mrb(tmp_path, second), images=tmp_path, update=True
    )

    assert (result.created, result.updated, result.unchanged) == (650, 325, 325)
    stored = dict(Item.objects.values_list("external_id", "response_1"))
    assert stored == {r["ID"]: r["Output1"] for r in second}
    created = Item.objects.filter(pk__in=result.item_ids).order_by("pk")
    assert [item.external_id for item in created] == [f"r{i}" for i in range(1, 1300, 2)]
    assert {k: v for k, v in Item.objects.values_list("external_id", "pk") if k in before} == before
    assert (
        import_items_from_paths(
            project=project, dataset=write_mrb(tmp_path, second), images=tmp_path
        ).unchanged
        == 1300
    )


def test_a_failure_after_a_written_batch_leaves_nothing(tmp_path, monkeypatch):
    # Batches are written as the file is decoded again, inside the one
    # transaction: a failure past the first batch rolls every batch back and
    # removes the images this import stored.
    from annotate.importing.formats import mrb

    project = make_project()
    calls = []
    real_hash = mrb.content_hash

    def failing_hash(record, sha256):
        calls.append(record.external_id)
        if len(calls) > 700:
            raise OSError("disk full")
        return real_hash(record, sha256)

    monkeypatch.setattr(mrb, "content_hash", failing_hash)
    path = write_mrb(tmp_path, [mrb_record(f"r{i}") for i in range(1000)])
    with pytest.raises(OSError, match="disk full"):
        import_items_from_paths(project=project, dataset=path, images=tmp_path)
    assert len(calls) == 701  # the first 500 had been inserted
    assert not Item.objects.exists()
    assert not ImageAsset.objects.exists()
    assert stored_files() == []
