"""Parsing dataset files (Multimodal RewardBench JSON, chosen/rejected JSONL) into
records, collecting every problem; nothing here touches the database.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from itertools import chain, islice
from typing import Any

from annotate.importing.images import _inspect_image, pillow_limits
from annotate.importing.jsonscan import (
    DatasetFile,
    _skip_ws,
    check_utf8,
    iter_json_array,
    iter_jsonl,
)
from annotate.importing.records import (
    FORMATS,
    IMAGE_BATCH,
    IMAGE_THREADS,
    MAX_ID_LENGTH,
    MAX_IMAGE_PATH_LENGTH,
    MAX_MODEL_LENGTH,
    MAX_NESTING,
    MAX_PATH_SEGMENT_BYTES,
    MAX_RECORD_BYTES,
    MAX_RECORDS,
    MRB_KEYS,
    PAIRS_FIELDS,
    ImageInfo,
    ImageLimits,
    ImportFailed,
    ImportProblem,
    ProblemLog,
    Record,
    brief,
)
from annotate.importing.sources import ImageSource, safe_relative_path


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
