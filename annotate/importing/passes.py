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


def jsonl_file(
    data: Any,
    *,
    context: Any,
    filename: str,
    parse: Callable[[Any, int, int, Callable[[str], str]], tuple[Any, list]] | None = None,
    label: Callable[[Any], str],
    slug: Callable[[str], str],
    export_category: Callable[[str], str],
    category_field: str,
    image_field: str,
    kept: tuple[str, tuple[str, ...]] | None = None,
    restore: Callable[[Any, Any, Any], None] | None = None,
    fresh_parse: Callable[[], Callable] | None = None,
    **two_pass: Any,
) -> Any:
    """A JSONL format's file (`data`, the file's bytes or DatasetFile) read by
    two_pass_file, the steps every such format shares written once: the
    UTF-8 check, the record rules (`category_field`, `image_field` named in
    their problems), each line parsed by `parse(value, line, index,
    domain_of)` (`domain_of(label)`: the import's domain, else the known
    domain whose export Category is `export_category(label)`, else
    `slug(label)`; `fresh_parse()` instead gives a new parse per pass, for a
    format that counts records), each item's category `label(item)` and the
    line's other fields and style put back into ``item.meta[key]``
    (`kept` = (key, text keys): jsonscan.kept_line) or by `restore`.
    `two_pass` are two_pass_file's own arguments (fmt, what, domain_fields,
    fingerprint, images, labels, …)."""
    from functools import partial

    from annotate.importing.jsonscan import check_utf8, iter_jsonl, kept_line

    bounds = context.bounds
    log = ProblemLog(filename, bounds.max_errors, context.options.wording)
    if not check_utf8(data, log):
        log.raise_if_any()
    derived = context.domain or context.options.domain_from or context.options.domain_map
    known = dict(context.known)

    def domain_of(value: str) -> str:
        return context.domain or context.known.get(export_category(value)) or slug(value)

    def records(log: ProblemLog) -> Iterator[Record]:
        each = fresh_parse() if fresh_parse is not None else parse
        assert each is not None
        lines = iter_jsonl(data, log, max_record_bytes=bounds.max_record_bytes, raw_lines=True)
        return parsed_records(
            lines, lambda value, line, index: each(value, line, index, domain_of), log, bounds
        )

    if restore is None and kept is not None:
        key, text_keys = kept

        def restore(item: Any, value: Any, raw: Any) -> None:
            item.meta[key].update(kept_line(value, raw, text_keys))

    def category(item: Any) -> tuple[str, str]:
        value = label(item)
        return slug(value), value

    rules = partial(
        RecordRules, context.options, known_categories=known, id_field="id",
        category_field=category_field, image_field=image_field,
    )  # fmt: skip
    return two_pass_file(
        context=context, filename=filename, records=records, rules=rules, log=log, known=known,
        new_domains={}, derived=derived, category=category,
        restore=restore or (lambda item, value, raw: None), **two_pass,
    )  # fmt: skip
