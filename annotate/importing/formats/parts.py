"""Items as parts (issues 24 and 35): JSONL whose prompt and responses are
lists of text, image, video and audio parts — the shape of any comparison
of clips, sounds, pictures or interleaved answers.

A record is ``id`` (str), ``prompt`` (a list of parts), ``responses`` (a list
of 2..8 responses, each a list of parts; a pairwise project takes two), and
optionally ``domain`` (a domain slug or export Category; a new value becomes
a domain of that name), ``models`` (one string per response), ``gold`` ("1"
… "8", or "tie" for a pair), ``criterion`` and ``group`` (issue 34). A part
is an object with exactly one of ``text`` (Markdown), ``image``, ``video``
or ``audio`` (a path relative to the files given with the dataset or to its
folder; the suffix must say what the bytes are). Any other key is kept in
``Item.meta["parts-jsonl"]``.

Every line and every file is checked before anything is written (videos and
audio by annotate.importing.media: container, codecs, duration, size, frame
rate, streams, a bounded decode); problems name the file, the line and the
field (``responses[1][0].video``).
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from annotate.importing import passes
from annotate.importing.formats import (
    AUDIO,
    IMAGE,
    MEDIA,
    TEXT,
    VIDEO,
    DatasetSource,
    ParsedFile,
    ParsedItem,
    ParsedPart,
    ReadContext,
    new_domain,
    read_with_images,
)
from annotate.importing.jsonscan import DatasetFile
from annotate.importing.records import (
    MAX_ID_LENGTH,
    MAX_IMAGE_PATH_LENGTH,
    ImageInfo,
    MediaInfo,
    read_purpose,
)
from annotate.importing.sources import ImageSource, safe_relative_path
from annotate.models.parts import ITEM_MAX_RESPONSES, ITEM_MIN_RESPONSES

FORMAT = "parts-jsonl"
NAMES = (FORMAT, "media-pairs")
SUFFIXES = (".jsonl",)
PART_KINDS = (TEXT, IMAGE, VIDEO, AUDIO)
KNOWN = ("id", "prompt", "responses", "domain", "models", "gold", "criterion", "group")
GOLDS = {str(n) for n in range(1, ITEM_MAX_RESPONSES + 1)} | {"tie"}
LABELS = {"prompt": "prompt", "domain": "domain", "image": "image"}


def seed_demo(users: dict, folder, ensure_memberships) -> list:
    """The demo's video and audio projects (demo.media), imported through
    this format; idempotent (a project with its items is left as it is)."""
    from django.db import transaction

    from annotate.importing.formats import DemoSeeded
    from annotate.importing.service import import_items_from_paths
    from annotate.models import Item, Project
    from demo.media import AUDIO_PROJECT, VIDEO_PROJECT, write_media_datasets

    specs = (VIDEO_PROJECT, AUDIO_PROJECT)
    missing = [s for s in specs if not Item.objects.filter(project__slug=s["slug"]).exists()]
    files = write_media_datasets(folder) if missing else {}
    seeded = []
    for spec in specs:
        with transaction.atomic():
            project, _ = Project.objects.get_or_create(
                slug=spec["slug"],
                defaults={
                    "name": spec["name"],
                    "description": spec["description"],
                    "guidelines": spec["guidelines"],
                    "licence": "CC0-1.0 (synthetic demo data)",
                    "escalation_votes": 0,
                    "created_by": users["admin"],
                },
            )
            ensure_memberships(project, users)
            created = 0
            if spec in missing:
                created = import_items_from_paths(
                    project=project, dataset=files[spec["slug"]]
                ).created
        seeded.append(DemoSeeded(project, created, 0))
    return seeded


def detect(source: DatasetSource) -> bool:
    """A JSONL file whose first record has a list `prompt` and a list `responses`."""
    name = source.name.lower()
    if not name.endswith((".jsonl", ".json")):
        return False
    first = source.head(256 * 1024).removeprefix(b"\xef\xbb\xbf").lstrip().split(b"\n", 1)[0]
    try:
        value = json.loads(first)
    except (ValueError, RecursionError):  # the format that reads it names the problem
        return False
    return (
        isinstance(value, dict)
        and isinstance(value.get("prompt"), list)
        and isinstance(value.get("responses"), list)
    )


def _part(value: Any, where: str) -> tuple[ParsedPart | None, str | None]:
    """A part of the file, or why not."""
    if not isinstance(value, dict):
        return None, f'{where}: a part is an object such as {{"text": …}} or {{"video": …}}'
    kinds = [k for k in PART_KINDS if k in value]
    if len(kinds) != 1:
        return None, f"{where}: a part has exactly one of text, image, video or audio"
    kind = kinds[0]
    content = value[kind]
    if not isinstance(content, str):
        return None, f"{where}.{kind}: must be a string, not {type(content).__name__}"
    if kind == TEXT:
        return ParsedPart(TEXT, text=content), None
    if not content:
        return None, f"{where}.{kind}: is empty"
    if len(content) > MAX_IMAGE_PATH_LENGTH:
        return None, f"{where}.{kind}: path is longer than {MAX_IMAGE_PATH_LENGTH} characters"
    ref = safe_relative_path(content)
    if ref is None:
        return None, f"{where}.{kind}: path {content!r} is absolute or contains '..'"
    return ParsedPart(kind, ref=ref, source_path=content), None


def parse_record(value: Any) -> tuple[dict | None, list[tuple[str | None, str]]]:
    """The record's checked fields (its parts parsed), or None and its problems."""
    if not isinstance(value, dict):
        return None, [(None, f"expected a JSON object, not {type(value).__name__}")]
    problems: list[tuple[str | None, str]] = [
        (k, "is missing") for k in ("id", "prompt", "responses") if k not in value
    ]
    if problems:
        return None, problems
    record_id = value["id"]
    if not isinstance(record_id, str) or not record_id:
        problems.append(("id", "must be a non-empty string"))
    elif len(record_id) > MAX_ID_LENGTH:
        problems.append(("id", f"is longer than {MAX_ID_LENGTH} characters"))
    out: dict[str, Any] = {"id": record_id}

    def parts(items: Any, where: str) -> list[ParsedPart]:
        if not isinstance(items, list):
            problems.append((where, "must be a list of parts"))
            return []
        parsed = []
        for n, item in enumerate(items):
            part, problem = _part(item, f"{where}[{n}]")
            if problem:
                field, _, message = problem.partition(": ")
                problems.append((field, message))
            else:
                parsed.append(part)
        return parsed

    out["prompt"] = parts(value["prompt"], "prompt")
    responses = value["responses"]
    if not isinstance(responses, list) or not (
        ITEM_MIN_RESPONSES <= len(responses) <= ITEM_MAX_RESPONSES
    ):
        problems.append(
            ("responses", f"must be a list of {ITEM_MIN_RESPONSES} to {ITEM_MAX_RESPONSES} "
             "responses, each a list of parts")
        )  # fmt: skip
        return None, problems
    out["responses"] = [parts(r, f"responses[{n}]") for n, r in enumerate(responses)]
    for n, response in enumerate(responses):
        if isinstance(response, list) and not response:
            problems.append((f"responses[{n}]", "is empty"))
    for key in ("domain", "criterion", "group"):
        if key in value and not isinstance(value[key], str):
            problems.append((key, f"must be a string, not {type(value[key]).__name__}"))
    models = value.get("models")
    if models is not None and not (
        isinstance(models, list)
        and len(models) == len(responses)
        and all(isinstance(m, str) for m in models)
    ):
        problems.append(("models", f"must be a list of {len(responses)} strings"))
    gold = value.get("gold", "")
    if gold not in ("", None) and (str(gold) not in GOLDS or isinstance(gold, bool)):
        problems.append(("gold", 'must be a response number ("1" …) or "tie"'))
    elif str(gold or "") == "tie" and len(responses) != 2:
        problems.append(("gold", "a tie is a pair's gold"))
    elif gold not in ("", None) and str(gold) != "tie" and int(gold) > len(responses):
        problems.append(("gold", f"names response {gold} of {len(responses)}"))
    # Issue 36 (kept in the extra fields too, so the fingerprint sees them).
    gate, gate_problems = read_purpose(value)
    problems += gate_problems
    if gate["purpose"] != "benchmark" and gold in ("", None):
        problems.append(("gold", "a qualification or check item needs its gold"))
    if problems:
        return None, problems
    out.update(
        **gate,
        domain=value.get("domain") or "",
        models=list(models or []),
        gold=str(gold or ""),
        criterion=value.get("criterion") or "",
        group=value.get("group") or "",
        extra={k: v for k, v in value.items() if k not in KNOWN},
    )
    return out, []


def domain_slug(value: str) -> str:
    return (re.sub(r"[^a-z0-9]+", "-", value.lower()).strip("-") or "default")[:50]


def domain_fields(label: str) -> dict[str, Any]:
    return new_domain(label, label, 320)


def read(source: DatasetSource, context: ReadContext) -> ParsedFile:
    return read_with_images(source, context, read_data)


def part_field(item: ParsedItem, slot: str, position: int) -> str:
    """A part's field as the file names it: prompt[0].video, responses[1][0].audio."""
    kind = item.slots()[slot][position].kind
    if slot == "prompt":
        return f"prompt[{position}].{kind}"
    return f"responses[{int(slot.removeprefix('response_')) - 1}][{position}].{kind}"


def read_data(
    data: bytes | DatasetFile, *, filename: str, images: ImageSource, context: ReadContext
) -> ParsedFile:
    """Check every line and file, then give the items (decoded again per call)."""

    def parse(value: Any, line: int, index: int, domain_of) -> tuple[ParsedItem | None, list]:
        record, problems = parse_record(value)
        if record is None:
            return None, problems
        return _item(record, line, index, domain_of(record["domain"])), problems

    return passes.jsonl_file(
        data, context=context, filename=filename, parse=parse,
        label=lambda item: item.meta[FORMAT]["domain"] or "default",
        slug=lambda value: domain_slug(value or "default"), export_category=str,
        category_field="domain", image_field="prompt", fmt=FORMAT, what="records",
        domain_fields=domain_fields, fingerprint=fingerprint, images=images,
        part_field=part_field, labels=LABELS,
    )  # fmt: skip


def _item(record: dict, line: int, index: int, domain: str) -> ParsedItem:
    return ParsedItem(
        line=line,
        index=index,
        external_id=record["id"],
        domain=domain,
        prompt=record["prompt"],
        responses=record["responses"],
        models=record["models"],
        gold=record["gold"],
        criterion=record["criterion"],
        group=record["group"],
        purpose=record["purpose"],
        explanation=record["explanation"],
        is_attention=record["is_attention"],
        meta={FORMAT: {"domain": record["domain"], "fields": record["extra"]}},
    )


def fingerprint(
    item: ParsedItem, *, infos: dict[str, ImageInfo], media: dict[str, MediaInfo] | None = None
) -> str:
    """A stable fingerprint of what the import stores for the record and its
    files' bytes (a re-import of the same file is a no-op)."""

    def shown(part: ParsedPart) -> list:
        if part.kind == IMAGE:
            return [IMAGE, part.source_path, infos[part.ref].sha256]
        if part.kind in MEDIA:
            return [part.kind, part.source_path, (media or {})[part.ref].sha256]
        return [TEXT, part.text]

    payload = [
        FORMAT,
        item.external_id,
        [[shown(p) for p in parts] for parts in item.slots().values()],
        item.models,
        item.gold,
        item.criterion,
        item.group,
        item.meta[FORMAT],
    ]
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
