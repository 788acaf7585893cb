"""A format's records read in two passes (annotate.importing.formats: the
JSONL formats' lines, a task file's pairs):
every record parsed and checked before anything is written, then the items
given again, decoded afresh, with the import's record rules (IDs, domains)
applied."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from annotate.importing.bounds import RecordCount
from annotate.importing.options import RecordRules
from annotate.importing.records import ProblemLog, check_storable

# (line, record number, the line's text or None, the decoded value, its item
# or None when it has a problem)
Record = tuple[int, int, Any, Any, Any]


def parsed_records(
    values: Iterable[tuple[int, int, Any, Any]],
    parse: Callable[[Any, int, int], tuple[Any, list]],
    log: ProblemLog,
    bounds: Any,
) -> Iterator[Record]:
    """Each (line, index, raw, value) of `values` with its item:
    `parse(value, line, index)` gives (item or None, [(field, message)]).
    Stops at the record cap (only the first pass can reach it), before the
    record past it is looked at."""
    count = RecordCount(bounds, log)
    for line, index, raw, value in values:
        count.add(line=line, index=index)
        # What the database cannot hold (NUL, lone surrogates, NaN, deep
        # nesting) is refused here, not by a failed write.
        if isinstance(value, dict) and not check_storable(value, log, line, index):
            yield line, index, raw, value, None
            continue
        item, problems = parse(value, line, index)
        for where, message in problems:
            log.add(message, line=line, index=index, field=where or None)
        yield line, index, raw, value, item


def check_all(
    records: Callable[[ProblemLog], Iterator[Record]],
    rules: Callable[..., RecordRules],
    log: ProblemLog,
    known: dict[str, str],
    inspect: Callable[[Any, Any, int, int], None] | None = None,
) -> RecordRules:
    """Pass 1: every record's item checked by the import's record rules,
    after the format's own `inspect(item, value, line, index)`; stops when
    the problem log is full. Raises ImportFailed with what it found;
    returns the rules (their renames and skipped records)."""
    first = rules()
    for line, index, _raw, value, item in records(log):
        if item is None:
            if log.full:
                log.truncated = True
                break
            continue
        if inspect is not None:
            inspect(item, value, line, index)
        if first.category == "":  # the options derive the domain
            item.domain = ""
        if not first.check(item, value, log):
            continue
        if item.domain not in known:
            first.note_unknown(item.domain or "", index)
        if log.full:
            break
    if not log.truncated:
        first.finish(log)
    log.raise_if_any()
    return first


def checked_items(
    records: Iterator[Record],
    again: RecordRules,
    known: dict[str, str],
    restore: Callable[[Any, Any, Any], None] | None = None,
) -> Iterator[Any]:
    """Pass 2: the items again (`restore(item, value, raw)` puts back what
    pass 1 left out), with the rules' renames and duplicates applied and
    each domain resolved to its slug."""
    for _line, index, raw, value, item in records:
        if item is None:
            raise RuntimeError(f"dataset changed while importing (record {index})")
        if restore is not None:
            restore(item, value, raw)
        if again.category == "":
            item.domain = ""
        out = again.apply(item, value)
        if out is None:  # a repeated ID left out (keep-first)
            continue
        out.domain = known[out.domain or ""]
        yield out


def two_pass_file(
    *,
    fmt: str,
    what: str,
    context: Any,
    filename: str,
    records: Callable[[ProblemLog], Iterator[Record]],
    rules: Callable[..., RecordRules],
    log: ProblemLog,
    known: dict[str, str],
    new_domains: dict[str, dict[str, Any]],
    derived: bool,
    category: Callable[[Any], tuple[str, str]],
    domain_fields: Callable[[str], dict[str, Any]],
    restore: Callable[[Any, Any, Any], None],
    fingerprint: Callable[..., str],
    images: Any = None,
    part_field: Callable[[Any, str, int], str] | None = None,
    **extra: Any,
) -> Any:
    """A JSONL format's whole read (the ranked, RewardBench 2, VL-RewardBench
    and MM-RLHF-RewardBench formats): pass 1 (check_all) with each item's
    category (`category(item)` -> (slug, label)) becoming a new domain
    (`domain_fields(label)`) where the options do not derive domains, and
    each prompt image noted and then checked once; then the ParsedFile whose
    items() is pass 2 (checked_items, `restore` putting back the bytes
    kept). `images`: the import's image source (None: a format without
    images; the fingerprint then takes no infos). Video and audio parts
    (issue 35), in any slot, are read from the same source and checked once
    each (annotate.importing.media); `part_field(item, slot, position)`
    names a part's field in problems, and the fingerprint is given their
    infos too (`media=`) when the file has any. Refuses a file of no records
    ("holds no {what}"); `extra` are ParsedFile fields."""
    from functools import partial

    from annotate.importing.formats import IMAGE, MEDIA, ParsedFile
    from annotate.importing.images import check_images_once
    from annotate.importing.records import ImportFailed, ImportProblem
    from annotate.importing.sources import NoImageSource

    refs: dict[str, tuple[int, int]] = {}
    media_refs: dict[tuple[str, str], tuple[int, int, str]] = {}

    def inspect(item: Any, value: Any, line: int, index: int) -> None:
        slug, label = category(item)
        if not derived and item.domain == slug and slug not in context.known:
            known[slug] = slug
            new_domains.setdefault(slug, domain_fields(label))
        for slot, parts in item.slots().items():
            for position, part in enumerate(parts):
                if part.kind == IMAGE:
                    refs.setdefault(part.ref, (line, index))
                elif part.kind in MEDIA:
                    where = part_field(item, slot, position) if part_field else slot
                    media_refs.setdefault((part.ref, part.kind), (line, index, where))

    first = check_all(records, rules, log, known, inspect=inspect)
    infos = check_images_once(images, context.limits, refs, log) if refs else {}
    media = {}
    if media_refs:
        from annotate.importing.media import check_media_once, media_limits

        media = check_media_once(images, media_limits(), media_refs, log)
    log.raise_if_any()
    renames = first.renames

    def items() -> Iterator[Any]:
        yield from checked_items(
            records(ProblemLog(filename, 1)), rules(renames=renames), known, restore
        )

    ids = [item.external_id for item in items()]
    if not ids and not first.skipped:
        raise ImportFailed([ImportProblem(filename, f"holds no {what}")])
    return ParsedFile(
        format=fmt,
        filename=filename,
        items=items,
        count=len(ids),
        ids=ids,
        images=infos,
        image_source=images if images is not None else (context.images or NoImageSource()),
        fingerprint=(
            fingerprint
            if images is None
            else partial(fingerprint, infos=infos, media=media)
            if media
            else partial(fingerprint, infos=infos)
        ),
        media=media,
        id_field="id",
        skipped=first.skipped if context.options.duplicates == "keep-first" else 0,
        renamed=len(renames),
        new_domains=new_domains,
        **extra,
    )
