"""Omni-RewardBench (arXiv 2510.23451; HongbangYuan/OmniReward) as an input
format: one task file ``<task>_preferences.json`` as published (the loader
``dataset/OmniRewardBench/load_omni_reward_bench.py`` reads it with
``json.load``; the authors write it with ``json.dump(samples, f, indent=4)``).

The file is a JSON array of records ``id, prompt, response1, response2,
model1, model2, criteria, criteria_preference`` (∈ response1, response2,
tie) plus the task's media paths (relative to the benchmark's
``media_data`` folder: the images given with the file, else its folder).
The task is the file name's ``<task>`` (nine are published):

- text tasks: ``text_to_text`` (texts only) and ``text_image_to_text`` (the
  prompt's ``image`` then its text; text responses);
- image and interleaved tasks: ``text_to_image`` and ``text_to_3D`` (the
  responses are image paths: the 3D task's renders) and
  ``text_image_to_image`` (a prompt ``image`` and two response images);
- video and audio tasks: ``text_video_to_text`` (the prompt's ``video``
  path then its text; text responses, as ``run_exp.py`` reads it),
  ``text_to_video`` (the responses are video paths), ``text_to_audio`` (the
  responses are audio paths, as ``run_exp_t2a.py`` reads them) and
  ``text_audio_to_text`` (the prompt's ``audio`` path then its text; no
  published reader: the field name mirrors ``image``/``video``). Their paths
  become VIDEO / AUDIO parts whose ``ref`` keys ``ParsedFile.media``.

A record becomes one pair item: ``criterion`` = ``criteria`` (the question
asked of it), gold from ``criteria_preference`` (response1 → "1", response2
→ "2"; a tie has no gold side, Item.gold_choice holds sides only, and stays in
``meta``), models = model1, model2, domain = the task (export
Category ``omni/<task>``), group = ``omni-`` + 16 hex digits of the sha256 of
the task, prompt, prompt image and both responses (the same pair under two
criteria is two items in one group; the published unique key is prompt +
criteria + response1 + response2). The external ID is ``<task>:<id>`` (the
tasks' files may number their records alike, and one project may hold several
tasks) when no other record of the file has that ``id``, else
``<task>:<id>~`` + the first 8 hex digits of sha256(criteria) (a pair's
criteria may share an ``id``). A release writes the file's own ``id``.

Everything else is kept in ``Item.meta["omni"]``: the task, the record's
other fields in key order (``fields``) and how it was written (``style``:
``json.dumps(value, indent=4)`` nested one level, ASCII or not; the record
text itself in ``raw`` otherwise) and the file's envelope (the text between
``[`` and the first record, between records, after the last), so
:func:`file_text` writes the file back byte for byte when nothing changed.
Problems name the file, the line and the field; nothing is written unless
every record and image is good.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from functools import partial
from typing import Any

from annotate.importing import passes
from annotate.importing.formats import (
    AUDIO,
    IMAGE,
    TEXT,
    VIDEO,
    DatasetSource,
    ParsedFile,
    ParsedItem,
    ParsedPart,
    ReadContext,
    new_domain,
)
from annotate.importing.jsonscan import check_utf8
from annotate.importing.options import RecordRules
from annotate.importing.records import (
    MAX_ID_LENGTH,
    MAX_IMAGE_PATH_LENGTH,
    ImageInfo,
    ImportFailed,
    ImportProblem,
    ProblemLog,
)
from annotate.importing.sources import ImageSource, safe_relative_path

FORMAT = "omni"
NAMES = (FORMAT, "omni-rewardbench")
SUFFIXES = (".json",)
DEFINITIVE = True  # criteria_preference is no other format's field
EXPORT_PREFIX = "omni/"
FILE_SUFFIX = "_preferences.json"
REQUIRED = ("id", "prompt", "response1", "response2", "criteria", "criteria_preference")
PREFERENCES = {"response1": "1", "response2": "2", "tie": "tie"}
# task → (the prompt's media field or "", its part kind, the responses' part kind)
SHAPES = {
    "text_to_text": ("", TEXT, TEXT),
    "text_image_to_text": ("image", IMAGE, TEXT),
    "text_to_image": ("", TEXT, IMAGE),
    "text_to_3D": ("", TEXT, IMAGE),
    "text_image_to_image": ("image", IMAGE, IMAGE),
    "text_video_to_text": ("video", VIDEO, TEXT),
    "text_to_video": ("", TEXT, VIDEO),
    "text_to_audio": ("", TEXT, AUDIO),
    "text_audio_to_text": ("audio", AUDIO, TEXT),
}
# task → (the prompt has a media path, the responses are media paths)
TASKS = {task: (bool(key), kind != TEXT) for task, (key, _, kind) in SHAPES.items()}
# The one task whose published judge (run_exp_t2a.py) shows response2 first.
JUDGE_SWAPS = ("text_to_audio",)
INDENT = 4
LABELS = {"prompt": "prompt", "response_1": "response1", "response_2": "response2",
          "image": "image", "criterion": "criteria", "gold": "criteria_preference"}  # fmt: skip


# --- the task and the file's text (pure) -----------------------------------------------------


def task_of(filename: str) -> str:
    """The task a file's name gives (``…/<task>_preferences.json``);
    ImportFailed naming the file if none the studio reads."""
    name = re.split(r"[/\\:]", filename)[-1]
    task = name[: -len(FILE_SUFFIX)] if name.endswith(FILE_SUFFIX) else ""
    if task in TASKS:
        return task
    why = (
        f"cannot tell the Omni-RewardBench task: name the file <task>{FILE_SUFFIX} with "
        f"<task> one of {', '.join(TASKS)}"
    )
    raise ImportFailed([ImportProblem(filename, why)])


def dumped(value: Any, *, ascii_only: bool) -> str:
    """A record as ``json.dump(list, indent=4)`` writes it inside the array."""
    return json.dumps(value, indent=INDENT, ensure_ascii=ascii_only).replace(
        "\n", "\n" + " " * INDENT
    )


def record_style(value: dict, raw: str) -> dict:
    """How the record text `raw` was written (``style``; ``raw`` if no style)."""
    for style, ascii_only in (("indent", False), ("indent-ascii", True)):
        if dumped(value, ascii_only=ascii_only) == raw:
            return {"style": style}
    return {"style": "raw", "raw": raw}


def record_text(meta: dict, value: dict) -> str:
    """`value` as the file wrote its record: the kept text when it decodes to
    `value`, else dumped in the file's style."""
    if meta.get("style") == "raw" and json.loads(meta["raw"]) == value:
        return meta["raw"]
    return dumped(value, ascii_only=meta.get("style") == "indent-ascii")


def file_text(records: Sequence[str], envelope: dict | None) -> str:
    """The task file of these record texts in the imported file's envelope
    (else json.dump's with indent=4)."""
    env = envelope or {"open": "\n" + " " * INDENT, "sep": ",\n" + " " * INDENT, "close": "\n]"}
    if not records:
        return "[]"
    return "[" + env["open"] + env["sep"].join(records) + env["close"]


def scan(
    text: str, filename: str, max_record_bytes: int | None = None
) -> Iterator[tuple[int, int, str, Any]]:
    """(line, index, raw text, value) per record of the array, then a last
    (0, -1, "", envelope) with the text around the records. ImportFailed
    naming the line on a syntax error or a record over `max_record_bytes`."""
    decoder = json.JSONDecoder()
    ws = re.compile(r"[ \t\n\r]*")

    def fail(pos: int, why: str):
        line = text.count("\n", 0, pos) + 1
        return ImportFailed([ImportProblem(filename, why, line=line)])

    pos = ws.match(text, 0).end()
    if not text.startswith("[", pos):
        raise fail(pos, "expected a JSON array of records (Omni-RewardBench's task file)")
    start = pos + 1
    pos = ws.match(text, start).end()
    envelope = {"open": text[start:pos], "sep": ",\n" + " " * INDENT, "close": ""}
    index = 0
    if text.startswith("]", pos):
        yield 0, -1, "", {**envelope, "open": "", "close": text[start:]}
        return
    while True:
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise fail(exc.pos, f"invalid JSON: {exc.msg}") from None
        except RecursionError:
            raise fail(pos, "invalid JSON: values are nested too deeply") from None
        if max_record_bytes is not None and len(text[pos:end].encode()) > max_record_bytes:
            raise fail(pos, f"record is larger than the limit of {max_record_bytes} bytes")
        yield text.count("\n", 0, pos) + 1, index, text[pos:end], value
        index += 1
        after = ws.match(text, end).end()
        if text.startswith(",", after):
            pos = ws.match(text, after + 1).end()
            if index == 1:
                envelope["sep"] = text[end:pos]
            continue
        if not text.startswith("]", after):
            raise fail(after, "invalid JSON: expected ',' or ']' after a record")
        envelope["close"] = text[end:]
        if text[after + 1 :].strip(" \t\n\r"):
            raise fail(after + 1, "invalid JSON: extra data after the array")
        yield 0, -1, "", envelope
        return


# --- records (pure) ----------------------------------------------------------------------


def parse_record(value: Any, task: str) -> list[tuple[str | None, str]]:
    """The record's problems as (field, message)."""
    if not isinstance(value, dict):
        return [(None, f"expected a JSON object, not {type(value).__name__}")]
    problems: list[tuple[str | None, str]] = [(k, "is missing") for k in REQUIRED if k not in value]
    if problems:
        return problems
    record_id = value["id"]
    if isinstance(record_id, bool) or not isinstance(record_id, str | int) or record_id == "":
        problems.append(("id", "must be a non-empty string or an integer"))
    elif len(str(record_id)) > MAX_ID_LENGTH - 40:
        problems.append(("id", f"is longer than {MAX_ID_LENGTH - 40} characters"))
    for key in ("prompt", "response1", "response2", "criteria"):
        if not isinstance(value[key], str):
            problems.append((key, f"must be a string, not {type(value[key]).__name__}"))
    for key in ("model1", "model2"):
        if value.get(key) is not None and not isinstance(value[key], str):
            problems.append((key, "must be a string (the model's name)"))
    if value["criteria_preference"] not in PREFERENCES:
        problems.append(("criteria_preference", f"must be one of {', '.join(PREFERENCES)}, not "
                         f"{json.dumps(value['criteria_preference'])[:40]}"))  # fmt: skip
    prompt_key, prompt_kind, response_kind = SHAPES[task]
    paths = ([(prompt_key, prompt_kind)] if prompt_key else []) + (
        [("response1", response_kind), ("response2", response_kind)]
        if response_kind != TEXT
        else []
    )
    for key, kind in paths:
        path = value.get(key)
        if not isinstance(path, str) or not path:
            problems.append((key, f"must be {'an' if kind[0] in 'aeiou' else 'a'} {kind} path "
                             f"({task})"))  # fmt: skip
        elif len(path) > MAX_IMAGE_PATH_LENGTH:
            problems.append((key, f"{kind} path is longer than {MAX_IMAGE_PATH_LENGTH}"))
        elif safe_relative_path(path) is None:
            problems.append((key, f"{kind} path {path!r} is absolute or contains '..'"))
    return problems


def group_key(value: dict, task: str) -> str:
    """The pair's key without its criterion (module docstring)."""
    key = SHAPES[task][0] or "image"
    pair = [task, value["prompt"], value.get(key), value["response1"], value["response2"]]
    return "omni-" + hashlib.sha256(json.dumps(pair).encode()).hexdigest()[:16]


def external_id(value: dict, task: str, repeated: bool) -> str:
    """The item's ID: ``<task>:<id>``, with ``~`` and its criterion's short
    hash if the ID repeats in the file (module docstring)."""
    if not repeated:
        return f"{task}:{value['id']}"
    return f"{task}:{value['id']}~{hashlib.sha256(value['criteria'].encode()).hexdigest()[:8]}"


def _slot(text: str, kind: str) -> list[ParsedPart]:
    if kind != TEXT:
        return [ParsedPart(kind, ref=safe_relative_path(text) or "", source_path=text)]
    return [ParsedPart(TEXT, text=text)]


def make_item(value: dict, task: str, line: int, index: int, *, repeated: bool,
              domain: str) -> ParsedItem:  # fmt: skip
    prompt_key, prompt_kind, response_kind = SHAPES[task]
    prompt = _slot(value[prompt_key], prompt_kind) if prompt_key else []
    return ParsedItem(
        line=line,
        index=index,
        external_id=external_id(value, task, repeated),
        domain=domain,
        prompt=[*prompt, ParsedPart(TEXT, text=value["prompt"])],
        responses=[
            _slot(value["response1"], response_kind),
            _slot(value["response2"], response_kind),
        ],
        models=[value.get("model1") or "", value.get("model2") or ""],
        # Item.gold_choice holds a side only: a tie label stays in meta (fields).
        gold=PREFERENCES[value["criteria_preference"]].replace("tie", ""),
        group=group_key(value, task),
        criterion=value["criteria"],
        meta={"omni": {"task": task}},
    )


def text_keys(task: str) -> tuple[str, ...]:
    """The fields the item's own columns hold (left out of ``fields``)."""
    return ("prompt", "criteria") + (() if TASKS[task][1] else ("response1", "response2"))


def kept(value: dict, raw: str, task: str, envelope: dict) -> dict:
    rest = {k: (None if k in text_keys(task) else v) for k, v in value.items()}
    return {"fields": json.dumps(rest, ensure_ascii=False), **record_style(value, raw),
            "envelope": envelope}  # fmt: skip


def record_value(meta: dict, *, prompt: str, criteria: str, responses: Sequence[str],
                 preference: str, record_id: str | None = None) -> dict:  # fmt: skip
    """The record with these texts (responses: texts, or kept image paths),
    preference ("1", "2", "tie") and ID, in the file's key order."""
    value = json.loads(meta["fields"])
    value.update(prompt=prompt, criteria=criteria, response1=responses[0],
                 response2=responses[1])  # fmt: skip
    value["criteria_preference"] = {v: k for k, v in PREFERENCES.items()}[preference]
    if record_id is not None and str(value["id"]) != record_id:
        value["id"] = record_id
    return value


def imported_preference(meta: dict) -> str:
    """The file's criteria_preference as a choice ("1", "2", "tie")."""
    return PREFERENCES[json.loads(meta["fields"])["criteria_preference"]]


# --- detection and reading ---------------------------------------------------------------


def detect(source: DatasetSource) -> bool:
    if not source.name.lower().endswith(".json"):
        return False
    head = source.head(64 * 1024).removeprefix(b"\xef\xbb\xbf").lstrip()
    return head.startswith(b"[") and b'"criteria_preference"' in head


def domain_fields(task: str) -> dict[str, Any]:
    return new_domain(f"Omni-RewardBench: {task}", f"{EXPORT_PREFIX}{task}", 320)


def domain_slug(task: str) -> str:
    return "omni-" + task.lower().replace("_", "-")


def read(source: DatasetSource, context: ReadContext) -> ParsedFile:
    task = task_of(source.label)
    data = source.open_data(context.stack)
    images = source.image_source(context.images)
    return read_data(data, filename=source.label, task=task, images=images, context=context)


def read_data(data: Any, *, filename: str, task: str, images: ImageSource,
              context: ReadContext) -> ParsedFile:  # fmt: skip
    bounds = context.bounds
    log = ProblemLog(filename, bounds.max_errors, context.options.wording)
    if not check_utf8(data, log):
        log.raise_if_any()
    text = bytes(data[:]).decode("utf-8-sig")
    *_, (_, _, _, envelope) = scan(text, filename, bounds.max_record_bytes)
    ids = Counter(str(v.get("id")) for _, i, _, v in scan(text, filename)
                  if i >= 0 and isinstance(v, dict))  # fmt: skip
    known = dict(context.known)
    slug = context.domain or known.get(f"{EXPORT_PREFIX}{task}") or domain_slug(task)
    rules = partial(RecordRules, context.options, known_categories=known, id_field="id",
                    category_field="task", image_field="image")  # fmt: skip

    def parse(value: Any, line: int, index: int) -> tuple[ParsedItem | None, list]:
        problems = parse_record(value, task)
        if problems:
            return None, problems
        repeated = ids[str(value["id"])] > 1
        return make_item(value, task, line, index, repeated=repeated, domain=slug), []

    def records(log: ProblemLog) -> Iterator[passes.Record]:
        lines = ((ln, i, raw, v) for ln, i, raw, v in scan(text, filename) if i >= 0)
        return passes.parsed_records(lines, parse, log, bounds)

    fields = [SHAPES[task][0] or "prompt", "response1", "response2"]

    def restore(item: ParsedItem, value: Any, raw: str) -> None:
        item.meta["omni"].update(kept(value, raw, task, envelope))

    # The file's one task is its one domain, new where the import names none.
    return passes.two_pass_file(
        fmt=FORMAT, what="Omni-RewardBench records", context=context, filename=filename,
        records=records, rules=rules, log=log, known=known, new_domains={},
        derived=bool(context.domain), category=lambda item: (slug, task),
        domain_fields=domain_fields, restore=restore, fingerprint=fingerprint, images=images,
        part_field=lambda item, slot, position: fields[list(item.slots()).index(slot)],
        labels=LABELS,
    )  # fmt: skip


def item_record(item: ParsedItem) -> str:
    """An imported item's record text as its file wrote it (see record_text)."""
    meta = item.meta["omni"]
    image = TASKS[meta["task"]][1]
    responses = [slot[0].source_path if image else slot[0].text for slot in item.responses]
    value = record_value(meta, prompt=item.prompt[-1].text, criteria=item.criterion,
                         responses=responses, preference=imported_preference(meta))  # fmt: skip
    return record_text(meta, value)


def fingerprint(item: ParsedItem, *, infos: dict[str, ImageInfo], media=None) -> str:
    """What the import stores for the record and its images' and media's bytes."""
    parts = [p for slot in (item.prompt, *item.responses) for p in slot]
    media = media or {}
    payload = [
        FORMAT, item.external_id, item.criterion, item.gold, item.group, item.models,
        [[p.kind, p.text if p.kind == TEXT else p.source_path] for p in parts],
        item.meta["omni"].get("fields"),
        [infos[p.ref].sha256 for p in parts if p.kind == IMAGE],
    ] + ([[media[p.ref].sha256 for p in parts if p.ref in media]] if media else [])  # fmt: skip
    return hashlib.sha256(json.dumps(payload).encode()).hexdigest()
