"""A records benchmark's part of a release build (see the package): its
members, its file written with a warning naming those left out, the Part
the build records and the provenance.jsonl lines of its own members."""

from __future__ import annotations

import shutil
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from django.core.files.storage import default_storage

from curation.benchmarks.base import BuildContext, Part
from curation.releases.members import CHUNK, _vote_dicts
from curation.releases.rekey import in_new_id_order, rekeyed_id

# What a member row holds (values_list of the included verdicts), in import order.
MEMBER_COLUMNS = (
    "item_id", "item__external_id", "item__domain__slug", "final_choice", "provenance"
)  # fmt: skip


def member_rows(
    ctx: BuildContext, prefix: str, *more: str
) -> tuple[Any, list[tuple], dict[str, str]]:
    """The included verdicts of the domains whose export Category starts
    with `prefix` (QuerySet), their rows (MEMBER_COLUMNS, then `more`) and
    the release's domains' export Categories by slug."""
    members = ctx.included.filter(item__domain__export_category__startswith=prefix)
    rows = list(members.order_by("item_id").values_list(*MEMBER_COLUMNS, *more))
    return members, rows, {d.slug: d.export_category for d in ctx.domains}


def released_ids(
    rows: list[tuple], salt: str, prefix: str, own: Callable[[str, list[str]], dict] | None = None
) -> tuple[dict[str, str], list[tuple]]:
    """The released ID of each member row's external ID (row[1]), and the
    rows to write: re-keyed (a salt) as `own(salt, ids)` keys those it has a
    rule of its own for and ``<prefix>_<hash>`` the others, in the order of
    the new IDs (the old order would give the old IDs away); else as they are."""
    released = {row[1]: row[1] for row in rows}
    if not salt:
        return released, rows
    kept = own(salt, list(released)) if own else {}
    released = {e: kept[e] if e in kept else rekeyed_id(salt, prefix, e) for e in released}
    return released, in_new_id_order(rows, lambda row: released[row[1]])


def response_slots(slots: Iterable[str]) -> list[str]:
    """The response slots of an item's parts, in slot order (response_1, response_2, …)."""
    return sorted((s for s in slots if s.startswith("response_")), key=lambda s: int(s[9:]))


def parts_by_slot(ids: list[int]) -> dict[int, dict[str, list]]:
    """The parts (ItemPart, with their image or video/audio file) of the
    items `ids`, by item and slot, in position order."""
    from annotate.models import ItemPart

    parts: dict[int, dict[str, list]] = {pk: defaultdict(list) for pk in ids}
    for part in (
        ItemPart.objects.filter(item_id__in=ids)
        .select_related("image", "media")
        .order_by("item_id", "slot", "position")
        .only("item_id", "slot", "kind", "text", "source_path", "image", "media")
    ):
        parts[part.item_id][part.slot].append(part)
    return parts


def copy_image(image: Any, ref: str, folder: Path, copied: dict[str, str]) -> bool:
    """Copy a stored image (an annotate Image) to `folder`/`ref` once per
    path, `copied` holding the sha256 written at each; False if another
    image is already there."""
    if ref in copied:
        return copied[ref] == image.sha256
    target = folder / ref
    target.parent.mkdir(parents=True, exist_ok=True)
    with default_storage.open(image.file, "rb") as src, target.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    copied[ref] = image.sha256
    return True


def write_lines(path: Path, lines: Iterable[str]) -> None:
    """Write `path` (its folder made), one line each, "\\n" after every line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as fh:
        for line in lines:
            fh.write(line + "\n")


def left_out(skipped: Sequence[str], noun: str, file: str, why: str) -> list[str]:
    """The build's warning naming (the first five) members left out of `file`."""
    if not skipped:
        return []
    n = len(skipped)
    return [
        f"{n} {noun} item{'s' if n != 1 else ''} left out of {file} ({why}): "
        + ", ".join(skipped[:5])
        + (", …" if n > 5 else "")
    ]


# What a member's provenance line says: (final_choice, chosen, provenance,
# the line), from the record written, its votes and what `lookup` read of its chunk.
Describe = Callable[[Any, list, dict], tuple[str, str, str, dict]]


def provenance(
    written: Sequence[Any],
    ctx: BuildContext,
    members: list,
    describe: Describe,
    lookup: Callable[[list[int]], dict] | None = None,
) -> Iterator[dict]:
    """provenance.jsonl lines of the members only in a benchmark's files
    (after the pair layout's), appending each membership (a ReleaseItem's
    fields, curation.releases.members.MEMBER_FIELDS) to `members`."""
    for start in range(0, len(written), CHUNK):
        chunk = written[start : start + CHUNK]
        ids = [r.item_id for r in chunk]
        votes = _vote_dicts(ids, ctx.pseudonyms, ctx.vote_extras)
        looked = lookup(ids) if lookup else {}
        for r in chunk:
            final_choice, chosen, provenance, line = describe(r, votes.get(r.item_id, []), looked)
            released_id = "" if r.released_id == r.external_id else r.released_id
            members.append(
                (r.item_id, r.external_id, released_id, r.domain, final_choice, chosen, provenance)
            )
            yield line


def own_line(
    r: Any, chosen: str, votes: list, key: str, own: dict, better: str | None = None
) -> dict:
    """A records benchmark's provenance line: `Better` null (not a pair
    layout record) unless given, its file's fields under its key."""
    return {
        "ID": r.released_id,
        "Better": better,
        "chosen_canonical": chosen,
        "provenance": r.provenance,
        "votes": votes,
        key: own,
    }


def records_part(
    ctx: BuildContext,
    *,
    key: str,
    written: Sequence[Any],
    members: Any,
    manifest: Callable[[], dict],
    describe: Describe,
    lookup: Callable[[list[int]], dict] | None = None,
    warnings: list[str] | None = None,
) -> Part:
    """The Part of a benchmark whose file holds `written` (each with item_id,
    external_id, released_id, domain; `mrb_shaped` when it is also a record
    of the pair layout, whose membership and provenance are then the
    records'): `members` its verdicts, `manifest()` its section (none when
    it wrote nothing)."""
    only = [r for r in written if not getattr(r, "mrb_shaped", False)]
    return Part(
        key=key,
        format_name=key,
        released={r.external_id: r.released_id for r in written},
        members_by_domain=dict(Counter(r.domain for r in only)),
        written=members,
        extra_provenance=lambda out: provenance(only, ctx, out, describe, lookup),
        manifest=manifest() if written else {},
        warnings=warnings or [],
    )


def prefix_part(
    ctx: BuildContext,
    *,
    key: str,
    folder: str,
    write_file: Callable[..., tuple[list, list[str]]],
    manifest_section: Callable[..., dict],
    own: Callable[[Any], dict],
) -> Part:
    """The Part of a benchmark whose members are the items of the domains
    whose export Category starts with ``<folder>/``, its file written by
    `write_file(folder, members, salt=, domains=)`, its manifest section
    `manifest_section(written, rekeyed=)`; each member's provenance line has
    `own(w)` under `key` and Better "A" (the line's chosen comes first)."""
    members = ctx.included.filter(item__domain__export_category__startswith=f"{folder}/")
    domains = {d.slug: d.export_category for d in ctx.domains}
    written, warnings = write_file(ctx.folder, members, salt=ctx.salt, domains=domains)

    def describe(w: Any, votes: list, looked: dict) -> tuple[str, str, str, dict]:
        return w.chosen, "A", w.provenance, own_line(w, w.chosen, votes, key, own(w), better="A")

    return records_part(
        ctx,
        key=key,
        written=written,
        members=members.filter(item_id__in=[w.item_id for w in written]),
        manifest=lambda: manifest_section(written, rekeyed=bool(ctx.salt)),
        describe=describe,
        warnings=warnings,
    )
