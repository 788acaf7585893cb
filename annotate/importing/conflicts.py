"""Items whose ID is already in the project with other content (issues 31,
32): the one update rule, for every format.

**What annotators saw may not change once an item has votes or claims;
its metadata may.** What annotators see is the item's parts (each slot's
kinds, texts and image bytes) and its domain; metadata is everything else:
model names, the reference answer, image file names, the file's other
fields (meta). The gold answer decides verdicts, so it changes only on an
item nobody has claimed or judged (a curator changes it after that).

A re-import that differs says which fields differ on how many records, and
the `conflicts` option decides what becomes of them:

* ``refuse`` (default): nothing is written; the report names the fields and
  the options that fit;
* ``metadata``: only metadata is updated; a record whose seen content (or,
  on a judged item, gold) differs is refused;
* ``suffix``: each is imported as a new item ``ID#2`` (``ID#3``, … if taken),
  the existing item left as it is; importing the same file again finds it;
* ``replace`` (the old ``update``): items nobody has claimed are replaced;
  a claimed or judged item gets its metadata only, and is refused if what
  annotators saw differs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from annotate.importing.formats import IMAGE, ParsedFile, ParsedItem
from annotate.importing.options import Wording
from annotate.importing.records import MAX_ID_LENGTH, SHOWN_REPEATS, ImportProblem, ProblemLog
from annotate.models import Item, ItemPart

# The action of a record: CREATE, ("update", pk), or None (unchanged).
CREATE = "create"
UPDATE = "update"
GOLD = "gold"


def is_seen(name: str) -> bool:
    """Whether a field named by _differences is something annotators saw."""
    return name in ("prompt", "image", "domain") or name.startswith("response_")


@dataclass
class ConflictPlan:
    actions: list = field(default_factory=list)  # one per item, in file order
    renames: dict[int, str] = field(default_factory=dict)  # record number → new ID (suffix)
    unchanged: int = 0


def label(labels: dict[str, str], name: str) -> str:
    if name in labels:
        return labels[name]
    return name[5:] if name.startswith("meta:") else name


def renamed(item: ParsedItem, new_id: str) -> ParsedItem:
    """The item as `suffix` imports it: a new ID, the original kept in meta."""
    item.meta = {**item.meta, "original_id": item.external_id}
    item.external_id = new_id
    return item


def plan_import(
    *,
    parsed: ParsedFile,
    existing: dict[str, tuple[int, str, bool]],
    mode: str,
    log: ProblemLog,
) -> ConflictPlan:
    """What to do with each item of a file some of whose IDs exist.
    Problems (a refused conflict) go to `log`."""
    wording = log.wording or Wording()
    plan = ConflictPlan()
    file_ids = set(parsed.ids)
    taken: set[str] = set()
    differing: dict[int, int] = {}  # record number → pk of the item it differs from
    live: set[int] = set()  # those pks with live claims or votes
    for item in parsed.items():
        if item.external_id not in existing:
            plan.actions.append(CREATE)
            continue
        pk, old_digest, claimed = existing[item.external_id]
        if parsed.fingerprint(item) == old_digest:
            plan.actions.append(None)
            plan.unchanged += 1
            continue
        if mode == "suffix":
            action = _suffix(parsed, item, existing, file_ids | taken, plan)
            plan.actions.append(action)
            if action is None:
                plan.unchanged += 1
            continue
        differing[item.index] = pk
        if claimed:
            live.add(pk)
        plan.actions.append((UPDATE, pk))
    if not differing:
        return plan
    by_field = _differences(parsed, differing)
    seen_records = {n for name, records in by_field.items() if is_seen(name) for n in records}
    gold_records = set(by_field.get(GOLD, ()))
    live_records = {n for n, pk in differing.items() if pk in live}
    # Records the one rule refuses: seen content (or gold) of claimed items.
    blocked = live_records & (seen_records | gold_records)
    if mode == "refuse":
        _report(log, parsed, by_field, wording, live, mode)
    elif mode == "metadata" and (seen_records or blocked):
        _report(log, parsed, by_field, wording, set(), mode)
    elif mode == "replace" and blocked:
        _report(log, parsed, by_field, wording, {differing[n] for n in blocked}, mode)
    return plan


def _suffix(parsed: ParsedFile, item: ParsedItem, existing: dict, used: set[str], plan):
    """Import the item as ID#k: the first k whose item holds this very
    content (unchanged: the same file imported again) or that is free."""
    number = 2
    original, meta = item.external_id, item.meta
    while True:
        candidate = f"{original}#{number}"
        if candidate in existing:
            renamed(item, candidate)
            same = parsed.fingerprint(item) == existing[candidate][1]
            item.external_id, item.meta = original, meta
            if same:
                plan.renames[item.index] = candidate
                return None
        elif candidate not in used and len(candidate) <= MAX_ID_LENGTH:
            used.add(candidate)
            plan.renames[item.index] = candidate
            return CREATE
        number += 1


def _stored_parts(pks: list[int]) -> dict[int, dict[str, list[tuple]]]:
    """Each item's parts by slot: (kind, text or image SHA-256, source path)."""
    out: dict[int, dict[str, list[tuple]]] = {pk: {} for pk in pks}
    for start in range(0, len(pks), 2000):
        rows = (
            ItemPart.objects.filter(item_id__in=pks[start : start + 2000])
            .order_by("item_id", "slot", "position")
            .values_list("item_id", "slot", "kind", "text", "image__sha256", "source_path")
        )
        for pk, slot, kind, text, sha, path in rows.iterator(chunk_size=2000):
            value = sha if kind == IMAGE else text
            out[pk].setdefault(slot, []).append((kind, value, path))
    return out


def _differences(parsed: ParsedFile, differing: dict[int, int]) -> dict[str, list[int]]:
    """For each field, the record numbers on which it differs from the item."""
    pks = list(differing.values())
    items = {
        row[0]: row
        for row in Item.objects.filter(pk__in=pks).values_list(
            "pk",
            "domain__slug",
            "model_1",
            "model_2",
            "gold_choice",
            "reference_answer",
            "group_key",
            "criterion",
            "meta",
        )
    }
    parts = _stored_parts(pks)
    by_field: dict[str, list[int]] = {}
    named: set[int] = set()  # records with a field named

    def note(name: str, index: int) -> None:
        named.add(index)
        records = by_field.setdefault(name, [])
        if not records or records[-1] != index:
            records.append(index)

    for item in parsed.items():
        pk = differing.get(item.index)
        if pk is None:
            continue
        _, slug, model_1, model_2, gold, reference, group, criterion, old_meta = items[pk]
        stored = parts[pk]
        for slot, entries in item.slots().items():
            new = [
                (p.kind, parsed.images[p.ref].sha256 if p.kind == IMAGE else p.text, p.source_path)
                for p in entries
            ]
            old = stored.get(slot, [])
            if [k for k, _, _ in new] != [k for k, _, _ in old]:
                note(slot, item.index)
                continue
            for (kind, value, path), (_, old_value, old_path) in zip(new, old, strict=True):
                if value != old_value:
                    note("image" if kind == IMAGE else slot, item.index)
                elif kind == IMAGE and path != old_path:
                    note("image path", item.index)
        if slug != item.domain:
            note("domain", item.index)
        for name, old_value, new_value in (
            ("model_1", model_1, item.model(0)),
            ("model_2", model_2, item.model(1)),
            (GOLD, gold, item.gold),
            ("reference_answer", reference, item.reference_answer),
            ("group", group, item.group),
            ("criterion", criterion, item.criterion),
        ):
            if old_value != new_value:
                note(name, item.index)
        for key in _meta_differences(old_meta or {}, item.meta):
            note(f"meta:{key}", item.index)
        if item.index not in named:
            # Only the fingerprint differs (a field the format hashes but
            # the item does not hold): metadata, named as such.
            note("other fields", item.index)
    return by_field


def _meta_differences(old: dict, new: dict) -> list[str]:
    """The keys of meta that differ (a file's other fields, kept under
    "source", by their own names)."""
    names = []
    for key in sorted(set(old) | set(new)):
        if old.get(key) == new.get(key):
            continue
        if key == "source" and isinstance(old.get(key, {}), dict):
            before, after = old.get(key) or {}, new.get(key) or {}
            names += [k for k in sorted(set(before) | set(after)) if before.get(k) != after.get(k)]
        else:
            names.append(key)
    return names


def _report(log, parsed: ParsedFile, by_field, wording: Wording, live: set[int], mode: str):
    grouped: dict[str, set[int]] = {}
    for name, indices in by_field.items():
        grouped.setdefault(label(parsed.labels, name), set()).update(indices)
    records = set().union(*grouped.values())
    parts = []
    for n, (name, indices) in enumerate(
        sorted(grouped.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    ):
        first = sorted(indices)[:SHOWN_REPEATS]
        shown = ", ".join(map(str, first)) + (", …" if len(indices) > SHOWN_REPEATS else "")
        unit = (" record" + ("s" if len(indices) != 1 else "")) if n == 0 else ""
        parts.append(f"{name} differs on {len(indices)}{unit} (first: {shown})")
    seen = any(is_seen(name) for name in by_field)
    if mode == "metadata":
        advice = (
            f"{wording.setting('conflicts', 'metadata')} cannot change what annotators saw "
            "(nor the gold answer of an item they claimed or judged); "
            f"import them as new items with {wording.setting('conflicts', 'suffix')}"
        )
    elif mode == "replace":
        advice = (
            f"{len(live)} of these items {'is' if len(live) == 1 else 'are'} claimed or voted "
            "on and cannot be replaced (only metadata may change once annotators have seen "
            f"an item); import them as new items with {wording.setting('conflicts', 'suffix')}"
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
            field=parsed.id_field,
        )
    )
