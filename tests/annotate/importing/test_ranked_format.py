"""Ranked responses (MR²Bench's training shape) as an input format (issue
33): detection, N response slots in file order, prompt images, every field
kept so the line comes back byte for byte (JSONL and parquet), and bad
rankings named by file, line and field with nothing written."""

from __future__ import annotations

import json
from contextlib import ExitStack

import pytest
from PIL import Image

from annotate.importing import formats
from annotate.importing.formats import DatasetSource, ranked
from annotate.importing.records import ImportFailed
from tests.annotate.importing.test_rewardbench2_format import context, write_jsonl


def record(record_id, n=4, rankings=None, **extra):
    return {
        "id": record_id,
        "prompt": f"Question {record_id} — “quoted”\nwith lines",
        "responses": [f"answer {k} ✓" for k in range(n)],
        "rankings": rankings or list(range(1, n + 1)),
        "models": [f"m{k}" for k in range(n)],
        "meta": {"source": "fixture", "nested": [1, 2.5, None]},
        **extra,
    }


def records():
    return [
        record("a", 2),
        record("b", 4, [2, 1, 2, 4]),
        record("c", 8, [1, 1, 3, 3, 3, 6, 7, 8], category="Science QA"),
        record("d", 3, [1, 2, 2]),
        record("e", 5, [3, 1, 2, 2, 4]),  # dense form
    ]


def read(path, **kw):
    with ExitStack() as stack:
        parsed = formats.find(DatasetSource(path), kw.pop("fmt", None)).read(
            DatasetSource(path), context(stack, **kw)
        )
        return parsed, list(parsed.items())


def test_records_become_items_with_n_slots_in_file_order(tmp_path):
    path = write_jsonl(tmp_path / "mr2.jsonl", records())
    assert formats.find(DatasetSource(path), None) is ranked
    assert formats.find(DatasetSource(path), "mrb") is ranked  # definitive
    parsed, items = read(path)
    assert parsed.format == "ranked" and parsed.ids == ["a", "b", "c", "d", "e"]
    assert [len(i.responses) for i in items] == [2, 4, 8, 3, 5]
    assert [s[0].text for s in items[1].responses] == [f"answer {k} ✓" for k in range(4)]
    assert items[2].meta["ranked"]["rankings"] == [1, 1, 3, 3, 3, 6, 7, 8]
    assert items[2].domain == "ranked-science-qa" and items[0].domain == "ranked-default"
    assert parsed.new_domains["ranked-science-qa"]["export_category"] == "ranked/Science QA"
    _, again = read(path, known={"ranked/Science QA": "sci", "sci": "sci"})
    assert again[2].domain == "sci"


@pytest.mark.parametrize(
    "dumps", [{}, {"ensure_ascii": False}, {"separators": (",", ":")}, {"sort_keys": True}]
)
def test_every_line_comes_back_byte_for_byte(tmp_path, dumps):
    path = write_jsonl(tmp_path / "mr2.jsonl", records(), **dumps)
    _, items = read(path)
    assert "".join(ranked.item_line(i) + "\n" for i in items).encode() == path.read_bytes()
    odd = tmp_path / "odd.jsonl"
    line = json.dumps(record("z", 3)).replace('": ', '":  ').replace("/", "\\/")
    odd.write_text(line + "\n")
    _, [item] = read(odd)
    assert item.meta["ranked"]["style"] == "raw" and ranked.item_line(item) == line


def test_a_new_ranking_is_written_in_the_files_form(tmp_path):
    meta = {"rankings": [3, 1, 2, 2, 4], "fields": json.dumps({"id": "e", "rankings": None}),
            "style": "spaced"}  # fmt: skip
    # Same order, other form: the file's own list stays.
    assert json.loads(ranked.record_line(meta, prompt="", responses=[],
                      rankings=[4, 1, 2, 2, 5]))["rankings"] == [3, 1, 2, 2, 4]  # fmt: skip
    changed = ranked.record_line(meta, prompt="", responses=[], rankings=[1, 2, 3, 3, 5])
    assert json.loads(changed)["rankings"] == [1, 2, 3, 3, 4]  # dense, as the file
    meta["rankings"] = [1, 2, 2, 4]
    changed = ranked.record_line(meta, prompt="", responses=[], rankings=[2, 1, 2, 2])
    assert json.loads(changed)["rankings"] == [2, 1, 2, 2]


def test_prompt_images_are_checked_and_kept(tmp_path):
    (tmp_path / "img").mkdir()
    Image.new("RGB", (8, 6), "red").save(tmp_path / "img/a.png")
    rows = [record("a", 2, image="img/a.png"), record("b", 3, images=["img/a.png", "img/a.png"])]
    path = write_jsonl(tmp_path / "mr2.jsonl", rows)
    parsed, items = read(path)
    assert [p.kind for p in items[1].prompt] == ["image", "image", "text"]
    assert set(parsed.images) == {"img/a.png"} and parsed.images["img/a.png"].width == 8
    assert "".join(ranked.item_line(i) + "\n" for i in items).encode() == path.read_bytes()
    missing = write_jsonl(tmp_path / "missing.jsonl", [record("c", 2, image="img/none.png")])
    with pytest.raises(ImportFailed, match=r"missing\.jsonl:1: record 0: image 'img/none\.png'"):
        read(missing)


def test_bad_records_name_file_line_and_field(tmp_path):
    lines = [
        json.dumps(record("ok", 2)),
        json.dumps(record("one", 1)),
        json.dumps(record("nine", 9)),
        json.dumps({**record("len", 3), "rankings": [1, 2]}),
        json.dumps(record("gap", 4, [1, 3, 3, 4])),
        json.dumps(record("zero", 3, [0, 1, 2])),
        json.dumps(record("nobest", 3, [2, 2, 3])),
        json.dumps({**record("str", 2), "rankings": ["1", "2"]}),
        json.dumps({k: v for k, v in record("noresp", 2).items() if k != "responses"}),
        json.dumps({**record("img", 2), "image": "/etc/passwd"}),
    ]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ImportFailed) as failed:
        read(path)
    assert [str(p) for p in failed.value.problems] == [
        "bad.jsonl:2: record 1: field 'responses': holds 1; N must lie in 2..8",
        "bad.jsonl:3: record 2: field 'responses': holds 9; N must lie in 2..8",
        "bad.jsonl:4: record 3: field 'rankings': holds 2 places, but responses holds 3",
        "bad.jsonl:5: record 4: field 'rankings': [1, 3, 3, 4] is not a ranking: places run "
        "1, 2, 3, … with tied responses sharing one (1, 2, 2, 4 or 1, 2, 2, 3)",
        "bad.jsonl:6: record 5: field 'rankings': [0, 1, 2] is not a ranking: every place "
        "lies in 1..3 (1 = best)",
        "bad.jsonl:7: record 6: field 'rankings': [2, 2, 3] is not a ranking: places run "
        "1, 2, 3, … with tied responses sharing one (1, 2, 2, 4 or 1, 2, 2, 3)",
        "bad.jsonl:8: record 7: field 'rankings': must be a list of integers, not ['1', '2']",
        "bad.jsonl:9: record 8: field 'responses': is missing",
        "bad.jsonl:10: record 9: field 'image': image path '/etc/passwd' is absolute or "
        "contains '..'",
    ]


def test_fingerprints_see_the_rankings(tmp_path):
    _, items = read(write_jsonl(tmp_path / "a.jsonl", records()))
    changed = records()
    changed[1]["rankings"] = [1, 2, 2, 4]
    _, again = read(write_jsonl(tmp_path / "b.jsonl", changed))
    prints = [ranked.fingerprint(i, infos={}) for i in items]
    changed_prints = [ranked.fingerprint(i, infos={}) for i in again]
    assert [a == b for a, b in zip(prints, changed_prints, strict=True)] == [
        True, False, True, True, True]  # fmt: skip


def test_parquet_rows_read_as_their_lines(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rows = [{k: v for k, v in r.items() if k != "category"} for r in records()]
    path = tmp_path / "train-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=2)
    assert formats.find(DatasetSource(path), None) is ranked
    assert formats.find(DatasetSource(path), "parquet") is ranked
    parsed, items = read(path)
    assert parsed.ids == [r["id"] for r in rows]
    assert [json.loads(ranked.item_line(i)) for i in items] == pa.Table.from_pylist(
        rows
    ).to_pylist()
    bad = tmp_path / "bad.parquet"
    pq.write_table(pa.Table.from_pylist([*rows[:2], {**rows[2], "rankings": [1] * 7 + [9]}]), bad)
    with pytest.raises(ImportFailed) as failed:
        read(bad)
    assert [str(p) for p in failed.value.problems] == [
        "bad.parquet: row 2: column 'rankings': [1, 1, 1, 1, 1, 1, 1, 9] is not a ranking: "
        "every place lies in 1..8 (1 = best)"
    ]
