"""Omni-RewardBench's text_to_audio judge swaps the order as the published
``run_exp_t2a.py`` does (response2 shown as A, the verdict mapped back), the
other tasks do not; audio goes as input_audio, video as a video_url when the
run says so (its frames: tests/curation/evaluation/test_judge_media.py), each
read from omni/media_data/ in the release (issue 35)."""

from __future__ import annotations

import base64
import json

from curation.benchmarks.omni import judge, scoring
from curation.benchmarks.omni.benchmark import records_of


def task_records(task, **fields):
    value = {"id": 1, "prompt": "Sing", "response1": "a/one.wav", "response2": "a/two.wav",
             "model1": "m1", "model2": "m2", "criteria": "Be loud.",
             "criteria_preference": "response1", **fields}  # fmt: skip
    return records_of(task, json.dumps([value], indent=4))


def under_media(files: dict) -> dict:
    """The files at their place in a release (the records' paths are relative to media_data)."""
    from curation.benchmarks.omni.release_files import FOLDER, MEDIA

    assert f"{FOLDER}/{MEDIA}" == judge.MEDIA_FOLDER
    return {f"{judge.MEDIA_FOLDER}/{name}": data for name, data in files.items()}


def as_video(files: dict):
    """A reader sending videos as the file (the run option video_as="video")."""
    from curation.evaluation.media_content import MediaContent, MediaFiles, MediaOptions

    return MediaFiles(under_media(files).__getitem__, MediaContent(MediaOptions(video_as="video")))


def test_text_to_audio_is_sent_swapped_as_input_audio():
    (record,) = task_records("text_to_audio")
    files = under_media({"a/one.wav": b"ONE", "a/two.wav": b"TWO"})
    parts = judge.content(record, files.__getitem__)
    audio = [p["input_audio"] for p in parts if p["type"] == "input_audio"]
    assert [base64.b64decode(a["data"]) for a in audio] == [b"TWO", b"ONE"]
    assert {a["format"] for a in audio} == {"wav"}


def test_text_to_video_keeps_the_order_and_its_prompt_video_is_sent():
    (record,) = task_records("text_to_video", response1="v/1.mp4", response2="v/2.mp4")
    files = {"v/1.mp4": b"1", "v/2.mp4": b"2"}
    urls = [p["video_url"]["url"] for p in judge.content(record, as_video(files))
            if p["type"] == "video_url"]  # fmt: skip
    assert urls == [f"data:video/mp4;base64,{base64.b64encode(b).decode()}" for b in (b"1", b"2")]
    (record,) = task_records("text_video_to_text", video="v/p.mp4", response1="x",
                             response2="y")  # fmt: skip
    parts = judge.content(record, as_video({"v/p.mp4": b"P"}))
    assert [p["type"] for p in parts][:3] == ["text", "text", "video_url"]
    assert [p.get("text") for p in parts[3:]] == ["[[RESPONSE A]]", "x", "[[RESPONSE B]]", "y"]


def test_a_swapped_answer_is_mapped_back_when_scored():
    items = [
        scoring.Item("text_to_audio:1", "text_to_audio", "response1", "1", "Be loud."),
        scoring.Item("text_to_audio:2", "text_to_audio", "response2", "2", "Be loud."),
    ]
    # The judge saw response2 as A: "[[B]]" means response1 is better.
    lines = [
        {"id": "text_to_audio:1", "output": "so [[B]]", "with_ties": False, "swapped": True},
        {"id": "text_to_audio:2", "output": "so [[B]]", "with_ties": False, "swapped": True},
    ]
    text = "\n".join(json.dumps(line) for line in lines) + "\n"
    read = scoring.read_predictions(text, "p.jsonl", items)
    assert [read["predictions"][i.id].predicted for i in items] == ["response1", "response1"]
    scored = scoring.score(items, read)
    assert abs(scored["tasks"][0]["accuracy"] - 0.5) < 1e-9
    unswapped = text.replace(', "swapped": true', "")
    read = scoring.read_predictions(unswapped, "p.jsonl", items)
    assert [read["predictions"][i.id].predicted for i in items] == ["response2", "response2"]
