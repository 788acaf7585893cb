"""RewardBench 2 records as an input format (issue 33), at the parse level:
detection among the registered formats, N response slots chosen first, every
field kept so the line comes back byte for byte, parquet rows read as the
JSONL lines they stand for, and problems naming file, line (row) and field."""

from __future__ import annotations

import json
from contextlib import ExitStack
from pathlib import Path

import pytest

from annotate.importing import formats
from annotate.importing.bounds import ImportBounds
from annotate.importing.formats import DatasetSource, ReadContext, rewardbench2
from annotate.importing.options import ImportOptions
from annotate.importing.records import ImageLimits, ImportFailed

SUBSETS = ("Factuality", "Precise IF", "Math", "Safety", "Focus", "Ties")


def record(prompt_id, subset, chosen=1, rejected=3, **extra):
    return {
        "id": prompt_id,
        "prompt": f"Question {prompt_id} — with “quotes” and\nnew lines",
        "chosen": [f"right {k} ✓" for k in range(chosen)],
        "rejected": [f"wrong {k}" for k in range(rejected)],
        "num_correct": chosen,
        "num_incorrect": rejected,
        "total_completions": chosen + rejected,
        "models": [f"model-{k}" for k in range(chosen + rejected)],
        "subset": subset,
        "additional_metadata": {"source": "fixture", "nested": {"k": [1, 2.5, None]}},
        **extra,
    }


def published_records():
    records = [record(f"{s.lower()}-{n}", s) for s in SUBSETS[:-1] for n in range(2)]
    records += [record("ref:1", "Ties"), record("tied:1", "Ties", chosen=3, rejected=4)]
    return records


def write_jsonl(path: Path, records, **dumps) -> Path:
    path.write_text("".join(json.dumps(r, **dumps) + "\n" for r in records), encoding="utf-8")
    return path


def context(stack, **kw) -> ReadContext:
    return ReadContext(
        project=None,
        known=kw.pop("known", {}),
        options=kw.pop("options", ImportOptions()),
        images=None,
        images_path=None,
        limits=ImageLimits(),
        bounds=kw.pop("bounds", ImportBounds()),
        stack=stack,
        **kw,
    )


def read(path: Path, **kw):
    with ExitStack() as stack:
        parsed = formats.find(DatasetSource(path), kw.pop("fmt", None)).read(
            DatasetSource(path), context(stack, **kw)
        )
        return parsed, list(parsed.items())


def test_records_become_items_with_n_slots_chosen_first(tmp_path):
    path = write_jsonl(tmp_path / "rb2.jsonl", published_records())
    assert formats.find(DatasetSource(path), None) is rewardbench2
    parsed, items = read(path)
    assert parsed.format == "rewardbench2" and parsed.count == 12
    assert parsed.ids[-2:] == ["ref:1", "tied:1"]
    tied = items[-1]
    assert [slot[0].text for slot in tied.responses] == [
        "right 0 ✓", "right 1 ✓", "right 2 ✓", "wrong 0", "wrong 1", "wrong 2", "wrong 3",
    ]  # fmt: skip
    assert tied.models == [f"model-{k}" for k in range(7)]
    assert tied.domain == "rb2-ties" and items[2].domain == "rb2-precise-if"
    assert tied.meta["rewardbench2"]["num_correct"] == 3
    assert set(parsed.new_domains) == {rewardbench2.subset_slug(s) for s in SUBSETS}
    assert parsed.new_domains["rb2-precise-if"]["export_category"] == "rewardbench2/Precise IF"
    # The project's own domain for a subset is used when it has one.
    _, items = read(path, known={"rewardbench2/Math": "maths", "maths": "maths"})
    assert {i.domain for i in items if i.meta["rewardbench2"]["subset"] == "Math"} == {"maths"}


@pytest.mark.parametrize(
    "dumps",
    [{}, {"ensure_ascii": False}, {"separators": (",", ":")}, {"indent": None, "sort_keys": True}],
)
def test_every_line_comes_back_byte_for_byte(tmp_path, dumps):
    records = published_records()
    records[0]["extra_key"] = {"kept": True}  # a key the format does not know
    path = write_jsonl(tmp_path / "rb2.jsonl", records, **dumps)
    _, items = read(path)
    out = "".join(rewardbench2.item_line(item) + "\n" for item in items)
    assert out.encode() == path.read_bytes()
    # jsonb may reorder the keys of meta: its fields are JSON text, in file order.
    meta = json.loads(json.dumps(items[0].meta, sort_keys=True))
    texts = [s[0].text for s in items[0].responses]
    line = rewardbench2.record_line(
        meta["rewardbench2"], items[0].prompt[0].text, texts[:1], texts[1:]
    )
    assert line == path.read_text().splitlines()[0]


def test_a_line_no_json_dumps_style_writes_is_kept_as_it_was(tmp_path):
    rec = record("math-1", "Math")
    path = tmp_path / "odd.jsonl"
    odd = json.dumps(rec, indent=None).replace('": ', '":  ').replace("/", "\\/")
    path.write_text(odd + "\n")
    _, [item] = read(path)
    assert item.meta["rewardbench2"]["style"] == "raw"
    assert rewardbench2.item_line(item) == odd
    assert json.loads(rewardbench2.item_line(item)) == rec


def test_subsets_compare_lower_cased_and_ties_ids_are_checked(tmp_path):
    path = write_jsonl(tmp_path / "rb2.jsonl", [record("x", "precise if"), record("ref:7", "TIES")])
    _, items = read(path)
    assert [i.meta["rewardbench2"]["subset"] for i in items] == ["Precise IF", "Ties"]
    bad = write_jsonl(tmp_path / "bad.jsonl", [record("r7", "Ties")])
    with pytest.raises(ImportFailed) as failed:
        read(bad)
    assert str(failed.value) == (
        "bad.jsonl:1: record 0: field 'id': a Ties record's ID is ref:<int> or tied:<int>"
    )


def test_malformed_records_name_file_line_and_field(tmp_path):
    good = record("a", "Math")
    lines = [
        json.dumps(good),
        json.dumps({**record("b", "Math"), "num_correct": 2}),
        json.dumps({**record("c", "Math"), "total_completions": 5}),
        json.dumps({**record("d", "Math"), "chosen": "one text"}),
        json.dumps({**record("e", "Chat"), "rejected": []}),
        '{"id": "f", broken',
        json.dumps({k: v for k, v in record("g", "Math").items() if k != "prompt"}),
        json.dumps({**record("h", "Math"), "num_incorrect": True}),
    ]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ImportFailed) as failed:
        read(path)
    messages = [str(p) for p in failed.value.problems]
    assert messages == [
        "bad.jsonl:2: record 1: field 'num_correct': is 2, but chosen holds 1",
        "bad.jsonl:3: record 2: field 'total_completions': is 5, but chosen and rejected hold 4",
        "bad.jsonl:4: record 3: field 'chosen': must be a list of strings",
        "bad.jsonl:5: record 4: field 'rejected': must hold at least one completion",
        "bad.jsonl:5: record 4: field 'subset': 'Chat' is not one of Factuality, Precise IF, "
        "Math, Safety, Focus, Ties",
        "bad.jsonl:6: record 5: invalid JSON: Expecting property name enclosed in double quotes "
        "(column 13)",
        "bad.jsonl:7: record 6: field 'prompt': is missing",
        "bad.jsonl:8: record 7: field 'num_incorrect': must be an integer, not True",
    ]


def test_an_empty_file_says_so(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("\n\n")
    with pytest.raises(ImportFailed, match=r"empty\.jsonl: holds no RewardBench 2 records"):
        read(path, fmt="rewardbench2")


def test_repeated_ids_follow_the_import_options(tmp_path):
    path = write_jsonl(tmp_path / "rb2.jsonl", [record("a", "Math"), record("a", "Focus")])
    with pytest.raises(ImportFailed, match="1 ID occurs more than once"):
        read(path)
    parsed, items = read(path, options=ImportOptions(duplicates="suffix"))
    assert parsed.ids == ["a", "a#2"] and items[1].meta["original_id"] == "a"
    assert json.loads(rewardbench2.item_line(items[1]))["id"] == "a"  # the file's own ID


def test_the_record_cap_and_record_size_are_bounded(tmp_path):
    path = write_jsonl(tmp_path / "rb2.jsonl", [record(f"m{n}", "Math") for n in range(5)])
    with pytest.raises(ImportFailed, match="record 3"):
        read(path, bounds=ImportBounds(max_records=3))
    with pytest.raises(ImportFailed, match="larger than the limit of 100 bytes"):
        read(path, bounds=ImportBounds(max_record_bytes=100))


def test_reading_keeps_one_record_in_memory(tmp_path):
    """The items are decoded again per call: a generator, not a list."""
    path = write_jsonl(tmp_path / "rb2.jsonl", published_records())
    with ExitStack() as stack:
        parsed = rewardbench2.read(DatasetSource(path), context(stack))
        first = parsed.items()
        assert next(first).external_id == "factuality-0"
        assert [i.external_id for i in parsed.items()] == parsed.ids


def test_fingerprints_are_stable_and_see_every_field(tmp_path):
    records = published_records()
    _, items = read(write_jsonl(tmp_path / "a.jsonl", records))
    _, again = read(write_jsonl(tmp_path / "b.jsonl", records))
    assert [rewardbench2.fingerprint(i) for i in items] == [
        rewardbench2.fingerprint(i) for i in again
    ]
    records[0]["additional_metadata"]["source"] = "changed"
    _, changed = read(write_jsonl(tmp_path / "c.jsonl", records))
    assert rewardbench2.fingerprint(changed[0]) != rewardbench2.fingerprint(items[0])
    assert rewardbench2.fingerprint(changed[1]) == rewardbench2.fingerprint(items[1])


def test_other_formats_are_not_taken_for_rewardbench2(tmp_path):
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"id": "1", "prompt": "p", "chosen": "a", "rejected": "b"}) + "\n")
    assert formats.find(DatasetSource(pairs), None) is not rewardbench2


def test_parquet_rows_read_as_their_lines(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    records = published_records()
    table = pa.Table.from_pylist(records)
    path = tmp_path / "test-00000-of-00001.parquet"
    pq.write_table(table, path, row_group_size=5)
    assert formats.find(DatasetSource(path), None) is rewardbench2
    assert formats.find(DatasetSource(path), "parquet") is rewardbench2
    parsed, items = read(path)
    assert parsed.ids == [r["id"] for r in records]
    back = [json.loads(rewardbench2.item_line(i)) for i in items]
    assert back == [pa.Table.from_pylist([r]).to_pylist()[0] for r in records]
    # A bad row names the row (0-based, as `datasets` does) and the column.
    bad = [*records[:3], {**records[3], "num_correct": 4}]
    bad_path = tmp_path / "bad.parquet"
    pq.write_table(pa.Table.from_pylist(bad), bad_path)
    with pytest.raises(ImportFailed) as failed:
        read(bad_path)
    assert [str(p) for p in failed.value.problems] == [
        "bad.parquet: row 3: column 'num_correct': is 4, but chosen holds 1"
    ]
    # A parquet of another layout is still the generic parquet format's.
    other = tmp_path / "pairs.parquet"
    pq.write_table(pa.Table.from_pylist([{"id": "1", "prompt": "p", "chosen": "a"}]), other)
    assert formats.find(DatasetSource(other), None) is not rewardbench2
