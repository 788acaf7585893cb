"""Records and files of a benchmark release (DESIGN §7). No Django import.

A release folder holds::

    all_data.json            every record, stable order (domain, then ID)
    <domain slug>.json       the records of one domain
                             (records in the shape of the records' benchmark:
                             a RecordShape, e.g. curation.benchmarks.mrb.records)
    images/<source>/<file>   every referenced image, once
    dpo/<domain slug>.jsonl  {prompt, chosen, rejected (chat messages), images, id, category};
                             `images` relative to the .jsonl file (../images/...)
    parquet/<domain slug>.parquet
                             the records, images embedded (an extra writer:
                             curation.releases.parquet, added by curation.releases.build)
    trl/<domain slug>.parquet
                             conversational prompt/chosen/rejected, images
                             embedded, for TRL (curation.releases.trl, same)
    provenance.jsonl         votes, pseudonyms, verdict provenance, curator reason
    README.md                dataset card; its YAML `configs:` make
                             load_dataset(<folder>) read parquet/ (default) or
                             trl/ ("trl"), one split per domain
    manifest.json            counts, balance, agreement, sha256 of every file

The shape names each record's keys, the slot of its chosen response, its
provenance line and its manifest tallies; this module writes the files.
Everything written is a function of the inputs: the same items, seed and
metadata give byte-identical files.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import zipfile
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from curation.releases.card import dataset_card

SCHEMA_VERSION = "1.0"
# A fixed timestamp for zip members: archives depend on content only.
ZIP_DATE = (2020, 1, 1, 0, 0, 0)
# Deflate level of the text members. Level 1 is ~7x faster than zlib's
# default 6 and costs little: most of an archive is images, stored as they are.
ZIP_LEVEL = 1
DPO_FOLDER = "dpo"


class RecordShape(Protocol):
    """The records' benchmark's record shape (curation.benchmarks.base.Records)."""

    format_name: str  # the manifest's "format"

    def slots(self, ids_by_domain: dict[str, list[str]], seed: int) -> dict[str, bool]: ...
    def record(self, item: ExportItem, image: str, chosen_first: bool) -> dict[str, str]: ...
    def provenance(self, item: ExportItem, record: dict) -> dict[str, Any]: ...
    def tally(self) -> Any: ...  # .add(item, record); .summary(slugs) -> manifest sections


@dataclass(frozen=True)
class ExportItem:
    external_id: str
    domain: str  # slug
    category: str  # export Category string
    prompt: str
    image_path: str  # relative path in the source data set
    image_sha256: str
    image_ext: str
    response_1: str
    response_2: str
    chosen: str  # "1" | "2"
    provenance: str = ""
    reason: str = ""
    votes: tuple[dict, ...] = ()
    model_1: str = ""
    model_2: str = ""
    image_source: str = ""  # where the caller's copy_image finds the bytes

    def chosen_and_rejected(self) -> tuple[str, str]:
        if self.chosen == "1":
            return self.response_1, self.response_2
        return self.response_2, self.response_1


@dataclass
class ReleaseMeta:
    project: str
    project_name: str
    version: str
    seed: int
    snapshot_at: str  # ISO time of the newest decision included (not wall clock)
    licence: str = ""
    notes: str = ""
    domains: Sequence[tuple[str, str, str]] = ()  # (slug, title, category) in order
    agreement: dict[str, Any] = field(default_factory=dict)
    annotation: dict[str, Any] = field(default_factory=dict)
    # Manifest entries the caller adds or overrides (before "files"), e.g. the
    # release's real creation time and the rule each verdict was decided under.
    manifest_extra: dict[str, Any] = field(default_factory=dict)
    # The release's benchmarks (curation.benchmarks), in order: each writes its
    # section of the card (curation.releases.card).
    card_sections: Sequence[Any] = ()


def image_release_path(image_path: str, sha256: str, ext: str, taken: dict[str, str]) -> str:
    """`images/<source>/<file>` from the source path; if that path already holds
    a different image in this release, or is a folder of another image's path
    (or the other way round), fall back to a content-addressed name.

    `taken` maps each file path used to its sha256, and each folder used to ""
    (keyed with a trailing slash)."""
    source = posixpath.normpath(image_path.replace("\\", "/")).lstrip("/")
    if source.startswith("images/"):
        source = source[len("images/") :]
    if not source or source.startswith(".."):
        source = f"{sha256[:2]}/{sha256}.{ext}"
    path = f"images/{source}"
    if not _path_is_free(path, sha256, taken):
        path = f"images/by-sha256/{sha256}.{ext}"
    taken[path] = sha256
    parent = posixpath.dirname(path)
    while parent:
        taken.setdefault(parent + "/", "")
        parent = posixpath.dirname(parent)
    return path


def _path_is_free(path: str, sha256: str, taken: dict[str, str]) -> bool:
    if taken.get(path, sha256) != sha256 or path + "/" in taken:
        return False  # another image has this path, or it is another image's folder
    parent = posixpath.dirname(path)
    while parent:
        if parent in taken:
            return False  # a folder of this path is another image's file
        parent = posixpath.dirname(parent)
    return True


def dpo_record(item: ExportItem, image: str) -> dict[str, Any]:
    """A line of dpo/<domain>.jsonl; `image` is the release path, written
    relative to the .jsonl file (a link that holds wherever the folder goes)."""
    chosen, rejected = item.chosen_and_rejected()
    # Chat messages, the schema of trl/ and of a training mix's dpo/
    # (curation.releases.trl.conversational_row): one dpo/ layout everywhere.
    return {
        "id": item.external_id,
        "prompt": [{"role": "user", "content": item.prompt}],
        "chosen": [{"role": "assistant", "content": chosen}],
        "rejected": [{"role": "assistant", "content": rejected}],
        "images": ["../" + image],  # dpo/ is one folder below the release root
        "category": item.category,
    }


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=False, separators=(",", ": "))


class JsonArrayWriter:
    """Writes a JSON array one element at a time (releases stream)."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.fh = path.open("w", encoding="utf-8", newline="\n")
        self.fh.write("[")
        self.first = True

    def write(self, value: dict) -> None:
        self.fh.write("\n  " if self.first else ",\n  ")
        self.fh.write(_dumps(value))
        self.first = False

    def close(self) -> None:
        self.fh.write("\n]\n" if not self.first else "]\n")
        self.fh.close()


class JsonLinesWriter:
    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.fh = path.open("w", encoding="utf-8", newline="\n")

    def write(self, value: dict) -> None:
        self.fh.write(json.dumps(value, ensure_ascii=False) + "\n")

    def close(self) -> None:
        self.fh.close()


def write_release(
    folder: Path,
    items: Iterable[ExportItem],
    *,
    meta: ReleaseMeta,
    shape: RecordShape,
    ids_by_domain: dict[str, list[str]],
    copy_image: Callable[[ExportItem, Path], None],
    progress: Callable[[int], None] | None = None,
    extra_writers: Sequence[Any] = (),
    extra_provenance: Iterable[dict] = (),
    filter_provenance: Iterable[dict] = (),
) -> dict[str, Any]:
    """Write every file of a release into `folder` (which must be empty) from
    `items`, which must arrive sorted by (domain order, external_id). Returns
    the manifest (also written). `copy_image(item, destination)` puts the
    item's image bytes at destination. `extra_provenance` records follow the
    records' provenance (members only in another benchmark's files)."""
    slots = shape.slots(ids_by_domain, meta.seed)
    domain_order = [slug for slug, _, _ in meta.domains]
    all_writer = JsonArrayWriter(folder / "all_data.json")
    provenance = JsonLinesWriter(folder / "provenance.jsonl")
    per_domain: dict[str, JsonArrayWriter] = {}
    dpo: dict[str, JsonLinesWriter] = {}
    taken: dict[str, str] = {}
    counts: Counter[str] = Counter()
    tally = shape.tally()
    provenance_counts: Counter[str] = Counter()
    for item in items:
        image = image_release_path(item.image_path, item.image_sha256, item.image_ext, taken)
        destination = folder / image
        if not destination.exists():
            destination.parent.mkdir(parents=True, exist_ok=True)
            copy_image(item, destination)
        record = shape.record(item, image, slots[item.external_id])
        all_writer.write(record)
        if item.domain not in per_domain:
            per_domain[item.domain] = JsonArrayWriter(folder / f"{item.domain}.json")
            dpo[item.domain] = JsonLinesWriter(folder / DPO_FOLDER / f"{item.domain}.jsonl")
        per_domain[item.domain].write(record)
        dpo[item.domain].write(dpo_record(item, image))
        provenance.write(shape.provenance(item, record))
        for writer in extra_writers:
            writer.write(item, record, folder / image)
        counts[item.domain] += 1
        tally.add(item, record)
        provenance_counts[item.provenance or "unknown"] += 1
        if progress is not None:
            progress(1)
    all_writer.close()
    for extra in extra_provenance:
        provenance.write(extra)
        # One count per line of provenance.jsonl, members only in other files too.
        provenance_counts[extra.get("provenance") or "unknown"] += 1
    for line in filter_provenance:
        # Pairs a release filter left out (curation.releases.filter_outputs):
        # not members, so not in the manifest's provenance counts.
        provenance.write(line)
    provenance.close()
    for slug in domain_order:
        if slug in ids_by_domain and slug not in per_domain:
            # A domain selected but empty still gets its (empty) files.
            per_domain[slug] = JsonArrayWriter(folder / f"{slug}.json")
            dpo[slug] = JsonLinesWriter(folder / DPO_FOLDER / f"{slug}.jsonl")
    for w in [*per_domain.values(), *dpo.values()]:
        w.close()
    for writer in extra_writers:
        writer.close()
    selected = [slug for slug in domain_order if slug in ids_by_domain]
    summary = {
        "counts": {slug: counts[slug] for slug in selected},
        **tally.summary(selected),
        "provenance": dict(sorted(provenance_counts.items())),
        "total": sum(counts.values()),
    }
    card = dataset_card(
        meta, summary, parquet=(folder / "parquet").is_dir(), trl=(folder / "trl").is_dir()
    )
    (folder / "README.md").write_text(card, encoding="utf-8")
    manifest = {
        "schema_version": SCHEMA_VERSION,
        "format": shape.format_name,
        "project": meta.project,
        "release": meta.version,
        "seed": meta.seed,
        "created_at": meta.snapshot_at,
        "domains": [
            {"slug": slug, "title": title, "category": category}
            for slug, title, category in meta.domains
            if slug in ids_by_domain
        ],
        **summary,
        "agreement": meta.agreement,
        **meta.manifest_extra,
        "files": file_checksums(folder),
    }
    if meta.annotation.get("label_quality_filter"):
        # Only when a release used the filter: other manifests stay byte-identical.
        manifest["label_quality_filter"] = meta.annotation["label_quality_filter"]
    if meta.annotation.get("release_filters"):
        manifest["release_filters"] = meta.annotation["release_filters"]
    if meta.annotation.get("balance_report"):
        manifest["balance_report"] = meta.annotation["balance_report"]
    # json.dump streams; json.dumps with an indent would first hold every
    # piece of the text (~60 MB at 100,000 files). Same bytes either way.
    with (folder / "manifest.json").open("w", encoding="utf-8") as fh:
        json.dump(manifest, fh, ensure_ascii=False, indent=2)
        fh.write("\n")
    return manifest


def release_files(folder: Path) -> list[str]:
    """Relative POSIX paths of every file under folder, sorted as the Paths
    would be (component by component). Strings, not Path objects: a 100,000-
    image release would hold ~40 MB of Paths."""
    out: list[str] = []

    def walk(directory: str, prefix: str) -> None:
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    walk(entry.path, f"{prefix}{entry.name}/")
                elif entry.is_file():
                    out.append(prefix + entry.name)

    walk(os.fspath(folder), "")
    # "\0" sorts below every character of a name: component-wise order.
    out.sort(key=lambda rel: rel.replace("/", "\0"))
    return out


def file_checksums(folder: Path) -> dict[str, dict[str, Any]]:
    """sha256 and size of every file under folder (except manifest.json), by
    relative POSIX path, sorted."""
    out = {}
    for rel in release_files(folder):
        if rel == "manifest.json":
            continue
        path = folder / rel
        out[rel] = {"sha256": sha256_file(path), "bytes": path.stat().st_size}
    return out


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_zip(folder: Path, archive: Path, root: str) -> None:
    """A deterministic zip of folder: sorted members under `root/`, fixed
    timestamps and permissions. Images are stored, text is deflated."""
    with zipfile.ZipFile(archive, "w") as zf:
        for rel in release_files(folder):
            path = folder / rel
            info = zipfile.ZipInfo(f"{root}/{rel}", date_time=ZIP_DATE)
            info.external_attr = 0o644 << 16
            compress = rel.endswith((".json", ".jsonl", ".md"))
            info.compress_type = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
            info._compresslevel = ZIP_LEVEL  # Python 3.11's name (3.13: compress_level)
            # Known in advance, so a member over 2 GiB gets its zip64 header.
            info.file_size = path.stat().st_size
            with path.open("rb") as src, zf.open(info, "w") as dst:
                for chunk in iter(lambda src=src: src.read(1 << 20), b""):
                    dst.write(chunk)


def copy_file(source: str | os.PathLike, destination: Path) -> None:
    with open(source, "rb") as src, destination.open("wb") as dst:
        for chunk in iter(lambda: src.read(1 << 20), b""):
            dst.write(chunk)
