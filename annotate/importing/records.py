"""The import's limits, its problem log, the Record a parsed line becomes and
what a record may hold to be stored (check_storable).

Every problem is collected (up to a cap) as an :class:`ImportProblem` naming
the file, the line (and record index) and the field. The same problem on
many records (same file, field and message) is one ImportProblem with a
count and the first few record numbers, not one line per record.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

# The formats of the JSON/JSONL parser (parse.py); every format an import
# reads is listed by annotate.importing.formats.names().
FORMATS = ("mrb", "pairs")
MRB_KEYS = ("ID", "Text", "Image", "Output1", "Output2", "Better", "Category")
PAIRS_FIELDS = (
    "id",
    "prompt",
    "chosen",
    "rejected",
    "image",
    "category",
    "chosen_reason",
    "rejected_reason",
    "chosen_model",
    "rejected_model",
    "reference_answer",
    # An unlabelled pair: two responses in file order, no preference.
    "response_1",
    "response_2",
    "model_1",
    "model_2",
)
MAX_ID_LENGTH = 200
# The largest dataset file read out of a zip, judged by the size its header
# declares (zipfile never reads past it): a small upload must not expand into
# gigabytes in memory (a zip bomb). Images have their own IMAGE_MAX_BYTES.
DATASET_MAX_BYTES = 512 * 1024 * 1024
# The widths of Item.model_1/model_2 and Item.image_path (this module stays
# free of Django; a test keeps them equal to the columns).
MAX_MODEL_LENGTH = 200
MAX_IMAGE_PATH_LENGTH = 500
# A folder or file name in an image path (NAME_MAX of common file systems).
MAX_PATH_SEGMENT_BYTES = 255
# How deep a record's values may nest (real records are two or three levels);
# deeper ones could hit Python's recursion limit when they are serialised again.
MAX_NESTING = 32
# The most records one file may hold (the largest projects have about
# 100,000 items) and the largest record, in bytes of the file: records are
# decoded one at a time, so these bound an import's memory and time.
MAX_RECORDS = 200_000
MAX_RECORD_BYTES = 4 * 1024 * 1024
EXIF_ORIENTATION = 0x0112
DATASET_SUFFIXES = (".json", ".jsonl")
# How many record numbers a repeated problem names besides its first.
SHOWN_REPEATS = 5
# Images are read, decoded and hashed in this many threads: Pillow's decoders,
# hashlib and file reads release the GIL. Capped because each thread may hold
# one decoded image (up to IMAGE_MAX_PIXELS) at a time.
IMAGE_THREADS = min(4, os.cpu_count() or 1)
# Images per task given to a thread: enough that a task's own cost (a future,
# a lock, a wake-up) is noise; few enough that an early stop wastes little.
IMAGE_BATCH = 32


@dataclass(frozen=True)
class ImportProblem:
    file: str
    message: str
    line: int | None = None
    index: int | None = None
    field: str | None = None
    # How many records (or lines) have this same problem, and the record
    # numbers (lines if it has no record number) of the next few after the first.
    count: int = 1
    more: tuple[int, ...] = ()
    # The first record's own value (an image path, an ID): kept out of the
    # message so that the same problem on many records is grouped as one.
    detail: str = ""
    # What the message calls a record, a line and a field (parquet: row, row, column).
    NOUNS = ("record", "line", "field")

    def __str__(self) -> str:
        record, line, field = self.NOUNS
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
        parts = [where]
        if self.index is not None:
            parts.append(f"{record} {self.index}")
        if self.field:
            parts.append(f"{field} '{self.field}'")
        if self.detail:
            parts.append(self.detail)
        text = ": ".join(parts) + f": {self.message}"
        if self.count > 1:
            unit = record if self.index is not None else line
            unit += "s" if self.count > 2 else ""
            shown = ", ".join(str(n) for n in self.more)
            if self.count - 1 > len(self.more):
                shown += ", …"
            text += f" (and {self.count - 1} more {unit}: {shown})"
        return text

    @property
    def records(self) -> list[int]:
        """The record numbers named (the first and the next few), if it has any."""
        return [self.index, *self.more] if self.index is not None else []


class ImportFailed(Exception):
    """The file is invalid; nothing was written."""

    def __init__(self, problems: list[ImportProblem], *, truncated: bool = False):
        self.problems = problems
        self.truncated = truncated
        lines = [str(p) for p in problems]
        if truncated:
            lines.append(f"(stopped after {len(problems)} errors)")
        super().__init__("\n".join(lines))


class ProblemLog:
    """Collects problems up to a cap of distinct ones; `full` tells callers to
    stop early. A problem already logged (same file, field and message) only
    counts one more record: it never fills the cap, so its count is exact.
    `wording` names the options of the surface in use (annotate.importing.options)."""

    def __init__(self, file: str, cap: int, wording=None):
        self.file = file
        self.cap = cap
        self.wording = wording
        self.problems: list[ImportProblem] = []
        self.truncated = False
        self._seen: dict[tuple, int] = {}
        self.added = 0  # every problem added, repeats and those past the cap included

    def add(self, message: str, *, line=None, index=None, field=None, file=None, detail="") -> None:
        """`detail`: this record's own value, shown for the first record only
        (a message that embedded it would make every record a new problem)."""
        self.added += 1
        key = (file or self.file, field, message)
        position = self._seen.get(key)
        if position is not None:
            first = self.problems[position]
            more = first.more
            number = index if first.index is not None else line
            if number is not None and len(more) < SHOWN_REPEATS:
                more = (*more, number)
            # Built directly, not with dataclasses.replace (several times
            # slower): a file of one repeated problem comes here per record.
            self.problems[position] = type(first)(
                first.file,
                first.message,
                first.line,
                first.index,
                first.field,
                first.count + 1,
                more,
                first.detail,
            )
            return
        if len(self.problems) >= self.cap:
            self.truncated = True
            return
        self._seen[key] = len(self.problems)
        self.problems.append(
            ImportProblem(
                file or self.file, message, line=line, index=index, field=field, detail=detail
            )
        )

    def add_problem(self, problem: ImportProblem) -> None:
        """A problem made whole by the caller (a summary over many records)."""
        self.added += 1
        if len(self.problems) >= self.cap:
            self.truncated = True
            return
        self.problems.append(problem)

    def kinds(self) -> set[tuple]:
        """The (field, message) of every problem logged so far."""
        return {(p.field, p.message) for p in self.problems}

    @property
    def full(self) -> bool:
        return len(self.problems) >= self.cap

    def raise_if_any(self) -> None:
        if self.problems:
            raise ImportFailed(self.problems, truncated=self.truncated)


@dataclass(frozen=True)
class ImageLimits:
    max_pixels: int = 40_000_000
    max_bytes: int = 50 * 1024 * 1024
    allowed_formats: tuple[str, ...] = ("PNG", "JPEG", "WEBP", "GIF")


@dataclass(frozen=True)
class MediaLimits:
    """What a video or audio file may be (issue 35; settings.MEDIA_LIMITS
    overrides). Checked from the container's headers before any decoding, and
    every decode is bounded by them (no endless stream is read to its end)."""

    max_bytes: int = 500 * 1024 * 1024
    max_duration_s: float = 600.0
    max_width: int = 3840
    max_height: int = 2160
    max_fps: float = 120.0
    max_streams: int = 4
    max_sample_rate: int = 192_000
    max_channels: int = 8
    containers: tuple[str, ...] = ("mp4", "mov", "webm", "matroska", "ogg", "wav", "mp3", "flac")
    video_codecs: tuple[str, ...] = ("h264", "hevc", "vp8", "vp9", "av1", "mpeg4")
    audio_codecs: tuple[str, ...] = (
        "aac",
        "mp3",
        "opus",
        "vorbis",
        "flac",
        "pcm_s16le",
        "pcm_s24le",
        "pcm_f32le",
    )


@dataclass
class MediaInfo:
    """A validated video or audio file: what will be stored (a MediaAsset's
    fields), without holding its bytes."""

    ref: str
    sha256: str
    kind: str  # "video" or "audio"
    container: str
    content_type: str
    video_codec: str
    audio_codec: str
    duration_ms: int
    width: int
    height: int
    fps: float | None
    sample_rate: int
    channels: int
    stream_count: int
    size_bytes: int


@dataclass
class ImageInfo:
    """A validated image: what will be stored, without holding its bytes."""

    ref: str
    sha256: str
    format: str
    width: int
    height: int
    size_bytes: int
    transpose: bool  # EXIF orientation must be applied before storing


@dataclass
class Record:
    """One item to import, in canonical form."""

    line: int
    index: int
    external_id: str
    category: str  # export Category string or domain slug; resolved by the service
    prompt: str
    image_ref: str
    response_1: str
    response_2: str
    model_1: str = ""
    model_2: str = ""
    gold_choice: str = ""
    reference_answer: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    group: str = ""  # Item.group_key (pairs files' optional `group`); also in meta
    criterion: str = ""  # Item.criterion (pairs files' optional `criterion`); also in meta
    # Issue 36: Item.purpose, Item.explanation, Item.is_attention (the file's
    # optional fields of those names; also kept in meta, verbatim).
    purpose: str = "benchmark"
    explanation: str = ""
    is_attention: bool = False


# Item.purpose's values (annotate.models.ItemPurpose; this module stays free of Django).
PURPOSES = ("benchmark", "qualification", "check")


def read_purpose(value: dict) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """A record's optional `purpose`, `explanation` and `is_attention` (issue
    36: qualification and check items), checked: the fields and the
    (field, message) problems."""
    problems: list[tuple[str, str]] = []
    purpose = value.get("purpose") or "benchmark"
    if purpose not in PURPOSES:
        problems.append(("purpose", f"must be one of {', '.join(PURPOSES)}"))
    explanation = value.get("explanation") or ""
    if not isinstance(explanation, str):
        problems.append(("explanation", "must be a string (Markdown)"))
    attention = value.get("is_attention", False)
    if not isinstance(attention, bool):
        problems.append(("is_attention", "must be true or false"))
    fields = {"purpose": purpose, "explanation": explanation, "is_attention": attention is True}
    return fields, problems


def brief(value: str, limit: int = 80, *, quote: bool = True) -> str:
    """A value from the file as a message shows it: unprintable characters
    escaped (it may hold any) and cut short (a message may repeat per record)."""
    cut = value[:limit]
    shown = repr(cut) if quote else (cut if cut.isprintable() else repr(cut)[1:-1])
    if len(value) > limit:
        shown += f"... ({len(value)} characters)"
    return shown


def unstorable(value: Any, depth: int = 0) -> str | None:
    """Why a decoded JSON value cannot be stored as it is, or None. JSON
    escapes can spell what the database refuses: PostgreSQL text and jsonb hold
    no NUL character, UTF-8 has no unpaired surrogates, and jsonb has no NaN or
    Infinity (which Python's decoder accepts, as it does 1e999)."""
    if isinstance(value, str):
        if "\x00" in value:
            return "contains a NUL character (\\u0000)"
        if not value.isascii():
            try:
                value.encode()
            except UnicodeEncodeError:
                return (
                    "contains an unpaired surrogate (\\ud800-\\udfff), which is not valid Unicode"
                )
        return None
    if isinstance(value, float):
        return (
            None if math.isfinite(value) else "contains NaN or Infinity, which JSON does not allow"
        )
    if isinstance(value, list | dict):
        if depth >= MAX_NESTING:
            return f"is nested more than {MAX_NESTING} levels deep"
        children = chain.from_iterable(value.items()) if isinstance(value, dict) else value
        for child in children:
            problem = unstorable(child, depth + 1)
            if problem:
                return problem
    return None


def check_storable(rec: dict, log: ProblemLog, line: int, index: int) -> bool:
    """Report every top-level field whose key or value cannot be stored."""
    ok = True
    for key, value in rec.items():
        key_problem = unstorable(key)
        problem = f"name {key_problem}" if key_problem else unstorable(value)
        if problem:
            log.add(problem, line=line, index=index, field=brief(key, quote=False))
            ok = False
    return ok
