"""How a judge is sent a picture, a video or a sound (issue 35 item 4): the
one seam every benchmark's judge calls for a media file
(:func:`media_parts`), so a run's choice is made once, on the JudgeRun.

* **video** as ``video_frames`` frames (the default) or as one ``video_url``
  data URL, for endpoints that accept a video. Frames are taken at evenly
  spread positions, each moved by a jitter drawn from the run's seed and the
  file's SHA-256 (:func:`frame_times`), so a resumed run, and both orders of
  a pair, send identical bytes and another seed looks at other moments. Each
  is a JPEG ``image_url`` data URL no larger than the run's max side
  (settings.JUDGE_FRAME_MAX_SIDE, default 768), after a text part saying
  what they are ("Video, 8 frames at t=0.62s, 1.87s, …"). Decoding reuses the
  import's bounded reader (annotate.importing.media.frames_at: a deadline,
  seeks over long gaps) and at most MAX_FRAMES frames; the frames of a file
  are kept per run (a few dozen MB at most), so the second order does not
  decode again.
* **audio** as OpenAI-compatible ``input_audio``: base64 data and the
  format its file name gives ("wav", "mp3", …).
* **image** as an ``image_url`` data URL (judge_client.image_data_url).

A judge gets its files through ``read_image(path)``; the runner hands it a
:class:`MediaFiles`, which is such a reader and carries the run's options.
A plain reader (a test's dict) gets the defaults. No database access: this
runs in the runner's pool threads, and no Django import at load (the
pure judge modules import it).
"""

from __future__ import annotations

import base64
import hashlib
import io
import random
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

FRAMES, VIDEO = "frames", "video"  # curation.models.VideoAs
VIDEO_AS = (FRAMES, VIDEO)
MIN_FRAMES, MAX_FRAMES = 1, 64  # curation_judgerun_video_frames_range
DEFAULT_FRAMES = 8
DEFAULT_MAX_SIDE = 768
JPEG_QUALITY = 85
# A frame lies in its slot of the clip, at most this fraction of a slot off its middle.
JITTER = 0.35
# The frames kept per run: those of the files judged most recently, up to this size.
CACHE_BYTES = 64 * 1024 * 1024
# The time one file's frames may take to decode (the import's derivatives have as much).
DECODE_SECONDS = 30.0
VIDEO_TYPES = {"mp4": "video/mp4", "m4v": "video/mp4", "mov": "video/quicktime",
               "webm": "video/webm", "mkv": "video/x-matroska", "ogv": "video/ogg",
               "ogg": "video/ogg"}  # fmt: skip


class MediaUnreadable(OSError):
    """A video whose frames do not decode (the runner stores the call as failed)."""

    def __init__(self, name: str, why: str):
        super().__init__(f"{name}: {why}")
        self.filename = name
        self.why = why


@dataclass(frozen=True)
class MediaOptions:
    """A run's way of sending media (JudgeRun.video_as, video_frames, seed)."""

    video_as: str = FRAMES
    video_frames: int = DEFAULT_FRAMES
    seed: int = 0
    max_side: int = DEFAULT_MAX_SIDE

    def __post_init__(self):
        if self.video_as not in VIDEO_AS:
            raise ValueError(f"video_as must be one of {VIDEO_AS}, not {self.video_as!r}")
        if not MIN_FRAMES <= self.video_frames <= MAX_FRAMES:
            raise ValueError(f"video_frames must be {MIN_FRAMES} to {MAX_FRAMES}")

    @classmethod
    def of_run(cls, run) -> MediaOptions:
        return cls(
            video_as=run.video_as,
            video_frames=run.video_frames,
            seed=run.seed,
            max_side=frame_max_side(),
        )


def frame_max_side() -> int:
    from django.conf import settings

    return int(getattr(settings, "JUDGE_FRAME_MAX_SIDE", DEFAULT_MAX_SIDE))


def frame_times(duration: float, n: int, seed: int, sha256: str) -> list[float]:
    """n positions (seconds, to the millisecond) spread evenly over the clip:
    the middle of each of n equal slots, moved by up to JITTER of a slot by
    a draw from the seed and the file's content."""
    rng = random.Random(f"frames:{seed}:{sha256}:{n}")
    slot = duration / n
    last = max(0.0, duration - 0.001)
    return [
        round(min(last, max(0.0, slot * (k + 0.5 + rng.uniform(-JITTER, JITTER)))), 3)
        for k in range(n)
    ]


def _jpeg(frame, max_side: int) -> bytes:
    # Scaled by FFmpeg's swscale while converting (area averaging): several
    # times faster than Pillow's resize of the full frame.
    scale = min(1.0, max_side / max(frame.width, frame.height))
    width, height = max(1, round(frame.width * scale)), max(1, round(frame.height * scale))
    image = frame.reformat(width=width, height=height, format="rgb24", interpolation="AREA")
    image = image.to_image()
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=JPEG_QUALITY)
    return out.getvalue()


def decode_frames(
    data: bytes, name: str, n: int, seed: int, max_side: int
) -> list[tuple[float, bytes]]:
    """(time, JPEG) of the frames at frame_times, in order; fewer when the
    clip ends early or the decode runs out of time."""
    import av  # heavy: loaded where used

    from annotate.importing.media import MAX_DECODE_SECONDS, duration_seconds, frames_at

    n = max(MIN_FRAMES, min(MAX_FRAMES, n))
    sha = hashlib.sha256(data).hexdigest()
    deadline = time.monotonic() + DECODE_SECONDS
    try:
        with av.open(io.BytesIO(data), mode="r", timeout=MAX_DECODE_SECONDS) as box:
            if not box.streams.video:
                raise MediaUnreadable(name, "has no video stream")
            stream = box.streams.video[0]
            duration = duration_seconds(box, stream)
            if not duration or duration <= 0:
                raise MediaUnreadable(name, "its header gives no duration")
            # Positions over the clip up to its last frame's start, so each one has a frame.
            span = max(0.001, duration - 1 / float(stream.average_rate or 25))
            times = frame_times(span, n, seed, sha)
            frames = [
                (t if f.time is None else round(f.time, 3), _jpeg(f, max_side))
                for t, f in frames_at(box, stream, times, deadline)
            ]
    except av.FFmpegError as exc:
        raise MediaUnreadable(name, f"does not decode ({exc.strerror})") from None
    if not frames:
        raise MediaUnreadable(name, "no frame decodes")
    return frames


def frame_parts(frames: list[tuple[float, bytes]]) -> list[dict[str, Any]]:
    at = ", ".join(f"{t:.2f}s" for t, _ in frames)
    parts: list[dict[str, Any]] = [
        {"type": "text", "text": f"Video, {len(frames)} frames at t={at}"}
    ]
    for _, jpeg in frames:
        url = "data:image/jpeg;base64," + base64.b64encode(jpeg).decode("ascii")
        parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts


def _suffix(name: str) -> str:
    return PurePosixPath(name).suffix.lower().lstrip(".")


def video_url_part(data: bytes, name: str) -> dict[str, Any]:
    kind = VIDEO_TYPES.get(_suffix(name), f"video/{_suffix(name) or 'mp4'}")
    url = f"data:{kind};base64," + base64.b64encode(data).decode("ascii")
    return {"type": "video_url", "video_url": {"url": url}}


def audio_part(data: bytes, name: str) -> dict[str, Any]:
    data64 = base64.b64encode(data).decode("ascii")
    return {"type": "input_audio", "input_audio": {"data": data64, "format": _suffix(name)}}


def image_part(data: bytes, name: str) -> dict[str, Any]:
    from curation.evaluation.judge_client import image_data_url

    return {"type": "image_url", "image_url": {"url": image_data_url(data, name)}}


class MediaContent:
    """The parts of files under one run's options, with the frames of the
    files judged last kept (keyed by content, count, seed and size: the
    asset, N and the seed) so a file is decoded once while its pair's
    calls are sent. Safe to share between the runner's threads: a second
    thread asking for frames being decoded waits for them."""

    def __init__(self, options: MediaOptions | None = None):
        self.options = options or MediaOptions()
        self.decodes = 0  # files decoded (not taken from the cache)
        self._lock = threading.Lock()
        self._gates: dict[tuple, threading.Lock] = {}
        self._frames: OrderedDict[tuple, list[dict[str, Any]]] = OrderedDict()
        self._sizes: dict[tuple, int] = {}

    def parts(self, data: bytes, name: str, kind: str) -> list[dict[str, Any]]:
        """The content parts of one file of `kind` ("image", "video", "audio")."""
        if kind == "audio":
            return [audio_part(data, name)]
        if kind == "image":
            return [image_part(data, name)]
        if kind != "video":
            raise ValueError(f"not a media kind: {kind!r}")
        if self.options.video_as == VIDEO:
            return [video_url_part(data, name)]
        o = self.options
        key = (hashlib.sha256(data).hexdigest(), o.video_frames, o.seed, o.max_side)
        with self._lock:
            gate = self._gates.setdefault(key, threading.Lock())
        with gate:  # one decode of a file at a time; the others wait and take it
            with self._lock:
                if key in self._frames:
                    self._frames.move_to_end(key)
                    return self._frames[key]
            try:
                parts = frame_parts(decode_frames(data, name, o.video_frames, o.seed, o.max_side))
                with self._lock:
                    self.decodes += 1
                    self._keep(key, parts)
            finally:
                with self._lock:
                    self._gates.pop(key, None)
        return parts

    def _keep(self, key: tuple, parts: list[dict[str, Any]]) -> None:
        self._frames[key] = parts
        self._sizes[key] = sum(len(p.get("image_url", {}).get("url", "")) for p in parts)
        while sum(self._sizes.values()) > CACHE_BYTES and len(self._frames) > 1:
            old, _ = self._frames.popitem(last=False)
            self._sizes.pop(old)

    def asset_parts(self, asset) -> list[dict[str, Any]]:
        """The parts of a stored MediaAsset (or ImageAsset: kind "image"),
        read through common.storage from the default storage."""
        from django.core.files.storage import default_storage

        from common.storage import read_stored

        kind = getattr(asset, "kind", "image")
        return self.parts(read_stored(default_storage, str(asset.file)), str(asset.file), kind)


class MediaFiles:
    """A release's files by path, as the judges' `read_image` reads them,
    and their parts under the run's options."""

    def __init__(self, read: Callable[[str], bytes], content: MediaContent):
        self.read = read
        self.content = content

    def __call__(self, name: str) -> bytes:
        return self.read(name)

    def parts(self, name: str, kind: str) -> list[dict[str, Any]]:
        return self.content.parts(self.read(name), name, kind)


def media_parts(read_image: Callable[[str], bytes], name: str, kind: str) -> list[dict[str, Any]]:
    """What a judge sends for the file `name` of `kind` ("image", "video",
    "audio"): under the run's options when `read_image` is the run's
    MediaFiles, else under the defaults."""
    if isinstance(read_image, MediaFiles):
        return read_image.parts(name, kind)
    return MediaContent().parts(read_image(name), name, kind)
