"""Rows to bytes, a piece at a time: CSV, JSON Lines and Parquet writers that
take an iterator of rows (tuples in the order of `columns`) and yield the
file in pieces of about PIECE_BYTES, so a response streams them with memory
bounded by one piece (or one Parquet row group) whatever the row count. No
Django import.

- CSV: a header line, then one line per row (RFC 4180 quoting, UTF-8, no
  BOM); booleans as ``true``/``false``, times in ISO 8601, None empty. Cells
  a spreadsheet would run as a formula, whole or split at a separator, get
  an apostrophe (curation.spreadsheet_cells), as in every CSV the studio
  writes.
- JSONL: one JSON object per line, keys in column order, times in ISO 8601,
  text verbatim.
- Parquet: typed columns (strings, 64-bit integers, doubles, booleans,
  timestamps in microseconds UTC), zstd, one row group per ROW_GROUP_ROWS
  rows (fewer past ROW_GROUP_BYTES of text). A Parquet file ends with a
  footer that indexes its row groups; the writer never seeks, so each row
  group is sent as soon as it is written and the footer (a few kB) last:
  the file streams like the text formats, no temporary file. pyarrow is the
  optional ``parquet`` extra: `parquet_available()` says whether it is here.
"""

from __future__ import annotations

import csv
import importlib.util
import io
import json
from collections.abc import Iterable, Iterator, Sequence

from curation.spreadsheet_cells import needs_a_look, neutralised

PIECE_BYTES = 64 * 1024
ROW_GROUP_ROWS = 10_000
ROW_GROUP_BYTES = 16 * 1024 * 1024

FORMATS = ("csv", "jsonl", "parquet")
CONTENT_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "jsonl": "application/x-ndjson; charset=utf-8",
    "parquet": "application/vnd.apache.parquet",
}
PARQUET_HINT = (
    "Parquet export needs pyarrow, the optional `parquet` extra "
    "(pip install 'triplet-studio[parquet]'); CSV and JSONL work without it."
)

Columns = Sequence[tuple[str, str]]


def parquet_available() -> bool:
    """Whether pyarrow is installed, without importing it."""
    return importlib.util.find_spec("pyarrow") is not None


def encode(file_format: str, columns: Columns, rows: Iterable[Sequence]) -> Iterator[bytes]:
    """The file of `rows` in `file_format`, in pieces."""
    if file_format == "csv":
        return csv_pieces(columns, rows)
    if file_format == "jsonl":
        return jsonl_pieces(columns, rows)
    if file_format == "parquet":
        return parquet_pieces(columns, rows)
    raise ValueError(f"unknown format {file_format!r}")


def _indexes(columns: Columns, kind: str) -> list[int]:
    return [i for i, (_, k) in enumerate(columns) if k == kind]


# (The row loops below convert only the columns that need it, in place,
# without a call per cell: at 1M rows, a function per cell was half the
# export's CPU time.)


def csv_pieces(columns: Columns, rows: Iterable[Sequence]) -> Iterator[bytes]:
    texts, flags, times = (_indexes(columns, k) for k in ("string", "bool", "timestamp"))
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")  # (None is written empty)
    writer.writerow([name for name, _ in columns])
    for row in rows:
        cells = list(row)
        for i in texts:
            text = cells[i]
            if text and needs_a_look(text):
                cells[i] = neutralised(text)
        for i in flags:
            cells[i] = "true" if cells[i] else "false"
        for i in times:
            if cells[i] is not None:
                cells[i] = cells[i].isoformat()
        writer.writerow(cells)
        if buffer.tell() >= PIECE_BYTES:
            yield buffer.getvalue().encode()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue().encode()


def jsonl_pieces(columns: Columns, rows: Iterable[Sequence]) -> Iterator[bytes]:
    names = [name for name, _ in columns]
    times = _indexes(columns, "timestamp")
    encode_line = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    lines: list[str] = []
    size = 0
    for row in rows:
        cells = list(row)
        for i in times:
            if cells[i] is not None:
                cells[i] = cells[i].isoformat()
        line = encode_line(dict(zip(names, cells, strict=True)))
        lines.append(line)
        size += len(line) + 1
        if size >= PIECE_BYTES:
            lines.append("")
            yield "\n".join(lines).encode()
            lines, size = [], 0
    if lines:
        lines.append("")
        yield "\n".join(lines).encode()


def arrow_schema(columns: Columns):
    import pyarrow as pa

    types = {
        "string": pa.string(),
        "int": pa.int64(),
        "float": pa.float64(),
        "bool": pa.bool_(),
        "timestamp": pa.timestamp("us", tz="UTC"),
    }
    return pa.schema([(name, types[kind]) for name, kind in columns])


class _Pieces:
    """The file object the Parquet writer writes to: it keeps what was
    written until `take()` hands it on (pyarrow writes forward only)."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.position = 0
        self.closed = False

    def write(self, data) -> int:
        chunk = bytes(data)
        self.parts.append(chunk)
        self.position += len(chunk)
        return len(chunk)

    def tell(self) -> int:
        return self.position

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True

    def take(self) -> bytes:
        data = b"".join(self.parts)
        self.parts = []
        return data


def parquet_pieces(
    columns: Columns,
    rows: Iterable[Sequence],
    *,
    row_group_rows: int = ROW_GROUP_ROWS,
    row_group_bytes: int = ROW_GROUP_BYTES,
) -> Iterator[bytes]:
    import pyarrow.parquet as pq

    schema = arrow_schema(columns)
    strings = [i for i, (_, kind) in enumerate(columns) if kind == "string"]
    sink = _Pieces()
    writer = pq.ParquetWriter(sink, schema, compression="zstd", write_statistics=False)
    try:
        buffered: list[Sequence] = []
        size = 0
        for row in rows:
            buffered.append(row)
            size += sum(len(row[i] or "") for i in strings)
            if len(buffered) >= row_group_rows or size >= row_group_bytes:
                writer.write_batch(_batch(schema, buffered))
                buffered, size = [], 0
                yield sink.take()
        if buffered:
            writer.write_batch(_batch(schema, buffered))
            buffered = []
        writer.close()
        yield sink.take()
    finally:
        if writer.is_open:
            writer.close()


def _batch(schema, rows: list[Sequence]):
    import pyarrow as pa

    columns = list(zip(*rows, strict=True))
    return pa.record_batch(
        [pa.array(values, type=field.type) for values, field in zip(columns, schema, strict=True)],
        schema=schema,
    )
