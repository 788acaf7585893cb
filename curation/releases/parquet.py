"""Parquet copies of a release's records, images embedded (DESIGN §7). No Django import.

``parquet/<domain slug>.parquet`` holds the domain's benchmark records in the
layout the Hugging Face ``datasets`` library loads offline::

    load_dataset("parquet", data_files="release/parquet/*.parquet", split="train")

Columns are the official keys (``ID, Text, Image, Output1, Output2, Better,
Category``); ``Image`` is the ``datasets`` ``Image`` feature's storage, a
``struct<bytes: binary, path: string>`` with the image file's bytes and its
path in the release. The features are also written to the schema metadata
(key ``huggingface``), which is how ``datasets`` knows to decode the column as
images rather than dicts.

Rows are buffered and flushed as one row group every ``ROW_GROUP_ROWS`` rows
(or sooner past ``ROW_GROUP_BYTES`` of buffered data), so memory stays bounded
whatever the size of the release. The output is a function of the rows: fixed
writer options, no timestamps, row groups cut at deterministic points; the
only foreign string is pyarrow's ``created_by`` (its version).

Used through ``exporter.write_release(..., extra_writers=[ParquetWriter(folder)])``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
from array import array
from collections.abc import Iterable
from pathlib import Path
from typing import Any

FOLDER = "parquet"
# 100 rows, as `datasets` writes image data sets (and what the Hub's viewer
# reads comfortably); fewer when the images are large.
ROW_GROUP_ROWS = 100
ROW_GROUP_BYTES = 8 * 1024 * 1024
STRING_COLUMNS = ("ID", "Text", "Output1", "Output2", "Better", "Category")
COLUMNS = ("ID", "Text", "Image", "Output1", "Output2", "Better", "Category")


def available() -> bool:
    """Whether pyarrow is installed (the `parquet` extra), without importing it."""
    return importlib.util.find_spec("pyarrow") is not None


def hf_features() -> dict[str, Any]:
    """The `datasets` Features of a release's rows, as `Features.to_dict()` writes them."""
    return {
        name: {"_type": "Image"} if name == "Image" else {"dtype": "string", "_type": "Value"}
        for name in COLUMNS
    }


def arrow_schema():
    import pyarrow as pa

    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    metadata = {
        b"huggingface": json.dumps(
            {"info": {"features": hf_features()}}, separators=(",", ":")
        ).encode()
    }
    return pa.schema(
        [(name, image if name == "Image" else pa.string()) for name in COLUMNS],
        metadata=metadata,
    )


# Fixed writer options: the same rows give the same bytes. Image bytes are
# already compressed (JPEG, PNG, ...), so they are stored as they are; text is
# zstd-compressed. Statistics and dictionaries only where they help.
WRITER_OPTIONS: dict[str, Any] = {
    "version": "2.6",
    "compression": {
        **{name: "zstd" for name in STRING_COLUMNS},
        "Image.bytes": "none",
        "Image.path": "zstd",
    },
    "compression_level": None,
    "use_dictionary": ["Better", "Category"],
    "write_statistics": ["ID", "Better", "Category"],
    "write_page_index": False,
    "store_schema": True,
    # Values per encoding batch: the writer buffers a whole batch before it
    # cuts pages, so pyarrow's default 1,024 would hold ~20 MB of images.
    "write_batch_size": 16,
}


class _DomainFile:
    def __init__(self, path: Path, schema, *, row_group_rows: int, row_group_bytes: int):
        import pyarrow.parquet as pq

        path.parent.mkdir(parents=True, exist_ok=True)
        self.schema = schema
        self.writer = pq.ParquetWriter(str(path), schema, **WRITER_OPTIONS)
        self.row_group_rows = row_group_rows
        self.row_group_bytes = row_group_bytes
        self.columns: dict[str, list[str]] = {name: [] for name in (*STRING_COLUMNS, "path")}
        self.images: list[bytes] = []
        self.buffered = 0
        self.rows = 0

    def append(self, record: dict[str, str], image: bytes) -> None:
        for name in STRING_COLUMNS:
            self.columns[name].append(record[name])
        self.columns["path"].append(record["Image"])
        self.images.append(image)
        self.buffered += len(image) + sum(len(record[name]) for name in STRING_COLUMNS)
        if len(self.images) >= self.row_group_rows or self.buffered >= self.row_group_bytes:
            self.flush()

    def flush(self) -> None:
        import pyarrow as pa

        n = len(self.images)
        if not n:
            return
        # The image bytes column from two buffers (offsets, then the images end
        # to end) rather than through an array builder, whose doubling
        # reallocations of the largest column leave the allocator holding
        # several row groups' worth of memory.
        offsets = array("i", [0])
        end = 0
        for image in self.images:
            end += len(image)
            offsets.append(end)
        if end >= 2**31:
            raise ValueError("a row group's images exceed 2 GiB; lower row_group_bytes")
        data = b"".join(self.images)
        self.images = []
        image_bytes = pa.Array.from_buffers(
            pa.binary(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
        )
        strings = {name: pa.array(values, pa.string()) for name, values in self.columns.items()}
        image = pa.StructArray.from_arrays(
            [image_bytes, strings["path"]], fields=list(self.schema.field("Image").type)
        )
        table = pa.Table.from_arrays(
            [image if name == "Image" else strings[name] for name in COLUMNS], schema=self.schema
        )
        self.writer.write_table(table, row_group_size=n)  # exactly one row group
        self.rows += n
        self.columns = {name: [] for name in self.columns}
        self.buffered = 0

    def close(self) -> None:
        self.flush()
        self.writer.close()


class ParquetWriter:
    """An `extra_writers` entry of `exporter.write_release`: one Parquet file
    per domain under `folder/parquet/`, created at the domain's first record.
    Records must arrive grouped by domain (write_release's order): a domain's
    file is finished when the next domain begins, so only one is open at a
    time. `domains` (slugs) also get a file, with no rows, if no record
    arrives for them, like their empty JSON files."""

    def __init__(
        self,
        folder: Path,
        *,
        domains: Iterable[str] = (),
        row_group_rows: int = ROW_GROUP_ROWS,
        row_group_bytes: int = ROW_GROUP_BYTES,
    ):
        if row_group_rows < 1:
            raise ValueError("row_group_rows must be at least 1")
        self.folder = Path(folder) / FOLDER
        self.domains = list(domains)
        self.row_group_rows = row_group_rows
        self.row_group_bytes = row_group_bytes
        self.rows: dict[str, int] = {}  # rows written per domain, in order
        self.current: tuple[str, _DomainFile] | None = None
        self.schema = None
        self.closed = False

    def _open(self, domain: str) -> _DomainFile:
        if domain in self.rows:
            raise ValueError(
                f"records of domain {domain!r} arrived after another domain's; "
                "they must be grouped by domain"
            )
        if self.schema is None:
            self.schema = arrow_schema()
        self.rows[domain] = 0
        return _DomainFile(
            self.folder / f"{domain}.parquet",
            self.schema,
            row_group_rows=self.row_group_rows,
            row_group_bytes=self.row_group_bytes,
        )

    def _finish_current(self) -> None:
        if self.current is not None:
            domain, f = self.current
            self.current = None
            f.close()
            self.rows[domain] = f.rows

    def write(self, item: Any, record: dict[str, str], image_path: Path) -> None:
        """`item` is the exporter's ExportItem (only its domain is used),
        `record` the benchmark record, `image_path` the image in the release."""
        if self.closed:
            raise RuntimeError("the Parquet writer is closed")
        if self.current is None or self.current[0] != item.domain:
            self._finish_current()
            self.current = (item.domain, self._open(item.domain))
        self.current[1].append(record, Path(image_path).read_bytes())

    def close(self) -> None:
        """Finish the open file and write the empty ones (idempotent)."""
        if self.closed:
            return
        self.closed = True
        self._finish_current()
        for domain in self.domains:
            if domain not in self.rows:
                self._open(domain).close()

    def abort(self) -> None:
        """After a failed export: release the open file, write nothing more
        and raise nothing (the caller is handling the original error)."""
        self.closed = True
        if self.current is not None:
            _, f = self.current
            self.current = None
            with contextlib.suppress(Exception):  # the folder is discarded anyway
                f.writer.close()
