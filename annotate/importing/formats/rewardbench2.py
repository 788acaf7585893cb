"""RewardBench 2 records (allenai/reward-bench-2, split `test`) as an input
format (issue 33): JSONL, or the Hugging Face parquet.

A record is ``id`` (str; in the Ties subset ``ref:<int>`` or
``tied:<int>``), ``prompt`` (str), ``chosen`` and ``rejected`` (lists of
str), ``num_correct``, ``num_incorrect``, ``total_completions`` (ints,
consistent with the lists), ``models`` (list of str), ``subset``
(``Factuality``, ``Precise IF``, ``Math``, ``Safety``, ``Focus``, ``Ties``;
compared lower-cased) and ``additional_metadata`` (kept verbatim; any
other key is kept too). It becomes one item with N = total_completions
response slots, **chosen first, then rejected** (the benchmark's unrolled
order), one text part each; the prompt one text part. Its domain is the
subset's (the project's domain whose export Category is
``rewardbench2/<Subset>``, else ``rb2-<subset>``, created with the items)
unless the import's domain options say otherwise.

Everything but the texts is kept in ``Item.meta["rewardbench2"]``: the
canonical subset, ``num_correct`` (the first num_correct slots are the
correct ones), and the record as JSON text with the texts left out
(``fields``: key order kept, which jsonb would not) and how the line was
written (``style``; the line itself in ``raw`` when no json.dumps style
writes it back), so :func:`record_line` gives the line back byte for byte.

The file is read one line at a time (memory-mapped; the parquet's rows are
first turned into such lines by annotate.importing.hfparquet, a batch at a
time) and checked whole before anything is written; problems name the
file, the line (the row and column for parquet) and the field.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from annotate.importing import passes
from annotate.importing.formats import (
    TEXT,
    DatasetSource,
    ParsedFile,
    ParsedItem,
    ParsedPart,
    ReadContext,
    detect_keys,
    new_domain,
)
from annotate.importing.jsonscan import DatasetFile, kept_line, kept_value, styled_line
from annotate.importing.records import MAX_ID_LENGTH, MAX_MODEL_LENGTH, brief

FORMAT = "rewardbench2"
NAMES = (FORMAT, "rb2")
SUFFIXES = (".jsonl", ".parquet")
# Its parquet layout is read here, not by the generic parquet format.
PARQUET_LAYOUT = True
# What it detects is a RewardBench 2 file whatever format was named (its
# records are no other format's: chosen and rejected are lists).
DEFINITIVE = True
SUBSETS = ("Factuality", "Precise IF", "Math", "Safety", "Focus", "Ties")
BY_LOWER = {s.lower(): s for s in SUBSETS}
TIES = "Ties"
EXPORT_PREFIX = "rewardbench2/"
TEXT_KEYS = ("prompt", "chosen", "rejected")
REQUIRED = ("id", "prompt", "chosen", "rejected", "num_correct", "num_incorrect",
            "total_completions", "subset")  # fmt: skip
# What a file must hold to be recognised (its first record's keys).
SIGNATURE = ("id", "chosen", "rejected", "total_completions", "subset")
TIES_ID = re.compile(r"(ref|tied):-?\d+")
LABELS = {
    "prompt": "prompt",
    "responses": "chosen/rejected",
    "response_1": "chosen",
    "domain": "subset",
    "models": "models",
    "meta:rewardbench2": "the record's other fields",
}


def seed_demo(users: dict, folder, ensure_memberships) -> list:
    """Its demo project (manage.py seed_demo): 'demo-bo4', best of 4 in five
    RewardBench 2 subsets (demo.best_of_four), brought in through this
    format's import, with the three demo annotators' picks on two thirds of
    the items (right four times in five). Idempotent as the others'."""
    import random

    from django.db import transaction

    from annotate.importing.formats import DemoSeeded
    from annotate.importing.service import import_items_from_paths
    from annotate.loop.rules import Vote
    from annotate.loop.service import claim_next_item, submit_judgement
    from annotate.models import Assignment, Project, Task
    from demo.best_of_four import BEST_OF_FOUR_SEED, build_best_of_four_records, write_best_of_four

    records = build_best_of_four_records()
    with transaction.atomic():
        project, _ = Project.objects.get_or_create(
            slug="demo-bo4",
            defaults={
                "name": "Best of four (RewardBench 2-style demo)",
                "description": "Pick the one correct completion of four: Factuality, "
                "Precise IF, Math, Safety and Focus prompts (synthetic).",
                "guidelines": "Pick the **one** completion that is correct, follows every "
                "instruction, is safe and stays on the question.",
                "licence": "CC0-1.0 (synthetic demo data)",
                "seed": BEST_OF_FOUR_SEED,
                "task": Task.BEST_OF_N,
                "escalation_votes": 0,
                "created_by": users["admin"],
            },
        )
        ensure_memberships(project, users)
        created = 0
        if project.items.count() < len(records):
            path = write_best_of_four(records, folder)
            created = import_items_from_paths(project=project, dataset=path, fmt=FORMAT).created
        votes = 0
        if not Assignment.objects.filter(item__project=project).exists():
            rng = random.Random(BEST_OF_FOUR_SEED)
            for username in ("annotator1", "annotator2", "annotator3"):
                for _ in range(round(len(records) * 2 / 3)):
                    assignment = claim_next_item(project=project, annotator=users[username])
                    if assignment is None:
                        break
                    # Slot 1 is the chosen completion (chosen first).
                    pick = "1" if rng.random() < 0.8 else str(rng.randint(2, 4))
                    labels = {}
                    if assignment.item.domain.is_correctness:  # the picked one, and only it
                        labels["slot_correct"] = tuple(
                            "yes" if str(slot) == pick else "no" for slot in range(1, 5)
                        )
                    vote = Vote(choice=pick, task=Task.BEST_OF_N, **labels)
                    submit_judgement(
                        assignment_id=assignment.pk, annotator=users[username], vote=vote
                    )
                    votes += 1
    return [DemoSeeded(project, created, votes)]


# --- records (pure) -------------------------------------------------------------------------


@dataclass
class Rb2Record:
    id: str
    prompt: str
    chosen: list[str]
    rejected: list[str]
    subset: str  # canonical (SUBSETS)
    models: list[str]
    value: dict[str, Any]  # the record as decoded

    @property
    def completions(self) -> list[str]:
        return [*self.chosen, *self.rejected]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_record(value: Any) -> tuple[Rb2Record | None, list[tuple[str | None, str]]]:
    """A decoded line as a record, or None and its problems (field, message)."""
    if not isinstance(value, dict):
        return None, [(None, f"expected a JSON object, not {type(value).__name__}")]
    problems: list[tuple[str | None, str]] = []
    for key in REQUIRED:
        if key not in value:
            problems.append((key, "is missing"))
    if problems:
        return None, problems
    prompt_id, prompt, subset = value["id"], value["prompt"], value["subset"]
    if not isinstance(prompt_id, str) or not prompt_id:
        problems.append(("id", "must be a non-empty string"))
    elif len(prompt_id) > MAX_ID_LENGTH:
        problems.append(("id", f"is longer than {MAX_ID_LENGTH} characters"))
    if not isinstance(prompt, str):
        problems.append(("prompt", f"must be a string, not {type(prompt).__name__}"))
    lists = {}
    for key in ("chosen", "rejected"):
        texts = value[key]
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            problems.append((key, "must be a list of strings"))
        elif not texts:
            problems.append((key, "must hold at least one completion"))
        else:
            lists[key] = texts
    canonical = BY_LOWER.get(subset.lower()) if isinstance(subset, str) else None
    if canonical is None:
        problems.append(("subset", f"{brief(str(subset))} is not one of {', '.join(SUBSETS)}"))
    for key in ("num_correct", "num_incorrect", "total_completions"):
        if not _is_int(value[key]):
            problems.append(
                (key, f"must be an integer, not {brief(repr(value[key]), quote=False)}")
            )
    models = value.get("models", [])
    if models is None:
        models = []
    if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
        problems.append(("models", "must be a list of strings"))
    if problems:
        return None, problems
    chosen, rejected = lists["chosen"], lists["rejected"]
    if value["num_correct"] != len(chosen):
        problems.append(
            ("num_correct", f"is {value['num_correct']}, but chosen holds {len(chosen)}")
        )
    if value["num_incorrect"] != len(rejected):
        problems.append(
            ("num_incorrect", f"is {value['num_incorrect']}, but rejected holds {len(rejected)}")
        )
    if value["total_completions"] != len(chosen) + len(rejected):
        problems.append(
            (
                "total_completions",
                f"is {value['total_completions']}, but chosen and rejected hold "
                f"{len(chosen) + len(rejected)}",
            )
        )
    if canonical == TIES and not TIES_ID.fullmatch(prompt_id):
        problems.append(("id", "a Ties record's ID is ref:<int> or tied:<int>"))
    if problems:
        return None, problems
    return Rb2Record(prompt_id, prompt, chosen, rejected, canonical, models, value), []


def record_meta(record: Rb2Record, raw: str | None) -> dict:
    """Item.meta["rewardbench2"] (see the module)."""
    kept = kept_line(record.value, raw, TEXT_KEYS)
    return {"subset": record.subset, "num_correct": len(record.chosen), **kept}


def record_value(meta: dict, prompt: str, chosen: list[str], rejected: list[str]) -> dict:
    """The record: its kept fields, in the file's key order, with these texts."""
    return kept_value(meta, {"prompt": prompt, "chosen": chosen, "rejected": rejected})


def record_line(meta: dict, prompt: str, chosen: list[str], rejected: list[str]) -> str:
    """The record's JSONL line (no newline): the imported line itself when the
    texts are the imported ones, written as the file wrote it."""
    return styled_line(meta, record_value(meta, prompt, chosen, rejected))


# --- detection ---------------------------------------------------------------------------


def detect(source: DatasetSource) -> bool:
    return detect_keys(source, SIGNATURE)


# --- reading -----------------------------------------------------------------------------


def domain_fields(subset: str) -> dict[str, Any]:
    from annotate.models import DomainKind

    position = 200 + SUBSETS.index(subset)
    return new_domain(f"RewardBench 2: {subset}", f"{EXPORT_PREFIX}{subset}", position,
                      DomainKind.CORRECTNESS)  # fmt: skip


def subset_slug(subset: str) -> str:
    return "rb2-" + subset.lower().replace(" ", "-")


def read(source: DatasetSource, context: ReadContext) -> ParsedFile:
    if source.archive is None and source.name.lower().endswith(".parquet"):
        from annotate.importing import hfparquet

        return hfparquet.read_with(
            source,
            context,
            lambda parquet: read_data(parquet.data, filename=source.path.name, context=context),
        )
    data = source.open_data(context.stack)
    return read_data(data, filename=source.label, context=context)


def read_data(data: bytes | DatasetFile, *, filename: str, context: ReadContext) -> ParsedFile:
    """Check every line, then give the items (decoded again per call)."""

    def parse(value: Any, line: int, index: int, domain_of) -> tuple[ParsedItem | None, list]:
        record, problems = parse_record(value)
        if record is None:
            return None, problems
        return _item(record, line, index, domain_of(record.subset)), problems

    def restore(item: ParsedItem, value: Any, raw: str) -> None:
        item.meta["rewardbench2"] = record_meta(_record_of(item, value), raw)

    # Pass 1: every record checked, IDs and domains (no images).
    return passes.jsonl_file(
        data, context=context, filename=filename, parse=parse,
        label=lambda item: item.meta["rewardbench2"]["subset"], slug=subset_slug,
        export_category=lambda subset: f"{EXPORT_PREFIX}{subset}",
        category_field="subset", image_field="prompt", restore=restore,
        fmt=FORMAT, what="RewardBench 2 records", domain_fields=domain_fields,
        fingerprint=fingerprint, labels=LABELS,
    )  # fmt: skip


def _item(record: Rb2Record, line: int, index: int, domain: str) -> ParsedItem:
    completions = record.completions
    models = record.models
    per_slot = (
        [m if len(m) <= MAX_MODEL_LENGTH else "" for m in models]
        if len(models) == len(completions)
        else []
    )
    return ParsedItem(
        line=line,
        index=index,
        external_id=record.id,
        domain=domain,
        prompt=[ParsedPart(TEXT, text=record.prompt)],
        responses=[[ParsedPart(TEXT, text=text)] for text in completions],
        models=per_slot,
        meta={"rewardbench2": {"subset": record.subset, "num_correct": len(record.chosen)}},
    )


def _record_of(item: ParsedItem, value: dict) -> Rb2Record:
    k = item.meta["rewardbench2"]["num_correct"]
    texts = [slot[0].text for slot in item.responses]
    return Rb2Record(
        id=value["id"],
        prompt=item.prompt[0].text,
        chosen=texts[:k],
        rejected=texts[k:],
        subset=item.meta["rewardbench2"]["subset"],
        models=list(value.get("models") or []),
        value=value,
    )


def item_line(item: ParsedItem) -> str:
    """An item of this format as its JSONL line (see record_line)."""
    meta = item.meta["rewardbench2"]
    texts = [slot[0].text for slot in item.responses]
    k = meta["num_correct"]
    return record_line(meta, item.prompt[0].text, texts[:k], texts[k:])


def fingerprint(item: ParsedItem) -> str:
    """A stable fingerprint of what the import stores for the record (a
    re-import of the same file is a no-op)."""
    meta = item.meta["rewardbench2"]
    payload = [
        FORMAT,
        item.external_id,
        item.prompt[0].text,
        [slot[0].text for slot in item.responses],
        meta["num_correct"],
        meta["fields"],
    ]
    return hashlib.sha256(json.dumps(payload).encode()).hexdigest()
