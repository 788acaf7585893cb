"""Import options that act on each decoded record, whatever reader decoded it
(JSON, JSONL, parquet): what becomes of a repeated ID, where a record's
domain comes from, and how problems name the options of the surface in use
(the `import_items` command, the upload form, the API).

Pure: no Django, no file format. parse.py gives every decoded record to a
:class:`RecordRules` (see parse.parse_records).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from annotate.importing.records import (
    MAX_ID_LENGTH,
    SHOWN_REPEATS,
    ImportProblem,
    ProblemLog,
    brief,
)


class RuleRecord(Protocol):
    """What RecordRules reads and sets of a record (a parse.Record, or a
    format's ParsedItem)."""

    line: int
    index: int
    external_id: str
    category: str | None
    meta: dict[str, Any]

    @property
    def image_ref(self) -> str: ...


DUPLICATES = ("refuse", "keep-first", "suffix")
# What becomes of a record whose ID is already in the project with other
# content (annotate.importing.conflicts).
CONFLICTS = ("refuse", "metadata", "suffix", "replace")
DOMAIN_SOURCES = ("id-prefix", "image-folder")  # and "field:<name>"
# How many duplicated IDs, and unmapped domain values, one message lists.
SHOWN_VALUES = 25

# What each surface calls an option. The form's labels are its fields' labels.
FORM_LABELS = {
    "format": "Format",
    "domain": "Domain",
    "domain_from": "Domain from",
    "domain_map": "Domain map",
    "duplicates": "Duplicate IDs",
    "conflicts": "Existing IDs with different content",
    "field_map": "Field map",
    "gold_from_label": "Gold from label",
    "update": "Update",
    "cast_votes": "Cast published annotations as votes",
    "images": "Images",
}


@dataclass(frozen=True)
class Wording:
    """Names options as the surface in use spells them, so that a message
    never tells an API or form user about a shell flag."""

    surface: str = "cli"

    def option(self, name: str) -> str:
        if self.surface == "api":
            return f"field '{name}'"
        if self.surface == "form":
            return f'"{FORM_LABELS[name]}"'
        return "--" + name.replace("_", "-")

    def setting(self, name: str, value: str | None = None) -> str:
        """The option set to `value` (a flag when None)."""
        if self.surface == "api":
            return f"{name}={'true' if value is None else value}"
        if self.surface == "form":
            label = FORM_LABELS[name]
            return f'"{label}" ticked' if value is None else f'"{label}": {value}'
        flag = "--" + name.replace("_", "-")
        return flag if value is None else f"{flag}={value}"


@dataclass(frozen=True)
class ImportOptions:
    """How to read the records of a file beyond their field names.

    `duplicates`: refuse (default) | keep-first | suffix. `domain_from`:
    "" | "field:<name>" | "id-prefix" | "image-folder"; `domain_map` maps the
    values found there to domain slugs (or export categories). A map without
    `domain_from` maps the file's category field."""

    duplicates: str = "refuse"
    domain_from: str = ""
    domain_map: dict[str, str] = field(default_factory=dict)
    surface: str = "cli"
    conflicts: str = "refuse"

    @property
    def wording(self) -> Wording:
        return Wording(self.surface)


def parse_domain_from(text: str) -> str:
    """A --domain-from value, checked (ValueError says why not)."""
    text = text.strip()
    if not text or text in DOMAIN_SOURCES:
        return text
    kind, sep, name = text.partition(":")
    if kind == "field" and sep and name.strip():
        return f"field:{name.strip()}"
    raise ValueError(f"must be field:<name>, id-prefix or image-folder, not {brief(text)}")


def parse_mapping(text: str) -> dict[str, str]:
    """`value=domain` entries separated by commas or new lines (ValueError
    says which entry is wrong). A value named twice must name one domain."""
    mapping: dict[str, str] = {}
    for n, entry in enumerate(text.replace(",", "\n").splitlines(), start=1):
        if not entry.strip():
            continue
        key, sep, target = entry.partition("=")
        key, target = key.strip(), target.strip()
        if not sep or not key or not target:
            raise ValueError(f"entry {n} is not value=domain: {brief(entry.strip())}")
        if mapping.get(key, target) != target:
            raise ValueError(f"{brief(key)} is mapped twice ({mapping[key]}, {target})")
        mapping[key] = target
    return mapping


def option_problems(options: ImportOptions, known: dict[str, str], *, domain: str | None):
    """Messages for options that cannot work, before any record is read."""
    w = options.wording
    messages = []
    if options.duplicates not in DUPLICATES:
        messages.append(
            f"{w.option('duplicates')} must be one of {', '.join(DUPLICATES)}, "
            f"not {brief(options.duplicates)}"
        )
    if options.conflicts not in CONFLICTS:
        messages.append(
            f"{w.option('conflicts')} must be one of {', '.join(CONFLICTS)}, "
            f"not {brief(options.conflicts)}"
        )
    try:
        parse_domain_from(options.domain_from)
    except ValueError as exc:
        messages.append(f"{w.option('domain_from')} {exc}")
    if domain and (options.domain_from or options.domain_map):
        messages.append(
            f"give either {w.option('domain')} (one domain for the whole file) or "
            f"{w.option('domain_from')}/{w.option('domain_map')}, not both"
        )
    slugs = sorted(set(known.values()))
    for key, target in options.domain_map.items():
        if target not in known:
            messages.append(
                f"{w.option('domain_map')} maps {brief(key)} to unknown domain {brief(target)}; "
                f"known: {', '.join(slugs)}"
            )
    return messages


_PREFIX = re.compile(r"[A-Za-z_]*")


def id_prefix(external_id: str) -> str:
    """The source an ID names: its leading run of letters and underscores,
    without trailing underscores (`hallucination_pair-123` →
    `hallucination_pair`, `mathverse_12` → `mathverse`, `RLAIF-V_3` → `RLAIF`);
    empty if the ID starts with anything else."""
    match = _PREFIX.match(external_id)
    return match.group().rstrip("_") if match else ""


def image_folder(image_ref: str) -> str:
    """The first folder of an image path (`mcq/073712.png` → `mcq`,
    `./vl_reward/img/a.jpg` → `vl_reward`); empty for a bare file name."""
    parts = [p for p in image_ref.replace("\\", "/").split("/") if p not in ("", ".")]
    return parts[0] if len(parts) > 1 else ""


def suffixed_ids(first: dict[str, int], repeats: dict[str, list[int]]) -> dict[int, str]:
    """New IDs of repeated records, by record number: the k-th occurrence of
    `x` becomes `x#k`, in file order, unless the file (or an earlier rename)
    already uses that ID; then the next free number is taken
    (`a, a, a#2` → `a, a#3, a#2`)."""
    taken = set(first)
    occurrence: Counter[str] = Counter()
    renames: dict[int, str] = {}
    for index, ext_id in sorted((i, x) for x, indices in repeats.items() for i in indices):
        occurrence[ext_id] += 1
        number = occurrence[ext_id] + 1
        while f"{ext_id}#{number}" in taken:
            number += 1
        renames[index] = f"{ext_id}#{number}"
        taken.add(renames[index])
    return renames


def _records(count: int, numbers: list[int]) -> str:
    shown = ", ".join(str(n) for n in numbers[:SHOWN_REPEATS])
    if count > SHOWN_REPEATS:
        shown += ", …"
    return f"{count} record{'s' if count != 1 else ''}: {shown}"


def _listed(entries: list[str], total: int, unit: str) -> str:
    text = ", ".join(entries[:SHOWN_VALUES])
    if total > SHOWN_VALUES:
        text += f" and {total - SHOWN_VALUES} more {unit}"
    return text


_R = TypeVar("_R", bound=RuleRecord)


class RecordRules:
    """ImportOptions applied to the records of one file, in file order.

    First pass: `check` every record the parser decoded, then `finish` (one
    problem listing the duplicated IDs, one listing the unmapped domain
    values). Second pass, when the file is decoded again: a RecordRules made
    with the first one's `renames` `apply`s the same decisions."""

    def __init__(
        self,
        options: ImportOptions,
        *,
        known_categories: dict[str, str],
        id_field: str,
        category_field: str,
        image_field: str,
        renames: dict[int, str] | None = None,
    ):
        self.options = options
        self.known = known_categories
        self.id_field = id_field
        self.image_field = image_field
        self.category_field = category_field
        source = options.domain_from or (f"field:{category_field}" if options.domain_map else "")
        self.source, _, self.source_field = source.partition(":")
        self.keys = sorted(options.domain_map, key=len, reverse=True)  # longest prefix first
        self.first: dict[str, int] = {}  # ID → its first record number
        self.repeats: dict[str, list[int]] = {}  # repeated ID → later record numbers
        self.unmapped: Counter[str] = Counter()  # value → how many records
        self.unmapped_at: dict[str, list[int]] = {}  # value → its first record numbers
        self.renames = renames or {}
        self.skipped = 0

    @property
    def category(self) -> str | None:
        """The category the parser should give records: "" when these rules
        derive it (the file's category field is then not required)."""
        return "" if self.source else None

    def check(self, record: RuleRecord, value: dict[str, Any], log: ProblemLog) -> bool:
        """Whether the record is imported (first pass); problems go to `log`."""
        ok = True
        if self.source:
            ok = self._set_domain(record, value, log)
        first = self.first.setdefault(record.external_id, record.index)
        if first != record.index:
            self.repeats.setdefault(record.external_id, []).append(record.index)
            if self.options.duplicates != "suffix":
                self.skipped += 1
                return False
        return ok

    def note_unknown(self, category: str, index: int) -> None:
        """A record whose category (from the file, or --domain) names no domain."""
        self.unmapped[category] += 1
        shown = self.unmapped_at.setdefault(category, [])
        if len(shown) < SHOWN_REPEATS:
            shown.append(index)

    def finish(self, log: ProblemLog) -> None:
        w = self.options.wording
        if self.unmapped:
            # Known names are listed too: a category may name a domain by slug
            # or by export category.
            values = sorted(self.unmapped.items(), key=lambda kv: (-kv[1], kv[0]))
            entries = [f"{brief(v)} ({_records(n, self.unmapped_at[v])})" for v, n in values]
            slugs = sorted(set(self.known.values()))
            # A file's own category may also be an export Category string.
            known = (
                f"domains: {', '.join(slugs)}"
                if self.source
                else f"known: {', '.join(sorted(self.known))}"
            )
            log.add_problem(
                ImportProblem(
                    log.file,
                    f"{len(values)} value{'s' if len(values) != 1 else ''} of the "
                    f"{self._source_name()} name{'s' if len(values) == 1 else ''} no domain: "
                    f"{_listed(entries, len(values), 'values')}; map each to a domain "
                    f"with {w.option('domain_map')} (value=domain; {known})",
                    field=self._source_label(),
                )
            )
        if not self.repeats:
            return
        if self.options.duplicates == "refuse":
            repeated = sorted(self.repeats.items(), key=lambda kv: self.first[kv[0]])
            entries = [
                f"{brief(x)} ({_records(len(later) + 1, [self.first[x], *later])})"
                for x, later in repeated
            ]
            records = sum(len(later) + 1 for later in self.repeats.values())
            log.add_problem(
                ImportProblem(
                    log.file,
                    f"{len(repeated)} ID{'s occur' if len(repeated) != 1 else ' occurs'} more "
                    f"than once ({records} records): {_listed(entries, len(repeated), 'IDs')}; "
                    f"to import them, use {w.setting('duplicates', 'keep-first')} "
                    f"(the first record of each ID) or {w.setting('duplicates', 'suffix')} "
                    "(every record, later ones renamed ID#2, ID#3, …)",
                    field=self.id_field,
                )
            )
        elif self.options.duplicates == "suffix":
            self.renames = suffixed_ids(self.first, self.repeats)
            too_long = [x for x in self.renames.values() if len(x) > MAX_ID_LENGTH]
            if too_long:
                log.add_problem(
                    ImportProblem(
                        log.file,
                        f"renamed ID {brief(too_long[0])} would be longer than "
                        f"{MAX_ID_LENGTH} characters",
                        field=self.id_field,
                    )
                )

    def apply(self, record: _R, value: dict[str, Any]) -> _R | None:
        """The record as imported (second pass, the file already checked), or
        None if it is left out (a later record of an ID with keep-first)."""
        if self.source:
            probe = ProblemLog("", 1)
            if not self._set_domain(record, value, probe):
                raise RuntimeError(f"dataset changed while importing (record {record.index})")
        new_id = self.renames.get(record.index)
        if new_id is not None:
            record.meta["original_id"] = record.external_id
            record.external_id = new_id
            return record
        if self.first.setdefault(record.external_id, record.index) != record.index:
            return None
        return record

    # --- Domains ---------------------------------------------------------------------

    def _source_name(self) -> str:
        if not self.source:
            return f"field '{self.category_field}'"
        if self.source == "field":
            return f"field '{self.source_field}'"
        return "ID prefixes" if self.source == "id-prefix" else "image folders"

    def _source_label(self) -> str:
        if not self.source:
            return self.category_field
        if self.source == "field":
            return self.source_field
        return self.id_field if self.source == "id-prefix" else self.image_field

    def _set_domain(self, record: RuleRecord, value: dict[str, Any], log: ProblemLog) -> bool:
        mapping = self.options.domain_map
        if self.source == "field":
            raw = value.get(self.source_field)
            if isinstance(raw, int) and not isinstance(raw, bool):
                raw = str(raw)
            if not isinstance(raw, str):
                problem = (
                    "is missing" if raw is None else f"must be a string, not {type(raw).__name__}"
                )
                log.add(problem, line=record.line, index=record.index, field=self.source_field)
                return False
            key, target = raw, mapping.get(raw)
        elif self.source == "id-prefix":
            key = id_prefix(record.external_id)
            match = next((k for k in self.keys if record.external_id.startswith(k)), None)
            target = mapping[match] if match is not None else None
        else:
            key = image_folder(record.image_ref)
            target = mapping.get(key)
        slug = self.known.get(target if target is not None else key)
        if slug is None:
            self.note_unknown(key, record.index)
            return False
        record.category = slug
        return True
