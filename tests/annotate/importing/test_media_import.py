"""Video and audio parts imported (issue 35): the parts JSONL format with its
files, validated with PyAV, stored content-addressed, derived in the
background; hostile files refused with file, line and field, nothing written,
in bounded time."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import av
import pytest
from django.core.files.storage import default_storage

from annotate.importing.media import derive, inspect_media, loudness_db, media_limits
from annotate.importing.records import ImportFailed
from annotate.importing.service import import_items_from_paths
from annotate.importing.tasks import derive_media
from annotate.models import Item, ItemPart, MediaAsset
from demo.clips import audio_bytes, video_bytes
from tests.factories import make_project

pytestmark = pytest.mark.django_db


def write_dataset(folder: Path, records: list[dict], files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    path = folder / "data.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def clip_records() -> tuple[list[dict], dict[str, bytes]]:
    files = {
        "clips/smooth.mp4": video_bytes(),
        "clips/stutter.mp4": video_bytes(stutter=True),
        "sounds/beat.wav": audio_bytes(),
        "sounds/dropped.wav": audio_bytes(dropped_beat=3, gain_db=-6),
    }
    records = [
        {
            "id": "v1",
            "domain": "Motion",
            "prompt": [{"text": "Which clip moves smoothly?"}],
            "responses": [[{"video": "clips/smooth.mp4"}], [{"video": "clips/stutter.mp4"}]],
            "gold": "1",
            "models": ["m-a", "m-b"],
        },
        {
            "id": "a1",
            "domain": "Rhythm",
            "prompt": [{"text": "Which keeps the beat?"}, {"audio": "sounds/beat.wav"}],
            "responses": [[{"audio": "sounds/beat.wav"}], [{"audio": "sounds/dropped.wav"}]],
        },
    ]
    return records, files


def test_video_and_audio_parts_are_stored_once_and_derived(
    tmp_path, django_capture_on_commit_callbacks
):
    records, files = clip_records()
    path = write_dataset(tmp_path, records, files)
    project = make_project()
    with django_capture_on_commit_callbacks(execute=False):
        result = import_items_from_paths(project=project, dataset=path)
    assert (result.created, result.media_stored) == (2, 4)
    assert "4 new videos or audio files" in result.summary()
    video = Item.objects.get(project=project, external_id="v1")
    parts = list(video.content_parts.order_by("slot", "position"))
    assert [(p.slot, p.kind) for p in parts] == [
        ("prompt", "text"), ("response_1", "video"), ("response_2", "video"),
    ]  # fmt: skip
    smooth = parts[1].media
    assert smooth.kind == "video" and smooth.container == "mp4"
    assert (smooth.width, smooth.height, smooth.fps, smooth.duration_ms) == (320, 240, 25.0, 2000)
    assert (smooth.video_codec, smooth.content_type) == ("h264", "video/mp4")
    assert parts[1].source_path == "clips/smooth.mp4"
    with default_storage.open(smooth.file, "rb") as fh:
        assert fh.read() == files["clips/smooth.mp4"]
    assert smooth.file == f"media/{smooth.sha256[:2]}/{smooth.sha256}.mp4"
    audio = Item.objects.get(project=project, external_id="a1")
    beat = audio.content_parts.get(slot="prompt", position=1).media
    # The same file in the prompt and a response is stored once.
    assert audio.content_parts.get(slot="response_1").media_id == beat.pk
    assert (beat.kind, beat.sample_rate, beat.channels, beat.audio_codec) == (
        "audio", 16000, 1, "pcm_s16le",
    )  # fmt: skip
    assert MediaAsset.objects.count() == 4
    assert video.gold_choice == "1" and video.domain.title == "Motion"
    # Derivatives: made by the task, not the import.
    assert not smooth.poster and smooth.derived_at is None
    assert derive_media(list(MediaAsset.objects.values_list("pk", flat=True))) == 4
    smooth.refresh_from_db()
    beat.refresh_from_db()
    assert smooth.poster.startswith("posters/") and smooth.strip.startswith("strips/")
    assert beat.waveform.startswith("waves/") and beat.loudness_db is not None
    dropped = ItemPart.objects.get(item=audio, slot="response_2").media
    dropped.refresh_from_db()
    assert dropped.loudness_db == pytest.approx(beat.loudness_db - 6, abs=0.5)
    from PIL import Image

    with default_storage.open(smooth.strip, "rb") as fh:
        strip = Image.open(fh)
        strip.load()
    assert strip.format == "WEBP" and strip.height == 90 and strip.width > 90 * 4
    # A re-import of the same files is a no-op.
    again = import_items_from_paths(project=project, dataset=path)
    assert (again.created, again.updated, again.unchanged, again.media_stored) == (0, 0, 2, 0)


def test_derive_is_idempotent_and_reads_the_stored_file():
    data = video_bytes(seconds=1)
    info = inspect_media(data, "x.mp4", media_limits(), "video")
    asset = MediaAsset.objects.create(
        sha256=info.sha256, kind="video", file=f"media/{info.sha256}.mp4",
        container="mp4", content_type="video/mp4", duration_ms=info.duration_ms,
        width=info.width, height=info.height, fps=info.fps, size_bytes=len(data),
    )  # fmt: skip
    default_storage.save(asset.file, io.BytesIO(data))
    derive(asset)
    first = (asset.poster, asset.strip)
    derive(asset)
    assert (asset.poster, asset.strip) == first


def test_loudness_follows_gain_and_ignores_silence():
    import numpy as np

    rate = 16000
    tone = 0.5 * np.sin(2 * np.pi * 440 * np.arange(rate * 2) / rate)
    # A full-scale-0.5 sine: mean square 0.125, -9.03 dB.
    assert loudness_db(tone, rate) == pytest.approx(10 * np.log10(0.125), abs=1e-9)
    padded = np.concatenate([tone, np.zeros(rate * 2)])
    assert loudness_db(padded, rate) == pytest.approx(10 * np.log10(0.125), abs=0.5)
    assert loudness_db(np.zeros(rate), rate) is None


# --- hostile files ---------------------------------------------------------------------


def _endless_ts() -> bytes:
    """An MPEG-TS stream: no duration in any header (a live stream's shape)."""
    out = io.BytesIO()
    with av.open(out, "w", format="mpegts") as box:
        stream = box.add_stream("libx264", rate=25)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        import numpy as np

        for n in range(10):
            frame = av.VideoFrame.from_ndarray(np.zeros((48, 64, 3), np.uint8), "rgb24")
            frame.pts = n
            for packet in stream.encode(frame):
                box.mux(packet)
        for packet in stream.encode():
            box.mux(packet)
    return out.getvalue()


def _five_streams() -> bytes:
    out = io.BytesIO()
    with av.open(out, "w", format="matroska") as box:
        for _ in range(5):
            stream = box.add_stream("flac", rate=8000)
            stream.layout = "mono"
        import numpy as np

        for stream in box.streams:
            frame = av.AudioFrame.from_ndarray(np.zeros((1, 1024), np.int16), format="s16",
                                               layout="mono")  # fmt: skip
            frame.sample_rate, frame.pts = 8000, 0
            for packet in stream.encode(frame):
                box.mux(packet)
            for packet in stream.encode():
                box.mux(packet)
    return out.getvalue()


HOSTILE = {
    "truncated": (
        "clip.mp4",
        "video",
        lambda: video_bytes()[:6000],
        "corrupt or truncated|cannot read|PyAV can read",
    ),
    "wav named mp4": (
        "clip.mp4",
        "video",
        lambda: audio_bytes(),
        "is a wav file, not what its name",
    ),
    "png named mp4": (
        "clip.mp4",
        "video",
        lambda: b"\x89PNG\r\n\x1a\n" + b"\0" * 200,
        "PyAV can read|not allowed",
    ),
    "garbage": ("clip.webm", "video", lambda: bytes(range(256)) * 40, "PyAV can read"),
    "huge dimensions": (
        "clip.mp4",
        "video",
        lambda: video_bytes(width=4000, height=2400, seconds=0.12),
        "more than the limit of 3840x2160",
    ),
    "endless stream": (
        "clip.ts",
        "video",
        _endless_ts,
        "not a video or audio suffix|not allowed|no duration",
    ),
    "too many streams": (
        "sound.mkv",
        "audio",
        _five_streams,
        "5 streams, more than the limit of 4",
    ),
    "audio given as video": ("beat.wav", "video", lambda: audio_bytes(), "has no video stream"),
    "video given as audio": ("clip.mp4", "audio", lambda: video_bytes(), "has a video stream"),
    "empty": ("clip.mp4", "video", lambda: b"", "file is empty"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_media_is_refused_naming_file_line_and_field(tmp_path, case):
    name, kind, make, reason = HOSTILE[case]
    records, files = clip_records()
    files[f"bad/{name}"] = make()
    records.append(
        {
            "id": "bad",
            "prompt": [{"text": "p"}],
            "responses": [[{kind: f"bad/{name}"}], [{"text": "b"}]],
        }
    )
    path = write_dataset(tmp_path, records, files)
    project = make_project()
    started = time.monotonic()
    with pytest.raises(ImportFailed) as failed:
        import_items_from_paths(project=project, dataset=path)
    assert time.monotonic() - started < 10
    text = str(failed.value)
    assert "data.jsonl:3:" in text and f"responses[0][0].{kind}" in text, text
    import re

    assert re.search(reason, text), text
    assert not Item.objects.filter(project=project).exists()
    assert not MediaAsset.objects.exists()
    assert not (Path(default_storage.location) / "media").exists()


def test_size_limit_is_checked_before_reading_the_whole_file(tmp_path, settings):
    settings.MEDIA_LIMITS = {"max_bytes": 10_000}
    records, files = clip_records()
    path = write_dataset(tmp_path, records, files)
    with pytest.raises(ImportFailed, match=r"larger than|more than the limit|bytes"):
        import_items_from_paths(project=make_project(), dataset=path)


def test_a_missing_file_and_bad_parts_are_named(tmp_path):
    records, files = clip_records()
    del files["clips/stutter.mp4"]
    records[1]["responses"][1] = [{"audio": "a.wav", "text": "two kinds"}]
    path = write_dataset(tmp_path, records, files)
    with pytest.raises(ImportFailed) as failed:
        import_items_from_paths(project=make_project(), dataset=path)
    text = str(failed.value)
    assert "data.jsonl:2:" in text and "responses[1][0]" in text and "exactly one of" in text


def test_a_release_that_would_leave_videos_out_is_refused(tmp_path):
    """No benchmark format of these domains writes video or audio: the
    release is refused, naming why, and no version is spent."""
    from curation.models import Release, Verdict, VerdictStatus
    from curation.releases.service import ReleaseError, create_release
    from tests.factories import make_user

    records, files = clip_records()
    path = write_dataset(tmp_path, records, files)
    project = make_project()
    import_items_from_paths(project=project, dataset=path)
    for item in Item.objects.filter(project=project):
        Verdict.objects.update_or_create(
            item=item,
            project=project,
            defaults={
                "status": VerdictStatus.AGREED,
                "final_choice": "1",
                "provenance": "unanimous",
            },
        )
    domains = list(project.domains.filter(items__isnull=False).values_list("slug", flat=True))
    with pytest.raises(ReleaseError, match="2 of the chosen items hold a video or audio file"):
        create_release(
            project=project, version="v1", notes="", domains=domains, seed=1,
            user=make_user(), enqueue=False,
        )  # fmt: skip
    assert not Release.objects.filter(project=project).exists()
