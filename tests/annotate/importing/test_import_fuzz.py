"""Hostile dataset files and archives through both ways in: the management
command and the admin upload page.

Every case must end in a success or in a clear error that names the file
(and, where there is one, the line and field); never an unexpected exception,
a 500, or a partial import (rows and stored image files are counted before
and after). The first half pins the bugs the fuzzing found, one test each;
the second half generates inputs with hypothesis (derandomized, no example
database, bounded example counts) so CI runs the same cases every time.
"""

from __future__ import annotations

import io
import json
import shutil
import stat
import warnings
import zipfile
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import transaction
from django.urls import reverse
from django.utils.html import escape
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from PIL import Image

from annotate.importing.records import (
    MAX_ID_LENGTH,
    MAX_IMAGE_PATH_LENGTH,
    MAX_MODEL_LENGTH,
    ImportFailed,
)
from annotate.importing.service import import_items_from_paths
from annotate.models import ImageAsset, Item
from curation.models import Verdict
from tests.factories import make_member, make_project, mrb_record, pairs_record, png_bytes

pytestmark = pytest.mark.django_db


# --- Helpers ------------------------------------------------------------------------


def mrb_text(records: list) -> str:
    """One record per line: record n starts on line n + 2."""
    return "[\n" + ",\n".join(json.dumps(r) for r in records) + "\n]\n"


def jsonl_text(records: list) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def stored_files() -> list[str]:
    root = Path(default_storage.location)
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def snapshot() -> tuple:
    return (
        Item.objects.count(),
        ImageAsset.objects.count(),
        Verdict.objects.count(),
        stored_files(),
    )


def import_bytes(tmp_path: Path, name: str, data: bytes | str, images=None):
    """Import `data` saved as `name` with an image folder holding images/red.png;
    returns the result, or the ImportFailed."""
    folder = tmp_path / "in"
    (folder / "images").mkdir(parents=True, exist_ok=True)
    (folder / "images" / "red.png").write_bytes(png_bytes())
    path = folder / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    try:
        return import_items_from_paths(
            project=make_project(), dataset=path, images=folder if images is None else images
        )
    except ImportFailed as failure:
        return failure


def refused(tmp_path: Path, name: str, data: bytes | str, images=None) -> list[str]:
    """The problems of a refused import, after checking nothing was written."""
    before = snapshot()
    outcome = import_bytes(tmp_path, name, data, images)
    assert isinstance(outcome, ImportFailed), outcome
    assert snapshot() == before
    return [str(p) for p in outcome.problems]


# --- Regressions: JSON the decoder itself gives up on ------------------------------------


@pytest.mark.parametrize("name", ["data.json", "data.jsonl"])
def test_json_nested_beyond_the_decoders_limit_is_an_error_not_a_crash(tmp_path, name):
    deep = "[" * 100_000 + "]" * 100_000
    good = json.dumps(mrb_record("ok") if name == "data.json" else pairs_record("ok"))
    bad = good[:-1] + f', "junk": {deep}}}'
    text = f"[\n{good},\n{bad}\n]\n" if name == "data.json" else f"{good}\n{bad}\n"
    assert refused(tmp_path, name, text) == [
        f"{name}:3: record 1: invalid JSON: values are nested too deeply"
        if name == "data.json"
        else f"{name}:2: record 1: invalid JSON: values are nested too deeply"
    ]


@pytest.mark.parametrize("name", ["data.json", "data.jsonl"])
def test_integer_too_long_to_convert_is_an_error_not_a_crash(tmp_path, name):
    record = json.dumps(mrb_record() if name == "data.json" else pairs_record())
    text = record[:-1] + ', "n": ' + "9" * 5000 + "}"
    text = f"[\n{text}\n]" if name == "data.json" else text + "\n"
    assert refused(tmp_path, name, text) == [
        f"{name}:{2 if name == 'data.json' else 1}: record 0: "
        "invalid JSON: a number has too many digits"
    ]


# --- Regressions: JSON values the database cannot store ------------------------------
# Each of these passed validation and then failed inside the write (a 500 on
# PostgreSQL: NUL in text or jsonb, NaN in jsonb; on every database: unpaired
# surrogates cannot be encoded to UTF-8).


@pytest.mark.parametrize(
    ("raw_value", "message"),
    [
        (r'"a\u0000b"', r"contains a NUL character (\u0000)"),
        (
            r'"a\ud800b"',
            r"contains an unpaired surrogate (\ud800-\udfff), which is not valid Unicode",
        ),
        ("NaN", "contains NaN or Infinity, which JSON does not allow"),
        ("-Infinity", "contains NaN or Infinity, which JSON does not allow"),
        ("1e999", "contains NaN or Infinity, which JSON does not allow"),
        ('{"a": [1, ' + "[" * 40 + "]" * 40 + "]}", "is nested more than 32 levels deep"),
    ],
)
@pytest.mark.parametrize("field", ["Text", "Output2", "extra"])
def test_mrb_values_the_database_cannot_store_are_refused_by_field(
    tmp_path, raw_value, message, field
):
    good = json.dumps(mrb_record("ok"))
    record = mrb_record("bad")
    record[field] = "PLACEHOLDER"
    bad = json.dumps(record).replace('"PLACEHOLDER"', raw_value)
    assert refused(tmp_path, "data.json", f"[\n{good},\n{bad}\n]") == [
        f"data.json:3: record 1: field '{field}': {message}"
    ]


def test_pairs_values_the_database_cannot_store_are_refused_by_field(tmp_path):
    lines = [
        json.dumps(pairs_record("ok")),
        json.dumps(pairs_record("p2", chosen_model="PLACEHOLDER")).replace(
            '"PLACEHOLDER"', r'"gpt\u0000"'
        ),
        json.dumps(pairs_record("p3", images=["PLACEHOLDER"])).replace(
            '"PLACEHOLDER"', r'"x\udfff.png"'
        ),
        json.dumps(pairs_record("p4", score=0.5)).replace("0.5", "Infinity"),
    ]
    assert refused(tmp_path, "data.jsonl", "\n".join(lines)) == [
        r"data.jsonl:2: record 1: field 'chosen_model': contains a NUL character (\u0000)",
        "data.jsonl:3: record 2: field 'images': "
        r"contains an unpaired surrogate (\ud800-\udfff), which is not valid Unicode",
        "data.jsonl:4: record 3: field 'score': "
        "contains NaN or Infinity, which JSON does not allow",
    ]


def test_field_name_with_a_nul_or_surrogate_is_refused_and_shown_escaped(tmp_path):
    text = json.dumps(mrb_record())[:-1] + r', "a\u0000b": 1, "\udc80": 2}'
    assert refused(tmp_path, "data.json", f"[\n{text}\n]") == [
        r"data.json:2: record 0: field 'a\x00b': name contains a NUL character (\u0000)",
        r"data.json:2: record 0: field '\udc80': name contains an unpaired surrogate "
        r"(\ud800-\udfff), which is not valid Unicode",
    ]


def test_valid_surrogate_pairs_and_nesting_within_the_limit_are_imported(tmp_path):
    record = mrb_record(Text="emoji \U0001f600", extra={"a": [[[{"b": 1.5}]]]})
    outcome = import_bytes(tmp_path, "data.json", "[" + json.dumps(record) + "]")  # ASCII escapes
    assert not isinstance(outcome, ImportFailed), outcome
    item = Item.objects.get()
    assert item.prompt == "emoji \U0001f600"
    assert item.meta["source"] == {"extra": {"a": [[[{"b": 1.5}]]]}}


# --- Regressions: strings longer than their column -----------------------------------
# PostgreSQL refuses them inside the write (a 500); SQLite silently kept them.


def zip_bytes(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


def test_length_limits_match_the_item_columns():
    assert Item._meta.get_field("model_1").max_length == MAX_MODEL_LENGTH
    assert Item._meta.get_field("model_2").max_length == MAX_MODEL_LENGTH
    assert Item._meta.get_field("image_path").max_length == MAX_IMAGE_PATH_LENGTH
    assert Item._meta.get_field("external_id").max_length == MAX_ID_LENGTH


def test_image_path_longer_than_its_column_is_refused_even_when_the_member_exists(tmp_path):
    long_ref = "images/" + "d/" * 300 + "red.png"  # zip member names may be 64 KiB long
    members = {
        "bundle/data.json": mrb_text([mrb_record(Image=long_ref)]).encode(),
        f"bundle/{long_ref}": png_bytes(),
    }
    assert refused(tmp_path, "bundle.zip", zip_bytes(members)) == [
        "bundle.zip:bundle/data.json:2: record 0: field 'Image': is longer than 500 characters"
    ]


def test_pairs_model_names_and_image_lists_longer_than_their_columns_are_refused(tmp_path):
    records = [
        pairs_record("p1", chosen_model="m" * 201, rejected_model="ok"),
        pairs_record("p2", rejected_model="m" * 201),
        pairs_record("p3", image=None, images=["i/" * 300 + "x.png"]),
        pairs_record("p4", chosen_model="m" * 200),  # exactly at the limit: fine
    ]
    assert refused(tmp_path, "data.jsonl", jsonl_text(records)) == [
        "data.jsonl:1: record 0: field 'chosen_model': is longer than 200 characters",
        "data.jsonl:2: record 1: field 'rejected_model': is longer than 200 characters",
        "data.jsonl:3: record 2: field 'images': is longer than 500 characters",
    ]


# --- Regressions: archives zipfile cannot read -------------------------------------------
# zipfile raises much more than BadZipFile on damaged archives; these escaped
# the importer as a 500 (and, for images, from a worker thread).

LOCAL_HEADER, CENTRAL_HEADER = b"PK\x03\x04", b"PK\x01\x02"


def patch_headers(data: bytes, offsets: dict[bytes, int], value: bytes) -> bytes:
    """Write `value` at the given offset of every local / central header."""
    out = bytearray(data)
    for signature, offset in offsets.items():
        start = 0
        while (start := out.find(signature, start)) >= 0:
            out[start + offset : start + offset + len(value)] = value
            start += 4
    return bytes(out)


def bundle(image: bytes | None = None, compression=zipfile.ZIP_STORED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=compression) as archive:
        archive.writestr("bundle/data.json", mrb_text([mrb_record()]))
        archive.writestr("bundle/images/red.png", png_bytes() if image is None else image)
    return out.getvalue()


def noisy_png() -> bytes:
    pixels = bytes((x * 31 + y * 17 + x * y) % 251 for y in range(64) for x in range(192))
    out = io.BytesIO()
    Image.frombytes("RGB", (64, 64), pixels).save(out, format="PNG")
    return out.getvalue()


def test_image_member_with_corrupt_compressed_data_is_a_clear_error(tmp_path):
    data = bytearray(bundle(noisy_png(), compression=zipfile.ZIP_DEFLATED))
    member = data.rindex(LOCAL_HEADER)  # the image's local header
    data[member + 200] ^= 0xFF
    problems = refused(tmp_path, "bundle.zip", bytes(data))
    assert len(problems) == 1
    assert problems[0].startswith(
        "bundle.zip:bundle/data.json:2: record 0: field 'Image': "
        "image 'images/red.png': cannot be read from bundle.zip ("
    )


def test_encrypted_members_are_a_clear_error(tmp_path):
    data = patch_headers(bundle(), {LOCAL_HEADER: 6, CENTRAL_HEADER: 8}, b"\x01")
    assert refused(tmp_path, "bundle.zip", data) == [
        "bundle.zip:bundle/data.json: cannot be read from the archive (the member is encrypted)"
    ]


def test_unknown_compression_method_is_a_clear_error(tmp_path):
    data = patch_headers(bundle(), {LOCAL_HEADER: 8, CENTRAL_HEADER: 10}, b"\x63\x00")
    assert refused(tmp_path, "bundle.zip", data) == [
        "bundle.zip:bundle/data.json: cannot be read from the archive "
        "(That compression method is not supported)"
    ]


def test_member_name_flagged_utf8_that_is_not_is_a_clear_error(tmp_path):
    data = bundle().replace(b"bundle/images/red.png", b"bundle/images/r\xffd.png")
    data = patch_headers(data, {CENTRAL_HEADER: 8}, b"\x00\x08")
    problems = refused(tmp_path, "bundle.zip", data)
    assert problems == [
        "bundle.zip: not a readable zip archive ('utf-8' codec can't decode byte 0xff "
        "in position 15: invalid start byte)"
    ]


def test_corrupt_images_zip_beside_a_dataset_names_the_images_zip(tmp_path):
    images = zip_bytes({"images/red.png": png_bytes()})
    images = patch_headers(images, {LOCAL_HEADER: 8, CENTRAL_HEADER: 10}, b"\x63\x00")
    (tmp_path / "imgs.zip").write_bytes(images)
    problems = refused(tmp_path, "data.json", mrb_text([mrb_record()]), tmp_path / "imgs.zip")
    assert problems == [
        "data.json:2: record 0: field 'Image': image 'images/red.png': "
        "cannot be read from imgs.zip (That compression method is not supported)"
    ]


def test_zip_with_a_corrupt_central_directory_is_a_clear_error(tmp_path):
    data = bytearray(bundle())
    central = data.index(CENTRAL_HEADER)
    data[central : central + 4] = b"XXXX"
    assert refused(tmp_path, "bundle.zip", bytes(data)) == [
        "bundle.zip: not a readable zip archive (Bad magic number for central directory)"
    ]


def test_zip_whose_directory_points_past_the_end_is_a_clear_error(tmp_path):
    data = bytearray(bundle())
    end = data.rindex(b"PK\x05\x06")  # end of central directory: its offset field
    data[end + 16 : end + 20] = (len(data) + 1000).to_bytes(4, "little")
    problems = refused(tmp_path, "bundle.zip", bytes(data))
    assert len(problems) == 1
    assert problems[0].startswith("bundle.zip"), problems


def test_symlink_member_pointing_outside_is_just_data_and_not_an_image(tmp_path):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("bundle/data.json", mrb_text([mrb_record()]))
        link = zipfile.ZipInfo("bundle/images/red.png")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(link, "/etc/passwd")
    assert refused(tmp_path, "bundle.zip", out.getvalue()) == [
        "bundle.zip:bundle/data.json:2: record 0: field 'Image': image 'images/red.png': "
        "not an image Pillow can read"
    ]


# --- Regressions: zip bombs ---------------------------------------------------------------
# The dataset member was read whole, whatever its size: a few kilobytes of
# upload could expand into gigabytes in memory.


def test_dataset_member_declaring_a_huge_size_is_refused_without_reading_it(tmp_path):
    data = bundle()
    central = data.index(CENTRAL_HEADER)  # the dataset's entry comes first
    data = data[: central + 24] + b"\xff\xff\xff\x7f" + data[central + 28 :]  # file size
    assert refused(tmp_path, "bundle.zip", data) == [
        "bundle.zip:bundle/data.json: is 2147483647 bytes uncompressed, "
        "more than the limit of 536870912 for a dataset file"
    ]


def test_dataset_member_with_a_high_compression_ratio_over_the_limit_is_refused(
    tmp_path, monkeypatch
):
    monkeypatch.setattr("annotate.importing.sources.DATASET_MAX_BYTES", 1_000_000)
    padded = mrb_text([mrb_record(Text="x" * 5_000_000)]).encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("bundle/data.json", padded)
        archive.writestr("bundle/images/red.png", png_bytes())
    assert len(out.getvalue()) < 10_000  # a ratio of more than 500:1
    assert refused(tmp_path, "bundle.zip", out.getvalue()) == [
        f"bundle.zip:bundle/data.json: is {len(padded)} bytes uncompressed, "
        "more than the limit of 1000000 for a dataset file"
    ]


def test_image_member_declaring_more_than_the_byte_limit_is_refused_unread(tmp_path, settings):
    settings.IMAGE_MAX_BYTES = 10_000
    data = bundle(b"\x00" * 50_000, compression=zipfile.ZIP_DEFLATED)
    assert refused(tmp_path, "bundle.zip", data) == [
        "bundle.zip:bundle/data.json:2: record 0: field 'Image': image 'images/red.png': "
        "image is 50000 bytes, more than the limit of 10000"
    ]


def test_member_whose_data_is_longer_than_it_declares_is_refused(tmp_path):
    """zipfile stops at the declared size, so the checksum no longer matches."""
    data = bundle(noisy_png(), compression=zipfile.ZIP_DEFLATED)
    central = data.rindex(CENTRAL_HEADER)  # the image's entry
    data = data[: central + 24] + (100).to_bytes(4, "little") + data[central + 28 :]
    problems = refused(tmp_path, "bundle.zip", data)
    assert len(problems) == 1
    assert "image 'images/red.png': cannot be read from bundle.zip (Bad CRC-32" in problems[0]


# --- Regressions: ambiguous archives ----------------------------------------------------


@pytest.mark.parametrize(
    ("again", "shown"),
    [
        ("bundle/images/red.png", "bundle/images/red.png"),
        ("bundle/images//red.png", "bundle/images/red.png"),
        ("bundle/./data.json", "bundle/data.json"),
    ],
)
def test_zip_with_two_members_under_one_name_is_refused(tmp_path, again, shown):
    """Which of two same-named members "is" the file differs between tools, so
    the picture a reviewer unzipped need not be the one imported."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("bundle/data.json", mrb_text([mrb_record()]))
        archive.writestr("bundle/images/red.png", png_bytes())
        if again == shown:
            with pytest.warns(UserWarning, match="Duplicate name"):
                archive.writestr(again, png_bytes(color=(0, 255, 0)))
        else:
            archive.writestr(again, png_bytes(color=(0, 255, 0)))
    assert refused(tmp_path, "bundle.zip", out.getvalue()) == [
        f"bundle.zip: archive has 2 members named '{shown}'; the archive is refused"
    ]


# --- Regressions: huge values in messages -------------------------------------------------


def test_messages_show_huge_or_unprintable_values_cut_short_and_escaped(tmp_path):
    records = [
        mrb_record("a", Better="B" * 1_000_000),
        mrb_record("b", Category="c" * 1_000_000),
        mrb_record("c", Category="bad\u2028\x1b[31m"),
        {**mrb_record("d"), "k" * 1000: "\x00"},
    ]
    problems = refused(tmp_path, "data.json", mrb_text(records))
    assert problems[0] == (
        f"data.json:2: record 0: field 'Better': '{'B' * 80}'... (1000000 characters): "
        'must be "Output1" or "Output2"'
    )
    assert problems[1] == (
        f"data.json:5: record 3: field '{'k' * 80}... (1000 characters)': "
        "contains a NUL character (\\u0000)"
    )
    # Unknown categories: one problem listing each value once (issue 31).
    assert problems[2].startswith(
        "data.json: field 'Category': 2 values of the field 'Category' name no domain: "
        "'bad\\u2028\\x1b[31m' (1 record: 2), "
        f"'{'c' * 80}'... (1000000 characters) (1 record: 1); "
    )
    assert sum(len(p) for p in problems) < 2000


# === Generated inputs ====================================================================
# Hypothesis builds dataset files and archives from pieces that are each valid
# or hostile; the properties below hold for every one of them. Derandomized,
# without an example database, so CI runs the same examples every time.

FUZZ = hsettings(
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
)

# The image folder every generated file may point into, hostile files included.
FOLDER_IMAGES = {
    "images/red.png": png_bytes(),
    "images/blue.jpg": png_bytes(color=(0, 0, 250), fmt="JPEG"),
    "images/html.png": b"<html><script>alert(1)</script></html>",
    "images/empty.png": b"",
}
GOOD_REFS = ["images/red.png", "images/blue.jpg", "images/./red.png", "images//blue.jpg"]
BAD_REFS = [
    "images/html.png",
    "images/empty.png",
    "images/outside.png",  # a symlink to a file outside the folder
    "images/missing.png",
    "images\\red.png",
    "../images/red.png",
    "images/../../red.png",
    "/etc/passwd",
    "C:\\images\\red.png",
    "\\\\server\\share\\red.png",
    "images/red.png\x00.txt",
    "images/",
    ".",
    "",
    "images/" + "d/" * 260 + "red.png",
]
TEXT = st.text(
    st.characters() | st.characters(categories=["Cs"]) | st.sampled_from("\x00\u2028\ufeff'\"\\<"),
    max_size=12,
)
HUGE = st.sampled_from(["x" * 300_000, "\u00e9" * 70_000])
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | TEXT
)
JUNK = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
GOOD_IDS = st.sampled_from([f"vqa_{n}" for n in range(8)])  # few: duplicates happen
GOOD_CATEGORIES = st.sampled_from(
    ["vqa", "knowledge", "reasoning", "open_generation/preference_task", "general_preference"]
)
GOOD_TEXTS = st.sampled_from(["What is shown?", "A red square.", "# T\n\n$x^2$ <script>x</script>"])
GOOD = {
    "ID": GOOD_IDS,
    "id": GOOD_IDS | st.integers(0, 3),
    "Text": GOOD_TEXTS,
    "prompt": GOOD_TEXTS,
    "Image": st.sampled_from(GOOD_REFS),
    "image": st.sampled_from(GOOD_REFS),
    "images": st.lists(st.sampled_from(GOOD_REFS), min_size=1, max_size=1),
    "Output1": GOOD_TEXTS,
    "Output2": GOOD_TEXTS,
    "chosen": GOOD_TEXTS,
    "rejected": GOOD_TEXTS,
    "Better": st.sampled_from(["Output1", "Output2"]),
    "Category": GOOD_CATEGORIES,
    "category": GOOD_CATEGORIES,
    "chosen_model": st.sampled_from(["gpt-4o", "m" * 200]),
    "rejected_model": GOOD_TEXTS,
    "chosen_reason": GOOD_TEXTS,
    "reference_answer": GOOD_TEXTS,
}
HOSTILE = {
    "ID": TEXT | st.sampled_from([" padded", "i" * 201, ""]),
    "Image": st.sampled_from(BAD_REFS),
    "Better": st.sampled_from(["output1", "Output3"]) | HUGE,
    "Category": st.sampled_from(["VQA", "unknown", "vqa ", "safety/bias"]) | HUGE,
    "Text": TEXT | HUGE,
    "chosen_model": st.just("m" * 201),
    "images": st.lists(st.sampled_from(GOOD_REFS + BAD_REFS), max_size=2),
}
for ours, theirs in (
    ("id", "ID"),
    ("image", "Image"),
    ("category", "Category"),
    ("prompt", "Text"),
    ("rejected", "Text"),
    ("Output2", "Text"),
):
    HOSTILE[ours] = HOSTILE[theirs]
MRB_FIELDS = ("ID", "Text", "Image", "Output1", "Output2", "Better", "Category")
PAIRS_KEYS = ("id", "prompt", "chosen", "rejected", "image", "images", "category")
PAIRS_OPTIONAL = ("chosen_model", "rejected_model", "chosen_reason", "reference_answer")


@st.composite
def records(draw, keys: tuple[str, ...], optional: tuple[str, ...] = ()):
    """A valid record, or one whose fields are each valid, hostile, junk of any
    JSON type or missing, with extra keys; sometimes not an object at all."""
    # Hypothesis favours the ends of a range, so rare choices sit in the middle.
    mode = draw(st.integers(0, 8))
    if mode == 4:
        return draw(JUNK)
    fuzzy = mode >= 7
    record = {}
    for key in keys:
        kind = draw(st.integers(0, 9)) if fuzzy else 0
        if kind == 1 or (key == "images" and "image" in record):
            continue  # missing
        if kind == 2:
            record[key] = draw(JUNK)
        elif kind in (3, 4) and key in HOSTILE:
            record[key] = draw(HOSTILE[key])
        else:
            record[key] = draw(GOOD[key])
    for key in optional:
        if draw(st.booleans()):
            record[key] = draw(HOSTILE.get(key, JUNK) if fuzzy else GOOD[key])
    if draw(st.integers(0, 4)) == 2:
        record.update(draw(st.dictionaries(TEXT, JUNK, max_size=2)))
    return record


def encode(text: str) -> bytes:
    # surrogatepass: a raw unpaired surrogate becomes invalid UTF-8 in the file.
    return text.encode("utf-8", "surrogatepass")


@st.composite
def mutated(draw, data: bytes) -> bytes:
    """The file as written, or damaged the way files get damaged."""
    kind = draw(st.sampled_from(["none"] * 5 + ["truncate", "bom", "flip", "bad_utf8", "crlf"]))
    if not data or kind == "none":
        return data
    at = draw(st.integers(0, len(data) - 1))
    if kind == "truncate":
        return data[:at]
    if kind == "bom":
        return b"\xef\xbb\xbf" + data
    if kind == "flip":
        return data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1 :]
    if kind == "bad_utf8":
        return data[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80"])) + data[at:]
    return data.replace(b"\n", b"\r\n")


@st.composite
def mrb_files(draw) -> bytes:
    items = draw(st.lists(records(MRB_FIELDS), min_size=1, max_size=4))
    if draw(st.integers(0, 9)) == 5:
        items = draw(JUNK)  # not an array of records
    indent = draw(st.sampled_from([None, 1]))
    text = json.dumps(items, ensure_ascii=draw(st.booleans()), indent=indent)
    return draw(mutated(encode(text)))


@st.composite
def jsonl_files(draw) -> bytes:
    items = draw(st.lists(records(PAIRS_KEYS, PAIRS_OPTIONAL), min_size=1, max_size=4))
    lines = [json.dumps(r, ensure_ascii=draw(st.booleans())) for r in items]
    if draw(st.integers(0, 5)) == 3:
        junk_line = draw(st.sampled_from(["", "  ", "{", "[1]", "NaN", '"x"']))
        lines.insert(draw(st.integers(0, len(lines))), junk_line)
    return draw(mutated(encode("\n".join(lines))))


@pytest.fixture
def image_folder(tmp_path) -> Path:
    folder = tmp_path / "source"
    for name, data in FOLDER_IMAGES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    outside = tmp_path / "outside.png"
    outside.write_bytes(png_bytes(color=(1, 2, 3)))
    (folder / "images" / "outside.png").symlink_to(outside)
    return folder


class Rollback(Exception):
    """Undoes one generated example's rows (its files are removed by hand)."""


@contextmanager
def one_example():
    """Each example starts from an empty database and media folder."""
    try:
        with transaction.atomic():
            yield
            raise Rollback
    except Rollback:
        pass
    finally:
        shutil.rmtree(default_storage.location, ignore_errors=True)


def assert_clean_outcome(outcome, before: tuple, data: bytes, names: tuple[str, ...]) -> None:
    """A success that stored what it says, or a clear failure that changed nothing."""
    if isinstance(outcome, ImportFailed):
        assert outcome.problems
        assert snapshot() == before
        # (A zip's problems count lines in the dataset inside it.)
        lines = data.count(b"\n") + 1 if not data.startswith(b"PK") else 10**9
        for problem in outcome.problems:
            shown = str(problem)
            shown.encode("utf-8")  # printable on any page or terminal
            assert problem.file.startswith(names), shown
            assert problem.message, shown
            assert problem.line is None or 1 <= problem.line <= lines, shown
            assert len(shown) < 1500, shown[:300]
        return
    after = snapshot()
    assert after[0] - before[0] == outcome.created > 0
    assert after[1] - before[1] == outcome.images_stored > 0
    assert sorted(ImageAsset.objects.values_list("file", flat=True)) == after[3]


def fuzz_import(folder: Path, name: str, data: bytes, images: Path | None) -> str:
    with one_example():
        path = folder.parent / "upload" / name
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
        project = make_project()
        before = snapshot()
        try:
            outcome = import_items_from_paths(project=project, dataset=path, images=images)
        except ImportFailed as failure:
            outcome = failure
        assert_clean_outcome(outcome, before, data, (name, str(images)))
        return "failed" if isinstance(outcome, ImportFailed) else "imported"


def test_generated_mrb_files_succeed_or_fail_cleanly(image_folder):
    outcomes: Counter = Counter()

    @hsettings(FUZZ, max_examples=80)
    @given(data=mrb_files())
    def run(data):
        outcomes[fuzz_import(image_folder, "data.json", data, image_folder)] += 1

    run()
    # The generator is neither so hostile that nothing imports nor so tame
    # that nothing fails. (Low floors: the exact split shifts a little with
    # Hypothesis's run context even when derandomized.)
    assert outcomes["imported"] >= 5 and outcomes["failed"] >= 5, outcomes


def test_generated_jsonl_files_succeed_or_fail_cleanly(image_folder):
    outcomes: Counter = Counter()

    @hsettings(FUZZ, max_examples=80)
    @given(data=jsonl_files())
    def run(data):
        outcomes[fuzz_import(image_folder, "data.jsonl", data, image_folder)] += 1

    run()
    assert outcomes["imported"] >= 5 and outcomes["failed"] >= 5, outcomes


def test_arbitrary_bytes_succeed_or_fail_cleanly(image_folder):
    @hsettings(FUZZ, max_examples=30)
    @given(data=st.binary(max_size=300), name=st.sampled_from(["data.json", "data.jsonl"]))
    def run(data, name):
        fuzz_import(image_folder, name, data, image_folder)

    run()


# --- Generated archives ------------------------------------------------------------------

ARCHIVE_IMAGES = {
    "bundle/images/red.png": FOLDER_IMAGES["images/red.png"],
    "bundle/images/blue.jpg": FOLDER_IMAGES["images/blue.jpg"],
}
HOSTILE_MEMBERS = [
    "../evil.png",
    "/abs/evil.png",
    "bundle/../../evil.png",
    "bundle\\..\\..\\evil.png",
    "C:/evil.png",
    "/",
    "bundle//images/red.png",  # the same member as bundle/images/red.png once normalised
    "bundle/images/red.png",
    "bundle/data.jsonl",  # a second dataset
    "bundle/more/data.json",
    "__MACOSX/bundle/._data.json",
    "bundle/.hidden.json",
    "bundle/images/",
    "bundle/nested.zip",
    "bundle/images/" + "n" * 300 + ".png",
]
MEMBER_CONTENTS = st.sampled_from(
    [
        *FOLDER_IMAGES.values(),
        zip_bytes({"data.json": b"[]", "images/red.png": png_bytes()}),  # a nested zip
        b"\x00" * 4096,
        b"PK\x03\x04 not really a zip",
    ]
) | st.binary(max_size=64)
COMPRESSIONS = st.sampled_from(
    [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA]
)
SYMLINK_ATTR = (stat.S_IFLNK | 0o777) << 16


@st.composite
def zip_archives(draw, members: dict[str, bytes]) -> bytes:
    """An archive of `members` with each one sometimes dropped, hostile members
    added, any compression, symlink entries, and the bytes sometimes damaged."""
    chosen = [(n, d) for n, d in members.items() if draw(st.integers(0, 6)) != 3]
    chosen += draw(
        st.lists(st.tuples(st.sampled_from(HOSTILE_MEMBERS), MEMBER_CONTENTS), max_size=2)
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate names are on purpose
        for name, data in draw(st.permutations(chosen)):
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = draw(COMPRESSIONS)
            if draw(st.integers(0, 9)) == 5:
                info.external_attr = SYMLINK_ATTR  # a symlink: its data is the target path
            archive.writestr(info, data)
    data = out.getvalue()
    damage = draw(st.sampled_from(["none"] * 5 + ["truncate", "flip", "size", "encrypted"]))
    if damage == "truncate":
        return data[: draw(st.integers(0, len(data) - 1))]
    if damage == "flip":
        at = draw(st.integers(0, len(data) - 1))
        return data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1 :]
    if damage == "size":  # every entry declares another uncompressed size
        size = draw(st.sampled_from([0, 1, 100, 2**31 - 1, 2**32 - 1]))
        return patch_headers(
            data, {LOCAL_HEADER: 22, CENTRAL_HEADER: 24}, size.to_bytes(4, "little")
        )
    if damage == "encrypted":
        return patch_headers(data, {LOCAL_HEADER: 6, CENTRAL_HEADER: 8}, b"\x01")
    return data


@st.composite
def bundles(draw) -> bytes:
    """A dataset zip: the dataset file with its images beside it."""
    name, dataset = draw(
        st.sampled_from(["bundle/data.json", "bundle/data.jsonl"]).flatmap(
            lambda n: st.tuples(st.just(n), mrb_files() if n.endswith(".json") else jsonl_files())
        )
    )
    return draw(zip_archives({name: dataset, **ARCHIVE_IMAGES}))


@st.composite
def image_zips(draw) -> bytes:
    """An images zip for a dataset file beside it."""
    return draw(zip_archives({n.removeprefix("bundle/"): d for n, d in ARCHIVE_IMAGES.items()}))


def test_generated_dataset_zips_succeed_or_fail_cleanly(image_folder):
    outcomes: Counter = Counter()

    @hsettings(FUZZ, max_examples=60)
    @given(data=bundles())
    def run(data):
        outcomes[fuzz_import(image_folder, "bundle.zip", data, None)] += 1

    run()
    assert outcomes["imported"] >= 2 and outcomes["failed"] >= 20, outcomes


def test_generated_image_zips_beside_a_dataset_succeed_or_fail_cleanly(image_folder):
    outcomes: Counter = Counter()

    @hsettings(FUZZ, max_examples=40)
    @given(images=image_zips(), dataset=mrb_files())
    def run(images, dataset):
        with one_example():
            zipped = image_folder.parent / "imgs.zip"
            zipped.write_bytes(images)
            path = image_folder.parent / "data.json"
            path.write_bytes(dataset)
            before = snapshot()
            try:
                outcome = import_items_from_paths(
                    project=make_project(), dataset=path, images=zipped
                )
            except ImportFailed as failure:
                outcome = failure
            assert_clean_outcome(outcome, before, dataset, ("data.json", "imgs.zip"))
            outcomes["failed" if isinstance(outcome, ImportFailed) else "imported"] += 1

    run()
    assert outcomes["imported"] >= 2 and outcomes["failed"] >= 20, outcomes


# --- The same generated inputs through the upload page and the command ----------------------

UPLOADS = st.one_of(
    st.tuples(st.just("data.json"), mrb_files()),
    st.tuples(st.just("data.jsonl"), jsonl_files()),
    st.tuples(st.just("bundle.zip"), bundles()),
)


def test_generated_uploads_through_the_admin_page_never_500_or_import_partly(client, tmp_path):
    """Each upload redirects after a full import, or answers 400 listing
    problems that name the uploaded file, having changed nothing. (The test
    client re-raises any exception a view lets out, so a 500 fails here.)"""
    statuses: Counter = Counter()
    images = zip_bytes({n.removeprefix("bundle/"): d for n, d in ARCHIVE_IMAGES.items()})

    @hsettings(FUZZ, max_examples=40)
    @given(upload=UPLOADS)
    def run(upload):
        name, data = upload
        with one_example():
            project = make_project()
            client.force_login(make_member(project, role="admin"))
            form = {"dataset": SimpleUploadedFile(name, data), "format": "", "domain": ""}
            if not name.endswith(".zip"):
                form["images"] = SimpleUploadedFile("images.zip", images)
            before = snapshot()
            response = client.post(reverse("import", args=[project.slug]), form)
            statuses[response.status_code] += 1
            if response.status_code == 302:
                assert response["Location"] == reverse("project", args=[project.slug])
                assert snapshot()[0] > before[0]
                return
            assert response.status_code == 400
            assert snapshot() == before
            problems = response.context["problems"]
            assert problems, response.context["form"].errors
            for problem in problems:
                assert problem.startswith((name, "images.zip")), problem
                assert escape(problem).encode() in response.content

    run()
    assert statuses[302] >= 2 and statuses[400] >= 20, statuses


def test_generated_files_through_the_command_succeed_or_name_the_file(image_folder):
    @hsettings(FUZZ, max_examples=25)
    @given(upload=UPLOADS)
    def run(upload):
        name, data = upload
        with one_example():
            project = make_project()
            path = image_folder.parent / name
            path.write_bytes(data)
            images = [] if name.endswith(".zip") else ["--images", str(image_folder)]
            before = snapshot()
            out = io.StringIO()
            try:
                call_command(
                    "import_items", project.slug, str(path), *images, verbosity=0, stdout=out
                )
            except CommandError as error:
                assert snapshot() == before
                message = str(error)
                assert message.startswith("import failed, nothing was written:\n"), message
                for line in message.splitlines()[1:]:
                    assert line.startswith((name, str(image_folder), "(stopped after")), line
            else:
                assert snapshot()[0] > before[0]
                assert f"{name}: " in out.getvalue()

    run()
