"""A VideoRewardBench-style pairwise video file (arXiv 2509.00484; issue 35
item 5) as an input format. The benchmark's own data file is not public in a
form the studio could read (see docs/decisions.md), so this is the studio's
"style" layout of its published facts: a pairwise sample is a video-text
prompt, a chosen and a rejected response, and one of five dimensions.

A JSONL file, **one line per sample**: ``id`` (a string or an integer),
``video`` (a path relative to the media given with the file, a folder or a
zip, or to the file's folder), ``prompt``, ``chosen``, ``rejected``
(strings) and ``dimension``, one of ``long_form_perception``,
``short_form_perception``, ``knowledge``, ``reasoning``, ``safety``. Any
other key is kept (and written back).

Each line becomes one pair item: the prompt is the video (a VIDEO part,
validated by the media import) then its text; response 1 is the chosen,
response 2 the rejected (texts); gold ``"1"`` with the import's
gold-from-label option, as the other labelled formats; external ID the
line's ``id``. Its domain is the project's domain whose export Category is
``videorb/<dimension>`` (else ``videorb-<dimension>``, created with the
items) unless the import's domain options say otherwise.

Everything but the texts is kept in ``Item.meta["videorb"]``
(jsonscan.kept_line), so :func:`record_line` gives the line back byte for
byte (curation.benchmarks.videorb writes it into a release when nothing of
it changed). Every line and video is checked before anything is written;
problems name the file, the line and the field.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from annotate.importing import passes
from annotate.importing.formats import (
    TEXT,
    VIDEO,
    DatasetSource,
    ParsedFile,
    ParsedItem,
    ParsedPart,
    ReadContext,
    detect_keys,
    new_domain,
    read_with_images,
)
from annotate.importing.jsonscan import DatasetFile, kept_value, styled_line
from annotate.importing.records import MAX_ID_LENGTH, MAX_IMAGE_PATH_LENGTH
from annotate.importing.sources import ImageSource, safe_relative_path

FORMAT = "videorb"
NAMES = (FORMAT, "videorewardbench")
SUFFIXES = (".jsonl",)
EXPORT_PREFIX = "videorb/"
# The five dimensions, in the paper's order (its tables' columns).
DIMENSIONS = (
    "long_form_perception",
    "short_form_perception",
    "knowledge",
    "reasoning",
    "safety",
)
TEXT_KEYS = ("prompt", "chosen", "rejected")
REQUIRED = ("id", "video", "prompt", "chosen", "rejected", "dimension")
LABELS = {
    "prompt": "prompt",
    "response_1": "chosen",
    "response_2": "rejected",
    "domain": "dimension",
    "meta:videorb": "the record's other fields",
}


# --- records (pure) -----------------------------------------------------------------------


def parse_record(value: Any) -> tuple[dict | None, list[tuple[str | None, str]]]:
    """The record's checked fields (id as text, normalised video path), or
    None and its problems as (field, message)."""
    if not isinstance(value, dict):
        return None, [(None, f"expected a JSON object, not {type(value).__name__}")]
    problems: list[tuple[str | None, str]] = [(k, "is missing") for k in REQUIRED if k not in value]
    if problems:
        return None, problems
    record_id = value["id"]
    if isinstance(record_id, bool) or not isinstance(record_id, str | int) or record_id == "":
        problems.append(("id", "must be a non-empty string or an integer"))
    elif len(str(record_id)) > MAX_ID_LENGTH:
        problems.append(("id", f"is longer than {MAX_ID_LENGTH} characters"))
    for name in TEXT_KEYS:
        if not isinstance(value[name], str):
            problems.append((name, f"must be a string, not {type(value[name]).__name__}"))
    dimension = value["dimension"]
    if dimension not in DIMENSIONS:
        shown = json.dumps(dimension, ensure_ascii=False)[:40]
        problems.append(("dimension", f"must be one of {', '.join(DIMENSIONS)}, not {shown}"))
    path = value["video"]
    normal = None
    if not isinstance(path, str) or not path:
        problems.append(("video", "must be a video path"))
    elif len(path) > MAX_IMAGE_PATH_LENGTH:
        problems.append(("video", f"path is longer than {MAX_IMAGE_PATH_LENGTH} characters"))
    elif (normal := safe_relative_path(path)) is None:
        problems.append(("video", f"path {path!r} is absolute or contains '..'"))
    if problems:
        return None, problems
    return {"id": str(record_id), "video": normal, "source": path, "dimension": dimension}, []


def record_line(meta: dict, *, prompt: str, chosen: str, rejected: str, swapped: bool = False,
                **fields: Any) -> str:  # fmt: skip
    """The sample's JSONL line (no newline) with these texts: the imported
    line itself when nothing changed, written as the file wrote it
    otherwise. `swapped`: the decision chose the imported `rejected`
    (they trade places, and so do fields named ``chosen_*`` / ``rejected_*``).
    `fields`: other values (``id``, ``video``, ``dimension``)."""
    value = kept_value(meta, {"prompt": prompt, "chosen": chosen, "rejected": rejected})
    if swapped:
        for key in [k for k in value if k.startswith("chosen_")]:
            other = "rejected_" + key[len("chosen_") :]
            if other in value:
                value[key], value[other] = value[other], value[key]
    value.update(fields)
    return styled_line(meta, value)


def dimension_slug(dimension: str) -> str:
    return "videorb-" + dimension.replace("_", "-")


# --- detection ----------------------------------------------------------------------------


def detect(source: DatasetSource) -> bool:
    """A JSONL file whose first record has every field, ``dimension`` and
    ``video`` being no other format's pair."""
    return detect_keys(source, REQUIRED)


# --- reading ------------------------------------------------------------------------------


def domain_fields(dimension: str) -> dict[str, Any]:
    title = dimension.replace("_", " ").capitalize()
    return new_domain(f"VideoRewardBench: {title}", f"{EXPORT_PREFIX}{dimension}", 330)


def read(source: DatasetSource, context: ReadContext) -> ParsedFile:
    return read_with_images(source, context, read_data)


def read_data(
    data: bytes | DatasetFile, *, filename: str, images: ImageSource, context: ReadContext
) -> ParsedFile:
    """Check every line and video, then give the items."""

    def parse(value: Any, line: int, index: int, domain_of) -> tuple[ParsedItem | None, list]:
        record, problems = parse_record(value)
        if record is None:
            return None, problems
        item = make_item(value, record, line, index, domain_of(record["dimension"]))
        item.gold = "1" if context.gold_from_label else ""
        return item, []

    return passes.jsonl_file(
        data, context=context, filename=filename, parse=parse,
        label=lambda item: item.meta["videorb"]["dimension"], slug=dimension_slug,
        export_category=lambda dimension: f"{EXPORT_PREFIX}{dimension}",
        category_field="dimension", image_field="video", kept=("videorb", TEXT_KEYS),
        fmt=FORMAT, what="VideoRewardBench samples", domain_fields=domain_fields,
        fingerprint=fingerprint, images=images, labels=LABELS,
        part_field=lambda item, slot, position: "video",
    )  # fmt: skip


def make_item(value: dict, record: dict, line: int, index: int, domain: str) -> ParsedItem:
    return ParsedItem(
        line=line,
        index=index,
        external_id=record["id"],
        domain=domain,
        prompt=[
            ParsedPart(VIDEO, ref=record["video"], source_path=record["source"]),
            ParsedPart(TEXT, text=value["prompt"]),
        ],
        responses=[
            [ParsedPart(TEXT, text=value["chosen"])],
            [ParsedPart(TEXT, text=value["rejected"])],
        ],
        meta={"videorb": {"dimension": record["dimension"]}},
    )


def fingerprint(item: ParsedItem, *, infos: dict, media: dict | None = None) -> str:
    """A stable fingerprint of what the import stores for the sample and its
    video's bytes (a re-import of the same file is a no-op)."""
    media = media or {}
    payload = [
        FORMAT,
        item.external_id,
        item.gold,
        [[p.kind, p.source_path if p.kind == VIDEO else p.text] for p in item.prompt],
        [slot[0].text for slot in item.responses],
        item.meta["videorb"].get("fields"),
        [media[p.ref].sha256 for p in item.prompt if p.ref in media],
    ]
    return hashlib.sha256(json.dumps(payload).encode()).hexdigest()
