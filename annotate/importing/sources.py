"""Where an import's images come from: nowhere, a folder, or a zip (with its
member checks).
"""

from __future__ import annotations

import lzma
import mmap
import os
import posixpath
import shutil
import tempfile
import threading
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from annotate.importing.jsonscan import _UTF8_CHUNK, DatasetFile
from annotate.importing.records import (
    DATASET_MAX_BYTES,
    DATASET_SUFFIXES,
    ImportFailed,
    ImportProblem,
    brief,
)

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

    def checked(self, ref: str):
        """The image check's result (ImageInfo or why not) if the source
        already made it (annotate.importing.hfparquet checks images as it
        reads them), else None: the check reads and inspects the image."""
        return None

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
            raise FileNotFoundError(f"not found under {self.label}")
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
            raise FileNotFoundError(f"not found in {self.label}")
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
