"""Parsing dataset files (Multimodal RewardBench JSON, chosen/rejected JSONL) into
records, collecting every problem; nothing here touches the database.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from itertools import islice
from typing import Any

from annotate.importing.images import validate_images
from annotate.importing.jsonscan import (
    DatasetFile,
    _skip_ws,
    check_utf8,
    iter_json_array,
    iter_jsonl,
)
from annotate.importing.options import ImportOptions, RecordRules, Wording
from annotate.importing.records import (
    FORMATS,
    MAX_ID_LENGTH,
    MAX_IMAGE_PATH_LENGTH,
    MAX_MODEL_LENGTH,
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
    check_storable,
    read_purpose,
)
from annotate.importing.sources import ImageSource


def detect_format(filename: str, first: Any) -> str:
    if filename.lower().endswith(".jsonl"):
        return "pairs"
    if (
        isinstance(first, dict)
        and ("chosen" in first or "response_1" in first)
        and "Output1" not in first
    ):
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


def parse_mrb_record(
    value: Any, line: int, index: int, log: ProblemLog, *, category: str | None = None
) -> Record | None:
    """One Multimodal RewardBench record. `Better` is an optional prior; with
    `category` given (the caller derives it) `Category` is not required and,
    if present, is kept with the other extra fields."""
    if not isinstance(value, dict):
        log.add(f"record must be a JSON object, not {type(value).__name__}", line=line, index=index)
        return None
    if not check_storable(value, log, line, index):
        return None
    before = log.added
    optional = {"Better"} if category is None else {"Better", "Category"}
    fields = {
        key: _check_str(value, key, log, line, index, required=key not in optional)
        for key in MRB_KEYS
    }
    better = fields["Better"]
    if better is not None and better not in ("Output1", "Output2"):
        log.add(
            'must be "Output1" or "Output2"',
            detail=brief(better),
            line=line,
            index=index,
            field="Better",
        )
    _check_id(fields["ID"], log, line, index, "ID")
    _check_image_path(fields["Image"], log, line, index, "Image")
    if log.added > before or log.truncated:
        return None
    used = MRB_KEYS if category is None else tuple(k for k in MRB_KEYS if k != "Category")
    extra = {k: v for k, v in value.items() if k not in used}
    meta: dict[str, Any] = {"format": "mrb", "prior_better": better}
    if extra:
        meta["source"] = extra
    return Record(
        line=line,
        index=index,
        external_id=fields["ID"],  # type: ignore[arg-type]
        category=fields["Category"] if category is None else category,  # type: ignore[arg-type]
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
    value: Any,
    line: int,
    index: int,
    log: ProblemLog,
    options: PairsOptions,
    *,
    category: str | None = None,
) -> Record | None:
    """One chosen/rejected record, or an unlabelled `response_1`/`response_2`
    pair (kept in file order). With `category` given (the caller derives it)
    the category field is not required and, if present, kept in meta."""
    if not isinstance(value, dict):
        log.add(f"record must be a JSON object, not {type(value).__name__}", line=line, index=index)
        return None
    if not check_storable(value, log, line, index):
        return None
    before = log.added
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
    labelled = key("chosen") in value or key("rejected") in value
    unlabelled = key("response_1") in value or key("response_2") in value
    if labelled and unlabelled:
        log.add(
            f"cannot go with '{key('chosen')}'/'{key('rejected')}': a record holds one pair",
            line=line,
            index=index,
            field=key("response_1"),
        )
    derived = category is not None  # by the caller; the file's category is kept in meta
    first, second = ("response_1", "response_2") if unlabelled else ("chosen", "rejected")
    models = ("model_1", "model_2") if unlabelled else ("chosen_model", "rejected_model")
    chosen, rejected = text(first), text(second)
    image_ref = _pairs_image(value, key, log, line, index)
    missing_category = 0  # a record without one comes back with category None
    if category is None and options.domain:
        category = options.domain
    elif category is None:
        if key("category") in value:
            category = _check_str(value, key("category"), log, line, index)
        else:
            # Not a reason to stop checking the record: its ID and image are
            # still checked, so one report names every kind of problem.
            missing_category = 1
            w = log.wording or Wording()
            log.add(
                f"is missing; give {w.option('domain')} for the whole file, derive one with "
                f"{w.option('domain_from')} or map a field to 'category' with "
                f"{w.option('field_map')}",
                line=line,
                index=index,
                field=key("category"),
            )
    chosen_reason = text("chosen_reason", required=False) or ""
    rejected_reason = text("rejected_reason", required=False) or ""
    chosen_model = text(models[0], required=False) or ""
    rejected_model = text(models[1], required=False) or ""
    reference = text("reference_answer", required=False) or ""
    # Optional (issue 34): items sharing a `group` are one prompt's pairs (or
    # one pair under several criteria); `criterion` is the question asked of
    # the pair. Kept verbatim in meta's source too, so an export writes them back.
    group = text("group", required=False) or ""
    criterion = text("criterion", required=False) or ""
    _check_length(group, MAX_ID_LENGTH, log, line, index, key("group"))
    _check_length(chosen_model, MAX_MODEL_LENGTH, log, line, index, key(models[0]))
    _check_length(rejected_model, MAX_MODEL_LENGTH, log, line, index, key(models[1]))
    image_label = key("image") if value.get(key("image")) is not None else "images"
    _check_image_path(image_ref, log, line, index, image_label)
    # Issue 36: a qualification or check item's right answer is its chosen
    # response (gold whatever the gold option says); kept in meta's source too.
    gate, problems = read_purpose(value)
    if gate["purpose"] != "benchmark" and unlabelled:
        problems.append(("purpose", "a qualification or check item needs chosen/rejected"))
    for name, message in problems:
        log.add(message, line=line, index=index, field=name)
    if log.added - missing_category > before or log.truncated:
        return None
    assert ext_id is not None and chosen is not None and rejected is not None
    # Unlabelled pairs keep their order (it says nothing); a chosen/rejected
    # pair is ordered by a seeded coin, so that the order does not leak the label.
    swapped = not unlabelled and pairs_swap(options.seed, ext_id)
    label = "2" if swapped else "1"  # canonical number of the originally chosen response
    other_models = ("chosen_model", "rejected_model") if unlabelled else ("model_1", "model_2")
    used = {key(name) for name in PAIRS_FIELDS if name not in other_models} | {"images"}
    if derived:
        used.discard(key("category"))  # derived elsewhere: the file's own is kept
    meta: dict[str, Any] = {"format": "pairs"}
    if not unlabelled:
        meta["original_label"] = label
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
        gold_choice=label
        if (options.gold_from_label or gate["purpose"] != "benchmark") and not unlabelled
        else "",
        reference_answer=reference,
        meta=meta,
        group=group,
        criterion=criterion,
        **gate,
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
            "exactly one image per item is supported",
            detail=f"{len(images)} images",
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
    skipped: int = 0  # later records of a repeated ID, left out (keep-first)
    renamed: int = 0  # later records of a repeated ID, renamed (suffix)

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


def _decode(value, line: int, index: int, log: ProblemLog, fmt: str, pairs_options, rules):
    if fmt == "mrb":
        return parse_mrb_record(value, line, index, log, category=rules.category)
    return parse_pairs_record(value, line, index, log, pairs_options, category=rules.category)


def _rules(fmt, pairs_options: PairsOptions, options: ImportOptions, known, renames=None):
    key = pairs_options.source_key
    mrb = fmt == "mrb"
    return RecordRules(
        options,
        known_categories=known,
        id_field="ID" if mrb else key("id"),
        category_field="Category" if mrb else key("category"),
        image_field="Image" if mrb else key("image"),
        renames=renames,
    )


def _reread_records(
    decoded, *, fmt: str, pairs_options, options, known_categories, renames
) -> Iterator[Record]:
    """The records of an already validated file, decoded again one at a time."""
    log = ProblemLog("", 1)
    rules = _rules(fmt, pairs_options, options, known_categories, renames)
    for line, index, value in decoded():
        record = _decode(value, line, index, log, fmt, pairs_options, rules)
        if record is None or log.problems:  # validated before: only if the file changed
            raise RuntimeError(f"dataset changed while importing (line {line})")
        record = rules.apply(record, value)
        del value
        if record is None:  # a repeated ID left out (keep-first)
            continue
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
    options: ImportOptions | None = None,
    max_errors: int = 50,
    max_records: int = MAX_RECORDS,
    max_record_bytes: int = MAX_RECORD_BYTES,
    progress=None,
) -> ParsedDataset:
    """Parse and validate a whole dataset file and the images it references.

    `known_categories` maps every accepted category string (export Category
    and domain slug) to a domain slug. Raises ImportFailed listing every
    problem found (up to `max_errors`)."""
    options = options or ImportOptions()
    log = ProblemLog(filename, max_errors, options.wording)
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
    if fmt is None:
        fmt = detect_format(filename, first)
    del first
    if count == 0 and not log.problems:
        log.add("file has no records")
    return parse_records(
        partial(_decoded, reader, data, count, max_errors),
        log=log,
        fmt=fmt,
        pairs_options=pairs_options,
        options=options,
        known_categories=known_categories,
        images=images,
        limits=limits,
        progress=progress,
    )


def _decoded(reader, data, count: int, cap: int) -> Iterator[tuple[int, int, Any]]:
    # Syntax errors were reported by the first pass (a reader stops at its cap).
    return islice(reader(data, ProblemLog("", cap)), count)


def parse_records(
    decoded: Callable[[], Iterable[tuple[int, int, Any]]],
    *,
    log: ProblemLog,
    fmt: str,
    pairs_options: PairsOptions,
    options: ImportOptions,
    known_categories: dict[str, str],
    images: ImageSource,
    limits: ImageLimits,
    progress=None,
) -> ParsedDataset:
    """Validate decoded records and their images, whatever reader decoded
    them: `decoded()` yields (line or row number, record number, the record
    as a dict of plain values) and must give the same records each time it
    is called (once here, again when the records are written). Options
    (duplicate IDs, domains) apply here, to every reader alike. Problems go
    to `log` (which may hold the reader's own); raises ImportFailed if any."""
    # Only a RecordRef is kept of each record: the texts are decoded again
    # when written (ParsedDataset.iter_records).
    records: list[RecordRef] = []
    # Records refused for their domain or category: their images are still
    # checked, so that one report names every kind of problem (issue 31).
    refused: list[RecordRef] = []
    rules = _rules(fmt, pairs_options, options, known_categories)
    for line, index, value in decoded():
        if log.full:
            log.truncated = True  # records are left unchecked
            break
        record = _decode(value, line, index, log, fmt, pairs_options, rules)
        if record is None:
            continue
        skipped = rules.skipped
        ref = RecordRef(line, index, record.external_id, record.image_ref)
        if not rules.check(record, value, log):
            if rules.skipped == skipped:
                refused.append(ref)
            continue
        if record.category is None:  # missing, and reported as such
            refused.append(ref)
            continue
        if record.category not in known_categories:
            # Grouped by value in rules.finish: one problem, not one per record.
            rules.note_unknown(record.category, index)
            refused.append(ref)
            continue
        records.append(ref)
        del record, value
    if not log.truncated:
        rules.finish(log)
    for ref in records:
        ref.external_id = rules.renames.get(ref.index, ref.external_id)
    image_infos = validate_images(
        sorted([*records, *refused], key=lambda r: r.index) if refused else records,
        fmt,
        pairs_options,
        images,
        limits,
        log,
        progress,
    )
    log.raise_if_any()
    return ParsedDataset(
        format=fmt,
        records=records,
        images=image_infos,
        reread=partial(
            _reread_records,
            decoded,
            fmt=fmt,
            pairs_options=pairs_options,
            options=options,
            known_categories=known_categories,
            renames=rules.renames,
        ),
        skipped=rules.skipped if options.duplicates == "keep-first" else 0,
        renamed=len(rules.renames),
    )


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
