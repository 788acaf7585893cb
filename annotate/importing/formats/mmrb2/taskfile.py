"""The Multimodal RewardBench 2 task file (facebookresearch/MMRB2), read and
written exactly: pure Python, no Django.

A task file (`t2i.json`, `edit.json`, `interleaved.json`, `reasoning.json`)
is `{"pairs": [...]}` written with `json.dump(indent=2)` (ASCII escapes, no
final newline). A pair has, in this order, `id`, `response_a`, `response_b`,
`chosen`, `human_annotations`, `prompt_source`, `prompt_metadata`,
`prompt_content`; a content is a list of `[kind, value]` items, kind "text"
or "image" (a path relative to the task file's folder); a response is
`{"model_name", "response_content"}`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import IO, Any

TASKS = {
    "t2i": "MMRB2 text-to-image",
    "edit": "MMRB2 image editing",
    "interleaved": "MMRB2 interleaved generation",
    "reasoning": "MMRB2 multimodal reasoning",
}
PAIR_KEYS = (
    "id",
    "response_a",
    "response_b",
    "chosen",
    "human_annotations",
    "prompt_source",
    "prompt_metadata",
    "prompt_content",
)
RESPONSE_KEYS = ("model_name", "response_content")
# Where an item's parts come from in a pair, slot by slot (response_1 is
# response_a: canonical order is file order).
SLOTS = (
    ("prompt", ("prompt_content",)),
    ("response_1", ("response_a", "response_content")),
    ("response_2", ("response_b", "response_content")),
)
MAX_PARTS = 200
_TASK_FILE_HEAD = re.compile(rb'\s*\{\s*"pairs"\s*:\s*\[')


def looks_like_task_file(head: bytes) -> bool:
    """Whether a file starting with `head` is an MMRB2 task file."""
    return _TASK_FILE_HEAD.match(head) is not None


def pairs_array_start(data: Any) -> int | None:
    """The offset of the `[` of the "pairs" array, or None."""
    match = _TASK_FILE_HEAD.match(data[:4096])
    return None if match is None else match.end() - 1


def task_of(filename: str) -> str | None:
    stem = filename.rsplit("/", 1)[-1].removesuffix(".json")
    return stem if stem in TASKS else None


@dataclass
class Pair:
    """A pair in our terms: its parts per slot, as (kind, value) with value
    the text or the image path as written in the file."""

    external_id: str
    parts: dict[str, list[tuple[str, str]]]
    model_1: str
    model_2: str
    # The pair's own fields our columns do not hold, verbatim, for the export.
    fields: dict[str, Any] = field(default_factory=dict)

    def text(self, slot: str) -> str:
        """The slot's text parts joined (the Item's text column)."""
        return "\n\n".join(v for kind, v in self.parts[slot] if kind == "text")

    def mrb_shaped(self) -> bool:
        """Prompt = [image, text] and one text per response: the MRB record's shape."""
        kinds = {slot: [kind for kind, _ in parts] for slot, parts in self.parts.items()}
        return kinds == {
            "prompt": ["image", "text"],
            "response_1": ["text"],
            "response_2": ["text"],
        }


def parse_pair(value: Any) -> tuple[Pair | None, list[tuple[str, str]]]:
    """(The pair, or None; problems as (field, message))."""
    if not isinstance(value, dict):
        return None, [("", f"a pair must be a JSON object, not {type(value).__name__}")]
    problems: list[tuple[str, str]] = []
    missing = [key for key in PAIR_KEYS if key not in value]
    if missing:
        problems.append(("", f"missing key(s): {', '.join(missing)}"))
        return None, problems
    ext_id = value["id"]
    if not isinstance(ext_id, str) or not ext_id.strip() or len(ext_id) > 200:
        problems.append(("id", "must be a non-empty string of at most 200 characters"))
    if value["chosen"] not in ("A", "B"):
        problems.append(("chosen", 'must be "A" or "B"'))
    models = []
    for side in ("response_a", "response_b"):
        response = value[side]
        if not isinstance(response, dict) or list(response) != list(RESPONSE_KEYS):
            problems.append((side, 'must be {"model_name", "response_content"} in that order'))
            continue
        name = response["model_name"]
        if not isinstance(name, str) or len(name) > 200:
            problems.append((f"{side}.model_name", "must be a string of at most 200 characters"))
        models.append(name)
    parts: dict[str, list[tuple[str, str]]] = {}
    for slot, path in SLOTS:
        content: Any = value
        for key in path:
            content = content.get(key) if isinstance(content, dict) else None
        where = ".".join(path)
        if not isinstance(content, list) or len(content) > MAX_PARTS:
            problems.append((where, f"must be a list of at most {MAX_PARTS} [kind, value] items"))
            continue
        items = []
        for n, entry in enumerate(content):
            if (
                not isinstance(entry, list)
                or len(entry) != 2
                or entry[0] not in ("text", "image")
                or not isinstance(entry[1], str)
            ):
                problems.append((f"{where}[{n}]", 'must be ["text", str] or ["image", path]'))
                continue
            items.append((entry[0], entry[1]))
        parts[slot] = items
    if problems:
        return None, problems
    extra = {key: value[key] for key in value if key not in PAIR_KEYS}
    fields = {
        key: value[key]
        for key in ("chosen", "human_annotations", "prompt_source", "prompt_metadata")
    }
    if extra:
        fields["extra"] = extra
    return Pair(ext_id, parts, models[0], models[1], fields), []


def pair_record(
    *,
    external_id: str,
    model_1: str,
    model_2: str,
    parts: dict[str, list[tuple[str, str]]],
    fields: dict[str, Any],
) -> dict[str, Any]:
    """A pair as the task file holds it, keys in the published order."""

    def content(slot: str) -> list[list[str]]:
        return [[kind, value] for kind, value in parts.get(slot, ())]

    record = {
        "id": external_id,
        "response_a": {"model_name": model_1, "response_content": content("response_1")},
        "response_b": {"model_name": model_2, "response_content": content("response_2")},
        "chosen": fields.get("chosen"),
        "human_annotations": fields.get("human_annotations"),
        "prompt_source": fields.get("prompt_source"),
        "prompt_metadata": fields.get("prompt_metadata"),
        "prompt_content": content("prompt"),
    }
    record.update(fields.get("extra", {}))
    return record


def write_task_file(pairs: Iterable[dict[str, Any]], fh: IO[str]) -> None:
    """Write `{"pairs": [...]}` byte for byte as `json.dump(obj, fh, indent=2)`
    does, one pair at a time (memory holds one pair, not the file)."""
    first = True
    for pair in pairs:
        fh.write('{\n  "pairs": [\n    ' if first else ",\n    ")
        fh.write(json.dumps(pair, indent=2).replace("\n", "\n    "))
        first = False
    fh.write('{\n  "pairs": []\n}' if first else "\n  ]\n}")
