"""Synthetic video and audio clips made with PyAV (issue 35): the demo's
video and audio projects, and every test and bench that needs a real file.

Pure Python + PyAV + numpy, no Django. Each clip is deterministic for its
arguments, so its SHA-256 (its stored name) is too:

* ``video_bytes``: an H.264 MP4 (or VP9 WebM) of a moving bar over a colour
  field, with optional faults a judge or an annotator should notice: a
  ``stutter`` (frames repeated for a while), a ``wrong_colour`` (the field's
  colour swapped half way) or ``frozen`` (no motion at all);
* ``audio_bytes``: a 16-bit PCM WAV (or AAC in MP4, MP3, FLAC) of a beat of
  tone bursts, with optional ``dropped_beat`` (one burst silent) and a
  ``gain`` in dB (a quieter or louder take).
"""

from __future__ import annotations

import io
from fractions import Fraction

import av
import numpy as np

VIDEO_CONTAINERS = {"mp4": ("mp4", "libx264"), "webm": ("webm", "libvpx-vp9")}
AUDIO_CONTAINERS = {
    "wav": ("wav", "pcm_s16le"),
    "m4a": ("mp4", "aac"),
    "mp3": ("mp3", "libmp3lame"),
    "flac": ("flac", "flac"),
}


def _frame_rgb(base, n: int, fps: int):
    """Frame n: the colour field `base` with a white bar sweeping left to
    right once a second and a frame counter strip (n in binary), so frames
    are told apart exactly."""
    width = base.shape[1]
    frame = base.copy()
    bar = max(2, width // 16)
    x = int((n % fps) / fps * (width - bar))
    frame[:, x : x + bar] = 255
    cell = max(2, width // 64)
    for bit in range(16):
        if n >> bit & 1:
            frame[:cell, bit * cell : (bit + 1) * cell] = 0
    return frame


def video_bytes(
    *,
    seconds: float = 2.0,
    width: int = 320,
    height: int = 240,
    fps: int = 25,
    colour: tuple[int, int, int] = (40, 110, 200),
    container: str = "mp4",
    stutter: bool = False,
    wrong_colour: bool = False,
    frozen: bool = False,
    with_audio: bool = False,
) -> bytes:
    """A synthetic clip's bytes (see the module's docstring)."""
    fmt, codec = VIDEO_CONTAINERS[container]
    out = io.BytesIO()
    total = max(1, round(seconds * fps))
    # bitexact: no muxing date or library version in the file (same bytes every run).
    with av.open(out, mode="w", format=fmt, options={"fflags": "+bitexact"}) as box:
        stream = box.add_stream(codec, rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        if codec == "libx264":
            stream.options = {"preset": "ultrafast", "tune": "zerolatency"}
        else:
            stream.options = {"threads": "1", "deadline": "realtime", "cpu-used": "8"}
        audio = None
        if with_audio:
            audio = box.add_stream("aac", rate=44_100)
            audio.layout = "mono"
        fields = [np.full((height, width, 3), colour, dtype=np.uint8)]
        fields.append(np.full((height, width, 3), (colour[2], colour[0], colour[1]), np.uint8))
        for n in range(total):
            shown = 0 if frozen else n
            if stutter and total // 3 <= n < total // 3 + fps // 2:
                shown = total // 3  # half a second of one repeated frame
            base = fields[1] if wrong_colour and n >= total // 2 else fields[0]
            frame = av.VideoFrame.from_ndarray(_frame_rgb(base, shown, fps), "rgb24")
            frame.pts = n
            frame.time_base = Fraction(1, fps)
            for packet in stream.encode(frame):
                box.mux(packet)
        for packet in stream.encode():
            box.mux(packet)
        if audio is not None:
            _encode_audio(box, audio, _beat(seconds, 44_100))
    return out.getvalue()


def _beat(
    seconds: float, rate: int, *, bpm: int = 120, dropped_beat: int | None = None, gain_db=0.0
):
    """Tone bursts (440 Hz, 0.1 s) on every beat, float32 mono in [-1, 1]."""
    samples = np.zeros(max(1, round(seconds * rate)), dtype=np.float32)
    period = round(rate * 60 / bpm)
    burst = round(rate * 0.1)
    tone = 0.5 * np.sin(2 * np.pi * 440 * np.arange(burst) / rate).astype(np.float32)
    for beat, start in enumerate(range(0, len(samples), period)):
        if beat == dropped_beat:
            continue
        end = min(len(samples), start + burst)
        samples[start:end] = tone[: end - start]
    return np.clip(samples * 10 ** (gain_db / 20), -1, 1)


def _encode_audio(box, stream, samples) -> None:
    rate = stream.rate
    codec = stream.codec_context.name
    if codec in ("pcm_s16le", "flac"):
        data, fmt = (samples * 32767).astype(np.int16), "s16"
    else:
        data, fmt = samples, "fltp"
    size = stream.codec_context.frame_size or 1024
    for start in range(0, len(data), size):
        chunk = data[start : start + size]
        frame = av.AudioFrame.from_ndarray(chunk.reshape(1, -1), format=fmt, layout="mono")
        frame.sample_rate = rate
        frame.pts = start
        frame.time_base = Fraction(1, rate)
        for packet in stream.encode(frame):
            box.mux(packet)
    for packet in stream.encode():
        box.mux(packet)


def audio_bytes(
    *,
    seconds: float = 4.0,
    rate: int = 16_000,
    container: str = "wav",
    bpm: int = 120,
    dropped_beat: int | None = None,
    gain_db: float = 0.0,
) -> bytes:
    """A synthetic beat's bytes (see the module's docstring)."""
    fmt, codec = AUDIO_CONTAINERS[container]
    out = io.BytesIO()
    with av.open(out, mode="w", format=fmt, options={"fflags": "+bitexact"}) as box:
        stream = box.add_stream(codec, rate=rate)
        stream.layout = "mono"
        _encode_audio(
            box, stream, _beat(seconds, rate, bpm=bpm, dropped_beat=dropped_beat, gain_db=gain_db)
        )
    return out.getvalue()
