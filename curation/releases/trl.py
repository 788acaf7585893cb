"""TRL-ready Parquet copies of a release (DESIGN §7). No Django import.

``trl/<domain slug>.parquet`` holds one row per record in the conversational
preference layout TRL's ``DPOTrainer`` and ``RewardTrainer`` take as they
are (and ``datasets`` loads with the images decoded)::

    id        string
    prompt    [{"role": "user", "content": <prompt text>}]
    chosen    [{"role": "assistant", "content": <chosen response>}]
    rejected  [{"role": "assistant", "content": <rejected response>}]
    images    [{"bytes": <image file>, "path": <its path in the release>}]
    category  string (the export Category)

Message contents are plain strings: TRL puts the image placeholder into the
first user message itself when the row has images (a "content" list of typed
parts would bypass that). ``images`` is a list of the ``datasets`` ``Image``
feature's storage, and the features are written to the schema metadata (key
``huggingface``) so ``datasets`` decodes them as PIL images. For text-only
training drop the column (``ds.remove_columns("images")``).

``conversational_row`` is the pure row builder (training mixes reuse it);
``TrlWriter`` is an ``extra_writers`` entry of ``exporter.write_release``.
The output is a function of the rows, as for curation.releases.parquet:
fixed writer options, row groups cut at deterministic points.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

FOLDER = "trl"
COLUMNS = ("id", "prompt", "chosen", "rejected", "images", "category")
MESSAGE_COLUMNS = ("prompt", "chosen", "rejected")
ROW_GROUP_ROWS = 100
ROW_GROUP_BYTES = 8 * 1024 * 1024


def conversational_row(
    *,
    id: str,
    prompt: str,
    chosen: str,
    rejected: str,
    category: str,
    images: Sequence[tuple[bytes, str]] = (),
) -> dict[str, Any]:
    """One TRL preference row: `images` are (file bytes, path) pairs."""
    return {
        "id": id,
        "prompt": [{"role": "user", "content": prompt}],
        "chosen": [{"role": "assistant", "content": chosen}],
        "rejected": [{"role": "assistant", "content": rejected}],
        "images": [{"bytes": data, "path": path} for data, path in images],
        "category": category,
    }


def row_of_item(item: Any, images: Sequence[tuple[bytes, str]]) -> dict[str, Any]:
    """The row of an exporter.ExportItem (the decided response is `chosen`)."""
    first, second = item.response_1, item.response_2
    chosen, rejected = (first, second) if item.chosen == "1" else (second, first)
    return conversational_row(
        id=item.external_id,
        prompt=item.prompt,
        chosen=chosen,
        rejected=rejected,
        category=item.category,
        images=images,
    )


def _string() -> dict[str, str]:
    return {"dtype": "string", "_type": "Value"}


def hf_features(extra: Sequence[str] = ()) -> dict[str, Any]:
    """The `datasets` Features of the rows, as `Features.to_dict()` writes them
    (datasets 4 and later: lists are `List` features). `extra`: string columns
    after `category` (a training mix adds `source`)."""
    message = {"feature": {"role": _string(), "content": _string()}, "_type": "List"}
    return {
        "id": _string(),
        "prompt": message,
        "chosen": message,
        "rejected": message,
        "images": {"feature": {"_type": "Image"}, "_type": "List"},
        "category": _string(),
        **{name: _string() for name in extra},
    }


def arrow_schema(extra: Sequence[str] = ()):
    import pyarrow as pa

    message = pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    types = {"prompt": message, "chosen": message, "rejected": message, "images": pa.list_(image)}
    metadata = {
        b"huggingface": json.dumps(
            {"info": {"features": hf_features(extra)}}, separators=(",", ":")
        ).encode()
    }
    columns = (*COLUMNS, *extra)
    return pa.schema([(name, types.get(name, pa.string())) for name in columns], metadata=metadata)


def writer_options(extra: Sequence[str] = ()) -> dict[str, Any]:
    """Fixed options (the same rows give the same bytes): text zstd-compressed,
    image bytes stored as they are (already compressed; zstd on them cost about
    15 % of a mix build's CPU), a small encoding batch so a batch of images is
    not buffered whole."""
    text = [
        "id",
        *(f"{m}.list.element.{f}" for m in MESSAGE_COLUMNS for f in ("role", "content")),
        "images.list.element.path",
        "category",
        *extra,
    ]
    return {
        "version": "2.6",
        "compression": {**dict.fromkeys(text, "zstd"), "images.list.element.bytes": "none"},
        "compression_level": None,
        "use_dictionary": ["category", *extra],
        "write_statistics": ["id", "category", *extra],
        "write_page_index": False,
        "store_schema": True,
        "write_batch_size": 16,
    }


def _row_bytes(row: dict[str, Any]) -> int:
    text = sum(len(m["content"]) for name in MESSAGE_COLUMNS for m in row[name])
    return text + sum(len(image["bytes"] or b"") for image in row["images"])


class RowFile:
    """One Parquet file of TRL rows, written in bounded row groups."""

    def __init__(
        self,
        path: Path,
        *,
        row_group_rows: int = ROW_GROUP_ROWS,
        row_group_bytes: int = ROW_GROUP_BYTES,
        extra: Sequence[str] = (),
    ):
        import pyarrow.parquet as pq

        path.parent.mkdir(parents=True, exist_ok=True)
        self.schema = arrow_schema(extra)
        self.writer = pq.ParquetWriter(str(path), self.schema, **writer_options(extra))
        self.row_group_rows = row_group_rows
        self.row_group_bytes = row_group_bytes
        self.buffer: list[dict[str, Any]] = []
        self.buffered = 0
        self.rows = 0

    def append(self, row: dict[str, Any]) -> None:
        self.buffer.append(row)
        self.buffered += _row_bytes(row)
        if len(self.buffer) >= self.row_group_rows or self.buffered >= self.row_group_bytes:
            self.flush()

    def flush(self) -> None:
        import pyarrow as pa

        if not self.buffer:
            return
        table = pa.Table.from_pylist(self.buffer, schema=self.schema)
        self.writer.write_table(table, row_group_size=len(self.buffer))
        self.rows += len(self.buffer)
        self.buffer = []
        self.buffered = 0

    def close(self) -> None:
        self.flush()
        self.writer.close()

    def abort(self) -> None:
        self.buffer = []
        with contextlib.suppress(Exception):
            self.writer.close()


class TrlWriter:
    """An `extra_writers` entry of `exporter.write_release`: one file per
    domain under `folder/trl/`, records grouped by domain (one file open at a
    time); `domains` without a record get an empty file."""

    def __init__(
        self,
        folder: Path,
        *,
        domains: Iterable[str] = (),
        extra: Sequence[str] = (),
        **row_group: int,
    ):
        self.folder = Path(folder) / FOLDER
        self.domains = list(domains)
        self.extra = tuple(extra)
        self.row_group = row_group
        self.rows: dict[str, int] = {}
        self.current: tuple[str, RowFile] | None = None
        self.closed = False

    def _open(self, domain: str) -> RowFile:
        if domain in self.rows:
            raise ValueError(f"records of domain {domain!r} must be grouped by domain")
        self.rows[domain] = 0
        return RowFile(self.folder / f"{domain}.parquet", extra=self.extra, **self.row_group)

    def _finish_current(self) -> None:
        if self.current is not None:
            domain, f = self.current
            self.current = None
            f.close()
            self.rows[domain] = f.rows

    def write(self, item: Any, record: dict[str, str], image_path: Path) -> None:
        """`item` an exporter.ExportItem, `record` its benchmark record,
        `image_path` its image in the release folder."""
        row = row_of_item(item, [(Path(image_path).read_bytes(), record["Image"])])
        self.write_row(item.domain, row)

    def write_row(self, domain: str, row: dict[str, Any]) -> None:
        """Append one row (rows grouped by domain) to `trl/<domain>.parquet`."""
        if self.closed:
            raise RuntimeError("the TRL writer is closed")
        if self.current is None or self.current[0] != domain:
            self._finish_current()
            self.current = (domain, self._open(domain))
        self.current[1].append(row)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._finish_current()
        for domain in self.domains:
            if domain not in self.rows:
                self._open(domain).close()

    def abort(self) -> None:
        self.closed = True
        if self.current is not None:
            _, f = self.current
            self.current = None
            f.abort()
