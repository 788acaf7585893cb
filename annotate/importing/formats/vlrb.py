"""VL-RewardBench as published (Li et al., arXiv 2411.17451; the Hub's
MMInstruction/VL-RewardBench, scored by vl-rewardbench/VL_RewardBench
``cal.py``; issue 34): the official records as JSONL.

A record is the Hub row as a JSON line: ``id`` (str), ``query`` (str),
``response`` (two strings), ``human_ranking`` (two ints, ``0`` = preferred:
``[0, 1]`` means the first response is the better one), optionally
``image`` (the prompt's image: a path relative to the images given with the
file or to its folder; the parquet's ``{bytes, path}`` struct is written out
as such a file) and ``models`` (two strings); any other key (``judge``,
``rationale``, ``query_source``, ``ground_truth``, …) is kept. The Hub's
parquet itself is still read by the generic parquet format (it splits the
pair into chosen and rejected); name this format for its JSONL.

It becomes one pair item (responses in the file's order, the prompt its image
then its query text) with gold "1" for ``[0, 1]`` and "2" for ``[1, 0]``. Its
domain is the task group of the **official id grouping**, cal.py's
``get_dataset_from_id`` and ``group_mapping`` (quoted in :func:`dataset_of`
and :data:`GROUP_OF_DATASET`): the ID's prefix up to its first ``_`` or
``-`` names the source dataset, case-sensitively, and the dataset its group
(general 183, hallucination 749, reasoning 318 on the published 1,250).
A group is the project's domain whose export Category is the group's name
(the ``vlrb`` preset's three), created with the items when missing, unless
the import's domain options say otherwise. r1_reward's copy of this rule
tests lower-case prefixes and sends the upper-case ``RLAIF-V…``/``RLHF-V…``
IDs to vlfeedback (general); the official one is used here.

Everything but the texts is kept in ``Item.meta["vlrb"]``: the group, the
dataset, the file's ``human_ranking`` and the line's other fields and style
(annotate.importing.jsonscan.kept_line), so :func:`record_line` gives the
line back byte for byte (curation.benchmarks.vlrb writes it into a release
when nothing of it changed). Every line is checked before anything is
written; problems name the file, the line and the field.
"""

from __future__ import annotations

import hashlib
import json
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
    read_with_images,
)
from annotate.importing.jsonscan import DatasetFile, kept_value, styled_line
from annotate.importing.records import MAX_ID_LENGTH, MAX_IMAGE_PATH_LENGTH, ImageInfo, brief
from annotate.importing.sources import ImageSource, safe_relative_path

FORMAT = "vlrb"
NAMES = (FORMAT, "vl-rewardbench")
SUFFIXES = (".jsonl",)
# Its records are no other format's (`response` a list beside `human_ranking`).
DEFINITIVE = True
TEXT_KEYS = ("query", "response")
REQUIRED = ("id", "query", "response", "human_ranking")
SIGNATURE = ("response", "human_ranking")
RANKINGS = ([0, 1], [1, 0])
LABELS = {
    "prompt": "query",
    "image": "image",
    "image path": "image",
    "response_1": "response",
    "response_2": "response",
    "domain": "id",
    "meta:vlrb": "the record's other fields",
}

# --- the official id grouping (pure) --------------------------------------------------------

# cal.py: group_mapping = {"vlfeedback": "general", "povid": "hallucination",
#   "reasoning_tasks": "reasoning", "rlhf-v": "hallucination",
#   "rlaif-v": "hallucination", "wildvision-battle": "general"}
GROUP_OF_DATASET = {
    "vlfeedback": "general",
    "povid": "hallucination",
    "reasoning_tasks": "reasoning",
    "rlhf-v": "hallucination",
    "rlaif-v": "hallucination",
    "wildvision-battle": "general",
}
GROUPS = ("general", "hallucination", "reasoning")  # cal.py's task_list, in its print order


def id_prefix(record_id: str) -> str:
    """cal.py's ``get_id_prefix``: the ID up to its first ``_`` or ``-``
    (``split_index = min((id.find('_'), id.find('-')), key=lambda x: x if
    x != -1 else float('inf'))``; neither found: the whole ID)."""
    split = min((record_id.find("_"), record_id.find("-")), key=lambda x: x if x != -1 else 1e309)
    return record_id[:split] if split != -1 else record_id


def dataset_of(record_id: str) -> str:
    """cal.py's ``get_dataset_from_id``, case-sensitive as there::

    if id_prefix == "RLAIF": return "rlaif-v"
    elif id_prefix == "RLHF": return "rlhf-v"
    elif id_prefix == "mathverse" or id_prefix == "mmmu": return "reasoning_tasks"
    elif id_prefix == "wildvision": return "wildvision-battle"
    elif id_prefix == 'hallucination': return "povid" # fix povid bug
    else: return "vlfeedback"
    """
    prefix = id_prefix(record_id)
    if prefix == "RLAIF":
        return "rlaif-v"
    if prefix == "RLHF":
        return "rlhf-v"
    if prefix in ("mathverse", "mmmu"):
        return "reasoning_tasks"
    if prefix == "wildvision":
        return "wildvision-battle"
    if prefix == "hallucination":
        return "povid"
    return "vlfeedback"


def group_of(record_id: str) -> str:
    return GROUP_OF_DATASET[dataset_of(record_id)]


def gold_of(ranking: list[int]) -> str:
    """The item's gold response (canonical slot) of a ``human_ranking``."""
    return "1" if ranking == [0, 1] else "2"


def ranking_of(choice: str) -> list[int] | None:
    """The ``human_ranking`` of a decided pair ("1"/"2"), else None."""
    return {"1": [0, 1], "2": [1, 0]}.get(choice)


# --- records (pure) -------------------------------------------------------------------------


def parse_record(value: Any) -> tuple[dict | None, list[tuple[str | None, str]]]:
    """The record's checked fields, or None and its problems as (field, message)."""
    if not isinstance(value, dict):
        return None, [(None, f"expected a JSON object, not {type(value).__name__}")]
    problems: list[tuple[str | None, str]] = [(k, "is missing") for k in REQUIRED if k not in value]
    if problems:
        return None, problems
    record_id, query, response = value["id"], value["query"], value["response"]
    ranking = value["human_ranking"]
    if not isinstance(record_id, str) or not record_id:
        problems.append(("id", "must be a non-empty string"))
    elif len(record_id) > MAX_ID_LENGTH:
        problems.append(("id", f"is longer than {MAX_ID_LENGTH} characters"))
    if not isinstance(query, str):
        problems.append(("query", f"must be a string, not {type(query).__name__}"))
    if not (isinstance(response, list) and len(response) == 2
            and all(isinstance(t, str) for t in response)):  # fmt: skip
        problems.append(("response", "must be a list of two strings"))
    if ranking not in RANKINGS or not all(type(r) is int for r in ranking):
        problems.append(
            ("human_ranking", f"must be [0, 1] or [1, 0] (0 = preferred), not "
             f"{brief(json.dumps(ranking), quote=False)}")
        )  # fmt: skip
    models = value.get("models")
    if models is not None and not (
        isinstance(models, list) and len(models) == 2 and all(isinstance(m, str) for m in models)
    ):
        problems.append(("models", "must be a list of two strings"))
    image = value.get("image")
    if image not in (None, ""):
        if not isinstance(image, str):
            problems.append(
                ("image", "must be an image path (write the parquet's bytes to a file)")
            )
        elif len(image) > MAX_IMAGE_PATH_LENGTH:
            problems.append(("image", f"image path is longer than {MAX_IMAGE_PATH_LENGTH}"))
        elif safe_relative_path(image) is None:
            problems.append(("image", f"image path {image!r} is absolute or contains '..'"))
    if problems:
        return None, problems
    return value, []


def record_line(meta: dict, *, query: str, responses: list[str], ranking: list[int],
                record_id: str | None = None) -> str:  # fmt: skip
    """The record's JSONL line (no newline) with these texts and ranking (and
    ID, if given): the imported line itself when nothing changed."""
    value = kept_value(meta, {"query": query, "response": responses})
    value["human_ranking"] = ranking
    if record_id is not None:
        value["id"] = record_id
    return styled_line(meta, value)


def item_line(item: ParsedItem) -> str:
    """An item of this format as its JSONL line (see record_line)."""
    meta = item.meta["vlrb"]
    return record_line(
        meta,
        query=item.prompt[-1].text,
        responses=[slot[0].text for slot in item.responses],
        ranking=meta["human_ranking"],
    )


def domain_fields(group: str) -> dict[str, Any]:
    from annotate.setup.presets import VL_REWARDBENCH_DOMAINS

    _slug, title, export, kind = next(d for d in VL_REWARDBENCH_DOMAINS if d[0] == group)
    return {"title": title, "export_category": export, "kind": kind, "position": 310}


# --- detection and reading ------------------------------------------------------------------


def detect(source: DatasetSource) -> bool:
    # The Hub's parquet stays the generic parquet format's (see module).
    return not source.name.lower().endswith(".parquet") and detect_keys(source, SIGNATURE)


def read(source: DatasetSource, context: ReadContext) -> ParsedFile:
    return read_with_images(source, context, read_data)


def read_data(
    data: bytes | DatasetFile, *, filename: str, images: ImageSource, context: ReadContext
) -> ParsedFile:
    """Check every line and image, then give the items (decoded again per call)."""

    def parse(value: Any, line: int, index: int, domain_of) -> tuple[ParsedItem | None, list]:
        record, problems = parse_record(value)
        if record is None:
            return None, problems
        return _item(record, line, index, domain_of(group_of(record["id"]))), problems

    return passes.jsonl_file(
        data, context=context, filename=filename, parse=parse,
        label=lambda item: item.meta["vlrb"]["group"], slug=str,
        export_category=str, category_field="id", image_field="image",
        kept=("vlrb", TEXT_KEYS), fmt=FORMAT, what="VL-RewardBench records",
        domain_fields=domain_fields, fingerprint=fingerprint, images=images, labels=LABELS,
    )  # fmt: skip


def _item(record: dict, line: int, index: int, domain: str) -> ParsedItem:
    path = record.get("image") or ""
    images = (
        [ParsedPart(IMAGE, ref=safe_relative_path(path) or "", source_path=path)] if path else []
    )
    ranking = record["human_ranking"]
    return ParsedItem(
        line=line,
        index=index,
        external_id=record["id"],
        domain=domain,
        prompt=[*images, ParsedPart(TEXT, text=record["query"])],
        responses=[[ParsedPart(TEXT, text=text)] for text in record["response"]],
        models=list(record.get("models") or []),
        gold=gold_of(ranking),
        meta={
            "vlrb": {
                "group": group_of(record["id"]),
                "dataset": dataset_of(record["id"]),
                "human_ranking": ranking,
            }
        },
    )


def fingerprint(item: ParsedItem, *, infos: dict[str, ImageInfo]) -> str:
    """A stable fingerprint of what the import stores for the record and its
    image's bytes (a re-import of the same file is a no-op)."""
    meta = item.meta["vlrb"]
    payload = [
        FORMAT,
        item.external_id,
        [[p.kind, p.source_path if p.kind == IMAGE else p.text] for p in item.prompt],
        [slot[0].text for slot in item.responses],
        meta["human_ranking"],
        meta["fields"],
        [infos[p.ref].sha256 for p in item.prompt if p.kind == IMAGE],
    ]
    return hashlib.sha256(json.dumps(payload).encode()).hexdigest()
