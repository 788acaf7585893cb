"""MM-RLHF-RewardBench (yfzhang114/MM-RLHF; issue 34) as an input format,
read as published: a JSONL of ranked pairs, **one line per pair** of the
same prompt ``id``.

A line is ``id`` (a string or an integer: the prompt's, shared by its
pairs), ``prompt``, ``chosen`` and ``rejected`` (strings), exactly one of
``image`` (a path) or ``video`` (a folder of frames), and optionally
``chosen_reason`` / ``rejected_reason`` (any other key is kept too). Media
paths are relative to the images given with the file (a folder or a zip)
or to the file's folder; the **first folder of the media path is the
category** (``mcq``, ``long``, ``short``, ``safety``, ``video``), as the
published scorer reads it.

Each line becomes one pair item: response 1 the chosen, response 2 the
rejected (the published order: its scorer reads ``rewards[0]`` as the
chosen's); gold ``"1"`` with the import's gold-from-label option, as the
other labelled formats; ``Item.group_key`` the prompt ``id``. Its external
ID is ``<id>#<k>``, k = 1, 2, … the pair's place among the lines of its
``id`` in file order (unique per pair, stable while the file keeps its
order; the published scorer groups by ``id`` the same way). The prompt is
its image, or the video folder's frames as an ordered strip of images
(image files directly in the folder, in natural name order: frame_2 before
frame_10), then its text. Its domain is the project's domain whose export
Category is ``mmrlhf/<category>`` (else ``mmrlhf-<category>``, created with
the items) unless the import's domain options say otherwise.

The files share VL-RewardBench's columns, which the generic pairs reader
reads (with a seeded order and suffixed IDs), so this format is used when
named (``--format mmrlhf``), never guessed. Everything but the texts is
kept in ``Item.meta["mmrlhf"]`` (jsonscan.kept_line: the fields in key
order, the line's style or the line itself), so :func:`record_line` gives
the line back byte for byte (curation.benchmarks.mmrlhf writes it into a
release when nothing of it changed). Every line and image is checked
before anything is written; problems name the file, the line and the field.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
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
    new_domain,
    read_with_images,
)
from annotate.importing.jsonscan import DatasetFile, kept_value, styled_line
from annotate.importing.records import MAX_ID_LENGTH, MAX_IMAGE_PATH_LENGTH, ImageInfo
from annotate.importing.sources import (
    DirectoryImageSource,
    ImageSource,
    ZipImageSource,
    safe_relative_path,
)

FORMAT = "mmrlhf"
NAMES = (FORMAT, "mm-rlhf-rewardbench")
SUFFIXES = (".jsonl",)
EXPORT_PREFIX = "mmrlhf/"
TEXT_KEYS = ("prompt", "chosen", "rejected")
REQUIRED = ("id", "prompt", "chosen", "rejected")
REASONS = ("chosen_reason", "rejected_reason")
FRAME_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp", ".gif", ".bmp")
PAIR_MARK = "#"  # external ID = <id>#<k>
LABELS = {
    "prompt": "prompt",
    "image": "image",
    "image path": "image",
    "response_1": "chosen",
    "response_2": "rejected",
    "domain": "image",
    "meta:mmrlhf": "the record's other fields",
}


# --- records (pure) -----------------------------------------------------------------------


@dataclass
class PairRecord:
    id: str  # the prompt id as text (the group)
    prompt: str
    chosen: str
    rejected: str
    media: str  # "image" or "video"
    path: str  # the media path, normalised
    category: str  # its first folder


def media_of(value: dict) -> tuple[str, str, str] | tuple[None, str, str]:
    """(key, normalised path, category) of a line's media, or (None, field,
    why not)."""
    given = [k for k in ("image", "video") if value.get(k) not in (None, "")]
    if len(given) != 1:
        why = "give one of image or video" if given else "is missing (or video)"
        return None, "image" if not given else "video", why
    key = given[0]
    path = value[key]
    if not isinstance(path, str):
        return None, key, f"must be a path, not {type(path).__name__}"
    if len(path) > MAX_IMAGE_PATH_LENGTH:
        return None, key, f"path is longer than {MAX_IMAGE_PATH_LENGTH} characters"
    normal = safe_relative_path(path)
    if normal is None:
        return None, key, f"path {path!r} is absolute or contains '..'"
    if "/" not in normal:
        return None, key, f"path {path!r} has no category folder (e.g. mcq/1.png)"
    return key, normal, normal.split("/", 1)[0]


def parse_record(value: Any) -> tuple[PairRecord | None, list[tuple[str | None, str]]]:
    """A pair, or None and its problems as (field, message)."""
    if not isinstance(value, dict):
        return None, [(None, f"expected a JSON object, not {type(value).__name__}")]
    problems: list[tuple[str | None, str]] = [(k, "is missing") for k in REQUIRED if k not in value]
    if problems:
        return None, problems
    record_id = value["id"]
    if isinstance(record_id, bool) or not isinstance(record_id, str | int) or record_id == "":
        problems.append(("id", "must be a non-empty string or an integer"))
    elif len(str(record_id)) > MAX_ID_LENGTH - 4:
        problems.append(("id", f"is longer than {MAX_ID_LENGTH - 4} characters"))
    for name in (*TEXT_KEYS, *(r for r in REASONS if value.get(r) is not None)):
        if not isinstance(value.get(name), str):
            problems.append((name, f"must be a string, not {type(value.get(name)).__name__}"))
    key, path, category = media_of(value)
    if key is None:
        problems.append((path, category))
    if problems:
        return None, problems
    assert key is not None
    record = PairRecord(
        str(record_id), value["prompt"], value["chosen"], value["rejected"], key, path, category
    )
    return record, []


def pair_id(group: str, k: int) -> str:
    """The external ID of the k-th pair (1-based) of a prompt id."""
    return f"{group}{PAIR_MARK}{k}"


def record_line(meta: dict, *, prompt: str, chosen: str, rejected: str, swapped: bool = False,
                record_id: Any = None) -> str:  # fmt: skip
    """The pair's JSONL line (no newline) with these texts: the imported
    line itself when nothing changed, written as the file wrote it
    otherwise. `swapped`: the reasons trade places with the responses (the
    decision chose the imported `rejected`). `record_id`: another id."""
    value = kept_value(meta, {"prompt": prompt, "chosen": chosen, "rejected": rejected})
    if swapped and all(k in value for k in REASONS):
        value["chosen_reason"], value["rejected_reason"] = (
            value["rejected_reason"], value["chosen_reason"])  # fmt: skip
    if record_id is not None:
        value["id"] = record_id
    return styled_line(meta, value)


def category_slug(category: str) -> str:
    return "mmrlhf-" + (re.sub(r"[^a-z0-9]+", "-", category.lower()).strip("-") or "x")[:60]


def natural_key(name: str) -> list:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def list_frames(images: ImageSource, folder: str) -> list[str] | None:
    """The frame paths of a video folder (image files directly in it, in
    natural order), or None when the source cannot list folders."""
    if isinstance(images, DirectoryImageSource):
        where = (images.root / folder).resolve()
        if not where.is_relative_to(images.root) or not where.is_dir():
            return []
        names = [p.name for p in where.iterdir() if p.is_file()]
    elif isinstance(images, ZipImageSource):
        prefix = posixpath.join(images.prefix, folder) if images.prefix else folder
        names = [
            m[len(prefix) + 1 :] for m in images.members
            if m.startswith(prefix + "/") and "/" not in m[len(prefix) + 1 :]
        ]  # fmt: skip
    else:
        return None
    frames = [n for n in names if n.lower().endswith(FRAME_SUFFIXES)]
    return [f"{folder}/{n}" for n in sorted(frames, key=natural_key)]


# --- detection ----------------------------------------------------------------------------


def detect(source: DatasetSource) -> bool:
    """Never guessed: its columns are the generic pairs reader's (see module)."""
    return False


# --- reading ------------------------------------------------------------------------------


def domain_fields(category: str) -> dict[str, Any]:
    return new_domain(f"MM-RLHF: {category}", f"{EXPORT_PREFIX}{category}", 320)


def read(source: DatasetSource, context: ReadContext) -> ParsedFile:
    return read_with_images(source, context, read_data)


def read_data(
    data: bytes | DatasetFile, *, filename: str, images: ImageSource, context: ReadContext
) -> ParsedFile:
    """Check every line, frame folder and image, then give the items."""
    frames: dict[str, list[str] | None] = {}

    def fresh_parse():
        seen: dict[str, int] = {}  # pairs of each id so far (fresh per pass)

        def parse(value: Any, line: int, index: int, domain_of) -> tuple[ParsedItem | None, list]:
            record, problems = parse_record(value)
            if record is None:
                return None, problems
            paths = [record.path]
            if record.media == "video":
                if record.path not in frames:
                    frames[record.path] = list_frames(images, record.path)
                listed = frames[record.path]
                if listed is None:
                    return None, [
                        ("video", "frame folders are read from a folder or zip of images")
                    ]
                if not listed:
                    return None, [("video", f"folder {record.path!r} holds no frames")]
                paths = listed
            k = seen[record.id] = seen.get(record.id, 0) + 1
            item = _item(record, paths, k, line, index, domain_of(record.category))
            item.gold = "1" if context.gold_from_label else ""
            return item, []

        return parse

    return passes.jsonl_file(
        data, context=context, filename=filename, fresh_parse=fresh_parse,
        label=lambda item: item.meta["mmrlhf"]["category"], slug=category_slug,
        export_category=lambda category: f"{EXPORT_PREFIX}{category}",
        category_field="image", image_field="image", kept=("mmrlhf", TEXT_KEYS),
        fmt=FORMAT, what="MM-RLHF-RewardBench pairs", domain_fields=domain_fields,
        fingerprint=fingerprint, images=images, labels=LABELS,
    )  # fmt: skip


def _item(record: PairRecord, paths: list[str], k: int, line: int, index: int,
          domain: str) -> ParsedItem:  # fmt: skip
    media = [ParsedPart(IMAGE, ref=p, source_path=p) for p in paths]
    return ParsedItem(
        line=line,
        index=index,
        external_id=pair_id(record.id, k),
        domain=domain,
        prompt=[*media, ParsedPart(TEXT, text=record.prompt)],
        responses=[
            [ParsedPart(TEXT, text=record.chosen)],
            [ParsedPart(TEXT, text=record.rejected)],
        ],
        group=record.id,
        meta={"mmrlhf": {"category": record.category, "media": record.media, "pair": k}},
    )


def fingerprint(item: ParsedItem, *, infos: dict[str, ImageInfo]) -> str:
    """A stable fingerprint of what the import stores for the pair and its
    images' bytes (a re-import of the same file is a no-op)."""
    meta = item.meta["mmrlhf"]
    payload = [
        FORMAT,
        item.external_id,
        item.group,
        item.gold,
        [[p.kind, p.source_path if p.kind == IMAGE else p.text] for p in item.prompt],
        [slot[0].text for slot in item.responses],
        meta["fields"],
        [infos[p.ref].sha256 for p in item.prompt if p.kind == IMAGE],
    ]
    return hashlib.sha256(json.dumps(payload).encode()).hexdigest()
