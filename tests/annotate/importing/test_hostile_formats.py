"""Hostile inputs over every import format (issue 29): nested, huge,
wrong-typed, zip-slip and decompression-bomb shapes of JSON, JSONL, parquet,
MMRB2 task files and release zips. Each is refused with a clear problem
naming the file, the record (or row) and the field, nothing is written, and
what bounds it (annotate.importing.bounds) is checked before the data is
decoded: parquet from its metadata and value lengths, MMRB2 at the record
cap. The browser form and the API answer 400, never 500."""

from __future__ import annotations

import json
import textwrap
import zipfile
from pathlib import Path

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.importing.records import ImportFailed
from annotate.importing.service import import_items_from_paths
from annotate.models import ImageAsset, Item
from tests.factories import make_item, make_member, make_project, png_bytes
from tests.fresh_process import run_django

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

pytestmark = pytest.mark.django_db

IMAGE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])


@pytest.fixture
def project():
    return make_project(slug="hostile")


def refused(project, path: Path, **options) -> list[str]:
    """The problems of an import that must fail, after checking nothing was written."""
    with pytest.raises(ImportFailed) as caught:
        import_items_from_paths(project=project, dataset=path, **options)
    assert Item.objects.count() == 0
    assert ImageAsset.objects.count() == 0
    assert not default_storage.exists("images")
    return [str(p) for p in caught.value.problems]


def pairs_row(n: int, **fields) -> dict:
    return {
        "id": f"r{n}",
        "prompt": "Which is better?",
        "chosen": "yes",
        "rejected": "no",
        "image": "a.png",
        "category": "vqa",
        **fields,
    }


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def zip_file(path: Path, members: dict[str, bytes | str]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


# --- JSON and JSONL -----------------------------------------------------------------


@pytest.mark.parametrize("name", ["d.json", "d.jsonl"])
def test_json_nested_3000_deep_is_refused_naming_the_record(project, tmp_path, name):
    record = f'{{"id": "r0", "prompt": {nested(3000)}}}'
    text = f"[{record}]" if name.endswith(".json") else record + "\n"
    (path := tmp_path / name).write_text(text)
    (problem,) = refused(project, path, domain="vqa")
    assert "record 0" in problem and "nested too deeply" in problem


@pytest.mark.parametrize("name", ["d.json", "d.jsonl"])
def test_json_record_over_the_record_size_setting_is_refused(project, tmp_path, settings, name):
    settings.IMPORT_MAX_RECORD_BYTES = 2048
    records = [pairs_row(0), pairs_row(1, chosen="x" * 4000)]
    if name.endswith(".json"):
        text = json.dumps(records)
    else:
        text = "\n".join(json.dumps(r) for r in records)
    (path := tmp_path / name).write_text(text)
    problems = refused(project, path, domain="vqa")
    assert any("record 1" in p and "larger than the limit of 2048 bytes" in p for p in problems)


@pytest.mark.parametrize("name", ["d.json", "d.jsonl"])
def test_json_past_the_record_count_setting_is_refused_at_that_record(
    project, tmp_path, settings, name
):
    settings.IMPORT_MAX_RECORDS = 3
    records = [pairs_row(n) for n in range(5)]
    if name.endswith(".json"):
        text = json.dumps(records)
    else:
        text = "\n".join(json.dumps(r) for r in records)
    (path := tmp_path / name).write_text(text)
    (problem,) = refused(project, path, domain="vqa")
    assert "record 3" in problem and "more than 3 records" in problem


def test_json_of_the_wrong_types_names_record_and_field(project, tmp_path):
    (path := tmp_path / "d.json").write_text(json.dumps([7, pairs_row(1, prompt=["not", "text"])]))
    problems = refused(project, path, domain="vqa", fmt="pairs")
    assert any("record 0" in p and "JSON object, not int" in p for p in problems)
    assert any("record 1" in p and "field 'prompt'" in p and "string" in p for p in problems)


def test_zip_slip_member_is_refused(project, tmp_path):
    path = zip_file(
        tmp_path / "slip.zip", {"d.json": json.dumps([pairs_row(0)]), "../evil.png": b"x"}
    )
    (problem,) = refused(project, path, domain="vqa")
    assert "'..'" in problem
    assert not (tmp_path.parent / "evil.png").exists()


def test_zip_member_declaring_more_than_the_dataset_cap_is_refused_unread(
    project, tmp_path, monkeypatch
):
    from annotate.importing import sources

    monkeypatch.setattr(sources, "DATASET_MAX_BYTES", 1000)
    path = zip_file(tmp_path / "bomb.zip", {"d.json": "[" + "{}," * 100_000 + "{}]"})
    (problem,) = refused(project, path, domain="vqa")
    assert "d.json" in problem and "more than the limit of 1000" in problem


# --- Parquet ------------------------------------------------------------------------


def test_parquet_with_more_rows_than_the_record_cap_is_refused_from_its_metadata(
    project, tmp_path, settings, monkeypatch
):
    settings.IMPORT_MAX_RECORDS = 3
    rows = [pairs_row(n) for n in range(5)]
    pq.write_table(pa.Table.from_pylist(rows), path := tmp_path / "d.parquet")
    monkeypatch.setattr(pq.ParquetFile, "iter_batches", _no_rows_read)
    (problem,) = refused(project, path)
    assert problem.startswith("d.parquet: ") and "more than 3 records" in problem


def _no_rows_read(*args, **kwargs):
    raise AssertionError("a row was read")


def test_parquet_cell_larger_than_a_record_is_refused_from_its_metadata(
    project, tmp_path, monkeypatch
):
    """One 6 MB cell (the issue's 300 MB cell, smaller): the metadata shows a
    row over the record limit, so no row is decoded at all."""
    rows = [pairs_row(0, chosen="x" * 6_000_000)]
    pq.write_table(pa.Table.from_pylist(rows), path := tmp_path / "d.parquet", compression="zstd")
    assert path.stat().st_size < 20_000
    monkeypatch.setattr(pq.ParquetFile, "iter_batches", _no_rows_read)
    (problem,) = refused(project, path)
    assert "d.parquet: row 0: column 'chosen'" in problem
    assert "more than a record may (4194304 bytes)" in problem


def test_parquet_image_cell_over_every_limit_is_refused_from_its_metadata(
    project, tmp_path, monkeypatch, settings
):
    """Over both the image limit and a record's: refused unread (a cell over
    the image limit only is refused by the image checks, as any image is)."""
    settings.IMAGE_MAX_BYTES = 1_000_000
    image = {"bytes": b"\x89PNG" + b"\x00" * 5_000_000, "path": "big.png"}
    table = pa.table(
        {
            "id": ["r0"],
            "prompt": ["p"],
            "chosen": ["a"],
            "rejected": ["b"],
            "category": ["vqa"],
            "image": pa.array([image], type=IMAGE),
        }
    )
    pq.write_table(table, path := tmp_path / "d.parquet", compression="zstd")
    monkeypatch.setattr(pq.ParquetFile, "iter_batches", _no_rows_read)
    (problem,) = refused(project, path)
    assert "row 0: column 'image'" in problem
    assert "more than an image may (4194304 bytes)" in problem


def test_parquet_row_too_large_hidden_among_small_rows_is_refused_before_it_is_converted(
    project, tmp_path, settings
):
    """A large cell among many small rows passes the row group's average; its
    length, read in Arrow, refuses it before it becomes a Python value."""
    settings.IMPORT_MAX_RECORD_BYTES = 8192
    rows = [pairs_row(n) for n in range(40)]
    rows[17]["chosen"] = "y" * 20_000
    pq.write_table(pa.Table.from_pylist(rows), path := tmp_path / "d.parquet")
    problems = refused(project, path)
    assert problems == [
        "d.parquet: row 17: column 'chosen': record is larger than the limit of 8192 bytes "
        f"({20_000 + sum(len(v) for k, v in rows[17].items() if k != 'chosen')} bytes)"
    ]


def test_parquet_nested_past_the_depth_limit_is_refused(project, tmp_path):
    value: object = ["deep"]
    for _ in range(40):
        value = [value]
    rows = [pairs_row(0, extra=value)]
    pq.write_table(pa.Table.from_pylist(rows), path := tmp_path / "d.parquet")
    (problem,) = refused(project, path, domain="vqa")
    assert "record 0" in problem or "row 0" in problem
    assert "nested more than 32 levels deep" in problem


def test_parquet_with_more_columns_than_a_record_could_hold_is_refused_unread(
    project, tmp_path, monkeypatch
):
    table = pa.table({f"c{n}": [n] for n in range(1001)})
    pq.write_table(table, path := tmp_path / "d.parquet")
    monkeypatch.setattr(pq.ParquetFile, "iter_batches", _no_rows_read)
    (problem,) = refused(project, path)
    assert problem == "d.parquet: has 1001 columns, more than 1000"


def test_file_named_parquet_that_is_not_one_is_refused(project, tmp_path):
    (path := tmp_path / "d.parquet").write_bytes(b"PAR1 not really")
    (problem,) = refused(project, path)
    assert "d.parquet" in problem and "not a readable parquet file" in problem


# Peak memory of the first shape, scaled down (64 rows, not 256): a
# few kB of zstd holding a 4 MiB string repeated through the dictionary.
# Before issue 29 each batch of rows was expanded to 4 MiB a row in Arrow, then
# into Python strings, before the record cap refused them (+2.5 GB at 256 rows).
_PARQUET_MEMORY = textwrap.dedent(
    """
    import resource
    from pathlib import Path
    import pyarrow as pa, pyarrow.parquet as pq
    from annotate.importing.hfparquet import open_parquet
    from annotate.importing.records import ImportFailed
    path = Path({path!r})
    rows = 64
    table = pa.table({{
        "id": [str(n) for n in range(rows)], "prompt": ["p"] * rows,
        "chosen": ["x" * (4 * 1024 * 1024 + 1)] * rows, "rejected": ["r"] * rows,
        "category": ["vqa"] * rows}})
    pq.write_table(table, path, compression="zstd")
    del table
    pa.default_memory_pool().release_unused()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        with open_parquet(path, label=path.name):
            print("accepted")
    except ImportFailed as exc:
        print(exc.problems[0])
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024
    print(path.stat().st_size, grown)
    """
)


def test_parquet_of_a_repeated_4_mib_string_is_refused_in_bounded_memory(tmp_path):
    code = _PARQUET_MEMORY.format(path=str(tmp_path / "bomb.parquet"))
    done = run_django(code, data_dir=tmp_path)
    assert done.returncode == 0, done.stderr
    problem, sizes = done.stdout.strip().splitlines()
    size, grown = map(int, sizes.split())
    assert size < 50_000
    assert problem.startswith("bomb.parquet: row 0: column 'chosen': record is larger")
    assert grown < 100, f"peak RSS grew by {grown} MB"


# --- MMRB2 task files ---------------------------------------------------------------


def test_mmrb2_zip_of_empty_pairs_stops_at_the_record_cap(project, tmp_path, settings):
    settings.IMPORT_MAX_RECORDS = 1000
    body = '{"pairs": [' + ",".join(["{}"] * 50_000) + "]}"
    path = zip_file(tmp_path / "bomb.zip", {"t2i.json": body})
    assert path.stat().st_size < 2000
    problems = refused(project, path)
    assert problems[-1] == "bomb.zip:t2i.json:1: record 1000: has more than 1000 records, " + (
        "the most one import may hold; split it into several files"
    )
    # Only the records before the cap were looked at.
    assert "(and 999 more records" in problems[0]


@pytest.mark.parametrize(
    ("value", "field", "message"),
    [
        ('"a\\u0000b"', "id", "NUL character"),
        (nested(40), "prompt_metadata", "nested more than 32 levels deep"),
        ("NaN", "prompt_metadata", "NaN or Infinity"),
    ],
)
def test_mmrb2_pair_holding_what_the_database_cannot_store_is_refused(
    project, tmp_path, value, field, message
):
    pair = {
        "id": "p0",
        "response_a": {"model_name": "a", "response_content": [["text", "x"]]},
        "response_b": {"model_name": "b", "response_content": [["text", "y"]]},
        "chosen": "A",
        "human_annotations": [],
        "prompt_source": "s",
        "prompt_metadata": {},
        "prompt_content": [["text", "q"]],
    }
    text = json.dumps({"pairs": [pair]}).replace(f'"{field}": ' + json.dumps(pair[field]), "@", 1)
    (path := tmp_path / "t2i.json").write_text(text.replace("@", f'"{field}": {value}'))
    (problem,) = refused(project, path)
    assert "t2i.json" in problem and "record 0" in problem
    assert f"field '{field}'" in problem and message in problem


def test_mmrb2_pair_nested_3000_deep_is_refused(project, tmp_path):
    (path := tmp_path / "t2i.json").write_text('{"pairs": [' + nested(3000) + "]}")
    (problem,) = refused(project, path)
    assert "record 0" in problem and "nested too deeply" in problem


def test_mmrb2_pair_over_the_record_size_setting_is_refused(project, tmp_path, settings):
    settings.IMPORT_MAX_RECORD_BYTES = 2048
    (path := tmp_path / "t2i.json").write_text(
        json.dumps({"pairs": [{"id": "x" * 5000}]}, indent=2)
    )
    (problem,) = refused(project, path)
    assert "record 0" in problem and "larger than the limit of 2048 bytes" in problem


# --- Release zips -------------------------------------------------------------------


def release_zip(path: Path, manifest: str, records: list[dict] | None = None) -> Path:
    return zip_file(
        path,
        {
            "rel/manifest.json": manifest,
            "rel/all_data.json": json.dumps(records or []),
        },
    )


def good_manifest() -> str:
    return json.dumps(
        {"format": "multimodal-rewardbench", "project": "p", "release": "v1", "seed": 1}
    )


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        (nested(3000), "nested more than 32 levels deep"),
        ("[" + "{}," * 2_100_000 + "{}]", "holds more than 2000000 values"),
        ("[1, 2", "is not valid JSON"),
        ('"just a string"', "is not a multimodal-rewardbench release manifest"),
    ],
)
def test_release_zip_with_a_hostile_manifest_is_refused(project, tmp_path, manifest, message):
    (problem,) = refused(project, release_zip(tmp_path / "release.zip", manifest))
    assert problem.startswith("release.zip:rel/manifest.json: ")
    assert message in problem


def test_release_records_are_counted_against_the_cap_on_every_pass(project, tmp_path, settings):
    """With items already in the project, the release's records are read
    before the import proper: that pass stops at the record cap too."""
    make_item(project, external_id="already")
    settings.IMPORT_MAX_RECORDS = 2
    records = [{"ID": f"r{n}"} for n in range(4)]
    with pytest.raises(ImportFailed) as caught:
        import_items_from_paths(
            project=project, dataset=release_zip(tmp_path / "r.zip", good_manifest(), records)
        )
    assert Item.objects.count() == 1
    (problem,) = caught.value.problems
    assert "record 2" in str(problem) and "more than 2 records" in str(problem)


# --- The browser form and the API answer 400 ----------------------------------------

HOSTILE_UPLOADS = {
    "release-manifest-3000-deep": (
        "release.zip",
        lambda tmp: release_zip(tmp / "release.zip", nested(3000)).read_bytes(),
        "nested more than 32 levels deep",
    ),
    "mmrb2-empty-pairs": (
        "t2i.zip",
        lambda tmp: zip_file(
            tmp / "t2i.zip", {"t2i.json": '{"pairs": [' + ",".join(["{}"] * 3000) + "]}"}
        ).read_bytes(),
        "more than 1000 records",
    ),
    "parquet-huge-cell": (
        "d.parquet",
        lambda tmp: _huge_cell_parquet(tmp / "d.parquet").read_bytes(),
        "more than a record may",
    ),
}


def _huge_cell_parquet(path: Path) -> Path:
    pq.write_table(pa.Table.from_pylist([pairs_row(0, chosen="z" * 5_000_000)]), path)
    return path


@pytest.mark.parametrize("shape", sorted(HOSTILE_UPLOADS))
def test_upload_page_shows_hostile_upload_problems_with_400(
    client, project, tmp_path, settings, shape
):
    settings.IMPORT_MAX_RECORDS = 1000
    name, make, message = HOSTILE_UPLOADS[shape]
    client.force_login(make_member(project, role="admin"))
    response = client.post(
        reverse("import", args=[project.slug]),
        {"dataset": SimpleUploadedFile(name, make(tmp_path))},
    )
    assert response.status_code == 400
    assert message in response.content.decode()
    assert Item.objects.count() == 0


@pytest.mark.parametrize("shape", sorted(HOSTILE_UPLOADS))
def test_api_refuses_hostile_uploads_with_400(project, tmp_path, settings, shape):
    settings.IMPORT_MAX_RECORDS = 1000
    name, make, message = HOSTILE_UPLOADS[shape]
    client = APIClient()
    user = make_member(project, role="admin")
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    response = client.post(
        f"/api/v1/projects/{project.slug}/imports/",
        {"dataset": SimpleUploadedFile(name, make(tmp_path))},
        format="multipart",
    )
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "import_failed"
    assert any(message in p["message"] for p in error["problems"])
    assert Item.objects.count() == 0


def test_a_small_image_still_imports_from_parquet(project, tmp_path):
    """The bounds leave an ordinary file alone."""
    table = pa.table(
        {
            **{k: [v] for k, v in pairs_row(0).items() if k != "image"},
            "image": pa.array([{"bytes": png_bytes(), "path": "a.png"}], type=IMAGE),
        }
    )
    pq.write_table(table, path := tmp_path / "d.parquet")
    result = import_items_from_paths(project=project, dataset=path)
    assert result.created == 1
