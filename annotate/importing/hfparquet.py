"""Hugging Face parquet (the `datasets` layout) as an import source; the
layouts it reads are listed in the README ("Hugging Face parquet").

Each row becomes the raw record a JSONL file (for a studio release's
parquet, a Multimodal RewardBench JSON file) would hold and goes through the
same parsing, so field maps, domain options and every check apply alike.
Rows are read in record batches (memory bounded by a batch, not the file).
Image bytes are written once per SHA-256 to a temporary spool file and read
back from it by the image checks and the storing threads. Problems name the
file, the row (0-based, as ``datasets`` indexes rows) and the column.
"""

from __future__ import annotations

import datetime
import decimal
import hashlib
import importlib.util
import json
import os
import tempfile
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from annotate.importing.bounds import (
    PARQUET_BATCH_BYTES,
    ImportBounds,
    parquet_batch_rows,
    parquet_dictionary_columns,
    parquet_metadata_problems,
    parquet_row_sizes,
)
from annotate.importing.images import _inspect_image, pillow_limits
from annotate.importing.jsonscan import DatasetFile, open_dataset_file
from annotate.importing.records import (
    IMAGE_BATCH,
    IMAGE_THREADS,
    MRB_KEYS,
    ImageInfo,
    ImageLimits,
    ImportFailed,
    ImportProblem,
    ProblemLog,
    brief,
)
from annotate.importing.sources import ImageSource, NoImageSource, safe_relative_path

PARQUET_SUFFIX = ".parquet"
INSTALL_HINT = (
    "reading parquet needs pyarrow, the optional `parquet` extra: "
    "pip install 'triplet-studio[parquet]' (or pip install 'pyarrow>=18')"
)
RESPONSE_LISTS = ("response", "responses")
RANKINGS = ("human_ranking", "ranking")
PROMPT_ALIASES = ("query", "question")
# Rows decoded to Python at a time, at most: `datasets` writes image sets in
# row groups of 100 rows, so a batch holds a few megabytes of images (fewer
# rows when the metadata says rows may be large: bounds.parquet_batch_rows).
BATCH_ROWS = 256


def available() -> bool:
    """Whether pyarrow is installed (the `parquet` extra), without importing it."""
    return importlib.util.find_spec("pyarrow") is not None


@dataclass(frozen=True)
class RowProblem(ImportProblem):
    """A problem in a parquet file: its row (0-based) and column."""

    NOUNS = ("row", "row", "column")


class RowImages(ImageSource):
    """Images taken from the rows' bytes, each stored once (by SHA-256) in an
    anonymous temporary file; a ref not found there is read from `fallback`
    (the images folder or zip given with the dataset).

    With `limits`, each new image is also checked (annotate.importing.images)
    in threads, read back from the spool, from when it is added: while the
    rows are still being read and the records parsed, not after them. The
    import's image check then takes the results (:meth:`checked`). The
    caller keeps Pillow's limits set (images.pillow_limits) until close().
    """

    def __init__(
        self, label: str, fallback: ImageSource | None = None, limits: ImageLimits | None = None
    ):
        self.label = label
        self.fallback = fallback or NoImageSource()
        # Closed by close() (the import's ExitStack), not by a with block.
        self._file = tempfile.TemporaryFile(prefix="import-parquet-images-")  # noqa: SIM115
        self._end = 0
        self._at: dict[bytes, tuple[int, int]] = {}  # sha256 -> (offset, length)
        self._refs: dict[str, bytes] = {}  # ref -> sha256
        self._limits = limits
        self._checked: dict[bytes, ImageInfo | str] = {}  # sha256 -> check result
        self._batch: list[tuple[bytes, str, int, int]] = []  # (sha256, ref, offset, length)
        self._pending: list[Future] = []
        self._pool = (
            ThreadPoolExecutor(IMAGE_THREADS, thread_name_prefix="import-image")
            if limits is not None
            else None
        )

    def add(self, data: bytes, path: str | None) -> str:
        """Spool one image; return the ref records name it by: its `path` if
        that is a safe relative path not already naming other bytes, else a
        name made of its SHA-256."""
        digest = hashlib.sha256(data)
        sha = digest.digest()  # 32 bytes, not 64 characters: 100,000 keys are held
        new = sha not in self._at
        if new:
            self._file.write(data)
            self._at[sha] = (self._end, len(data))
            self._end += len(data)
        ref = safe_relative_path(path) if path else None
        if ref is None or self._refs.get(ref, sha) != sha:
            ref = f"by-sha256/{digest.hexdigest()}.{_extension(data)}"
        self._refs[ref] = sha
        if new and self._pool is not None:
            self._batch.append((sha, ref, *self._at[sha]))
            if len(self._batch) >= IMAGE_BATCH:
                self._submit()
        return ref

    def _submit(self) -> None:
        assert self._pool is not None and self._limits is not None
        self._file.flush()  # the threads read the batch back from the file
        fd = self._file.fileno()
        self._pending.append(self._pool.submit(_check_batch, fd, self._batch, self._limits))
        self._batch = []

    def finish(self) -> None:
        """Every image added: flush the spool (the checks go on)."""
        if self._batch:
            self._submit()
        self._file.flush()

    def checked(self, ref: str) -> ImageInfo | str | None:
        if self._pending:  # the first question waits for every check
            for future in self._pending:
                self._checked.update(future.result())
            self._pending = []
        sha = self._refs.get(ref)
        result = self._checked.get(sha) if sha is not None else None
        if isinstance(result, ImageInfo) and result.ref != ref:
            return replace(result, ref=ref)
        return result

    def read(self, ref: str, max_bytes: int) -> bytes:
        sha = self._refs.get(ref)
        if sha is None:
            return self.fallback.read(ref, max_bytes)
        offset, length = self._at[sha]
        if length > max_bytes:
            raise ValueError(_too_large(length, max_bytes))
        return os.pread(self._file.fileno(), length, offset)  # thread-safe: no shared position

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)  # waits for the running ones
        self._file.close()  # (the fallback is its opener's to close)


def _too_large(length: int, max_bytes: int) -> str:
    return f"image is {length} bytes, more than the limit of {max_bytes}"


def _check_batch(
    fd: int, batch: list[tuple[bytes, str, int, int]], limits: ImageLimits
) -> list[tuple[bytes, ImageInfo | str]]:
    """Check spooled images in a worker thread as check_image does with what
    RowImages.read returns: (sha256, ImageInfo or why not) each."""
    out: list[tuple[bytes, ImageInfo | str]] = []
    for sha, ref, offset, length in batch:
        if length > limits.max_bytes:
            out.append((sha, _too_large(length, limits.max_bytes)))
            continue
        try:
            data = os.pread(fd, length, offset)
            out.append((sha, _inspect_image(data, ref, limits, sha.hex())))
        except (OSError, ValueError) as exc:
            out.append((sha, str(exc)))
    return out


def _extension(data: bytes) -> str:
    if data.startswith(b"\x89PNG"):
        return "png"
    if data.startswith(b"\xff\xd8"):
        return "jpg"
    if data.startswith(b"GIF8"):
        return "gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    return "bin"


def _is_image_struct(arrow_type) -> bool:
    import pyarrow as pa

    if not pa.types.is_struct(arrow_type):
        return False
    names = {arrow_type.field(i).name for i in range(arrow_type.num_fields)}
    return names == {"bytes", "path"}


def _is_image_list(arrow_type) -> bool:
    import pyarrow as pa

    return (
        pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type)
    ) and _is_image_struct(arrow_type.value_type)


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime.date | datetime.time | decimal.Decimal):
        return str(value)
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    raise TypeError(f"holds {type(value).__name__} values, which a record cannot store")


class _Rows:
    """Turns the parquet rows into raw records (see the module's doc)."""

    def __init__(
        self,
        schema,
        *,
        label: str,
        field_map: dict[str, str],
        images: RowImages,
        cap: int,
        verbatim: bool = False,
    ):
        self.label = label
        self.images = images
        self.log = ProblemLog(label, cap)
        # verbatim: each row as the JSONL line it stands for, columns as they are
        # (a format that reads its own parquet layout: no pair layout applied).
        names = [] if verbatim else list(schema.names)
        self.mrb = not verbatim and all(key in names for key in MRB_KEYS if key != "Better")
        columns = list(schema.names)
        self.image_columns = {n for n in columns if _is_image_struct(schema.field(n).type)}
        self.image_lists = {n for n in columns if _is_image_list(schema.field(n).type)}
        chosen = field_map.get("chosen", "chosen")
        self.responses = None
        if not self.mrb and chosen not in names and "response_1" not in names:
            self.responses = next((n for n in RESPONSE_LISTS if n in names), None)
        self.ranking = next((n for n in RANKINGS if n in names), None)
        self.models = "models" if "models" in names else None
        self.prompt_alias = None
        if not self.mrb and "prompt" not in names and "prompt" not in field_map:
            self.prompt_alias = next((n for n in PROMPT_ALIASES if n in names), None)
        # Which column a record field came from, for the parser's problems.
        self.origin: dict[str, str] = {}
        if self.responses:
            for name in ("chosen", "rejected", "response_1", "response_2"):
                self.origin[name] = self.responses
            self.origin["chosen_model"] = self.origin["rejected_model"] = "models"
        if self.prompt_alias:
            self.origin["prompt"] = self.prompt_alias

    def record(self, row: dict[str, Any], n: int) -> dict[str, Any] | None:
        before = len(self.log.problems)
        out: dict[str, Any] = {}
        for name, value in row.items():
            if name in self.image_columns:
                out[name] = self._image(value, n, name)
            elif name in self.image_lists:
                out[name] = None if value is None else [self._image(v, n, name) for v in value]
            elif isinstance(value, bytes):
                self._problem("holds binary data that is not an image struct", n, name)
            else:
                out[name] = value
        if self.prompt_alias and self.prompt_alias in out:
            out["prompt"] = out.pop(self.prompt_alias)
        if self.responses:
            self._split_responses(out, n)
        if len(self.log.problems) > before:
            return None
        return out

    def _image(self, value: Any, n: int, column: str) -> str | None:
        if value is None:
            return None
        data, path = value.get("bytes"), value.get("path")
        if data is None:
            if not path:
                self._problem("image has neither bytes nor a path", n, column)
            return path  # a file beside the dataset, read like a JSON file's path
        return self.images.add(data, path)

    def _split_responses(self, out: dict[str, Any], n: int) -> None:
        column = self.responses or ""
        responses = out.pop(column, None)
        if not isinstance(responses, list) or len(responses) != 2:
            count = "none" if responses is None else len(responses)
            self._problem(
                f"has {count} responses; this layout holds pairs, exactly two per row "
                "(more responses need a format of their own)",
                n,
                column,
            )
            return
        models = out.get(self.models) if self.models else None
        first_better = self._first_better(out.get(self.ranking) if self.ranking else None, n)
        if first_better is None:  # an unlabelled pair: response_1, response_2 in file order
            out["response_1"], out["response_2"] = responses
            return
        chosen, rejected = (0, 1) if first_better else (1, 0)
        out["chosen"], out["rejected"] = responses[chosen], responses[rejected]
        if self.models and isinstance(models, list) and len(models) == 2:
            out["chosen_model"], out["rejected_model"] = models[chosen], models[rejected]
            out.pop(self.models)

    def _first_better(self, ranking: Any, n: int) -> bool | None:
        if ranking is None:
            return None
        if (
            not isinstance(ranking, list)
            or len(ranking) != 2
            or not all(isinstance(r, int | float) for r in ranking)
        ):
            self._problem(
                f"must be two ranks such as [0, 1] (lower is better), not {brief(str(ranking))}",
                n,
                self.ranking,
            )
            return None
        if ranking[0] == ranking[1]:
            return None
        return ranking[0] < ranking[1]

    def _problem(self, message: str, n: int, column: str | None) -> None:
        if len(self.log.problems) >= self.log.cap:
            self.log.truncated = True
            return
        self.log.problems.append(RowProblem(self.label, message, index=n, field=column))


@dataclass
class ParquetDataset:
    """A parquet file turned into a JSON dataset on disk: pass `data`,
    `fmt` and `images` to the import; `row_problems` restates its problems."""

    data: DatasetFile | bytes
    fmt: str
    images: RowImages
    origin: dict[str, str]
    label: str

    def row_problems(self, failed: ImportFailed) -> ImportFailed:
        """The parser's problems (record index = row) as parquet rows and columns."""
        problems = [
            RowProblem(
                self.label,
                p.message,
                index=p.index,
                field=self.origin.get(p.field or "", p.field),
                count=p.count,
                more=p.more,
                detail=p.detail,
            )
            if p.file == self.label
            else p
            for p in failed.problems
        ]
        return ImportFailed(problems, truncated=failed.truncated)


@contextmanager
def open_parquet(
    path: Path,
    *,
    label: str,
    field_map: dict[str, str] | None = None,
    images: ImageSource | None = None,
    limits: ImageLimits | None = None,
    bounds: ImportBounds | None = None,
    verbatim: bool = False,
) -> Iterator[ParquetDataset]:
    """Convert a parquet file (read in record batches) into a temporary JSON
    dataset and an image spool, removed on exit; with `limits` the spool
    checks its images (RowImages). Raises ImportFailed naming rows and
    columns if a row cannot be turned into a record, or if the file is over
    `bounds` (checked from its metadata before a row is read, then from each
    batch's value lengths before a value is made: bounds.py). `verbatim`: the
    rows as JSONL records of their own columns (no pair layout: a format
    module that reads its own parquet layout)."""
    bounds = bounds or ImportBounds()
    if not available():
        raise ImportFailed([ImportProblem(label, INSTALL_HINT)])
    import pyarrow as pa
    import pyarrow.parquet as pq

    with ExitStack() as stack:
        if limits is not None:
            stack.enter_context(pillow_limits(limits))  # the spool's checks run until close
        spool = RowImages(label, images, limits)
        stack.callback(spool.close)
        try:
            # No pre-buffering: by default pyarrow reads every row group's
            # columns ahead (the whole file in memory); one group at a time here.
            # Text and binary columns as dictionaries: a value a file repeats
            # through its dictionary is decoded once, not once per row (bounds).
            metadata = pq.read_metadata(path)
            as_dictionaries = parquet_dictionary_columns(metadata)
            parquet = stack.enter_context(
                pq.ParquetFile(
                    path, pre_buffer=False, metadata=metadata, read_dictionary=as_dictionaries
                )
            )
        except (OSError, ValueError, pa.ArrowException) as exc:  # ArrowInvalid: ValueError
            problem = ImportProblem(label, f"not a readable parquet file ({exc})")
            raise ImportFailed([problem]) from None
        rows = _Rows(
            parquet.schema_arrow,
            label=label,
            field_map=field_map or {},
            images=spool,
            cap=bounds.max_errors,
            verbatim=verbatim,
        )
        image_columns = rows.image_columns | rows.image_lists
        found = parquet_metadata_problems(parquet.metadata, bounds, image_columns)
        for problem in found:
            rows._problem(problem.message, problem.row, problem.column)
        rows.log.raise_if_any()
        out = stack.enter_context(tempfile.NamedTemporaryFile("wb", suffix=".json"))
        if rows.mrb:
            out.write(b"[\n")
        n = 0
        written = 0
        first = True
        try:
            for batch in _batches(parquet, set(as_dictionaries)):
                sizes, too_large = parquet_row_sizes(batch, n, bounds, image_columns)
                for position, row in enumerate(_rows_of(batch, sizes, too_large)):
                    if row is None:  # refused from its lengths: never made into values
                        problem = too_large[position]
                        rows._problem(problem.message, problem.row, problem.column)
                        n += 1
                        if rows.log.full:
                            break
                        continue
                    record = rows.record(row, n)
                    n += 1
                    if record is None:
                        continue
                    try:
                        line = json.dumps(record, ensure_ascii=False, default=_jsonable)
                    except (TypeError, ValueError) as exc:
                        rows._problem(str(exc), n - 1, None)
                        continue
                    encoded = line.encode("utf-8", "surrogatepass")
                    del line
                    written += len(encoded) + 2
                    if written > bounds.max_dataset_bytes:
                        rows._problem(bounds.too_much_data(written), n - 1, None)
                        rows.log.truncated = True
                        break
                    if rows.mrb and not first:
                        out.write(b",\n")
                    out.write(encoded)
                    if not rows.mrb:
                        out.write(b"\n")
                    first = False
                    if rows.log.full:
                        break
                del batch
                if rows.log.full or written > bounds.max_dataset_bytes:
                    break
        except (OSError, ValueError, pa.ArrowException) as exc:  # NotImplemented too
            raise ImportFailed([RowProblem(label, f"cannot be read ({exc})", index=n)]) from None
        if rows.mrb:
            out.write(b"\n]\n")
        # pyarrow's allocator keeps freed batches for reuse; the import that
        # follows allocates through Python's, so give them back.
        pa.default_memory_pool().release_unused()
        rows.log.raise_if_any()
        out.flush()
        spool.finish()
        data = stack.enter_context(open_dataset_file(Path(out.name)))
        yield ParquetDataset(
            data=data,
            fmt="mrb" if rows.mrb else "pairs",
            images=spool,
            origin=rows.origin,
            label=label,
        )


def read_with(source: Any, context: Any, read: Any, **options: Any) -> Any:
    """A format's parquet file (`source`, read in the import's `context`) as
    `read(parquet)` reads the ParquetDataset's records (the format's own
    reader of lines), its problems restated as rows and columns; `options`
    are open_parquet's (field_map, verbatim)."""
    parquet = context.stack.enter_context(
        open_parquet(
            source.path,
            label=source.path.name,
            images=context.images,
            limits=context.limits,
            bounds=context.bounds,
            **options,
        )
    )
    try:
        parsed = read(parquet)
    except ImportFailed as exc:
        raise parquet.row_problems(exc) from None
    parsed.restate = parquet.row_problems
    return parsed


def _batches(parquet, as_dictionaries: set[str]) -> Iterator:
    """Record batches of at most BATCH_ROWS rows, a row group at a time, as
    many as the row group's metadata says a batch's memory allows."""
    for group in range(parquet.num_row_groups):
        metadata = parquet.metadata.row_group(group)
        size = parquet_batch_rows(metadata, BATCH_ROWS, as_dictionaries)
        yield from parquet.iter_batches(batch_size=size, row_groups=[group])


def _rows_of(batch, sizes, refused: dict[int, object]) -> Iterator[dict[str, Any] | None]:
    """The batch's rows as Python values, made PARQUET_BATCH_BYTES (by
    `sizes`, each row's bytes) at a time; None for a refused row, which is
    never made one."""
    start = 0
    while start < batch.num_rows:
        if start in refused:
            yield None
            start += 1
            continue
        end, held = start, 0.0
        while end < batch.num_rows and end not in refused:
            if end > start and held + sizes[end] > PARQUET_BATCH_BYTES:
                break
            held += sizes[end]
            end += 1
        yield from batch.slice(start, end - start).to_pylist()
        start = end
