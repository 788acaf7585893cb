"""The import's limits, its problem log and the Record a parsed line becomes.

Every problem is collected (up to a cap) as an :class:`ImportProblem` naming
the file, the line (and record index) and the field.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

FORMATS = ("mrb", "pairs")
# What the import page, the API and the command offer: the parser's formats
# and MMRB2 task files (annotate.importing.mmrb2, read from files only).
IMPORT_FORMATS = (*FORMATS, "mmrb2")
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
