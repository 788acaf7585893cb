"""MM-RLHF-RewardBench as an input format (issue 34): pairs chosen first,
grouped by prompt id with stable per-pair IDs, category from the media
path's first folder, a frames folder as an ordered strip of images, every
line back byte for byte, and bad lines named by file, line and field."""

from __future__ import annotations

import json
from contextlib import ExitStack

import pytest

from annotate.importing import formats
from annotate.importing.formats import IMAGE, DatasetSource, mmrlhf
from annotate.importing.options import ImportOptions
from annotate.importing.records import ImportFailed
from tests.annotate.importing import mmrlhf_sets
from tests.annotate.importing.test_rewardbench2_format import context


def read(path, **kw):
    with ExitStack() as stack:
        source = DatasetSource(path)
        parsed = formats.find(source, kw.pop("fmt", "mmrlhf")).read(source, context(stack, **kw))
        return parsed, list(parsed.items())


def test_pairs_become_items_chosen_first_grouped_by_prompt_id(tmp_path):
    path = mmrlhf_sets.write(tmp_path)
    parsed, items = read(path)
    rows = mmrlhf_sets.rows()
    assert parsed.format == "mmrlhf" and len(items) == len(rows)
    # The k-th line of an id is pair k of its group.
    assert [i.external_id for i in items[:5]] == ["mcq_000#1", "mcq_000#2", "1#1", "1#2", "1#3"]
    assert len(set(parsed.ids)) == len(rows)
    assert [i.group for i in items[:3]] == ["mcq_000", "mcq_000", "1"]
    for item, row in zip(items, rows, strict=True):
        assert [s[0].text for s in item.responses] == [row["chosen"], row["rejected"]]
        assert item.gold == ""
    assert items[2].domain == "mmrlhf-long"
    assert parsed.new_domains["mmrlhf-safety"]["export_category"] == "mmrlhf/safety"
    _, gold = read(
        path, gold_from_label=True, known={"mmrlhf/mcq": "knowledge", "knowledge": "knowledge"}
    )
    assert {i.gold for i in gold} == {"1"} and gold[0].domain == "knowledge"


def test_a_frames_folder_is_an_ordered_strip_of_images(tmp_path):
    _, items = read(mmrlhf_sets.write(tmp_path))
    video = [i for i in items if i.group == "video_007"]
    assert [i.external_id for i in video] == ["video_007#1", "video_007#2"]
    images = [p.source_path for p in video[0].prompt if p.kind == IMAGE]
    assert images == [f"video/clip_007/{f}" for f in ("frame_1.jpg", "frame_2.jpg", "frame_10.jpg")]
    assert video[0].prompt[-1].text == "What happens in the clip?"
    meta = video[0].meta["mmrlhf"]
    assert (meta["category"], meta["media"], meta["pair"]) == ("video", "video", 1)
    assert video[0].domain == "mmrlhf-video"


def test_the_generic_pairs_reader_still_reads_the_file_unless_named(tmp_path):
    path = mmrlhf_sets.write(tmp_path)
    assert formats.find(DatasetSource(path), None) is not mmrlhf


@pytest.mark.parametrize(
    "dumps", [{}, {"ensure_ascii": False}, {"separators": (",", ":")}, {"sort_keys": True}]
)
def test_every_line_comes_back_byte_for_byte(tmp_path, dumps):
    path = mmrlhf_sets.write(tmp_path, **dumps)
    _, items = read(path)
    lines = [
        mmrlhf.record_line(
            i.meta["mmrlhf"], prompt=i.prompt[-1].text,
            chosen=i.responses[0][0].text, rejected=i.responses[1][0].text,
        ) + "\n"
        for i in items
    ]  # fmt: skip
    assert "".join(lines).encode() == path.read_bytes()


def test_a_swapped_decision_swaps_the_reasons_too(tmp_path):
    _, items = read(mmrlhf_sets.write(tmp_path))
    item = items[0]
    line = mmrlhf.record_line(
        item.meta["mmrlhf"], prompt=item.prompt[-1].text, chosen=item.responses[1][0].text,
        rejected=item.responses[0][0].text, swapped=True,
    )  # fmt: skip
    value = json.loads(line)
    assert (value["chosen"], value["chosen_reason"]) == ("Response ranked 2 for task 0.", "rank 2")
    assert list(value) == list(mmrlhf_sets.rows()[0])


def test_reimport_fingerprints_are_stable_and_content_sensitive(tmp_path):
    parsed, items = read(mmrlhf_sets.write(tmp_path))
    again, items2 = read(mmrlhf_sets.write(tmp_path))
    assert [parsed.fingerprint(i) for i in items] == [again.fingerprint(i) for i in items2]
    rows = mmrlhf_sets.rows()
    rows[0]["rejected_reason"] = "changed"
    changed, items3 = read(mmrlhf_sets.write(tmp_path / "b", rows))
    assert changed.fingerprint(items3[0]) != parsed.fingerprint(items[0])
    assert changed.fingerprint(items3[1]) == parsed.fingerprint(items[1])


@pytest.mark.parametrize(
    ("change", "line", "field", "message"),
    [
        (lambda r: r.pop("chosen"), 3, "chosen", "is missing"),
        (lambda r: r.update(image="../secret.png"), 3, "image", "contains '..'"),
        (lambda r: r.update(image="/etc/x.png"), 3, "image", "is absolute"),
        (lambda r: r.update(image="bare.png"), 3, "image", "no category folder"),
        (lambda r: r.pop("image"), 3, "image", "is missing"),
        (lambda r: r.update(video="video/clip"), 3, "video", "give one of image or video"),
        (lambda r: r.update(prompt=5), 3, "prompt", "must be a string"),
        (lambda r: r.update(id=True), 3, "id", "non-empty string or an integer"),
    ],
)
def test_bad_lines_are_named_by_file_line_and_field(tmp_path, change, line, field, message):
    rows = mmrlhf_sets.rows()
    change(rows[2])
    path = mmrlhf_sets.write(tmp_path, rows)
    with pytest.raises(ImportFailed) as failed:
        read(path)
    text = "\n".join(str(p) for p in failed.value.problems)
    assert f"mm_rlhf.jsonl:{line}" in text and f"field '{field}'" in text and message in text


def test_a_missing_or_empty_frames_folder_is_named(tmp_path):
    rows = mmrlhf_sets.rows()
    rows[-1]["video"] = "video/none"
    path = mmrlhf_sets.write(tmp_path, rows)
    for frame in (tmp_path / "video" / "none").iterdir():
        frame.unlink()
    with pytest.raises(ImportFailed) as failed:
        read(path)
    text = "\n".join(str(p) for p in failed.value.problems)
    assert f"mm_rlhf.jsonl:{len(rows)}" in text and "field 'video'" in text
    assert "holds no frames" in text


def test_domain_options_still_apply(tmp_path):
    options = ImportOptions(domain_from="image-folder", domain_map={"mcq": "knowledge"})
    rows = [r for r in mmrlhf_sets.rows() if str(r["id"]).startswith("mcq")]
    _, items = read(
        mmrlhf_sets.write(tmp_path, rows), options=options, known={"knowledge": "knowledge"}
    )
    assert {i.domain for i in items} == {"knowledge"}


def test_frames_are_listed_from_a_zip_of_images_too(tmp_path):
    import dataclasses
    import zipfile

    from annotate.importing.sources import ZipImageSource

    path = mmrlhf_sets.write(tmp_path / "src")
    archive = tmp_path / "media.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for file in sorted((tmp_path / "src").rglob("*")):
            if file.is_file() and file.suffix != ".jsonl":
                out.write(file, file.relative_to(tmp_path / "src").as_posix())
    (tmp_path / "alone").mkdir()
    alone = path.rename(tmp_path / "alone" / path.name)
    with ExitStack() as stack:
        images = ZipImageSource(archive)
        ctx = dataclasses.replace(context(stack), images=images)
        parsed = mmrlhf.read(DatasetSource(alone), ctx)
        video = next(i for i in parsed.items() if i.group == "video_007")
        refs = [p.ref for p in video.prompt if p.kind == IMAGE]
    assert refs == [f"video/clip_007/{f}" for f in mmrlhf_sets.VIDEO_FRAMES]
