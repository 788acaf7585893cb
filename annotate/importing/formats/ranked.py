"""Ranked responses, the generic shape of MR²Bench's training data (arXiv
2604.10966; issue 33) as an input format: JSONL, or a parquet of the same
columns.

A record is ``id`` (str), ``prompt`` (str), ``responses`` (a list of N = 2..8
strings), ``rankings`` (N ints, 1 = best, ties share a place: the
competition form 1, 2, 2, 4 or the dense form 1, 2, 2, 3), optionally the
prompt's images as the other formats give them (``image``: one path, or
``images``: a list of paths, relative to the images given with the file or
to its folder; a parquet's image columns become such paths) and ``category``
(a string: the item's domain). Any other key is kept.

It becomes one item with N response slots in the file's order (one text
part each) and a prompt of its images then its text. Its domain is the
project's domain whose export Category is ``ranked/<category>`` (else
``ranked-<category>``, created with the items; ``default`` without a
category) unless the import's domain options say otherwise.

Everything but the texts is kept in ``Item.meta["ranked"]``: the category,
the file's ``rankings`` and the record as JSON text with the texts left out
(``fields``: key order kept) and how the line was written (``style``; the
line itself in ``raw`` when no json.dumps style writes it back), so
:func:`record_line` gives the line back byte for byte (curation.benchmarks.
ranked writes it into a release when nothing of it changed).

Published rankings as votes and gold (import options): with "cast published
annotations as votes" each record's ``rankings`` become one vote of the
imported annotator ``imported-1`` (annotate.importing.imported_votes: an
N-slot ranking vote in a ranking project, the pick of the slot ranked first
in a best-of-N one); with "gold from label" the item's gold is the slot
ranked first, none when several share the first place.

Every line is checked before anything is written; problems name the file,
the line (the row and column for parquet) and the field.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from annotate.importing import passes
from annotate.importing.formats import (
    IMAGE,
    TEXT,
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
from annotate.importing.records import MAX_ID_LENGTH, MAX_IMAGE_PATH_LENGTH, ImageInfo, brief
from annotate.importing.sources import ImageSource, safe_relative_path

FORMAT = "ranked"
NAMES = (FORMAT, "mr2bench")
SUFFIXES = (".jsonl", ".parquet")
PARQUET_LAYOUT = True  # its parquet is read here, not by the generic parquet format
# Its records are no other format's (responses and rankings are lists).
DEFINITIVE = True
# Its published rankings can be cast as votes (one ranking per record).
CASTS_VOTES = True
MIN_RESPONSES, MAX_RESPONSES = 2, 8
EXPORT_PREFIX = "ranked/"
DEFAULT_CATEGORY = "default"
TEXT_KEYS = ("prompt", "responses")
REQUIRED = ("id", "prompt", "responses", "rankings")
SIGNATURE = ("responses", "rankings")
LABELS = {
    "prompt": "prompt",
    "image": "image",
    "image path": "image",
    "responses": "responses",
    "response_1": "responses",
    "domain": "category",
    "meta:ranked": "the record's other fields",
}


# --- rankings (pure) ----------------------------------------------------------------------


def competition(ranks: Sequence[int]) -> list[int]:
    """The competition form of a ranking (1 = best; a tie shares the best
    place it spans, the next place skips: 1, 2, 2, 4), from any ranks where
    lower is better."""
    return [1 + sum(other < r for other in ranks) for r in ranks]


def dense(ranks: Sequence[int]) -> list[int]:
    """The dense form (1, 2, 2, 3) of a ranking, lower is better."""
    order = sorted(set(ranks))
    return [order.index(r) + 1 for r in ranks]


def ranking_problem(ranks: Sequence[int]) -> str | None:
    """Why `ranks` (N ints) is not a ranking with ties, or None. A ranking
    is its own competition form or its own dense form."""
    n = len(ranks)
    if any(r < 1 or r > n for r in ranks):
        return f"{list(ranks)} is not a ranking: every place lies in 1..{n} (1 = best)"
    if list(ranks) != competition(ranks) and list(ranks) != dense(ranks):
        return (
            f"{list(ranks)} is not a ranking: places run 1, 2, 3, … with tied responses "
            "sharing one (1, 2, 2, 4 or 1, 2, 2, 3)"
        )
    return None


def in_style_of(ranks: Sequence[int], imported: Sequence[int] | None) -> list[int]:
    """`ranks` written as the file wrote its rankings: the imported list
    itself when it orders the responses alike, else the dense form if the
    file used it, else the competition form."""
    if imported is not None and competition(imported) == competition(ranks):
        return list(imported)
    if imported is not None and list(imported) != competition(imported):
        return dense(ranks)
    return competition(ranks)


# --- records (pure) -----------------------------------------------------------------------


@dataclass
class RankedRecord:
    id: str
    prompt: str
    images: list[str]  # the prompt's image paths as the file writes them
    responses: list[str]
    rankings: list[int]
    category: str
    value: dict[str, Any]  # the record as decoded


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_record(value: Any) -> tuple[RankedRecord | None, list[tuple[str | None, str]]]:
    """A record, or None and its problems as (field, message)."""
    if not isinstance(value, dict):
        return None, [(None, f"expected a JSON object, not {type(value).__name__}")]
    problems: list[tuple[str | None, str]] = [(k, "is missing") for k in REQUIRED if k not in value]
    if problems:
        return None, problems
    record_id, prompt = value["id"], value["prompt"]
    responses, rankings = value["responses"], value["rankings"]
    if not isinstance(record_id, str) or not record_id:
        problems.append(("id", "must be a non-empty string"))
    elif len(record_id) > MAX_ID_LENGTH:
        problems.append(("id", f"is longer than {MAX_ID_LENGTH} characters"))
    if not isinstance(prompt, str):
        problems.append(("prompt", f"must be a string, not {type(prompt).__name__}"))
    if not isinstance(responses, list) or not all(isinstance(t, str) for t in responses):
        problems.append(("responses", "must be a list of strings"))
    elif not MIN_RESPONSES <= len(responses) <= MAX_RESPONSES:
        problems.append(
            ("responses", f"holds {len(responses)}; N must lie in {MIN_RESPONSES}..{MAX_RESPONSES}")
        )
    if not isinstance(rankings, list) or not all(_is_int(r) for r in rankings):
        problems.append(
            ("rankings", f"must be a list of integers, not {brief(repr(rankings), quote=False)}")
        )
    elif isinstance(responses, list) and len(rankings) != len(responses):
        problems.append(
            ("rankings", f"holds {len(rankings)} places, but responses holds {len(responses)}")
        )
    elif (why := ranking_problem(rankings)) is not None:
        problems.append(("rankings", why))
    images = _image_paths(value, problems)
    category = value.get("category", DEFAULT_CATEGORY)
    if category is None:
        category = DEFAULT_CATEGORY
    if not isinstance(category, str) or not category.strip():
        problems.append(("category", "must be a non-empty string"))
    if problems:
        return None, problems
    record = RankedRecord(record_id, prompt, images, responses, rankings, category.strip(), value)
    return record, []


def _image_paths(value: dict, problems: list) -> list[str]:
    if "image" in value and "images" in value:
        problems.append(("images", "give either image or images, not both"))
        return []
    key = "images" if "images" in value else "image"
    given = value.get(key)
    paths = [] if given in (None, "") else given if key == "images" else [given]
    if not isinstance(paths, list) or not all(isinstance(p, str) and p for p in paths):
        problems.append((key, "must be an image path or a list of image paths"))
        return []
    for path in paths:
        if len(path) > MAX_IMAGE_PATH_LENGTH:
            problems.append((key, f"image path is longer than {MAX_IMAGE_PATH_LENGTH}"))
        elif safe_relative_path(path) is None:
            problems.append((key, f"image path {path!r} is absolute or contains '..'"))
    return paths


def record_line(meta: dict, *, prompt: str, responses: list[str], rankings: list[int],
                record_id: str | None = None) -> str:  # fmt: skip
    """The record's JSONL line (no newline) with these texts and rankings
    (and ID, if given): the imported line itself when nothing changed,
    written as the file wrote it otherwise."""
    value = kept_value(meta, {"prompt": prompt, "responses": responses})
    value["rankings"] = in_style_of(rankings, meta.get("rankings"))
    if record_id is not None:
        value["id"] = record_id
    return styled_line(meta, value)


def item_line(item: ParsedItem) -> str:
    """An item of this format as its JSONL line (see record_line)."""
    meta = item.meta["ranked"]
    return record_line(
        meta,
        prompt=item.prompt[-1].text,
        responses=[slot[0].text for slot in item.responses],
        rankings=meta["rankings"],
    )


def category_slug(category: str) -> str:
    return "ranked-" + (re.sub(r"[^a-z0-9]+", "-", category.lower()).strip("-") or "x")[:60]


# --- detection ----------------------------------------------------------------------------


def detect(source: DatasetSource) -> bool:
    return detect_keys(source, SIGNATURE)


# --- reading ------------------------------------------------------------------------------


def domain_fields(category: str) -> dict[str, Any]:
    return new_domain(f"Ranked: {category}", f"{EXPORT_PREFIX}{category}", 300)


def read(source: DatasetSource, context: ReadContext) -> ParsedFile:
    if source.archive is None and source.name.lower().endswith(".parquet"):
        from annotate.importing import hfparquet

        return hfparquet.read_with(
            source,
            context,
            lambda parquet: read_data(
                parquet.data, filename=source.path.name, images=parquet.images, context=context
            ),
            verbatim=True,  # `responses` is this format's list, not a pair
        )
    return read_with_images(source, context, read_data)


def read_data(
    data: bytes | DatasetFile, *, filename: str, images: ImageSource, context: ReadContext
) -> ParsedFile:
    """Check every line and image, then give the items (decoded again per call)."""

    def parse(value: Any, line: int, index: int, domain_of) -> tuple[ParsedItem | None, list]:
        record, problems = parse_record(value)
        if record is None:
            return None, problems
        item = _item(record, line, index, domain_of(record.category))
        if context.gold_from_label:
            item.gold = gold_slot(record.rankings)
        return item, problems

    # Pass 1: every record checked, IDs, domains and image paths; then every image.
    return passes.jsonl_file(
        data, context=context, filename=filename, parse=parse,
        label=lambda item: item.meta["ranked"]["category"], slug=category_slug,
        export_category=lambda category: f"{EXPORT_PREFIX}{category}",
        category_field="category", image_field="image", kept=("ranked", TEXT_KEYS),
        fmt=FORMAT, what="ranked records", domain_fields=domain_fields,
        fingerprint=fingerprint, images=images, labels=LABELS, votes=published_votes,
    )  # fmt: skip


def gold_slot(rankings: Sequence[int]) -> str:
    """The slot ranked first ("1".."8"), or "" when several share the first place."""
    top = [slot for slot, rank in enumerate(rankings, start=1) if rank == min(rankings)]
    return str(top[0]) if len(top) == 1 else ""


def published_votes(item: ParsedItem, scale: str) -> list:
    """The record's published ranking as one vote (competition form)."""
    from annotate.importing.imported_votes import PublishedVote

    return [PublishedVote(ranks=tuple(competition(item.labels)))]


def _item(record: RankedRecord, line: int, index: int, domain: str) -> ParsedItem:
    images = [ParsedPart(IMAGE, ref=safe_relative_path(p) or "", source_path=p)
              for p in record.images]  # fmt: skip
    return ParsedItem(
        line=line,
        index=index,
        external_id=record.id,
        domain=domain,
        prompt=[*images, ParsedPart(TEXT, text=record.prompt)],
        responses=[[ParsedPart(TEXT, text=text)] for text in record.responses],
        meta={"ranked": {"category": record.category, "rankings": record.rankings}},
        labels=record.rankings,  # published_votes reads them (votes are cast after meta is gone)
    )


def fingerprint(item: ParsedItem, *, infos: dict[str, ImageInfo]) -> str:
    """A stable fingerprint of what the import stores for the record and its
    images' bytes (a re-import of the same file is a no-op)."""
    meta = item.meta["ranked"]
    payload = [
        FORMAT,
        item.external_id,
        [[p.kind, p.source_path if p.kind == IMAGE else p.text] for p in item.prompt],
        [slot[0].text for slot in item.responses],
        meta["rankings"],
        meta["fields"],
        [infos[p.ref].sha256 for p in item.prompt if p.kind == IMAGE],
    ]
    return hashlib.sha256(json.dumps(payload).encode()).hexdigest()
