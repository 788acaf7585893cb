"""Reading and validating dataset files before anything is written.

Two input formats:

* ``mrb``: Multimodal RewardBench, one JSON array of
  ``{ID, Text, Image, Output1, Output2, Better, Category}``.
* ``pairs``: chosen/rejected JSONL (VL-RewardBench, MM-RLHF-RewardBench,
  TRL/DPO sets): ``id, prompt, chosen, rejected, image`` plus optional
  ``chosen_reason, rejected_reason, chosen_model, rejected_model``.

Every problem is collected (up to a cap) as an :class:`ImportProblem` naming
the file, the line (and record index) and the field. Nothing here touches the
database; :func:`annotate.services.import_items` writes only a fully valid
file.
"""

from __future__ import annotations

import codecs
import hashlib
import io
import json
import lzma
import math
import mmap
import os
import posixpath
import re
import shutil
import tempfile
import threading
import warnings
import zipfile
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from functools import partial
from itertools import chain, islice
from pathlib import Path
from typing import Any

from PIL import Image, ImageOps, UnidentifiedImageError

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

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
        parts = [where]
        if self.index is not None:
            parts.append(f"record {self.index}")
        if self.field:
            parts.append(f"field '{self.field}'")
        return ": ".join(parts) + f": {self.message}"


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
    """Collects problems up to a cap; `full` tells callers to stop early."""

    def __init__(self, file: str, cap: int):
        self.file = file
        self.cap = cap
        self.problems: list[ImportProblem] = []
        self.truncated = False

    def add(self, message: str, *, line=None, index=None, field=None, file=None) -> None:
        if len(self.problems) >= self.cap:
            self.truncated = True
            return
        self.problems.append(
            ImportProblem(file or self.file, message, line=line, index=index, field=field)
        )

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


def brief(value: str, limit: int = 80, *, quote: bool = True) -> str:
    """A value from the file as a message shows it: unprintable characters
    escaped (it may hold any) and cut short (a message may repeat per record)."""
    cut = value[:limit]
    shown = repr(cut) if quote else (cut if cut.isprintable() else repr(cut)[1:-1])
    if len(value) > limit:
        shown += f"... ({len(value)} characters)"
    return shown


# --- Image sources -----------------------------------------------------------------


def safe_relative_path(ref: str) -> str | None:
    """Normalise a relative POSIX path; None if it is absolute or escapes its root."""
    if not ref or "\x00" in ref:
        return None
    ref = ref.replace("\\", "/")
    if ref.startswith("/") or (len(ref) > 1 and ref[1] == ":"):
        return None
    normal = posixpath.normpath(ref)
    if normal.startswith("../") or normal == ".." or normal == ".":
        return None
    if any(part == ".." for part in ref.split("/")):
        return None
    return normal


class ImageSource:
    label = ""

    def read(self, ref: str, max_bytes: int) -> bytes:
        raise NotImplementedError

    def close(self) -> None:
        pass


class NoImageSource(ImageSource):
    label = "(no image source)"

    def read(self, ref: str, max_bytes: int) -> bytes:
        raise FileNotFoundError("no image folder or archive was given")


class DirectoryImageSource(ImageSource):
    def __init__(self, root: Path):
        self.root = root.resolve()
        self.label = str(root)
        self._real_folders: dict[str, str] = {}

    def real_path(self, ref: str) -> Path:
        """`(root / ref).resolve()`, with each folder resolved once per import
        rather than once per image (a resolve is a stat per path component)."""
        folder, _, name = ref.rpartition("/")
        real_folder = self._real_folders.get(folder)
        if real_folder is None:
            real_folder = os.path.realpath(os.path.join(self.root, folder))
            self._real_folders[folder] = real_folder
        path = os.path.join(real_folder, name)
        if name in ("", ".", "..") or os.path.islink(path):
            # A symlinked file may point anywhere: resolve it in full.
            return (self.root / ref).resolve()
        return Path(path)

    def read(self, ref: str, max_bytes: int) -> bytes:
        path = self.real_path(ref)
        if not path.is_relative_to(self.root):
            raise PermissionError("path leaves the image folder")
        if not path.is_file():
            raise FileNotFoundError(f"'{ref}' not found under {self.label}")
        size = path.stat().st_size
        if size > max_bytes:
            raise ValueError(f"image is {size} bytes, more than the limit of {max_bytes}")
        return path.read_bytes()


# What zipfile raises on damaged or unusual archives besides BadZipFile: EOFError
# and OSError (cut short, bad offsets, bz2 data errors), zlib and lzma errors
# (corrupt compressed data), NotImplementedError (unknown compression method),
# RuntimeError (encrypted member), ValueError (a name flagged UTF-8 that is not).
ZIP_ERRORS = (
    zipfile.BadZipFile,
    EOFError,
    OSError,
    zlib.error,
    lzma.LZMAError,
    NotImplementedError,
    RuntimeError,
    ValueError,
)


class ZipImageSource(ImageSource):
    """Images inside a zip. Any member with an absolute path or `..` makes the
    whole archive invalid (checked on open, before anything is read)."""

    def __init__(self, path: Path, *, label: str | None = None, prefix: str = ""):
        self.label = label or path.name
        self.prefix = prefix
        try:
            self.zip = zipfile.ZipFile(path)
        except ZIP_ERRORS as exc:
            raise ImportFailed(
                [ImportProblem(self.label, f"not a readable zip archive ({exc})")]
            ) from None
        bad = [info.filename for info in self.zip.infolist() if not _zip_member_is_safe(info)]
        if bad:
            self.zip.close()
            raise ImportFailed(
                [
                    ImportProblem(
                        self.label,
                        f"archive member {brief(name)} has an absolute path or '..'; "
                        "the archive is refused",
                    )
                    for name in bad[:20]
                ],
                truncated=len(bad) > 20,
            )
        files = [info for info in self.zip.infolist() if not info.is_dir()]
        self.members = {posixpath.normpath(info.filename): info for info in files}
        if len(self.members) < len(files):
            # Two members under one name (or one normalised name, `a//b` and
            # `a/b`): which one is "the" file differs between tools, so what
            # was reviewed may not be what gets imported.
            counts = Counter(posixpath.normpath(info.filename) for info in files)
            self.zip.close()
            raise ImportFailed(
                [
                    ImportProblem(
                        self.label,
                        f"archive has {n} members named {brief(name)}; the archive is refused",
                    )
                    for name, n in sorted(counts.items())
                    if n > 1
                ][:20]
            )
        # ZipFile shares one file handle between open members and counts its
        # users without a lock, so image threads take turns to read (their
        # decoding and hashing still run in parallel).
        self._lock = threading.Lock()

    def read(self, ref: str, max_bytes: int) -> bytes:
        info = self.members.get(posixpath.join(self.prefix, ref) if self.prefix else ref)
        if info is None:
            raise FileNotFoundError(f"'{ref}' not found in {self.label}")
        if info.file_size > max_bytes:
            raise ValueError(f"image is {info.file_size} bytes, more than the limit of {max_bytes}")
        try:
            with self._lock, self.zip.open(info) as fh:
                data = fh.read(max_bytes + 1)
        except ZIP_ERRORS as exc:
            raise ValueError(f"cannot be read from {self.label} ({_zip_failure(exc)})") from None
        if len(data) > max_bytes:
            raise ValueError(f"image is larger than the limit of {max_bytes} bytes")
        return data

    @contextmanager
    def open_dataset(self, name: str) -> Iterator[DatasetFile | bytes]:
        """The dataset member `name` (a key of `members`), decompressed a
        megabyte at a time into an anonymous temporary file and mapped like
        a dataset on disk (:func:`open_dataset_file`): it is never whole in
        memory."""
        info = self.members[name]
        label = f"{self.label}:{name}"
        if info.file_size > DATASET_MAX_BYTES:
            raise ImportFailed(
                [
                    ImportProblem(
                        label,
                        f"is {info.file_size} bytes uncompressed, more than the limit of "
                        f"{DATASET_MAX_BYTES} for a dataset file",
                    )
                ]
            )
        with ExitStack() as stack:
            copy = stack.enter_context(tempfile.TemporaryFile(prefix="import-dataset-"))
            try:
                with self.zip.open(info) as member:
                    # zipfile stops at the declared size and checks the CRC at the end.
                    shutil.copyfileobj(member, copy, _UTF8_CHUNK)
            except ZIP_ERRORS as exc:
                raise ImportFailed(
                    [ImportProblem(label, f"cannot be read from the archive ({_zip_failure(exc)})")]
                ) from None
            copy.flush()
            if copy.tell() == 0:
                yield b""
                return
            mapped = DatasetFile(copy.fileno(), 0, access=mmap.ACCESS_READ)
            stack.callback(mapped.close)
            yield mapped

    def close(self) -> None:
        self.zip.close()


def _zip_failure(exc: BaseException) -> str:
    if isinstance(exc, RuntimeError) and "encrypted" in str(exc):
        return "the member is encrypted"  # zipfile's message holds a ZipInfo repr
    return str(exc)


def _zip_member_is_safe(info: zipfile.ZipInfo) -> bool:
    name = info.filename
    if name.endswith("/"):
        name = name.rstrip("/")
        if not name:
            return False
    return safe_relative_path(name) is not None


def find_dataset_in_zip(source: ZipImageSource) -> tuple[str, str]:
    """The one .json/.jsonl file in an archive, and the folder it sits in
    (image paths resolve against that folder)."""
    candidates = sorted(
        name
        for name in source.members
        if name.lower().endswith(DATASET_SUFFIXES)
        and not posixpath.basename(name).startswith(".")
        and "__MACOSX" not in name
    )
    if len(candidates) != 1:
        found = ", ".join(brief(name, quote=False) for name in candidates[:10]) or "none"
        raise ImportFailed(
            [
                ImportProblem(
                    source.label,
                    "expected exactly one .json or .jsonl dataset file in the archive, "
                    f"found {found}",
                )
            ]
        )
    return candidates[0], posixpath.dirname(candidates[0])


# --- Image validation ----------------------------------------------------------------


@contextmanager
def pillow_limits(limits: ImageLimits) -> Iterator[None]:
    """Pillow's pixel limit and bomb-warning filter for the duration. Both are
    process-wide state, so threads must not set them per image: enter this
    once around the work (see validate_images)."""
    previous_limit = Image.MAX_IMAGE_PIXELS
    try:
        # Pillow refuses outright above 2x this (a bomb); between 1x and 2x it
        # only warns, and the size check in _inspect_image gives the clearer message.
        Image.MAX_IMAGE_PIXELS = limits.max_pixels
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            yield
    finally:
        Image.MAX_IMAGE_PIXELS = previous_limit


def inspect_image(data: bytes, ref: str, limits: ImageLimits) -> ImageInfo:
    """Validate image bytes with Pillow. Raises ValueError with a readable reason."""
    with pillow_limits(limits):
        return _inspect_image(data, ref, limits)


def _inspect_image(data: bytes, ref: str, limits: ImageLimits) -> ImageInfo:
    """inspect_image, for callers already inside pillow_limits()."""
    if not data:
        raise ValueError("file is empty")
    try:
        img = Image.open(io.BytesIO(data))
    except UnidentifiedImageError:
        raise ValueError("not an image Pillow can read") from None
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise ValueError(
            f"refused as a decompression bomb (more than {limits.max_pixels} pixels)"
        ) from None
    except (OSError, ValueError, EOFError) as exc:
        # A known signature with a broken header: Pillow's own words ("Truncated
        # File Read", "could not create decoder object") need the context.
        raise ValueError(f"image data is corrupt or truncated ({exc})") from None
    fmt = img.format or ""
    if fmt not in limits.allowed_formats:
        raise ValueError(
            f"format {fmt or 'unknown'} is not allowed "
            f"(allowed: {', '.join(limits.allowed_formats)})"
        )
    width, height = img.size
    if width <= 0 or height <= 0:
        raise ValueError("image has no pixels")
    if width * height > limits.max_pixels:
        raise ValueError(
            f"{width}x{height} is {width * height} pixels, "
            f"more than the limit of {limits.max_pixels}"
        )
    try:
        if fmt == "PNG":
            img.verify()  # walks every chunk and checks its CRC
            # Intact chunks can still hold too little pixel data: decode it all
            # (zlib releases the GIL, so the import's threads overlap this).
            decoded = Image.open(io.BytesIO(data))
            decoded.load()
            orientation = 1
            if b"eXIf" in data:  # rare
                orientation = decoded.getexif().get(EXIF_ORIENTATION, 1)
        else:
            if fmt == "JPEG":
                img.draft("RGB", (max(1, width // 8), max(1, height // 8)))
            img.load()  # full decode catches truncated data
            orientation = img.getexif().get(EXIF_ORIENTATION, 1)
    except Exception as exc:
        raise ValueError(f"image data is corrupt or truncated ({exc})") from None
    transpose = orientation not in (None, 1)
    if transpose:
        data = oriented_image_bytes(data)
        width, height = (height, width) if orientation in (5, 6, 7, 8) else (width, height)
    return ImageInfo(
        ref=ref,
        sha256=hashlib.sha256(data).hexdigest(),
        format=fmt,
        width=width,
        height=height,
        size_bytes=len(data),
        transpose=transpose,
    )


def oriented_image_bytes(data: bytes) -> bytes:
    """Re-encode an image with its EXIF orientation applied (deterministic)."""
    with Image.open(io.BytesIO(data)) as img:
        fmt = img.format or "PNG"
        rotated = ImageOps.exif_transpose(img)
        out = io.BytesIO()
        if fmt == "JPEG":
            rotated.save(out, format="JPEG", quality=95)
        else:
            rotated.save(out, format=fmt)
    return out.getvalue()


def stored_image_bytes(source: ImageSource, info: ImageInfo, limits: ImageLimits) -> bytes:
    data = source.read(info.ref, limits.max_bytes)
    return oriented_image_bytes(data) if info.transpose else data


# --- Dataset parsing ----------------------------------------------------------------


# Pages of a mapped dataset file the reader has passed are given back in steps
# of this many bytes (MADV_DONTNEED: the kernel keeps them in its page cache,
# the process no longer counts them), so an import's resident memory grows
# with the largest record, not with the file.
_RELEASE_STEP = 16 * 1024 * 1024


class DatasetFile(mmap.mmap):
    """A dataset file mapped read-only: the parser reads it like bytes
    (slices, regular expressions, find) while the file stays on disk.

    The readers call :meth:`release` as they move on, and the whole-range
    scans (`count`, `rfind`) give back what they read, so the resident part
    of the file stays within a few `_RELEASE_STEP`s whatever its size.
    Re-reading a given-back page is correct (it is read again from the page
    cache or the disk), only slower."""

    _mark = 0

    def startswith(self, prefix: bytes) -> bool:
        return self[: len(prefix)] == prefix

    def release(self, pos: int) -> None:
        """The reader is at `pos` and will not look before it again (a new
        pass starts again from 0)."""
        if pos < self._mark:
            self._mark = 0
        if pos - self._mark >= _RELEASE_STEP:
            self._drop(self._mark, pos)
            self._mark = pos - pos % mmap.PAGESIZE

    def _drop(self, start: int, end: int) -> None:
        start -= start % mmap.PAGESIZE
        end -= end % mmap.PAGESIZE
        if end > start:
            self.madvise(mmap.MADV_DONTNEED, start, end - start)

    def count(self, sub: bytes, start: int = 0, end: int | None = None) -> int:
        end = len(self) if end is None else min(end, len(self))
        if len(sub) != 1:
            raise ValueError("DatasetFile.count counts single bytes")
        total = 0
        for offset in range(start, end, _RELEASE_STEP):
            stop = min(end, offset + _RELEASE_STEP)
            total += self[offset:stop].count(sub)
            if end - start > _RELEASE_STEP:
                self._drop(offset, stop)
        return total

    def rfind(self, sub: bytes, start: int = 0, end: int | None = None) -> int:
        end = len(self) if end is None else min(end, len(self))
        if len(sub) != 1:
            raise ValueError("DatasetFile.rfind finds single bytes")
        while end > start:
            offset = max(start, end - _RELEASE_STEP)
            found = self[offset:end].rfind(sub)
            if found != -1:
                return offset + found
            self._drop(offset, end)
            end = offset
        return -1


@contextmanager
def open_dataset_file(path: Path) -> Iterator[DatasetFile | bytes]:
    """The dataset file at `path`, mapped (an empty file is just b"")."""
    with path.open("rb") as fh:
        if os.fstat(fh.fileno()).st_size == 0:
            yield b""
            return
        mapped = DatasetFile(fh.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            yield mapped
        finally:
            mapped.close()


def _release(data: bytes | DatasetFile, pos: int) -> None:
    if isinstance(data, DatasetFile):
        data.release(pos)


# Whitespace between JSON tokens, as bytes; U+FEFF (a stray byte-order mark)
# counts as whitespace, as it always has here. Possessive: a plain `(?:a|b)*`
# keeps a backtracking mark per character, about 120 bytes for each byte of
# whitespace (8 MB of blanks between two records cost 960 MB).
_WS = re.compile(rb"(?:[ \t\r\n]++|\xef\xbb\xbf)*+")
_BOM = b"\xef\xbb\xbf"
# The rest of a JSON string after its opening quote, up to its closing one
# (possessive: linear, never backtracks).
_STRING_REST = re.compile(rb'(?:[^"\\]++|\\.)*+"', re.S)
_STRUCTURE = re.compile(rb'["\[\]{}]')
_SCALAR = re.compile(rb"[^,\]\s]*")
_UTF8_CHUNK = 1 << 20
# The first window a record is decoded from (grown 4x until the record fits):
# about the size of a typical record, so small records cost one small decode.
_FIRST_WINDOW = 8 * 1024


def _scan_value(data: bytes | DatasetFile, pos: int, limit: int) -> int | None:
    """The end of the JSON value starting at `pos`, found without decoding
    it: brackets counted outside strings. None when it does not end within
    `limit` bytes (or before the end of the data: a truncated file)."""
    stop = min(len(data), pos + limit)
    first = data[pos : pos + 1]
    if first == b'"':
        m = _STRING_REST.match(data, pos + 1, stop)
        return m.end() if m else None
    if first not in (b"[", b"{"):
        return _SCALAR.match(data, pos, stop).end()
    depth = 0
    while True:
        m = _STRUCTURE.search(data, pos, stop)
        if m is None:
            return None
        char = data[m.start()]
        if char == 0x22:  # '"'
            m = _STRING_REST.match(data, m.end(), stop)
            if m is None:
                return None
            pos = m.end()
            continue
        pos = m.end()
        if char in (0x5B, 0x7B):  # '[', '{'
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return pos


def _decode_value(
    data: bytes | DatasetFile, pos: int, limit: int, decoder: json.JSONDecoder
) -> tuple[Any, int] | None:
    """(value, end) of the JSON value starting at `pos`, decoded by the C
    decoder from a window of the data that grows until the value fits; None
    when it does not end within `limit` bytes. A syntax error is raised as
    decoding exactly the value's bytes raises it (positions relative to
    `pos`), the whole-file decoder's error at the same place."""
    n = len(data)
    if data[pos : pos + 1] in (b"[", b"{", b'"'):
        window = _FIRST_WINDOW
        while True:
            stop = min(n, pos + min(window, limit + 1))
            while stop < n and data[stop] & 0xC0 == 0x80:  # a character boundary
                stop -= 1
            chunk = data[pos:stop].decode("utf-8")
            try:
                value, used = decoder.raw_decode(chunk, 0)
            except (ValueError, RecursionError):
                if stop >= n or window > limit:
                    break  # a real error, or too large: the exact slice tells
                window *= 4
                continue
            # A container or string that decoded is complete, window or not.
            return value, pos + len(chunk[:used].encode()) if used < len(chunk) else stop
    end = _scan_value(data, pos, limit + 1)
    if end is None and pos + limit < n:
        return None
    stop = n if end is None else end
    chunk = data[pos:stop].decode("utf-8")
    value, used = decoder.raw_decode(chunk, 0)  # raises the value's own error
    # Where the decoder stopped ("1x" is the number 1, then an "x"), in bytes.
    return value, stop if used == len(chunk) else pos + len(chunk[:used].encode())


def _skip_ws(data: bytes | DatasetFile, pos: int) -> int:
    return _WS.match(data, pos).end()


def _line_of(data: bytes | DatasetFile, pos: int) -> int:
    return data.count(b"\n", 0, pos) + 1


def _char_at(data: bytes | DatasetFile, pos: int) -> str:
    return data[pos : pos + 4].decode("utf-8", "ignore")[:1]


def iter_json_array(
    data: bytes | DatasetFile, log: ProblemLog, *, max_record_bytes: int
) -> Iterator[tuple[int, int, Any]]:
    """Yield (line, index, value) for each element of a top-level JSON array,
    with the line where each element starts, decoding one element at a time
    (memory grows with the largest record, not the file). Syntax errors are
    reported with their line and column; parsing stops at the first one."""
    decoder = json.JSONDecoder()
    n = len(data)
    body_start = len(_BOM) if data.startswith(_BOM) else 0  # decode_text's utf-8-sig
    pos = _skip_ws(data, 0)
    if pos >= n:
        log.add("file is empty", line=1)
        return
    if data[pos] != 0x5B:  # '['
        log.add("expected a JSON array of records at the top level", line=_line_of(data, pos))
        return
    pos = _skip_ws(data, pos + 1)
    index = 0
    line = 1
    line_pos = 0
    if pos < n and data[pos] == 0x5D:  # ']'
        return
    while True:
        if pos >= n:
            log.add(
                "invalid JSON: the array is not closed (file truncated?)", line=_line_of(data, n)
            )
            return
        line += data.count(b"\n", line_pos, pos)
        line_pos = pos
        try:
            decoded = _decode_value(data, pos, max_record_bytes, decoder)
        except json.JSONDecodeError as exc:
            column = exc.colno
            if exc.lineno == 1:  # columns count characters from the line's start
                line_start = max(data.rfind(b"\n", 0, pos) + 1, body_start)
                column += len(data[line_start:pos].decode("utf-8"))
            log.add(
                f"invalid JSON: {exc.msg} (column {column})",
                line=line + exc.lineno - 1,
                index=index,
            )
            return
        except (ValueError, RecursionError) as exc:
            log.add(f"invalid JSON: {_undecodable(exc)}", line=line, index=index)
            return
        if decoded is None:
            log.add(
                f"record is larger than the limit of {max_record_bytes} bytes",
                line=line,
                index=index,
            )
            return
        value, end = decoded
        yield line, index, value
        del value
        index += 1
        _release(data, end)
        pos = _skip_ws(data, end)
        if pos >= n:
            log.add(
                "invalid JSON: the array is not closed (file truncated?)", line=_line_of(data, n)
            )
            return
        if data[pos] == 0x2C:  # ','
            pos = _skip_ws(data, pos + 1)
            continue
        if data[pos] == 0x5D:  # ']'
            rest = _skip_ws(data, pos + 1)
            if rest < n:
                log.add("invalid JSON: extra data after the array", line=_line_of(data, rest))
            return
        log.add(
            f"invalid JSON: expected ',' or ']' after record, found {_char_at(data, pos)!r}",
            line=_line_of(data, pos),
        )
        return


def iter_jsonl(
    data: bytes | DatasetFile, log: ProblemLog, *, max_record_bytes: int
) -> Iterator[tuple[int, int, Any]]:
    """Yield (line, index, value) for each non-blank line, decoding one line
    at a time."""
    index = 0
    pos = len(_BOM) if data.startswith(_BOM) else 0
    n = len(data)
    line_no = 0
    # Split at "\n" only, not splitlines(): JSON strings may hold a raw U+2028 or U+0085.
    while pos <= n:
        line_no += 1
        end = data.find(b"\n", pos)
        end = n if end == -1 else end
        start, pos = pos, end + 1
        _release(data, start)
        if end - start > max_record_bytes:
            log.add(
                f"record is larger than the limit of {max_record_bytes} bytes",
                line=line_no,
                index=index,
            )
            if log.full:
                return
            index += 1
            continue
        raw = data[start:end].decode("utf-8")
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            log.add(f"invalid JSON: {exc.msg} (column {exc.colno})", line=line_no, index=index)
            if log.full:
                return
        except (ValueError, RecursionError) as exc:
            log.add(f"invalid JSON: {_undecodable(exc)}", line=line_no, index=index)
            if log.full:
                return
        else:
            del raw
            yield line_no, index, value
        index += 1


def _undecodable(exc: ValueError | RecursionError) -> str:
    """Why valid-looking JSON could not be decoded: the decoder gives up on
    very deep nesting (Python's recursion limit) and on integers longer than
    Python converts (sys.int_info.str_digits_check_threshold), without a position."""
    if isinstance(exc, RecursionError):
        return "values are nested too deeply"
    if "digits" in str(exc):
        return "a number has too many digits"
    return str(exc)


def check_utf8(data: bytes | DatasetFile, log: ProblemLog) -> bool:
    """Whether `data` is UTF-8 (a leading byte-order mark allowed), checked a
    megabyte at a time rather than decoded whole."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    base = len(_BOM) if data.startswith(_BOM) else 0  # positions as utf-8-sig counts them
    for offset in range(0, len(data), _UTF8_CHUNK):
        pending = len(decoder.getstate()[0])
        final = offset + _UTF8_CHUNK >= len(data)
        try:
            decoder.decode(data[offset : offset + _UTF8_CHUNK], final)
            _release(data, offset)
        except UnicodeDecodeError as exc:
            # utf-8-sig counts from after the mark, as decode_text did.
            byte = exc.start if offset == 0 else offset - pending + exc.start - base
            log.add(f"file is not valid UTF-8 (byte {byte})", line=_line_of(data, byte))
            return False
    return True


def detect_format(filename: str, first: Any) -> str:
    if filename.lower().endswith(".jsonl"):
        return "pairs"
    if isinstance(first, dict) and "chosen" in first and "Output1" not in first:
        return "pairs"
    return "mrb"


def _check_str(
    rec: dict, key: str, log: ProblemLog, line: int, index: int, *, required=True, label=None
) -> str | None:
    label = label or key
    if key not in rec or rec[key] is None:
        if required:
            log.add("is missing", line=line, index=index, field=label)
        return None
    value = rec[key]
    if not isinstance(value, str):
        log.add(
            f"must be a string, not {type(value).__name__}", line=line, index=index, field=label
        )
        return None
    if required and not value.strip():
        log.add("is empty", line=line, index=index, field=label)
        return None
    return value


def _unstorable(value: Any, depth: int = 0) -> str | None:
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
            problem = _unstorable(child, depth + 1)
            if problem:
                return problem
    return None


def _check_storable(rec: dict, log: ProblemLog, line: int, index: int) -> bool:
    """Report every top-level field whose key or value cannot be stored."""
    ok = True
    for key, value in rec.items():
        key_problem = _unstorable(key)
        problem = f"name {key_problem}" if key_problem else _unstorable(value)
        if problem:
            log.add(problem, line=line, index=index, field=brief(key, quote=False))
            ok = False
    return ok


def parse_mrb_record(value: Any, line: int, index: int, log: ProblemLog) -> Record | None:
    if not isinstance(value, dict):
        log.add(f"record must be a JSON object, not {type(value).__name__}", line=line, index=index)
        return None
    if not _check_storable(value, log, line, index):
        return None
    before = len(log.problems)
    fields = {key: _check_str(value, key, log, line, index) for key in MRB_KEYS}
    better = fields["Better"]
    if better is not None and better not in ("Output1", "Output2"):
        log.add(
            f'must be "Output1" or "Output2", not {brief(better)}',
            line=line,
            index=index,
            field="Better",
        )
    _check_id(fields["ID"], log, line, index, "ID")
    _check_image_path(fields["Image"], log, line, index, "Image")
    if len(log.problems) > before or log.truncated:
        return None
    extra = {k: v for k, v in value.items() if k not in MRB_KEYS}
    meta: dict[str, Any] = {"format": "mrb", "prior_better": better}
    if extra:
        meta["source"] = extra
    return Record(
        line=line,
        index=index,
        external_id=fields["ID"],  # type: ignore[arg-type]
        category=fields["Category"],  # type: ignore[arg-type]
        prompt=fields["Text"],  # type: ignore[arg-type]
        image_ref=fields["Image"],  # type: ignore[arg-type]
        response_1=fields["Output1"],  # type: ignore[arg-type]
        response_2=fields["Output2"],  # type: ignore[arg-type]
        meta=meta,
    )


def _check_length(
    value: str | None, limit: int, log: ProblemLog, line: int, index: int, label: str
) -> None:
    if value is not None and len(value) > limit:
        log.add(f"is longer than {limit} characters", line=line, index=index, field=label)


def _check_image_path(value: str | None, log: ProblemLog, line: int, index: int, label: str):
    """The path's length, and each folder or file name within what file
    systems and zip readers take (255 bytes): a release writes the image
    under this path."""
    if value is None:
        return
    if len(value) > MAX_IMAGE_PATH_LENGTH:
        _check_length(value, MAX_IMAGE_PATH_LENGTH, log, line, index, label)
        return
    for part in value.replace("\\", "/").split("/"):
        if len(part.encode("utf-8", "surrogatepass")) > MAX_PATH_SEGMENT_BYTES:
            log.add(
                f"has a folder or file name longer than {MAX_PATH_SEGMENT_BYTES} bytes "
                f"({brief(part, 40)})",
                line=line,
                index=index,
                field=label,
            )
            return


def _check_id(value: str | None, log: ProblemLog, line: int, index: int, label: str) -> None:
    if value is None:
        return
    if len(value) > MAX_ID_LENGTH:
        log.add(f"is longer than {MAX_ID_LENGTH} characters", line=line, index=index, field=label)
    elif value != value.strip():
        log.add("has leading or trailing whitespace", line=line, index=index, field=label)


@dataclass(frozen=True)
class PairsOptions:
    """How to read a chosen/rejected file: a fixed domain or a category field,
    and a mapping from our field names to the file's."""

    domain: str | None = None
    field_map: dict[str, str] = field(default_factory=dict)
    seed: int = 0
    gold_from_label: bool = False

    def source_key(self, name: str) -> str:
        return self.field_map.get(name, name)


def pairs_swap(seed: int, external_id: str) -> bool:
    """Seeded, per-item coin: True puts the rejected response first. Keyed by ID
    (not file position) so re-importing a file always gives the same order."""
    digest = hashlib.sha256(f"{seed}:{external_id}".encode()).digest()
    return bool(digest[0] & 1)


def parse_pairs_record(
    value: Any, line: int, index: int, log: ProblemLog, options: PairsOptions
) -> Record | None:
    if not isinstance(value, dict):
        log.add(f"record must be a JSON object, not {type(value).__name__}", line=line, index=index)
        return None
    if not _check_storable(value, log, line, index):
        return None
    before = len(log.problems)
    key = options.source_key

    def text(name: str, required: bool = True) -> str | None:
        return _check_str(value, key(name), log, line, index, required=required)

    ext_id_raw = value.get(key("id"))
    if isinstance(ext_id_raw, int) and not isinstance(ext_id_raw, bool):
        ext_id_raw = str(ext_id_raw)  # many JSONL sets number their rows
        value = {**value, key("id"): ext_id_raw}
    ext_id = text("id")
    _check_id(ext_id, log, line, index, key("id"))
    prompt = text("prompt")
    chosen = text("chosen")
    rejected = text("rejected")
    image_ref = _pairs_image(value, key, log, line, index)
    if options.domain:
        category: str | None = options.domain
    else:
        category = None
        if key("category") in value:
            category = _check_str(value, key("category"), log, line, index)
        else:
            log.add(
                "is missing; give a domain for the whole file or map a field to 'category'",
                line=line,
                index=index,
                field=key("category"),
            )
    chosen_reason = text("chosen_reason", required=False) or ""
    rejected_reason = text("rejected_reason", required=False) or ""
    chosen_model = text("chosen_model", required=False) or ""
    rejected_model = text("rejected_model", required=False) or ""
    reference = text("reference_answer", required=False) or ""
    _check_length(chosen_model, MAX_MODEL_LENGTH, log, line, index, key("chosen_model"))
    _check_length(rejected_model, MAX_MODEL_LENGTH, log, line, index, key("rejected_model"))
    image_label = key("image") if value.get(key("image")) is not None else "images"
    _check_image_path(image_ref, log, line, index, image_label)
    if len(log.problems) > before or log.truncated:
        return None
    assert ext_id is not None and chosen is not None and rejected is not None
    swapped = pairs_swap(options.seed, ext_id)
    label = "2" if swapped else "1"  # canonical number of the originally chosen response
    used = {key(name) for name in PAIRS_FIELDS} | {"images"}
    meta: dict[str, Any] = {"format": "pairs", "original_label": label}
    if chosen_reason or rejected_reason:
        meta["reasons"] = {
            "1": rejected_reason if swapped else chosen_reason,
            "2": chosen_reason if swapped else rejected_reason,
        }
    extra = {k: v for k, v in value.items() if k not in used}
    if extra:
        meta["source"] = extra
    return Record(
        line=line,
        index=index,
        external_id=ext_id,
        category=category,  # type: ignore[arg-type]
        prompt=prompt,  # type: ignore[arg-type]
        image_ref=image_ref,  # type: ignore[arg-type]
        response_1=rejected if swapped else chosen,
        response_2=chosen if swapped else rejected,
        model_1=rejected_model if swapped else chosen_model,
        model_2=chosen_model if swapped else rejected_model,
        gold_choice=label if options.gold_from_label else "",
        reference_answer=reference,
        meta=meta,
    )


def _pairs_image(value: dict, key, log: ProblemLog, line: int, index: int) -> str | None:
    image_key = key("image")
    if image_key in value and value[image_key] is not None:
        return _check_str(value, image_key, log, line, index)
    images = value.get("images")
    if images is None:
        log.add("is missing", line=line, index=index, field=image_key)
        return None
    if not isinstance(images, list) or not all(isinstance(i, str) for i in images):
        log.add("must be a list of image paths", line=line, index=index, field="images")
        return None
    if len(images) != 1:
        log.add(
            f"has {len(images)} images; exactly one image per item is supported",
            line=line,
            index=index,
            field="images",
        )
        return None
    return images[0]


@dataclass(slots=True)
class RecordRef:
    """What the checks across records need of one valid record (a few dozen
    bytes, not its texts): where it is, its ID and its image."""

    line: int
    index: int
    external_id: str
    image_ref: str  # normalised by validate_images


@dataclass
class ParsedDataset:
    """A validated dataset. `records` holds a small RecordRef per record;
    :meth:`iter_records` decodes the file again, one record at a time, so a
    whole file's texts are never in memory together."""

    format: str
    records: list[RecordRef]
    images: dict[str, ImageInfo]  # by normalised ref
    reread: Callable[[], Iterator[Record]] | None = field(default=None, repr=False)

    def iter_records(self) -> Iterator[Record]:
        """Every record, in file order, in canonical form (category a domain
        slug, image ref normalised): the file must still be open."""
        if self.reread is None:
            return
        for ref, record in zip(self.records, self.reread(), strict=True):
            if record.external_id != ref.external_id:  # the file changed under us
                raise RuntimeError(f"dataset changed while importing (record {ref.index})")
            record.image_ref = ref.image_ref
            yield record


def _reread_records(
    reader, data, *, filename: str, count: int, fmt: str, pairs_options, known_categories
) -> Iterator[Record]:
    """The records of an already validated file, decoded again one at a time."""
    log = ProblemLog(filename, 1)
    for line, index, value in islice(reader(data, log), count):
        if fmt == "mrb":
            record = parse_mrb_record(value, line, index, log)
        else:
            record = parse_pairs_record(value, line, index, log, pairs_options)
        del value
        if record is None or log.problems:  # validated before: only if the file changed
            raise RuntimeError(f"dataset changed while importing (line {line})")
        record.category = known_categories[record.category]
        yield record


def parse_dataset(
    data: bytes | DatasetFile,
    *,
    filename: str,
    fmt: str | None,
    pairs_options: PairsOptions,
    known_categories: dict[str, str],
    images: ImageSource,
    limits: ImageLimits,
    max_errors: int = 50,
    max_records: int = MAX_RECORDS,
    max_record_bytes: int = MAX_RECORD_BYTES,
    progress=None,
) -> ParsedDataset:
    """Parse and validate a whole dataset file and the images it references.

    `known_categories` maps every accepted category string (export Category
    and domain slug) to a domain slug. Raises ImportFailed listing every
    problem found (up to `max_errors`)."""
    log = ProblemLog(filename, max_errors)
    if fmt is not None and fmt not in FORMATS:
        log.add(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
        log.raise_if_any()
    check_utf8(data, log)
    log.raise_if_any()
    is_jsonl = fmt == "pairs" and data[_skip_ws(data, 0) : _skip_ws(data, 0) + 1] != b"["
    if fmt is None:
        is_jsonl = filename.lower().endswith(".jsonl")
    reader = partial(iter_jsonl if is_jsonl else iter_json_array, max_record_bytes=max_record_bytes)
    # Two passes, one record in memory at a time: the first reports every
    # syntax error (and counts the records), the second validates records,
    # so problems come in the order they always have.
    count = 0
    first = None
    for _line, _index, value in reader(data, log):
        if count == 0:
            first = value
        count += 1
        if count > max_records:
            too_many = ImportProblem(
                filename,
                f"has more than {max_records} records, the most one import may hold; "
                "split it into several files",
                line=_line,
                index=_index,
            )
            raise ImportFailed([*log.problems, too_many])
        del value
    values = islice(reader(data, ProblemLog(filename, max_errors)), count)
    if fmt is None:
        fmt = detect_format(filename, first)
    del first
    if count == 0 and not log.problems:
        log.add("file has no records")
    # Only a RecordRef is kept of each record: the texts are decoded again
    # when written (ParsedDataset.iter_records).
    records: list[RecordRef] = []
    seen: dict[str, int] = {}
    for line, index, value in values:
        if log.full:
            log.truncated = True  # records are left unchecked
            break
        if fmt == "mrb":
            record = parse_mrb_record(value, line, index, log)
        else:
            record = parse_pairs_record(value, line, index, log, pairs_options)
        if record is None:
            continue
        id_field = "ID" if fmt == "mrb" else pairs_options.source_key("id")
        if record.external_id in seen:
            log.add(
                f"duplicate ID {record.external_id!r} (first at line {seen[record.external_id]})",
                line=line,
                index=index,
                field=id_field,
            )
            continue
        seen[record.external_id] = line
        slug = known_categories.get(record.category)
        if slug is None:
            cat_field = "Category" if fmt == "mrb" else pairs_options.source_key("category")
            known = sorted(known_categories)
            log.add(
                f"unknown category {brief(record.category)}; known: {', '.join(known)}",
                line=line,
                index=index,
                field=cat_field,
            )
            continue
        records.append(RecordRef(line, index, record.external_id, record.image_ref))
        del record, value
    image_infos = validate_images(records, fmt, pairs_options, images, limits, log, progress)
    log.raise_if_any()
    return ParsedDataset(
        format=fmt,
        records=records,
        images=image_infos,
        reread=partial(
            _reread_records,
            reader,
            data,
            filename=filename,
            count=count,
            fmt=fmt,
            pairs_options=pairs_options,
            known_categories=known_categories,
        ),
    )


def validate_images(
    records: list[RecordRef] | list[Record],
    fmt: str,
    pairs_options: PairsOptions,
    source: ImageSource,
    limits: ImageLimits,
    log: ProblemLog,
    progress=None,
) -> dict[str, ImageInfo]:
    infos: dict[str, ImageInfo] = {}
    failed: dict[str, str] = {}
    image_field = "Image" if fmt == "mrb" else pairs_options.source_key("image")
    refs = [safe_relative_path(record.image_ref) for record in records]
    # Each distinct image is checked once, in threads, in the order the records
    # first use it; the loop below takes the results in that same order, so
    # problems are reported (and the cap applies) exactly as a serial pass.
    distinct = [ref for ref in dict.fromkeys(refs) if ref is not None]
    batches = [distinct[i : i + IMAGE_BATCH] for i in range(0, len(distinct), IMAGE_BATCH)]
    with (
        pillow_limits(limits),
        ThreadPoolExecutor(IMAGE_THREADS, thread_name_prefix="import-image") as pool,
    ):
        checked = chain.from_iterable(pool.map(partial(_check_images, source, limits), batches))
        try:
            for record, ref in zip(records, refs, strict=True):
                if progress is not None:
                    progress(1)
                if log.full:
                    log.truncated = True  # images are left unchecked
                    break
                if ref is None:
                    log.add(
                        f"image path {record.image_ref!r} is absolute or contains '..'",
                        line=record.line,
                        index=record.index,
                        field=image_field,
                    )
                    continue
                record.image_ref = ref
                if ref in infos:
                    continue
                if ref not in failed:
                    result = next(checked)
                    if isinstance(result, ImageInfo):
                        infos[ref] = result
                        continue
                    failed[ref] = result
                log.add(
                    f"image {ref!r}: {failed[ref]}",
                    line=record.line,
                    index=record.index,
                    field=image_field,
                )
        finally:
            pool.shutdown(cancel_futures=True)  # after an early stop, skip the rest
    return infos


def _check_images(
    source: ImageSource, limits: ImageLimits, refs: list[str]
) -> list[ImageInfo | str]:
    """Read and inspect images, in a worker thread: for each, its ImageInfo or why not."""
    return [_check_image(source, limits, ref) for ref in refs]


def _check_image(source: ImageSource, limits: ImageLimits, ref: str) -> ImageInfo | str:
    """One image: its ImageInfo, or why not."""
    try:
        return _inspect_image(source.read(ref, limits.max_bytes), ref, limits)
    except FileNotFoundError as exc:
        return str(exc) or f"'{ref}' not found"
    except (OSError, ValueError) as exc:
        return str(exc)


def content_hash(record: Record, image_sha256: str) -> str:
    """A stable fingerprint of what an import would store for one item."""
    payload = json.dumps(
        [
            record.external_id,
            record.category,
            record.prompt,
            image_sha256,
            record.image_ref,
            record.response_1,
            record.response_2,
            record.model_1,
            record.model_2,
            record.gold_choice,
            record.reference_answer,
            record.meta,
        ],
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode()).hexdigest()
