"""Omni-RewardBench task files as an input format (issue 34): pairs under
two criteria in one group, tie labels, repeated ids, image tasks, the file
back byte for byte, bad records named by file, line and field, the video
and audio tasks' parts (issue 35)."""

from __future__ import annotations

import json
from contextlib import ExitStack

import pytest
from PIL import Image

from annotate.importing import formats
from annotate.importing import media as media_import
from annotate.importing.formats import DatasetSource, omni
from annotate.importing.records import ImportFailed
from tests.annotate.importing.test_rewardbench2_format import context


def rec(rid, criteria, pref, **kw):
    return {
        "id": rid,
        "prompt": f"Prompt {rid} “q”",
        "response1": "one ✓",
        "response2": "two",
        "model1": "m1",
        "model2": "m2",
        "criteria": criteria,
        "criteria_preference": pref,
        **kw,
    }


def records():
    return [
        rec(1, "Be brief.", "response1"),
        rec(1, "Be exact.", "tie"),
        rec(2, "Be kind.", "response2", extra={"x": [1, None]}),
    ]


def write(path, values, **dumps):
    path.write_text(json.dumps(values, indent=4, **dumps), encoding="utf-8")
    return path


def read(path, **kw):
    with ExitStack() as stack:
        parsed = formats.find(DatasetSource(path), None).read(
            DatasetSource(path), context(stack, **kw)
        )
        return parsed, list(parsed.items())


def test_pairs_under_two_criteria_are_two_items_in_one_group(tmp_path):
    path = write(tmp_path / "text_to_text_preferences.json", records())
    assert formats.find(DatasetSource(path), None) is omni
    parsed, items = read(path)
    a, b, c = items
    brief, exact = (omni.hashlib.sha256(c).hexdigest()[:8] for c in (b"Be brief.", b"Be exact."))
    assert parsed.ids == [f"text_to_text:1~{brief}", f"text_to_text:1~{exact}", "text_to_text:2"]
    assert a.group == b.group != c.group and a.group.startswith("omni-")
    assert (a.criterion, b.criterion) == ("Be brief.", "Be exact.")
    assert (a.gold, b.gold, c.gold) == ("1", "", "2")  # a tie keeps no gold side
    assert omni.imported_preference(b.meta["omni"]) == "tie"
    assert a.models == ["m1", "m2"] and a.domain == "omni-text-to-text"
    assert parsed.new_domains["omni-text-to-text"]["export_category"] == "omni/text_to_text"


@pytest.mark.parametrize("dumps", [{}, {"ensure_ascii": False}])
def test_the_file_comes_back_byte_for_byte(tmp_path, dumps):
    path = write(tmp_path / "text_to_text_preferences.json", records(), **dumps)
    _, items = read(path)
    env = items[0].meta["omni"]["envelope"]
    text = omni.file_text([omni.item_record(i) for i in items], env)
    assert text.encode() == path.read_bytes()
    odd = tmp_path / "text_to_text_preferences.json"
    odd.write_text(
        '[ {"id":"z","prompt":"p","response1":"a","response2":"b","criteria":"c",'
        '"criteria_preference":"tie"} ]\n'
    )
    _, items = read(odd)
    assert items[0].meta["omni"]["style"] == "raw"
    assert (
        omni.file_text([omni.item_record(items[0])], items[0].meta["omni"]["envelope"]).encode()
        == odd.read_bytes()
    )


def test_image_tasks_read_their_media(tmp_path):
    (tmp_path / "img").mkdir()
    for name in ("q.png", "a.png", "b.png"):
        Image.new("RGB", (4, 4), "red").save(tmp_path / "img" / name)
    path = write(
        tmp_path / "text_image_to_image_preferences.json",
        [
            rec(
                7,
                "Keep the cat.",
                "response2",
                image="img/q.png",
                response1="img/a.png",
                response2="img/b.png",
            )
        ],
    )
    _, [item] = read(path)
    assert [p.kind for p in item.prompt] == ["image", "text"]
    assert [s[0].source_path for s in item.responses] == ["img/a.png", "img/b.png"]
    assert (
        omni.file_text([omni.item_record(item)], item.meta["omni"]["envelope"]).encode()
        == path.read_bytes()
    )


MEDIA_TASKS = {
    # task: (prompt media field, its kind, response kind)
    "text_video_to_text": ("video", "video", "text"),
    "text_to_video": ("", "text", "video"),
    "text_to_audio": ("", "text", "audio"),
    "text_audio_to_text": ("audio", "audio", "text"),
}


def media_records(task):
    from demo import clips

    key, prompt_kind, response_kind = MEDIA_TASKS[task]
    clip = {"video": lambda: clips.video_bytes(seconds=1, width=320, height=240, fps=10),
            "audio": lambda: clips.audio_bytes(seconds=1)}  # fmt: skip
    ext = {"video": "mp4", "audio": "wav"}
    files = {}
    out = []
    for rid, pref in ((1, "response1"), (2, "tie")):
        extra = {}
        if key:
            files[f"{key}s/p{rid}.{ext[prompt_kind]}"] = clip[prompt_kind]()
            extra[key] = f"{key}s/p{rid}.{ext[prompt_kind]}"
        value = rec(rid, "Be vivid.", pref, **extra)
        if response_kind != "text":
            for n in (1, 2):
                name = f"{task}/r{rid}_{n}.{ext[response_kind]}"
                files[name] = clip[response_kind]()
                value[f"response{n}"] = name
        out.append(value)
    return out, files


@pytest.mark.parametrize("task", list(MEDIA_TASKS))
def test_video_and_audio_tasks_are_media_parts_and_written_back(tmp_path, monkeypatch, task):
    values, files = media_records(task)
    for name, data in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    seen = {}

    def check_media_once(images, limits, refs, log):
        seen.update(refs)
        return {ref: type("Info", (), {"sha256": ref})() for ref, _ in refs}

    monkeypatch.setattr(media_import, "check_media_once", check_media_once)
    path = write(tmp_path / f"{task}_preferences.json", values)
    parsed, items = read(path)
    key, prompt_kind, response_kind = MEDIA_TASKS[task]
    assert {ref for ref, _ in seen} == set(files) and set(parsed.media) == set(files)
    assert {ref: kind for ref, kind in seen} == {
        name: (prompt_kind if name.startswith(f"{key}s/") and key else response_kind)
        for name in files
    }
    one, tie = items
    assert [p.kind for p in one.prompt] == ([prompt_kind] if key else []) + ["text"]
    assert [[p.kind for p in slot] for slot in one.responses] == [[response_kind]] * 2
    if key:
        assert one.prompt[0].ref == values[0][key]
    if response_kind != "text":
        assert [slot[0].ref for slot in one.responses] == [values[0]["response1"],
                                                           values[0]["response2"]]  # fmt: skip
    assert (one.gold, tie.gold, one.criterion) == ("1", "", "Be vivid.")
    assert omni.imported_preference(tie.meta["omni"]) == "tie"
    text = omni.file_text([omni.item_record(i) for i in items], one.meta["omni"]["envelope"])
    assert text.encode() == path.read_bytes()


def test_media_tasks_name_file_line_and_field(tmp_path, monkeypatch):
    monkeypatch.setattr(media_import, "check_media_once", lambda images, limits, refs, log: {})
    bad = [rec(1, "c", "response1", video=""), rec(2, "c", "response1", video="/etc/x.mp4")]
    path = write(tmp_path / "text_video_to_text_preferences.json", bad)
    with pytest.raises(ImportFailed) as failed:
        read(path)
    text = str(failed.value)
    assert "text_video_to_text_preferences.json:2" in text and "video" in text
    assert "must be a video path" in text and "is absolute" in text
    bad = [rec(1, "c", "response1", response1="clip.wav")]
    path = write(tmp_path / "text_to_audio_preferences.json", [{**bad[0], "response2": 3}])
    with pytest.raises(ImportFailed, match="response2"):
        read(path)


def test_unknown_tasks_and_missing_or_bad_media_are_refused(tmp_path):
    with pytest.raises(ImportFailed, match="cannot tell the Omni-RewardBench task"):
        read(write(tmp_path / "other.json", records()))
    values, files = media_records("text_to_audio")
    for name, data in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    parsed, _ = read(write(tmp_path / "text_to_audio_preferences.json", values))
    assert {info.kind for info in parsed.media.values()} == {"audio"}
    assert set(parsed.media) == set(files)
    (tmp_path / values[1]["response2"]).unlink()
    (tmp_path / values[0]["response1"]).write_bytes(b"not a wav")
    with pytest.raises(ImportFailed) as failed:
        read(write(tmp_path / "text_to_audio_preferences.json", values))
    text = str(failed.value)
    assert "text_to_audio_preferences.json:2" in text and "response1" in text
    assert values[1]["response2"] in text and "response2" in text


def test_bad_records_name_file_line_and_field(tmp_path):
    bad = [rec(1, "c", "response1"), rec(2, "c", "A"), {**rec(3, "c", "tie"), "criteria": 5}]
    path = write(tmp_path / "text_to_text_preferences.json", bad)
    with pytest.raises(ImportFailed) as failed:
        read(path)
    problems = [str(p) for p in failed.value.problems]
    assert problems[0].startswith(
        "text_to_text_preferences.json:12: record 1: field 'criteria_preference': must be one of"
    )
    assert problems[1] == (
        "text_to_text_preferences.json:22: record 2: field 'criteria': must be a string, not int"
    )


def test_broken_json_and_deep_nesting_name_the_line(tmp_path):
    path = tmp_path / "text_to_text_preferences.json"
    path.write_text('[\n    {"id": 1,\n     "prompt": }\n]')
    with pytest.raises(ImportFailed) as failed:
        read(path)
    assert str(failed.value.problems[0]).startswith("text_to_text_preferences.json:3:")
    path.write_text("[" + "[" * 100000 + "]" * 100000 + "]")
    with pytest.raises(ImportFailed, match="values are nested too deeply"):
        read(path)
