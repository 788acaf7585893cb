"""Multimodal RewardBench JSON and chosen/rejected (or unlabelled) JSONL
pairs: the records annotate.importing.parse checks, as parsed items.

An item has the Multimodal RewardBench shape: prompt = [image, text],
one text per response; `Better` (MRB) and the file's other fields are kept
in meta. The fingerprint is the one these imports always stored
(parse.content_hash), so files imported before the format seam re-import as
no-ops.
"""

from __future__ import annotations

from annotate.importing.formats import (
    IMAGE,
    TEXT,
    DatasetSource,
    ParsedFile,
    ParsedItem,
    ParsedPart,
    ReadContext,
)
from annotate.importing.jsonscan import DatasetFile
from annotate.importing.parse import PairsOptions, ParsedDataset, content_hash, parse_dataset
from annotate.importing.records import FORMATS, Record
from annotate.importing.sources import ImageSource, NoImageSource

NAMES = FORMATS  # ("mrb", "pairs")
SUFFIXES = (".json", ".jsonl")
# Asked last: any other file is read as JSON or JSONL (its problems say what is wrong).
FALLBACK = True
# How MRB files name our fields in reports (pairs files: their own names).
LABELS = {
    "mrb": {
        "prompt": "Text",
        "image": "Image",
        "image path": "Image",
        "response_1": "Output1",
        "response_2": "Output2",
        "domain": "Category",
        "gold": "Better",
        "meta:prior_better": "Better",
    },
    "pairs": {
        "response_1": "chosen/rejected",
        "response_2": "chosen/rejected",
        "domain": "category",
        "meta:original_label": "chosen/rejected",
    },
}


def detect(source: DatasetSource) -> bool:
    """Any other file (or a zip's dataset): read as JSON or JSONL, whose
    problems say what is wrong with it."""
    return source.archive is not None or source.path.is_file()


def read(source: DatasetSource, context: ReadContext) -> ParsedFile:
    # A zip: the service found its one dataset file (sources.find_dataset_in_zip).
    data = source.open_data(context.stack)
    # A dataset zip holds its images.
    images: ImageSource = (
        source.archive if source.archive is not None else context.images or NoImageSource()
    )
    fmt = context.fmt if context.fmt in NAMES else None
    return read_data(data, filename=source.label, fmt=fmt, images=images, context=context)


def read_data(
    data: bytes | DatasetFile,
    *,
    filename: str,
    fmt: str | None,
    images: ImageSource,
    context: ReadContext,
) -> ParsedFile:
    """Check a JSON or JSONL dataset held in `data` (parquet converts to one)."""
    bounds = context.bounds
    parsed = parse_dataset(
        data,
        filename=filename,
        fmt=fmt,
        pairs_options=PairsOptions(
            domain=context.domain,
            field_map=context.field_map,
            seed=context.seed,
            gold_from_label=context.gold_from_label,
        ),
        known_categories=context.known,
        images=images,
        limits=context.limits,
        options=context.options,
        max_errors=bounds.max_errors,
        max_records=bounds.max_records,
        max_record_bytes=bounds.max_record_bytes,
        progress=context.progress,
    )
    return parsed_file(parsed, filename=filename, images=images, field_map=context.field_map)


def parsed_file(
    parsed: ParsedDataset, *, filename: str, images: ImageSource, field_map: dict[str, str]
) -> ParsedFile:
    def items():
        for record in parsed.iter_records():
            yield item_of(record)

    def fingerprint(item: ParsedItem) -> str:
        record = record_of(item)
        return content_hash(record, parsed.images[record.image_ref].sha256)

    mrb = parsed.format == "mrb"
    return ParsedFile(
        format=parsed.format,
        filename=filename,
        items=items,
        count=len(parsed.records),
        ids=[ref.external_id for ref in parsed.records],
        images=parsed.images,
        image_source=images,
        fingerprint=fingerprint,
        id_field="ID" if mrb else field_map.get("id", "id"),
        labels=LABELS[parsed.format],
        skipped=parsed.skipped,
        renamed=parsed.renamed,
    )


def item_of(record: Record) -> ParsedItem:
    return ParsedItem(
        line=record.line,
        index=record.index,
        external_id=record.external_id,
        domain=record.category,
        prompt=[
            ParsedPart(IMAGE, ref=record.image_ref, source_path=record.image_ref),
            ParsedPart(TEXT, text=record.prompt),
        ],
        responses=[
            [ParsedPart(TEXT, text=record.response_1)],
            [ParsedPart(TEXT, text=record.response_2)],
        ],
        models=[record.model_1, record.model_2],
        gold=record.gold_choice,
        reference_answer=record.reference_answer,
        meta=record.meta,
        group=record.group,
        criterion=record.criterion,
        purpose=record.purpose,
        explanation=record.explanation,
        is_attention=record.is_attention,
    )


def record_of(item: ParsedItem) -> Record:
    """The Record an item of this format was read from (for its fingerprint)."""
    return Record(
        line=item.line,
        index=item.index,
        external_id=item.external_id,
        category=item.domain or "",
        prompt=item.prompt[1].text,
        image_ref=item.prompt[0].ref,
        response_1=item.responses[0][0].text,
        response_2=item.responses[1][0].text,
        model_1=item.model(0),
        model_2=item.model(1),
        gold_choice=item.gold,
        reference_answer=item.reference_answer,
        meta=item.meta,
        group=item.group,
        criterion=item.criterion,
        purpose=item.purpose,
        explanation=item.explanation,
        is_attention=item.is_attention,
    )
