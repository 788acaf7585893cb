"""Records whose ID is already in the project with different content (issue 31).

A re-import that differs says which fields differ on how many records, and
the `conflicts` option decides what becomes of them:

* ``refuse`` (default): nothing is written; the report names the fields and
  the options that fit;
* ``metadata``: only what annotators never saw (models, gold, reference
  answer, other fields) is updated; a record whose text, responses, image or
  domain differ is refused, so what annotators saw never changes;
* ``suffix``: each is imported as a new item ``ID#2`` (``ID#3``, … if taken),
  the existing item left as it is; importing the same file again finds it;
* ``replace`` (the old ``update``): items nobody has claimed are replaced.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from annotate.importing.options import Wording
from annotate.importing.parse import ParsedDataset, content_hash
from annotate.importing.records import MAX_ID_LENGTH, SHOWN_REPEATS, ImportProblem, ProblemLog
from annotate.models import Item

# What annotators see of an item; `metadata` may change anything else.
SEEN = ("prompt", "image", "response_1", "response_2", "category")
METADATA = ("model_1", "model_2", "gold_choice", "reference_answer", "meta")
# The fields as each format's files name them (a pair's responses are in a
# seeded order, so either may be the file's chosen one).
_LABELS = {
    "mrb": {
        "prompt": "Text",
        "image": "Image",
        "response_1": "Output1",
        "response_2": "Output2",
        "category": "Category",
        "gold_choice": "Better",
    },
    "pairs": {"response_1": "chosen/rejected", "response_2": "chosen/rejected"},
}

# The action of a record that creates an item; an int is the pk of the item
# it replaces, ("metadata", pk) one whose metadata it updates, None unchanged.
CREATE = -1


@dataclass
class ConflictPlan:
    actions: list = field(default_factory=list)  # one per record, in file order
    renames: dict[int, str] = field(default_factory=dict)  # record number → new ID (suffix)
    unchanged: int = 0


def label(fmt: str, name: str) -> str:
    if name.startswith("meta:"):
        return name[5:]
    return _LABELS.get(fmt, {}).get(name, name)


def renamed(record, new_id: str):
    """The record as `suffix` imports it: a new ID, the original kept in meta."""
    record.meta = {**record.meta, "original_id": record.external_id}
    record.external_id = new_id
    return record


def plan_import(
    *,
    parsed: ParsedDataset,
    existing: dict[str, tuple[int, str, bool]],
    mode: str,
    log: ProblemLog,
    id_field: str,
) -> ConflictPlan:
    """What to do with each record of a file some of whose IDs exist.
    Problems (a refused conflict) go to `log`."""
    wording = log.wording or Wording()
    plan = ConflictPlan()
    file_ids = {ref.external_id for ref in parsed.records}
    taken: set[str] = set()
    differing: dict[int, int] = {}  # record number → pk of the item it differs from
    seen_by_annotators: set[int] = set()  # those pks with live claims or votes
    for record in parsed.iter_records():
        info = parsed.images[record.image_ref]
        digest = content_hash(record, info.sha256)
        if record.external_id not in existing:
            plan.actions.append(CREATE)
            continue
        pk, old_digest, live = existing[record.external_id]
        if old_digest == digest:
            plan.actions.append(None)
            plan.unchanged += 1
            continue
        if mode == "suffix":
            action = _suffix(record, info.sha256, existing, file_ids | taken, plan)
            plan.actions.append(action)
            if action is None:
                plan.unchanged += 1
            continue
        differing[record.index] = pk
        if live:
            seen_by_annotators.add(pk)
        plan.actions.append(("metadata", pk) if mode == "metadata" else pk)
    if not differing:
        return plan
    by_field = _differences(parsed, differing)
    seen_fields = {name for name in by_field if name in SEEN}
    if mode == "replace" and seen_by_annotators:
        _report(log, parsed.format, by_field, id_field, wording, seen_by_annotators, mode)
    elif mode == "metadata" and seen_fields:
        _report(log, parsed.format, by_field, id_field, wording, set(), mode)
    elif mode == "refuse":
        _report(log, parsed.format, by_field, id_field, wording, seen_by_annotators, mode)
    return plan


def _suffix(record, sha256: str, existing: dict, used: set[str], plan: ConflictPlan):
    """Import the record as ID#k: the first k whose item holds this very
    content (unchanged: the same file imported again) or that is free."""
    number = 2
    original = record.external_id
    meta = record.meta
    while True:
        candidate = f"{original}#{number}"
        if candidate in existing:
            record.meta = {**meta, "original_id": original}
            record.external_id = candidate
            same = content_hash(record, sha256) == existing[candidate][1]
            record.external_id, record.meta = original, meta
            if same:
                plan.renames[record.index] = candidate
                return None
        elif candidate not in used and len(candidate) <= MAX_ID_LENGTH:
            used.add(candidate)
            plan.renames[record.index] = candidate
            return CREATE
        number += 1


def _differences(parsed: ParsedDataset, differing: dict[int, int]) -> dict[str, list[int]]:
    """For each field, the record numbers on which it differs from the item."""
    items = {
        row[0]: row
        for row in Item.objects.filter(pk__in=list(differing.values())).values_list(
            "pk",
            "prompt",
            "image__sha256",
            "image_path",
            "response_1",
            "response_2",
            "domain__slug",
            *METADATA,
        )
    }
    by_field: dict[str, list[int]] = {}
    for record in parsed.iter_records():
        pk = differing.get(record.index)
        if pk is None:
            continue
        _, prompt, sha256, path, r1, r2, slug, *metadata = items[pk]
        ours = {
            "prompt": prompt != record.prompt,
            "image": sha256 != parsed.images[record.image_ref].sha256 or path != record.image_ref,
            "response_1": r1 != record.response_1,
            "response_2": r2 != record.response_2,
            "category": slug != record.category,
        }
        *others, old_meta = metadata
        for name, old in zip(METADATA[:-1], others, strict=True):
            ours[name] = old != getattr(record, name)
        for name, differs in ours.items():
            if differs:
                by_field.setdefault(name, []).append(record.index)
        for key in _meta_differences(old_meta or {}, record.meta):
            by_field.setdefault(f"meta:{key}", []).append(record.index)
    return by_field


# Where each format keeps a file field in meta (parse.py): MRB's Better is
# the prior label, other fields of a file are kept under "source".
_META_KEYS = {"prior_better": "Better", "original_label": "chosen/rejected", "reasons": "reasons"}


def _meta_differences(old: dict, new: dict) -> list[str]:
    """The names of the file's fields kept in meta that differ."""
    names = []
    for key in sorted(set(old) | set(new)):
        if old.get(key) == new.get(key):
            continue
        if key == "source" and isinstance(old.get(key, {}), dict):
            before, after = old.get(key) or {}, new.get(key) or {}
            names += [k for k in sorted(set(before) | set(after)) if before.get(k) != after.get(k)]
        else:
            names.append(_META_KEYS.get(key, key))
    return names


def _report(log, fmt, by_field, id_field, wording: Wording, live: set[int], mode: str) -> None:
    grouped: dict[str, set[int]] = {}
    for name, indices in by_field.items():
        grouped.setdefault(label(fmt, name), set()).update(indices)
    records = set().union(*grouped.values())
    parts = []
    for n, (name, indices) in enumerate(
        sorted(grouped.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    ):
        first = sorted(indices)[:SHOWN_REPEATS]
        shown = ", ".join(map(str, first)) + (", …" if len(indices) > SHOWN_REPEATS else "")
        unit = (" record" + ("s" if len(indices) != 1 else "")) if n == 0 else ""
        parts.append(f"{name} differs on {len(indices)}{unit} (first: {shown})")
    seen = any(name in SEEN for name in by_field)
    if mode == "metadata":
        advice = (
            f"{wording.setting('conflicts', 'metadata')} cannot change what annotators saw; "
            f"import them as new items with {wording.setting('conflicts', 'suffix')}"
        )
    elif mode == "replace":
        advice = (
            f"{len(live)} of these items {'is' if len(live) == 1 else 'are'} claimed or voted "
            "on and cannot be replaced; "
            f"import them as new items with {wording.setting('conflicts', 'suffix')}"
        )
    else:
        offers = []
        if not seen:
            offers.append(
                f"{wording.setting('conflicts', 'metadata')} (update what annotators never saw)"
            )
        offers.append(
            f"{wording.setting('conflicts', 'suffix')} (import them as new items ID#2, …)"
        )
        if not live:
            offers.append(
                f"{wording.setting('conflicts', 'replace')} (replace the items; none is "
                "claimed or voted on yet)"
            )
        advice = "to import them, use " + " or ".join(offers)
    log.add_problem(
        ImportProblem(
            log.file,
            f"{len(records)} record{'s have IDs' if len(records) != 1 else ' has an ID'} "
            f"already in the project with different content: {'; '.join(parts)}; {advice}",
            field=id_field,
        )
    )
