"""curation.releases.parquet: Parquet copies of a release, images embedded. No database."""

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from curation.benchmarks.mrb import records
from curation.benchmarks.mrb.benchmark import BENCHMARK as MRB
from curation.releases import exporter
from curation.releases.parquet import COLUMNS, ROW_GROUP_ROWS, ParquetWriter, arrow_schema
from curation.releases.trl import TrlWriter

DOMAINS = (
    ("general_correctness", "General correctness", "open_generation/correctness_task"),
    ("reasoning", "Reasoning", "reasoning"),
    ("safety", "Safety", "safety"),
)


def png(seed: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (4 + seed % 7, 3 + seed % 5), (seed % 256, seed * 7 % 256, 9)).save(out, "PNG")
    return out.getvalue()


def make_items(n_per_domain: dict[str, int], *, shared_image_every: int = 0):
    items = []
    for slug, _, category in DOMAINS:
        for i in range(n_per_domain.get(slug, 0)):
            seed = len(items) if not shared_image_every else len(items) % shared_image_every
            ext_id = f"{'math' if slug == 'reasoning' else slug}_{i:04d}"
            items.append(
                {
                    "item": exporter.ExportItem(
                        external_id=ext_id,
                        domain=slug,
                        category=category,
                        prompt=f"What is shown in picture {i}? ünïcödé",
                        image_path=f"images/src/{seed}.png",
                        image_sha256=f"{seed:064x}",
                        image_ext="png",
                        response_1=f"first answer {i}",
                        response_2=f"second answer {i}",
                        chosen="1" if i % 3 else "2",
                        provenance="unanimous",
                    ),
                    "bytes": png(seed),
                }
            )
    items.sort(
        key=lambda x: ([d[0] for d in DOMAINS].index(x["item"].domain), x["item"].external_id)
    )
    return items


def build(folder: Path, rows, *, domains=None, trl=False, **writer_options) -> dict:
    """A release of `rows` through write_release with the Parquet writer (and
    the TRL writer with `trl`), as curation.releases.build sets them up."""
    folder.mkdir(parents=True)
    by_id = {row["item"].external_id: row["bytes"] for row in rows}
    ids: dict[str, list[str]] = {
        slug: [] for slug, _, _ in DOMAINS if domains is None or slug in domains
    }
    for row in rows:
        ids[row["item"].domain].append(row["item"].external_id)
    meta = exporter.ReleaseMeta(
        project="p",
        project_name="P",
        version="v1",
        seed=7,
        snapshot_at="2026-01-01T00:00:00",
        domains=[d for d in DOMAINS if d[0] in ids],
        card_sections=[MRB],
    )
    writer = ParquetWriter(folder, domains=list(ids), **writer_options)

    def copy_image(item, destination):
        destination.write_bytes(by_id[item.external_id])

    manifest = exporter.write_release(
        folder,
        (row["item"] for row in rows),
        meta=meta,
        shape=records,
        ids_by_domain=ids,
        copy_image=copy_image,
        extra_writers=[writer, TrlWriter(folder, domains=list(ids))] if trl else [writer],
    )
    return manifest


@pytest.fixture
def release(tmp_path):
    rows = make_items({"general_correctness": 5, "reasoning": 4, "safety": 0})
    folder = tmp_path / "rel"
    manifest = build(folder, rows)
    return folder, manifest, rows


def test_schema_is_the_official_keys_with_an_hf_image_column(release):
    folder, _, _ = release
    schema = pq.read_schema(folder / "parquet" / "general_correctness.parquet")
    assert schema.names == list(COLUMNS) == list(records.RECORD_KEYS)
    assert schema.field("Image").type == pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    for name in ("ID", "Text", "Output1", "Output2", "Better", "Category"):
        assert schema.field(name).type == pa.string()
    features = json.loads(schema.metadata[b"huggingface"])["info"]["features"]
    assert features["Image"] == {"_type": "Image"}
    assert features["Better"] == {"dtype": "string", "_type": "Value"}
    assert list(features) == list(COLUMNS)
    assert schema.equals(arrow_schema(), check_metadata=True)


def test_rows_equal_the_json_records_and_images_equal_the_files(release):
    folder, manifest, _ = release
    for slug in ("general_correctness", "reasoning"):
        records = json.loads((folder / f"{slug}.json").read_text(encoding="utf-8"))
        table = pq.read_table(folder / "parquet" / f"{slug}.parquet")
        assert table.num_rows == len(records) == manifest["counts"][slug]
        rows = table.to_pylist()
        for record, row in zip(records, rows, strict=True):
            image = row.pop("Image")
            assert image["path"] == record["Image"]
            assert image["bytes"] == (folder / record["Image"]).read_bytes()
            assert row == {k: v for k, v in record.items() if k != "Image"}


def test_an_empty_selected_domain_gets_a_file_without_rows(release):
    folder, manifest, _ = release
    table = pq.read_table(folder / "parquet" / "safety.parquet")
    assert table.num_rows == 0
    assert manifest["counts"]["safety"] == 0


def test_the_manifest_checksums_the_parquet_files_and_the_card_names_them(release):
    folder, manifest, _ = release
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "- config_name: default\n" in card and "path: parquet/reasoning.parquet\n" in card
    for slug in ("general_correctness", "reasoning", "safety"):
        entry = manifest["files"][f"parquet/{slug}.parquet"]
        assert entry["sha256"] == exporter.sha256_file(folder / "parquet" / f"{slug}.parquet")


def test_rows_are_streamed_in_row_groups(tmp_path):
    n = 2 * ROW_GROUP_ROWS + 37
    rows = make_items({"general_correctness": n, "reasoning": 3}, shared_image_every=50)
    folder = tmp_path / "rel"
    build(folder, rows)
    meta = pq.ParquetFile(folder / "parquet" / "general_correctness.parquet").metadata
    assert meta.num_rows == n
    groups = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    assert groups == [ROW_GROUP_ROWS, ROW_GROUP_ROWS, 37]
    assert pq.ParquetFile(folder / "parquet" / "reasoning.parquet").metadata.num_row_groups == 1


def test_a_row_group_is_also_cut_by_bytes(tmp_path):
    rows = make_items({"general_correctness": 20})
    folder = tmp_path / "rel"
    size = len(rows[0]["bytes"]) + 100  # roughly one row or two per group
    build(folder, rows, row_group_bytes=size)
    meta = pq.ParquetFile(folder / "parquet" / "general_correctness.parquet").metadata
    assert meta.num_rows == 20
    assert meta.num_row_groups >= 10


def test_same_input_gives_identical_bytes(tmp_path):
    rows = make_items({"general_correctness": ROW_GROUP_ROWS + 30, "reasoning": 7, "safety": 2})
    first = build(tmp_path / "a", rows)
    second = build(tmp_path / "b", rows)
    names = [n for n in first["files"] if n.startswith("parquet/")]
    assert len(names) == 3
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert first["files"] == second["files"]


def test_records_must_arrive_grouped_by_domain(tmp_path):
    image = tmp_path / "x.png"
    image.write_bytes(png(1))
    record = dict.fromkeys(COLUMNS, "x")
    writer = ParquetWriter(tmp_path)
    writer.write(SimpleNamespace(domain="a"), record, image)
    writer.write(SimpleNamespace(domain="b"), record, image)
    with pytest.raises(ValueError, match="grouped by domain"):
        writer.write(SimpleNamespace(domain="a"), record, image)
    writer.close()
    assert writer.rows == {"a": 1, "b": 1}


def test_abort_releases_the_open_file_quietly(tmp_path):
    image = tmp_path / "x.png"
    image.write_bytes(png(1))
    writer = ParquetWriter(tmp_path, domains=["a", "b"])
    writer.write(SimpleNamespace(domain="a"), dict.fromkeys(COLUMNS, "x"), image)
    writer.abort()
    writer.abort()
    writer.close()  # a no-op after abort: no empty file for "b"
    assert not (tmp_path / "parquet" / "b.parquet").exists()
    with pytest.raises(RuntimeError):
        writer.write(SimpleNamespace(domain="a"), dict.fromkeys(COLUMNS, "x"), image)


def test_release_files_are_in_path_order(tmp_path):
    """exporter.release_files (used for the manifest and the zip) lists files
    as sorted Path objects would: component by component."""
    names = ["a/x", "a-b/x", "a.b", "ab", "a b/c", "A/z", "images/by-sha256/1.png",
             "images/by/2.png", "images/b/y/3.png", "z", "é/1", "a/x.y/z"]  # fmt: skip
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(name)
    expected = [p.relative_to(tmp_path).as_posix() for p in sorted(tmp_path.rglob("*"))]
    assert exporter.release_files(tmp_path) == [n for n in expected if n in names]


def test_close_is_idempotent_and_write_after_close_fails(tmp_path):
    writer = ParquetWriter(tmp_path)
    writer.close()
    writer.close()
    assert not (tmp_path / "parquet").exists()
    with pytest.raises(RuntimeError):
        writer.write(None, {}, tmp_path / "x.png")


def test_huggingface_datasets_loads_it_offline(release, tmp_path):
    """The layout `datasets` loads with load_dataset("parquet", ...), decoding
    the Image column as images. `datasets` is not a dependency: skipped
    unless installed. Run in a subprocess so HF_DATASETS_OFFLINE applies from
    the start and its cache goes under tmp_path."""
    pytest.importorskip("datasets")
    folder, _, rows = release
    script = f"""
import json
from datasets import load_dataset
ds = load_dataset("parquet", data_files={str(folder / "parquet" / "*.parquet")!r}, split="train")
first = ds[0]
print(json.dumps({{
    "n": ds.num_rows,
    "image_type": ds.features["Image"].__class__.__name__,
    "size": list(first["Image"].size),
    "ID": first["ID"],
}}))
"""
    env = {
        **os.environ,
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf"),
    }
    proc = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["n"] == len(rows)
    assert out["image_type"] == "Image"
    first = rows[0]
    assert out["ID"] == first["item"].external_id
    assert out["size"] == list(Image.open(io.BytesIO(first["bytes"])).size)
