"""Video and audio files of an import (issue 35): validated with PyAV before
anything is written, stored content-addressed like images, their poster,
strip of thumbnails, waveform and loudness made later by a task.

Validation reads the container's headers first (format, streams, codecs,
duration, size, frame rate, sample rate, channels) and refuses what the
limits (settings.MEDIA_*) do not allow; only then does it decode, and only
a bounded amount: the first frames and frames near the end (a file cut
short after its header is refused), each with a packet cap, so no file,
however hostile, is decoded without a bound. A file whose name says one
container and whose bytes are another is refused.
"""

from __future__ import annotations

import hashlib
import io
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import PurePosixPath

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from annotate.importing.records import MediaInfo, MediaLimits, ProblemLog
from annotate.importing.sources import ImageSource

# PyAV's format names (a demuxer may have several) → the container we name.
CONTAINER_OF_DEMUXER = {
    "mov": "mp4",
    "mp4": "mp4",
    "m4a": "mp4",
    "3gp": "mp4",
    "matroska": "matroska",
    "webm": "webm",
    "ogg": "ogg",
    "wav": "wav",
    "mp3": "mp3",
    "flac": "flac",
}
# What a file's name may claim, by suffix: the containers its bytes may be.
CONTAINERS_OF_SUFFIX = {
    ".mp4": {"mp4"},
    ".m4v": {"mp4"},
    ".mov": {"mp4"},
    ".m4a": {"mp4"},
    ".webm": {"webm", "matroska"},
    ".mkv": {"matroska", "webm"},
    ".ogg": {"ogg"},
    ".ogv": {"ogg"},
    ".oga": {"ogg"},
    ".opus": {"ogg"},
    ".wav": {"wav"},
    ".mp3": {"mp3"},
    ".flac": {"flac"},
}
MEDIA_SUFFIXES = tuple(CONTAINERS_OF_SUFFIX)
CONTENT_TYPES = {
    ("video", "mp4"): "video/mp4",
    ("video", "webm"): "video/webm",
    ("video", "matroska"): "video/webm",  # browsers play Matroska of VP8/VP9/AV1 as WebM
    ("video", "ogg"): "video/ogg",
    ("audio", "mp4"): "audio/mp4",
    ("audio", "webm"): "audio/webm",
    ("audio", "matroska"): "audio/webm",
    ("audio", "ogg"): "audio/ogg",
    ("audio", "wav"): "audio/wav",
    ("audio", "mp3"): "audio/mpeg",
    ("audio", "flac"): "audio/flac",
}
EXTENSIONS = {"mp4": "mp4", "webm": "webm", "matroska": "mkv", "ogg": "ogg", "wav": "wav",
              "mp3": "mp3", "flac": "flac"}  # fmt: skip
# A bounded decode: at most this many packets for each probe, and this much time in all.
MAX_PROBE_PACKETS = 400
MAX_DECODE_SECONDS = 10.0
MEDIA_THREADS = 2


def media_limits() -> MediaLimits:
    """The limits of settings.MEDIA_LIMITS (a dict of MediaLimits fields)."""
    overrides = dict(getattr(settings, "MEDIA_LIMITS", {}) or {})
    for key in ("containers", "video_codecs", "audio_codecs"):
        if key in overrides:
            overrides[key] = tuple(overrides[key])
    return MediaLimits(**overrides)


def media_storage_name(sha256: str, container: str) -> str:
    return f"media/{sha256[:2]}/{sha256}.{EXTENSIONS.get(container, 'bin')}"


def derivative_name(folder: str, sha256: str) -> str:
    """A derivative's storage name: posters/, strips/ or waves/."""
    return f"{folder}/{sha256[:2]}/{sha256}.webp"


def _container(fmt_name: str) -> str | None:
    for name in fmt_name.split(","):
        if name in CONTAINER_OF_DEMUXER:
            return CONTAINER_OF_DEMUXER[name]
    return None


def _codec(stream) -> str:
    """The stream's codec's canonical name ("mp3", not its decoder "mp3float")."""
    codec = stream.codec_context.codec
    return getattr(codec, "canonical_name", None) or codec.name


def duration_seconds(container, stream) -> float | None:
    if stream is not None and stream.duration is not None and stream.time_base is not None:
        return float(stream.duration * stream.time_base)
    if container.duration is not None:
        return container.duration / 1_000_000
    return None


def inspect_media(data: bytes, ref: str, limits: MediaLimits, kind: str) -> MediaInfo:
    """Validate a video (`kind` "video") or audio file's bytes. Raises
    ValueError with a readable reason."""
    import av  # heavy: loaded where used (issue 32)

    if not data:
        raise ValueError("file is empty")
    if len(data) > limits.max_bytes:
        raise ValueError(f"is {len(data)} bytes, more than the limit of {limits.max_bytes}")
    try:
        box = av.open(
            io.BytesIO(data),
            mode="r",
            options={"probesize": "5000000", "analyzeduration": "5000000"},
            timeout=MAX_DECODE_SECONDS,
        )
    except av.FFmpegError as exc:
        raise ValueError(f"not a video or audio file PyAV can read ({exc.strerror})") from None
    with box:
        return _inspect(box, data, ref, limits, kind)


def _inspect(box, data: bytes, ref: str, limits: MediaLimits, kind: str) -> MediaInfo:
    container = _container(box.format.name)
    if container is None or container not in limits.containers:
        raise ValueError(
            f"container {box.format.name!r} is not allowed "
            f"(allowed: {', '.join(limits.containers)})"
        )
    suffix = PurePosixPath(ref).suffix.lower()
    claimed = CONTAINERS_OF_SUFFIX.get(suffix)
    if claimed is None:
        raise ValueError(
            f"file name ends in {suffix or 'no suffix'!r}, not a video or audio suffix"
        )
    if container not in claimed:
        raise ValueError(f"is a {container} file, not what its name ({suffix}) says")
    streams = list(box.streams)
    if len(streams) > limits.max_streams:
        raise ValueError(f"has {len(streams)} streams, more than the limit of {limits.max_streams}")
    videos = [s for s in streams if s.type == "video"]
    audios = [s for s in streams if s.type == "audio"]
    video = videos[0] if videos else None
    audio = audios[0] if audios else None
    if kind == "video" and video is None:
        raise ValueError("has no video stream (given as a video)")
    if kind == "audio" and (audio is None or video is not None):
        raise ValueError(
            "has a video stream (given as audio)" if video is not None else "has no audio stream"
        )
    width = height = 0
    fps = None
    if video is not None:
        codec = _codec(video)
        if codec not in limits.video_codecs:
            raise ValueError(
                f"video codec {codec!r} is not allowed (allowed: {', '.join(limits.video_codecs)})"
            )
        width, height = video.codec_context.width, video.codec_context.height
        if width <= 0 or height <= 0:
            raise ValueError("video has no picture size")
        if width > limits.max_width or height > limits.max_height:
            raise ValueError(
                f"video is {width}x{height}, more than the limit of "
                f"{limits.max_width}x{limits.max_height}"
            )
        rate = video.average_rate or video.guessed_rate or video.base_rate
        fps = float(rate) if rate else None
        if not fps or fps <= 0:
            raise ValueError("video has no frame rate")
        if fps > limits.max_fps:
            raise ValueError(f"video has {fps:g} frames a second, more than {limits.max_fps:g}")
    sample_rate = channels = 0
    if audio is not None:
        codec = _codec(audio)
        if codec not in limits.audio_codecs and not (kind == "video" and video is not None):
            raise ValueError(
                f"audio codec {codec!r} is not allowed (allowed: {', '.join(limits.audio_codecs)})"
            )
        sample_rate = audio.codec_context.sample_rate or 0
        channels = audio.codec_context.channels or 0
        if sample_rate <= 0 or sample_rate > limits.max_sample_rate:
            raise ValueError(
                f"audio sample rate {sample_rate} is outside 1 to {limits.max_sample_rate}"
            )
        if channels <= 0 or channels > limits.max_channels:
            raise ValueError(f"audio has {channels} channels, outside 1 to {limits.max_channels}")
    main = video if kind == "video" else audio
    seconds = duration_seconds(box, main)
    if seconds is None:
        raise ValueError("its header gives no duration (an endless or live stream is refused)")
    if seconds <= 0:
        raise ValueError("has no duration")
    if seconds > limits.max_duration_s:
        raise ValueError(
            f"lasts {seconds:.1f} s, more than the limit of {limits.max_duration_s:g} s"
        )
    _bounded_decode(box, main, seconds)
    return MediaInfo(
        ref=ref,
        sha256=hashlib.sha256(data).hexdigest(),
        kind=kind,
        container=container,
        content_type=CONTENT_TYPES.get((kind, container), f"{kind}/{container}"),
        video_codec=_codec(video) if video is not None else "",
        audio_codec=_codec(audio) if audio is not None else "",
        duration_ms=max(1, round(seconds * 1000)),
        width=width,
        height=height,
        fps=fps,
        sample_rate=sample_rate,
        channels=channels,
        stream_count=len(streams),
        size_bytes=len(data),
    )


def _first_frame(box, stream, deadline: float) -> bool:
    """Whether a frame of `stream` decodes within MAX_PROBE_PACKETS packets."""
    import av

    for n, packet in enumerate(box.demux(stream)):
        if n >= MAX_PROBE_PACKETS or time.monotonic() > deadline:
            return False
        try:
            if packet.decode():
                return True
        except av.FFmpegError:
            return False
    return False


def _bounded_decode(box, stream, seconds: float) -> None:
    """Decode a frame at the start and one near the end (the file is whole),
    each within MAX_PROBE_PACKETS packets and MAX_DECODE_SECONDS in all."""
    import av

    deadline = time.monotonic() + MAX_DECODE_SECONDS
    try:
        if not _first_frame(box, stream, deadline):
            raise ValueError("data is corrupt or truncated (no frame decodes at its start)")
        if seconds > 1:
            near_end = int((seconds * 0.9) / stream.time_base) if stream.time_base else None
            if near_end is not None:
                box.seek(near_end, stream=stream, any_frame=False, backward=True)
                if not _first_frame(box, stream, deadline):
                    raise ValueError("data is truncated (no frame decodes near its end)")
    except av.FFmpegError as exc:
        raise ValueError(f"data is corrupt or truncated ({exc.strerror})") from None


def check_media(source: ImageSource, limits: MediaLimits, ref_kind: tuple[str, str]):
    """One file: its MediaInfo, or why not."""
    ref, kind = ref_kind
    try:
        return inspect_media(source.read(ref, limits.max_bytes), ref, limits, kind)
    except FileNotFoundError as exc:
        return str(exc) or "not found"
    except (OSError, ValueError) as exc:
        return str(exc)


def check_media_once(
    source: ImageSource,
    limits: MediaLimits,
    refs: dict[tuple[str, str], tuple[int, int, str]],
    log: ProblemLog,
) -> dict[str, MediaInfo]:
    """Each distinct file (`refs`: (normalised path, kind) -> where first used,
    as (line, index, field)) read and checked once, in threads; problems go
    to `log`, naming the line, the field and the file."""
    infos: dict[str, MediaInfo] = {}
    check = partial(check_media, source, limits)
    with ThreadPoolExecutor(MEDIA_THREADS, thread_name_prefix="import-media") as pool:
        for (ref, kind), outcome in zip(refs, pool.map(check, refs), strict=True):
            if isinstance(outcome, MediaInfo):
                if ref in infos and infos[ref].kind != kind:
                    line, index, field = refs[(ref, kind)]
                    log.add(f"{ref!r} is given as {infos[ref].kind} and as {kind}",
                            line=line, index=index, field=field)  # fmt: skip
                infos[ref] = outcome
            else:
                line, index, field = refs[(ref, kind)]
                log.add(f"{kind} {ref!r}: {outcome}", line=line, index=index, field=field)
    return infos


_MEDIA_FIELDS = (
    "sha256", "kind", "file", "container", "content_type", "video_codec", "audio_codec",
    "duration_ms", "width", "height", "fps", "sample_rate", "channels", "stream_count",
    "size_bytes",
)  # fmt: skip


def store_media(
    infos: dict[str, MediaInfo], source: ImageSource, limits: MediaLimits, written: list[str]
) -> tuple[dict[str, int], list[int]]:
    """Store the files not yet stored (content-addressed) and create their
    rows, in the import's transaction; names written go to `written` (removed
    if it rolls back). Returns MediaAsset ids by ref, and the new rows' ids."""
    from annotate.models import MediaAsset

    by_sha: dict[str, MediaInfo] = {}
    for info in infos.values():
        by_sha.setdefault(info.sha256, info)
    known = dict(MediaAsset.objects.filter(sha256__in=list(by_sha)).values_list("sha256", "pk"))
    new = []
    for sha, info in by_sha.items():
        if sha in known:
            continue
        name = media_storage_name(sha, info.container)
        if not default_storage.exists(name):
            data = source.read(info.ref, limits.max_bytes)
            if hashlib.sha256(data).hexdigest() != sha:
                raise ValueError(f"{info.ref!r} changed while importing")
            saved = default_storage.save(name, ContentFile(data))
            written.append(saved)
        fields = {f: getattr(info, f) for f in _MEDIA_FIELDS if f not in ("sha256", "file")}
        new.append(MediaAsset(sha256=sha, file=name, **fields))
    created = MediaAsset.objects.bulk_create(new)
    for asset in created:
        known[asset.sha256] = asset.pk
    return {ref: known[info.sha256] for ref, info in infos.items()}, [a.pk for a in created]


# --- Derivatives: poster, strip, waveform, loudness (a task after the import) -------------

POSTER_LONG_SIDE = 640
STRIP_FRAMES = 8
STRIP_HEIGHT = 90
WAVEFORM_SIZE = (800, 120)
# At most this much audio is decoded for a waveform and its loudness.
MAX_AUDIO_SECONDS = 600


def _save_webp(name: str, image) -> str:
    out = io.BytesIO()
    image.save(out, format="WEBP", quality=80, method=4)
    if default_storage.exists(name):
        return name
    return default_storage.save(name, ContentFile(out.getvalue()))


# Frames wanted further on than this are reached by a seek; nearer ones by
# decoding on (a seek restarts at the previous keyframe, which in a clip of
# one keyframe is its first frame: decoding on is then far cheaper).
SEEK_GAP_SECONDS = 4.0


def frames_at(box, stream, times: list[float], deadline: float):
    """One decoded frame at (or just after) each time (in increasing order),
    decoding forward and seeking only over long gaps; bounded in time."""
    half_frame = 0.5 / float(stream.average_rate or 25)
    wanted = sorted(times)
    position = -1.0
    k = 0
    while k < len(wanted) and time.monotonic() < deadline:
        if wanted[k] - position > SEEK_GAP_SECONDS or position < 0:
            box.seek(int(wanted[k] / stream.time_base), stream=stream, backward=True)
        got = False
        for frame in box.decode(stream):
            if time.monotonic() > deadline:
                return
            position = frame.time if frame.time is not None else position
            while k < len(wanted) and position >= wanted[k] - half_frame:
                yield wanted[k], frame
                k += 1
                got = True
            if k >= len(wanted) or (got and wanted[k] - position > SEEK_GAP_SECONDS):
                break
        else:
            return  # the stream ended before the remaining times


def video_derivatives(data: bytes, sha256: str, duration_s: float) -> tuple[str, str]:
    """(poster name, strip name): the frame at a tenth of the clip (the very
    first is often black) and STRIP_FRAMES frames evenly spread, side by side."""
    import av
    from PIL import Image

    deadline = time.monotonic() + MAX_DECODE_SECONDS * 3
    with av.open(io.BytesIO(data)) as box:
        stream = box.streams.video[0]
        stream.thread_type = "AUTO"
        times = [duration_s * (k + 0.5) / STRIP_FRAMES for k in range(STRIP_FRAMES)]
        poster_at = min(duration_s * 0.1, max(0.0, duration_s - 0.05))
        shots = dict(frames_at(box, stream, [poster_at, *times], deadline))
    if not shots:
        raise ValueError("no frame decodes")
    first = shots.get(poster_at) or next(iter(shots.values()))
    poster = first.to_image()
    poster.thumbnail((POSTER_LONG_SIDE, POSTER_LONG_SIDE))
    cells = [shots[t].to_image() for t in times if t in shots]
    width = max(1, round(STRIP_HEIGHT * poster.width / poster.height))
    strip = Image.new("RGB", (width * len(cells), STRIP_HEIGHT))
    for k, cell in enumerate(cells):
        strip.paste(cell.resize((width, STRIP_HEIGHT)), (k * width, 0))
    return (
        _save_webp(derivative_name("posters", sha256), poster),
        _save_webp(derivative_name("strips", sha256), strip),
    )


def audio_samples(data: bytes, rate: int = 16_000):
    """The first audio stream as mono float32 at `rate` (at most MAX_AUDIO_SECONDS)."""
    import av
    import numpy as np

    chunks, total = [], 0
    with av.open(io.BytesIO(data)) as box:
        stream = box.streams.audio[0]
        resampler = av.AudioResampler(format="flt", layout="mono", rate=rate)
        for frame in box.decode(stream):
            for out in resampler.resample(frame):
                chunk = out.to_ndarray().reshape(-1)
                chunks.append(chunk)
                total += len(chunk)
            if total >= MAX_AUDIO_SECONDS * rate:
                break
        for out in resampler.resample(None):
            chunks.append(out.to_ndarray().reshape(-1))
    return np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.float32)


def loudness_db(samples, rate: int) -> float | None:
    """Integrated loudness in dB after ITU-R BS.1770's gating, with its
    K-weighting left out (a mono RMS over 400 ms blocks with 75 % overlap, the
    absolute gate at -70 and the relative gate 10 dB below the mean): a level
    to compare two takes by, close to LUFS for speech and music."""
    import numpy as np

    block, hop = int(0.4 * rate), int(0.1 * rate)
    if len(samples) < block:
        return None
    starts = range(0, len(samples) - block + 1, hop)
    power = np.array([np.mean(np.square(samples[s : s + block], dtype=np.float64)) for s in starts])
    with np.errstate(divide="ignore"):
        levels = 10 * np.log10(power)
    gated = power[levels > -70]
    if not len(gated):
        return None
    relative = 10 * np.log10(np.mean(gated)) - 10
    with np.errstate(divide="ignore"):
        kept = gated[10 * np.log10(gated) > relative]
    return float(10 * np.log10(np.mean(kept)))


def waveform(samples, sha256: str) -> str:
    """A waveform image (peak per column), stored as WebP."""
    import numpy as np
    from PIL import Image, ImageDraw

    width, height = WAVEFORM_SIZE
    image = Image.new("RGB", (width, height), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    if len(samples):
        columns = np.array_split(np.abs(samples), width)
        middle = height / 2
        for x, column in enumerate(columns):
            peak = float(column.max()) if len(column) else 0.0
            draw.line(
                [(x, middle - peak * middle), (x, middle + peak * middle)], fill=(31, 78, 140)
            )
    return _save_webp(derivative_name("waves", sha256), image)


def derived_fields(asset) -> dict:
    """The asset's poster and strip (video), waveform and loudness (its
    sound), made and stored; what to save on its row. No database access (it
    runs in threads: derive_all)."""
    with default_storage.open(asset.file, "rb") as fh:
        data = fh.read()
    fields = {}
    if asset.kind == "video":
        fields["poster"], fields["strip"] = video_derivatives(
            data, asset.sha256, asset.duration_ms / 1000
        )
    if asset.kind == "audio" or asset.audio_codec:
        samples = audio_samples(data)
        fields["loudness_db"] = loudness_db(samples, 16_000)
        if asset.kind == "audio":
            fields["waveform"] = waveform(samples, asset.sha256)
    return fields


def derive(asset) -> None:
    """Make the asset's derivatives and save them on it (idempotent)."""
    _save_derived(asset, derived_fields(asset))


def _save_derived(asset, fields: dict) -> None:
    from django.utils import timezone

    for name, value in fields.items():
        setattr(asset, name, value)
    asset.derived_at = timezone.now()
    asset.save(update_fields=[*fields, "derived_at"])


DERIVE_THREADS = 2


def derive_all(assets, on_error) -> int:
    """derive() of each asset, decoding in DERIVE_THREADS threads (PyAV and
    Pillow release the GIL while they decode and encode) and saving in this
    one; `on_error(asset, exc)` for a file that fails. Returns how many were made."""
    done = 0
    with ThreadPoolExecutor(DERIVE_THREADS, thread_name_prefix="derive-media") as pool:
        futures = [(asset, pool.submit(derived_fields, asset)) for asset in assets]
        for asset, future in futures:
            try:
                _save_derived(asset, future.result())
                done += 1
            except (OSError, ValueError) as exc:
                on_error(asset, exc)
    return done
