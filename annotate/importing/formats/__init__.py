"""Input formats: one module per format, one registry (issue 32 item 3).

A format module registers itself with :func:`register` and has

* ``NAMES``: the names a user may give as the import's format (the first is
  its own; ``format=`` on the page, the API and the command);
* ``SUFFIXES``: the file name endings an upload of it has (".json", …);
* ``detect(source) -> bool``: whether a dataset (a :class:`DatasetSource`:
  a file, a folder, or a zip, with the first bytes of its dataset) is
  this format's;
* ``read(source, context) -> ParsedFile``: the whole file checked (every
  record, every image; problems name file, line and field, each kind once
  with its count, and raise :class:`~annotate.importing.records.ImportFailed`),
  then its items as :class:`ParsedItem` s, decoded again one at a time by
  ``ParsedFile.items()`` (memory holds one record, not the file).

and, optionally, ``seed_demo(users, folder, ensure_memberships) ->
list[DemoSeeded]``: the format's demo projects, brought in through its own
import (``manage.py seed_demo`` asks every format that has one; idempotent).

The one writer (annotate.importing.service) writes what ``read`` gives,
with one update rule and every record-level option, whatever the format.
A new format is one module here (imported below) and its tests; a format
registered elsewhere (a test's toy format) works the same way.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from annotate.importing.options import ImportOptions
from annotate.importing.records import (
    ImageInfo,
    ImageLimits,
    ImportFailed,
    ImportProblem,
    MediaInfo,
)
from annotate.importing.sources import DirectoryImageSource, ImageSource, ZipImageSource

# The item fields of issue 36 a format may give (ParsedItem.gate()).
GATE_FIELDS = ("purpose", "explanation", "is_attention")
TEXT = "text"
IMAGE = "image"
VIDEO = "video"
AUDIO = "audio"
MEDIA = (VIDEO, AUDIO)  # parts whose `ref` is a key of ParsedFile.media


@dataclass(slots=True)
class ParsedPart:
    """One part of a slot: a text (Markdown, verbatim), an image, a video or
    an audio file. An image's `ref` is its normalised path in the import's
    image source (the key of ParsedFile.images), a video's or audio's the key
    of ParsedFile.media (read from the same source); `source_path` is its path
    as the file writes it (kept for exports)."""

    kind: str
    text: str = ""
    ref: str = ""
    source_path: str = ""


@dataclass
class ParsedItem:
    """One item as a format reads it, in canonical order (response slots in
    the file's order, or the format's seeded order)."""

    line: int
    index: int
    external_id: str
    domain: str | None  # a domain slug or export category (None: not given)
    prompt: list[ParsedPart]
    # N response slots, each an ordered list of parts. A format gives what
    # the file holds (a pair format two); the writer refuses an item of fewer
    # than 2 or more than ITEM_MAX_RESPONSES (annotate.models.parts), or of
    # other than two in a pairwise project, naming its line and field.
    responses: list[list[ParsedPart]]
    models: list[str] = field(default_factory=list)  # per response slot ("" unknown)
    gold: str = ""  # "", "1", "2", "tie"
    reference_answer: str = ""
    group: str = ""  # Item.group_key: the items of one prompt or pair ("" none)
    criterion: str = ""  # Item.criterion: the question asked of this item ("" none)
    # Issue 36: what the item is for (benchmark, qualification, check), the
    # explanation shown after a qualification answer, an attention check.
    purpose: str = "benchmark"
    explanation: str = ""
    is_attention: bool = False
    meta: dict[str, Any] = field(default_factory=dict)  # the file's other fields, verbatim
    labels: Any = None  # per-annotator labels as published (ParsedFile.votes reads them)

    # What options.RecordRules reads of an item (it reads Records too).
    @property
    def category(self) -> str | None:
        return self.domain

    @category.setter
    def category(self, value: str | None) -> None:
        self.domain = value

    @property
    def image_ref(self) -> str:
        """The first image's path (the `image-folder` domain source)."""
        for part in (*self.prompt, *(p for slot in self.responses for p in slot)):
            if part.kind == IMAGE:
                return part.source_path
        return ""

    def gate(self) -> dict[str, Any]:
        """The item's GATE_FIELDS (issue 36), as the writer stores them."""
        return {"purpose": self.purpose, "explanation": self.explanation,
                "is_attention": self.is_attention}  # fmt: skip

    def votes_needed(self, per_item: int) -> int:
        """The votes a new item asks: none for a qualification item (never
        claimed: annotate.qualification's attempts serve it) or a check item
        (served by annotate.checks outside the vote pool; constraint
        annotate_item_gate_needs_no_votes)."""
        return per_item if self.purpose in ("", "benchmark") else 0

    def slots(self) -> dict[str, list[ParsedPart]]:
        """The parts by slot name (prompt, response_1, response_2, …)."""
        out = {"prompt": self.prompt}
        for n, parts in enumerate(self.responses, start=1):
            out[f"response_{n}"] = parts
        return out

    def model(self, n: int) -> str:
        return self.models[n] if n < len(self.models) else ""


@dataclass
class ParsedFile:
    """A checked dataset: what the writer needs besides its items."""

    format: str
    filename: str
    items: Callable[[], Iterator[ParsedItem]]  # every item, decoded again per call
    count: int  # how many items items() yields
    ids: list[str]  # their external IDs, in order (small: the conflict checks read them)
    images: dict[str, ImageInfo]  # by normalised ref
    image_source: ImageSource  # where images, videos and audio files are read from
    # The stable fingerprint of what the import stores for an item (its
    # Item.content_hash): equal fingerprints make a re-import a no-op.
    fingerprint: Callable[[ParsedItem], str]
    id_field: str = "id"
    # How the format's files name our fields in reports ("response_1" → "Output1").
    labels: dict[str, str] = field(default_factory=dict)
    skipped: int = 0  # later records of a repeated ID left out (keep-first)
    renamed: int = 0  # later records of a repeated ID renamed (suffix)
    unchanged: int = 0  # records the format itself found already imported
    # Domains to create if missing (slug → Domain fields), before items are written.
    new_domains: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Per-annotator labels as votes: (item, project's scale) → PublishedVotes.
    votes: Callable[[ParsedItem, str], list] | None = None
    # Called in the import's transaction with the pks of the items created.
    after_write: Callable[[Any, list[int]], None] | None = None
    # Restates the writer's problems in the format's own terms (parquet rows).
    restate: Callable[[ImportFailed], ImportFailed] | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # shown in the import's result
    # Videos and audio files (issue 35), by normalised ref, validated like images.
    media: dict[str, MediaInfo] = field(default_factory=dict)


@dataclass
class DatasetSource:
    """Where a dataset is: a file or folder `path`, or the `member` of the
    zip `archive` (opened on `path`)."""

    path: Path
    archive: ZipImageSource | None = None
    member: str | None = None

    @property
    def name(self) -> str:
        return self.member or self.path.name

    @property
    def label(self) -> str:
        """How problems name the dataset."""
        return f"{self.path.name}:{self.member}" if self.member else self.path.name

    def open_data(self, stack: ExitStack):
        """The dataset's bytes, open for the import (closed by `stack`): the
        zip member, or the file memory-mapped."""
        if self.archive is not None:
            assert self.member is not None
            return stack.enter_context(self.archive.open_dataset(self.member))
        if not self.path.is_file():
            raise ImportFailed([ImportProblem(str(self.path), "file not found")])
        from annotate.importing.jsonscan import open_dataset_file

        return stack.enter_context(open_dataset_file(self.path))

    def image_source(self, given: ImageSource | None) -> ImageSource:
        """Where the dataset's image paths are read: the zip it came in, else
        the images given with it, else its own folder."""
        if self.archive is not None:
            return self.archive
        return given or DirectoryImageSource(self.path.parent)

    def head(self, size: int = 4096) -> bytes:
        """The dataset's first bytes (b"" if it cannot be read)."""
        try:
            if self.archive is not None:
                if self.member is None:
                    return b""
                with self.archive.zip.open(self.archive.members[self.member]) as fh:
                    return fh.read(size)
            if not self.path.is_file():
                return b""
            with self.path.open("rb") as fh:
                return fh.read(size)
        except Exception:
            return b""


@dataclass
class ReadContext:
    """What a format's read() is given: the project's domains, the options,
    limits and bounds, the images given with the dataset, and an ExitStack
    open until the writer is done."""

    project: Any
    known: dict[str, str]  # accepted category strings → domain slug
    options: ImportOptions
    images: ImageSource | None  # images given with the dataset (a folder or zip)
    images_path: Path | None
    limits: ImageLimits
    bounds: Any
    stack: ExitStack
    fmt: str | None = None  # the format the user named (a module may read it as a variant)
    domain: str | None = None
    field_map: dict[str, str] = field(default_factory=dict)
    seed: int = 0
    gold_from_label: bool = False
    cast_votes: bool = False
    progress: Callable[[int], None] | None = None
    given: dict[str, Any] = field(default_factory=dict)  # options the user set


@dataclass
class DemoSeeded:
    """What a format's `seed_demo` did to one demo project."""

    project: Any
    created: int  # items imported
    votes: int  # demo votes cast


class Format(Protocol):
    NAMES: tuple[str, ...]

    def detect(self, source: DatasetSource) -> bool: ...

    def read(self, source: DatasetSource, context: ReadContext) -> ParsedFile: ...


def read_with_images(source: DatasetSource, context: ReadContext, read_data: Any) -> ParsedFile:
    """`source` (a file, or a zip's dataset) read by a format's
    `read_data(data, filename=, images=, context=)`, its images and media
    from the zip, else the import's images, else the file's folder."""
    data = source.open_data(context.stack)
    images = source.image_source(context.images)
    return read_data(data, filename=source.label, images=images, context=context)


def new_domain(title: str, export_category: str, position: int, kind: str = "") -> dict[str, Any]:
    """The fields of a domain a format creates with its items (`kind`:
    preference unless given)."""
    from annotate.models import DomainKind

    return {
        "title": title,
        "export_category": export_category,
        "kind": kind or DomainKind.PREFERENCE,
        "position": position,
    }


def detect_keys(source: DatasetSource, signature: tuple[str, ...]) -> bool:
    """Whether `source` is a JSONL file whose first record holds every key
    of `signature`, or a parquet file (not in an archive) with those
    columns: the detect() of a format known by its record's keys."""
    name = source.name.lower()
    if name.endswith(".parquet"):
        return source.archive is None and all(k in _parquet_names(source) for k in signature)
    if not name.endswith((".jsonl", ".json")):
        return False
    head = source.head(64 * 1024).removeprefix(b"\xef\xbb\xbf").lstrip()
    if not head.startswith(b"{"):
        return False
    first = head.split(b"\n", 1)[0]
    try:
        value = json.loads(first)
    except RecursionError:  # hostile nesting: not this format; its reader says why
        return False
    except ValueError:  # a first line longer than the head: look for the keys
        return all(f'"{k}"'.encode() in first for k in signature)
    return isinstance(value, dict) and all(k in value for k in signature)


def _parquet_names(source: DatasetSource) -> list[str]:
    try:
        import pyarrow.parquet as pq

        return list(pq.read_schema(source.path).names)
    except Exception:  # not readable here: the parquet format says why
        return []


# The registry, in the order detect() is asked: the first that says yes reads.
FORMATS: list[Any] = []


def register(module):
    """Add a format module (or any object with NAMES, detect and read),
    asked before the FALLBACK format (which reads any other file)."""
    if module not in FORMATS:
        at = next((n for n, m in enumerate(FORMATS) if getattr(m, "FALLBACK", False)), None)
        FORMATS.insert(len(FORMATS) if at is None else at, module)
    return module


def fallback():
    """The FALLBACK format: it reads any other file, and JSON or JSONL data
    held in memory (its `read_data`)."""
    return next(m for m in FORMATS if getattr(m, "FALLBACK", False))


def unregister(module) -> None:
    if module in FORMATS:
        FORMATS.remove(module)


def suffixes() -> tuple[str, ...]:
    """The file name endings an upload may have (a zip may hold any dataset)."""
    found = {suffix for module in FORMATS for suffix in getattr(module, "SUFFIXES", ())}
    return (*sorted(found - {".zip"}), ".zip")


def upload_hint() -> str:
    """What an upload of the wrong kind is told."""
    *most, last = suffixes()
    return f"Upload a {', '.join(most)} or {last} file."


def names() -> tuple[str, ...]:
    """Every format name a user may give."""
    return tuple(name for module in FORMATS for name in module.NAMES)


def find(source: DatasetSource, fmt: str | None):
    """The module that reads `source`: the one named `fmt`, else the first
    that detects it. Raises ImportFailed if none. A DEFINITIVE format (a
    release, a parquet file) reads what it detects whatever was named."""
    for module in FORMATS:
        if getattr(module, "DEFINITIVE", False) and module.detect(source):
            return module
    if fmt:
        for module in FORMATS:
            if fmt in module.NAMES:
                return module
        raise ImportFailed(
            [ImportProblem(source.label, f"unknown format {fmt!r} (known: {', '.join(names())})")]
        )
    for module in FORMATS:
        if module.detect(source):
            return module
    raise ImportFailed(
        [
            ImportProblem(
                source.label,
                f"not a dataset this studio reads (formats: {', '.join(names())})",
            )
        ]
    )


# The built-in formats: every module of this package (the FALLBACK reader is
# asked last, DEFINITIVE ones first: see register and find).
for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    register(importlib.import_module(f"{__name__}.{_info.name}"))
