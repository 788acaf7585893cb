"""The import's size bounds, in one place (issue 29): how large one record
may be, how many records one file may hold, how deep a record may nest, how
much a compressed dataset may expand to and how many distinct problems are
collected before a pass stops. Every reader (JSON, JSONL, parquet, task-file
task files, release zips) checks these *before* it decodes what they bound,
so a small hostile upload costs a bounded amount of memory and time.

The limits come from settings (``IMPORT_MAX_RECORDS``,
``IMPORT_MAX_RECORD_BYTES``, ``IMPORT_MAX_ERRORS``, ``IMAGE_MAX_BYTES``:
:func:`import_bounds`); the nesting depth is fixed (records.MAX_NESTING:
deeper values could not be written again). Pure: Django's settings are read
only by :func:`import_bounds`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from annotate.importing.records import (
    DATASET_MAX_BYTES,
    MAX_NESTING,
    MAX_RECORD_BYTES,
    MAX_RECORDS,
    ImportFailed,
    ImportProblem,
    ProblemLog,
)


@dataclass(frozen=True)
class ImportBounds:
    max_record_bytes: int = MAX_RECORD_BYTES
    max_records: int = MAX_RECORDS
    max_depth: int = MAX_NESTING
    # What a compressed dataset (a zip member, a parquet file's records) may
    # expand to; images are bounded one by one (image_bytes).
    max_dataset_bytes: int = DATASET_MAX_BYTES
    image_bytes: int = 50 * 1024 * 1024
    max_errors: int = 50

    @property
    def image_cell_bytes(self) -> int:
        """An image cell of a parquet file larger than this is refused from
        its length, before it is read into memory; a smaller one over
        `image_bytes` is refused by the image checks, as any image is."""
        return max(self.image_bytes, self.max_record_bytes)

    def record_too_large(self, size: int | None = None) -> str:
        held = f" ({size} bytes)" if size is not None else ""
        return f"record is larger than the limit of {self.max_record_bytes} bytes{held}"

    def too_many_records(self) -> str:
        return (
            f"has more than {self.max_records} records, the most one import may hold; "
            "split it into several files"
        )

    def too_much_data(self, size: int) -> str:
        return (
            f"expands to {size} bytes of records, more than the {self.max_dataset_bytes} "
            "one dataset may hold"
        )


def import_bounds() -> ImportBounds:
    """The bounds set in Django's settings (the defaults above otherwise)."""
    from django.conf import settings

    return ImportBounds(
        max_record_bytes=settings.IMPORT_MAX_RECORD_BYTES,
        max_records=settings.IMPORT_MAX_RECORDS,
        image_bytes=settings.IMAGE_MAX_BYTES,
        max_errors=settings.IMPORT_MAX_ERRORS,
    )


class RecordCount:
    """Counts a pass's records and stops it past `bounds.max_records`:
    raises ImportFailed with the problems logged so far and one naming the
    record where the file went over."""

    def __init__(self, bounds: ImportBounds, log: ProblemLog):
        self.bounds = bounds
        self.log = log
        self.n = 0

    def add(self, *, line: int | None = None, index: int | None = None) -> None:
        self.n += 1
        if self.n > self.bounds.max_records:
            over = ImportProblem(
                self.log.file, self.bounds.too_many_records(), line=line, index=index
            )
            raise ImportFailed([*self.log.problems, over])


# The tokens of a JSON document, strings skipped whole (possessively: linear).
_TOKENS = re.compile(rb'"(?:[^"\\]++|\\.)*+"|[\[\]{}]|[-0-9][-+.0-9eE]*+|true|false|null', re.S)


def json_shape_problem(data: bytes, *, max_depth: int, max_values: int) -> str | None:
    """Why a JSON document read whole (json.loads) could cost far more than
    its size in memory or blow the decoder's stack, or None: nesting deeper
    than `max_depth`, or more than `max_values` values (an empty object costs
    ~60 bytes of Python for its 2 bytes of file). Scans the bytes without
    decoding them."""
    depth = values = 0
    for match in _TOKENS.finditer(data):
        char = data[match.start()]
        if char in (0x5D, 0x7D):  # ']', '}'
            depth -= 1
            continue
        values += 1
        if values > max_values:
            return f"holds more than {max_values} values"
        if char in (0x5B, 0x7B):  # '[', '{'
            depth += 1
            if depth > max_depth:
                return f"values are nested more than {max_depth} levels deep"
    return None


# --- Parquet ----------------------------------------------------------------------
# A parquet file of a few kB can expand to gigabytes: a value repeated through
# a dictionary is stored once and decoded once per row, and zstd shrinks a long
# run of one character a thousandfold. So the file's metadata is checked before
# a row is read; its text and binary columns are read as Arrow dictionaries
# (parquet_dictionary_columns: a repeated value stays one value); each row's
# size is computed from the values' lengths before any is made a Python value;
# and rows are made Python values a bounded number of bytes at a time.

# Bytes of rows made Python values at a time (and of a batch of columns that
# are not read as dictionaries, sized from the metadata).
PARQUET_BATCH_BYTES = 32 * 1024 * 1024
# Leaf columns a file may have (a record has a few dozen fields).
PARQUET_MAX_COLUMNS = 1000
# Column chunks (row groups x columns) a file may have: 100,000 rows in row
# groups of 100 with a dozen columns are 12,000.
PARQUET_MAX_CHUNKS = 2_000_000


def parquet_dictionary_columns(metadata) -> list[str]:
    """The leaf columns to read as Arrow dictionaries: every text and binary
    one (``image.bytes``, ``response.list.element`` name nested ones)."""
    schema = metadata.schema
    return [
        schema.column(i).path
        for i in range(len(schema))
        if schema.column(i).physical_type == "BYTE_ARRAY"
    ]


@dataclass(frozen=True)
class ParquetProblem:
    message: str
    row: int | None
    column: str | None


def _top(path: str) -> str:
    return path.split(".", 1)[0]


def _is_image_leaf(path: str, image_columns: set[str]) -> bool:
    return _top(path) in image_columns and path.endswith(".bytes")


def parquet_metadata_problems(
    metadata, bounds: ImportBounds, image_columns: set[str]
) -> list[ParquetProblem]:
    """What the file's metadata alone shows is over the bounds: too many
    rows, a row group whose column holds more per row (uncompressed, on
    average) than a record or an image may, or more record data in all than a
    dataset may expand to. Nothing of the file's data is read."""
    if metadata.num_rows > bounds.max_records:
        return [ParquetProblem(bounds.too_many_records(), None, None)]
    # What the checks below and the reading walk: row groups x columns.
    chunks = metadata.num_row_groups * metadata.num_columns
    if chunks > PARQUET_MAX_CHUNKS:
        message = (
            f"has {metadata.num_row_groups} row groups of {metadata.num_columns} columns, "
            f"more than {PARQUET_MAX_CHUNKS} column chunks in all"
        )
        return [ParquetProblem(message, None, None)]
    if metadata.num_columns > PARQUET_MAX_COLUMNS:
        message = f"has {metadata.num_columns} columns, more than {PARQUET_MAX_COLUMNS}"
        return [ParquetProblem(message, None, None)]
    problems: list[ParquetProblem] = []
    total = 0
    first = 0
    for g in range(metadata.num_row_groups):
        group = metadata.row_group(g)
        rows = max(group.num_rows, 1)
        for j in range(group.num_columns):
            chunk = group.column(j)
            size = chunk.total_uncompressed_size
            image = _is_image_leaf(chunk.path_in_schema, image_columns)
            limit = bounds.image_cell_bytes if image else bounds.max_record_bytes
            if not image:
                total += size
            if size / rows > limit:
                what = "an image" if image else "a record"
                problems.append(
                    ParquetProblem(
                        f"rows {first}-{first + group.num_rows - 1} hold {size} bytes of this "
                        f"column ({size // rows} a row on average), more than {what} may "
                        f"({limit} bytes)",
                        first,
                        _top(chunk.path_in_schema),
                    )
                )
                if len(problems) >= bounds.max_errors:
                    return problems
        first += group.num_rows
    if total > bounds.max_dataset_bytes:
        problems.append(ParquetProblem(bounds.too_much_data(total), None, None))
    return problems


def parquet_batch_rows(group, most: int, as_dictionaries: set[str]) -> int:
    """How many rows of a row group (its metadata) to decode at a time so
    that a batch holds at most PARQUET_BATCH_BYTES even if every row is the
    worst the metadata allows: a dictionary-encoded column not read as a
    dictionary (fixed-size values) may expand each row to its whole
    dictionary, a plain column's row is its average."""
    rows = max(group.num_rows, 1)
    worst = 0.0
    for j in range(group.num_columns):
        chunk = group.column(j)
        size = chunk.total_uncompressed_size
        if chunk.has_dictionary_page and chunk.path_in_schema not in as_dictionaries:
            worst += size
        else:
            worst += size / rows
    return max(1, min(most, int(PARQUET_BATCH_BYTES // max(worst, 1))))


# Arrow type ids of the 64-bit offset types (large_string, large_binary,
# large_list), read from pyarrow at first use.
_LARGE_TYPE_IDS: set[int] = set()


def _offsets(array, np):
    """An Arrow string, binary or list array's value offsets (len + 1 of them),
    read from its buffer: no compute kernel (pyarrow.compute costs ~30 MB of
    a worker's memory the first time it is used)."""
    if not _LARGE_TYPE_IDS:
        import pyarrow as pa

        _LARGE_TYPE_IDS.update(
            t.id for t in (pa.large_string(), pa.large_binary(), pa.large_list(pa.null()))
        )
    wide = array.type.id in _LARGE_TYPE_IDS
    dtype = np.int64 if wide else np.int32
    buffer = array.buffers()[1]
    return np.frombuffer(buffer, dtype=dtype)[array.offset : array.offset + len(array) + 1]


def _valid(array, np):
    """Which rows are not null, from the validity bitmap."""
    n = len(array)
    bitmap = array.buffers()[0]
    if array.null_count == 0 or bitmap is None:
        return np.ones(n, dtype=bool)
    bits = np.unpackbits(np.frombuffer(bitmap, dtype=np.uint8), bitorder="little")
    return bits[array.offset : array.offset + n].astype(bool)


def _cell_sizes(array, images: bool):
    """Bytes of each row's value in an Arrow array, from lengths alone: with
    `images`, (text bytes, largest image's bytes) of an image struct or list."""
    import numpy as np
    import pyarrow as pa

    n = len(array)
    kind = array.type
    if n == 0:
        empty = np.zeros(0, dtype=np.float64)
        return (empty, empty) if images else empty
    if pa.types.is_dictionary(kind):
        lengths = np.asarray(_cell_sizes(array.dictionary, images=False))
        if len(lengths) == 0:
            return np.zeros(n, dtype=np.float64)
        indices = array.indices
        dtype = np.dtype(indices.type.to_pandas_dtype())
        raw = np.frombuffer(indices.buffers()[1], dtype=dtype)
        picked = np.clip(raw[indices.offset : indices.offset + n], 0, len(lengths) - 1)
        return np.where(_valid(array, np), lengths[picked], 0)
    if (
        pa.types.is_binary(kind)
        or pa.types.is_string(kind)
        or pa.types.is_large_binary(kind)
        or pa.types.is_large_string(kind)
    ):
        return np.diff(_offsets(array, np)).astype(np.float64)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        offsets = _offsets(array, np)
        counts = np.diff(offsets)
        parents = np.repeat(np.arange(n), counts)
        values = array.values.slice(int(offsets[0]), int(offsets[-1] - offsets[0]))
        child = _cell_sizes(values, images)
        if images:
            text, image = child
            big = np.zeros(n, dtype=np.float64)
            np.maximum.at(big, parents, image)
            return np.bincount(parents, weights=text, minlength=n), big
        return np.bincount(parents, weights=child, minlength=n)
    if pa.types.is_struct(kind):
        fields = array.flatten()
        names = [kind.field(i).name for i in range(kind.num_fields)]
        text = np.zeros(n, dtype=np.float64)
        image = np.zeros(n, dtype=np.float64)
        for name, field in zip(names, fields, strict=True):
            sizes = _cell_sizes(field, images=False)
            if images and name == "bytes":
                image = np.asarray(sizes, dtype=np.float64)
            else:
                text += sizes
        return (text, image) if images else text
    if pa.types.is_boolean(kind) or pa.types.is_null(kind):
        return np.ones(n, dtype=np.float64)
    try:
        return np.full(n, max(kind.bit_width // 8, 1), dtype=np.float64)
    except ValueError:  # not a fixed-width type
        pass
    # Anything else (maps, unions, views): each row's own buffers.
    return np.array([array.slice(i, 1).nbytes for i in range(n)], dtype=np.float64)


def parquet_row_sizes(batch, first_row: int, bounds: ImportBounds, image_columns: set[str]):
    """(Each row's bytes, the rows too large to become a record or to hold an
    image by batch position), found from the values' lengths before any is
    turned into a Python value."""
    import numpy as np

    n = batch.num_rows
    text = np.zeros(n, dtype=np.float64)
    images = np.zeros(n, dtype=np.float64)
    largest_text: list = []
    out: dict[int, ParquetProblem] = {}
    for name, column in zip(batch.schema.names, batch.columns, strict=True):
        if name in image_columns:
            sizes, image = _cell_sizes(column, images=True)
            for i in np.flatnonzero(image > bounds.image_cell_bytes):
                out.setdefault(
                    int(i),
                    ParquetProblem(
                        f"image is {int(image[i])} bytes, more than the limit of "
                        f"{bounds.image_bytes}",
                        first_row + int(i),
                        name,
                    ),
                )
            images += image
        else:
            sizes = _cell_sizes(column, images=False)
        sizes = np.asarray(sizes, dtype=np.float64)
        text += sizes
        largest_text.append((name, sizes))
    for i in np.flatnonzero(text > bounds.max_record_bytes):
        column = max(largest_text, key=lambda pair: pair[1][i])[0]
        out.setdefault(
            int(i),
            ParquetProblem(bounds.record_too_large(int(text[i])), first_row + int(i), column),
        )
    return text + images, out
