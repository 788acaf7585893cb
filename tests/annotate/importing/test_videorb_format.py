"""A VideoRewardBench-style pairwise video file as an input format (issue 35
item 5): a sample per line, its video a VIDEO part before the prompt's text,
chosen first, its dimension the domain, every line back byte for byte, and
bad lines (a missing video, an unknown dimension) named by file, line and field."""

from __future__ import annotations

import json
from contextlib import ExitStack

import pytest

from annotate.importing import formats
from annotate.importing.formats import TEXT, VIDEO, DatasetSource, videorb
from annotate.importing.records import ImportFailed
from tests.annotate.importing import videorb_sets
from tests.annotate.importing.test_rewardbench2_format import context


def read(path, **kw):
    with ExitStack() as stack:
        source = DatasetSource(path)
        parsed = formats.find(source, kw.pop("fmt", None)).read(source, context(stack, **kw))
        return parsed, list(parsed.items())


def test_samples_become_video_pairs_chosen_first_by_dimension(tmp_path):
    path = videorb_sets.write(tmp_path)
    parsed, items = read(path)  # detected: no format named
    rows = videorb_sets.rows()
    assert parsed.format == "videorb" and len(items) == len(rows)
    assert [i.external_id for i in items[:3]] == ["vrb_0000", "vrb_0001", "2"]
    for item, row in zip(items, rows, strict=True):
        assert [p.kind for p in item.prompt] == [VIDEO, TEXT]
        assert item.prompt[0].source_path == row["video"] and item.prompt[1].text == row["prompt"]
        assert [s[0].text for s in item.responses] == [row["chosen"], row["rejected"]]
        assert item.domain == "videorb-" + row["dimension"].replace("_", "-")
        assert item.gold == ""
    assert parsed.new_domains["videorb-safety"]["export_category"] == "videorb/safety"
    assert len(parsed.media) == 6  # one per distinct video
    assert parsed.media["videos/000.mp4"].kind == VIDEO
    _, gold = read(path, gold_from_label=True, known={"videorb/safety": "s", "s": "s"})
    assert {i.gold for i in gold} == {"1"} and gold[4].domain == "s"


def test_every_line_is_given_back_byte_for_byte(tmp_path):
    for dumps in ({}, {"ensure_ascii": False}, {"separators": (",", ":")}):
        path = videorb_sets.write(tmp_path / str(len(dumps)), **dumps)
        _, items = read(path)
        lines = path.read_text(encoding="utf-8").splitlines()
        for item, line in zip(items, lines, strict=True):
            meta = item.meta["videorb"]
            texts = [s[0].text for s in item.responses]
            got = videorb.record_line(meta, prompt=item.prompt[1].text, chosen=texts[0],
                                      rejected=texts[1])  # fmt: skip
            assert got == line
    swapped = videorb.record_line(meta, prompt="p", chosen="b", rejected="a", swapped=True,
                                  id="new", video="v/x.mp4")  # fmt: skip
    value = json.loads(swapped)
    assert (value["id"], value["video"], value["chosen"], value["source"]) == (
        "new", "v/x.mp4", "b", "set-0")  # fmt: skip


def test_reading_twice_gives_the_same_fingerprints(tmp_path):
    path = videorb_sets.write(tmp_path)
    parsed, items = read(path)
    again, items2 = read(path)
    assert [parsed.fingerprint(i) for i in items] == [again.fingerprint(i) for i in items2]


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        (lambda r: r.update(dimension="perception"), "dimension",
         "must be one of long_form_perception, short_form_perception, knowledge, reasoning, "
         "safety, not \"perception\""),
        (lambda r: r.pop("dimension"), "dimension", "is missing"),
        (lambda r: r.pop("video"), "video", "is missing"),
        (lambda r: r.update(video="gone/none.mp4"), "video", "video 'gone/none.mp4'"),
        (lambda r: r.update(video="../x.mp4"), "video", "contains '..'"),
        (lambda r: r.update(video=7), "video", "must be a video path"),
        (lambda r: r.update(chosen=None), "chosen", "must be a string"),
        (lambda r: r.update(id=True), "id", "non-empty string or an integer"),
    ],
)  # fmt: skip
def test_bad_lines_are_named_by_file_line_and_field(tmp_path, change, field, message):
    rows = videorb_sets.rows()
    change(rows[2])
    path = videorb_sets.write(tmp_path, rows)
    with pytest.raises(ImportFailed) as failed:
        read(path, fmt="videorb")
    text = "\n".join(str(p) for p in failed.value.problems)
    assert "videorb.jsonl:3" in text and f"field '{field}'" in text and message in text


def test_a_file_that_is_not_a_video_is_refused_naming_the_line(tmp_path):
    rows = videorb_sets.rows()
    path = videorb_sets.write(tmp_path, rows)
    (tmp_path / rows[3]["video"]).write_bytes(b"not a video at all" * 20)
    with pytest.raises(ImportFailed) as failed:
        read(path)
    text = "\n".join(str(p) for p in failed.value.problems)
    assert "videorb.jsonl:4" in text and "field 'video'" in text and "videos/003.mp4" in text


def test_videos_are_read_from_a_zip_given_with_the_file(tmp_path):
    import dataclasses
    import zipfile

    from annotate.importing.sources import ZipImageSource

    path = videorb_sets.write(tmp_path / "src")
    archive = tmp_path / "media.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for file in sorted((tmp_path / "src" / "videos").iterdir()):
            out.write(file, f"videos/{file.name}")
    (tmp_path / "alone").mkdir()
    alone = path.rename(tmp_path / "alone" / path.name)
    with ExitStack() as stack:
        ctx = dataclasses.replace(context(stack), images=ZipImageSource(archive))
        parsed = videorb.read(DatasetSource(alone), ctx)
        assert len(parsed.media) == 6 and parsed.count == 7
