"""Importing a studio release back (its zip, or its folder on the server).

A release (curation/releases/exporter.py) is recognised by its
``manifest.json`` (format ``multimodal-rewardbench``) beside ``all_data.json``.
The import reads ``all_data.json`` and the images under ``images/``, the
other files (per-domain copies, dpo/, parquet/, provenance.jsonl, the card)
being derived from those. Each record becomes an item in canonical order
``Output1``, ``Output2``; its released label (``Better``) becomes the item's
gold answer, and curation (receiving :data:`annotate.signals.release_imported`)
decides its verdict from it, with the release's version and SHA-256 in the
audit trail. A release cut from the imported project with the release's seed
then holds the same records, byte for byte (the chosen slot is a seeded
shuffle over the same IDs per domain).

Idempotent: a record whose ID is already in the project with the same text,
responses (in either order), category and image is left alone, so importing
the same release twice, or into the project it came from, changes nothing.
The same ID with other content goes to the writer's conflict rule
(annotate.importing.service: refused by default, naming the fields).
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings

from annotate import signals
from annotate.importing.bounds import RecordCount, import_bounds, json_shape_problem
from annotate.importing.formats import DatasetSource, ParsedFile, ParsedItem, ReadContext, mrb
from annotate.importing.jsonscan import DatasetFile, iter_json_array, open_dataset_file
from annotate.importing.records import ImportFailed, ImportProblem, ProblemLog
from annotate.importing.sources import (
    DirectoryImageSource,
    ImageSource,
    ZipImageSource,
    safe_relative_path,
)
from annotate.models import Item, Project

MANIFEST = "manifest.json"
ALL_DATA = "all_data.json"
RELEASE_FORMAT = "multimodal-rewardbench"
MANIFEST_MAX_BYTES = 256 * 1024 * 1024  # 100,000 files' checksums are ~15 MB
# A manifest is decoded whole: six values per file listed (100,000 images are
# ~600,000), not tens of millions of empty ones (each costs ~60 bytes of
# memory for its 2 bytes of file).
MANIFEST_MAX_VALUES = 2_000_000
# Options of a plain dataset that a release, read as it is, cannot take:
# its fields and labels are the release's own.
NOT_FOR_RELEASES = ("fmt", "field_map", "gold_from_label")
NAMES = ("release",)
SUFFIXES = (".zip",)
# A release is read as one whatever format was named (and says the name does not apply).
DEFINITIVE = True


def detect(source: DatasetSource) -> bool:
    if source.archive is not None:
        return release_folder_in_zip(source.archive) is not None
    return is_release_folder(source.path)


def release_folder_in_zip(archive: ZipImageSource) -> str | None:
    """The folder of the zip holding a release (manifest.json beside
    all_data.json), or None if the zip is not a release."""
    for name in sorted(archive.members):
        if posixpath.basename(name) != MANIFEST or "__MACOSX" in name:
            continue
        folder = posixpath.dirname(name)
        if (posixpath.join(folder, ALL_DATA) if folder else ALL_DATA) in archive.members:
            return folder
    return None


def is_release_folder(path: Path) -> bool:
    return path.is_dir() and (path / MANIFEST).is_file() and (path / ALL_DATA).is_file()


@dataclass
class ReleaseInfo:
    project: str
    version: str
    seed: int
    sha256: str  # of the zip (or, for a folder, of its manifest.json)
    all_data_sha256: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "version": self.version,
            "seed": self.seed,
            "sha256": self.sha256,
            "all_data_sha256": self.all_data_sha256,
        }


class _Release:
    """Read access to one release, zipped or a folder."""

    def __init__(self, stack: ExitStack, path: Path, archive: ZipImageSource | None):
        self.label = path.name
        self.archive = archive
        self.folder = path
        if archive is not None:
            prefix = release_folder_in_zip(archive)
            assert prefix is not None
            archive.prefix = prefix
            self.prefix = prefix
            self.images: ImageSource = archive
        else:
            self.prefix = ""
            self.images = DirectoryImageSource(path)
        self.stack = stack

    def member(self, name: str) -> str:
        return posixpath.join(self.prefix, name) if self.prefix else name

    def open(self, name: str) -> DatasetFile | bytes:
        if self.archive is not None:
            return self.stack.enter_context(self.archive.open_dataset(self.member(name)))
        return self.stack.enter_context(open_dataset_file(self.folder / name))

    def problem(self, message: str, name: str = "") -> ImportFailed:
        where = f"{self.label}:{self.member(name)}" if name else self.label
        return ImportFailed([ImportProblem(where, message)])


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _read_manifest(release: _Release) -> dict[str, Any]:
    if release.archive is not None:
        size = release.archive.members[release.member(MANIFEST)].file_size
    else:
        size = (release.folder / MANIFEST).stat().st_size
    if size > MANIFEST_MAX_BYTES:
        raise release.problem(f"is larger than {MANIFEST_MAX_BYTES} bytes", MANIFEST)
    raw = bytes(release.open(MANIFEST))
    shape = json_shape_problem(
        raw, max_depth=import_bounds().max_depth, max_values=MANIFEST_MAX_VALUES
    )
    if shape is not None:
        raise release.problem(f"is not a release manifest: {shape}", MANIFEST)
    try:
        manifest = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise release.problem(f"is not valid JSON ({exc})", MANIFEST) from None
    del raw
    if not isinstance(manifest, dict) or manifest.get("format") != RELEASE_FORMAT:
        raise release.problem(f"is not a {RELEASE_FORMAT} release manifest", MANIFEST)
    for key, kind in (("project", str), ("release", str), ("seed", int)):
        if not isinstance(manifest.get(key), kind):
            raise release.problem(f"has no valid {key!r}", MANIFEST)
    return manifest


def read(source: DatasetSource, context: ReadContext) -> ParsedFile:
    """The release at `source` (a zip, or a folder) as MRB records whose
    released label (`Better`) is the gold answer; records already in the
    project with the same content are left out (counted unchanged)."""
    path, archive, stack = source.path, source.archive, context.stack
    given = [
        name
        for name in NOT_FOR_RELEASES
        if context.given.get(name) and context.given.get(name) not in NAMES
    ]
    if given:
        raise ImportFailed(
            [
                ImportProblem(
                    path.name,
                    "a studio release is imported as it is; these options do not apply to it: "
                    + ", ".join(n.replace("fmt", "format").replace("_", " ") for n in given),
                )
            ]
        )
    release = _Release(stack, path, archive)
    manifest = _read_manifest(release)
    data = release.open(ALL_DATA)
    digest = hashlib.sha256()
    for start in range(0, len(data), 1 << 20):
        digest.update(data[start : start + (1 << 20)])
    all_data_sha = digest.hexdigest()
    listed = (manifest.get("files") or {}).get(ALL_DATA, {}).get("sha256")
    if listed is not None and listed != all_data_sha:
        raise release.problem(
            "does not match its SHA-256 in manifest.json: the release was altered", ALL_DATA
        )
    info = ReleaseInfo(
        project=manifest["project"],
        version=manifest["release"],
        seed=manifest["seed"],
        sha256=_file_sha256(path if archive is not None else path / MANIFEST),
        all_data_sha256=all_data_sha,
    )
    label = f"{release.label}:{release.member(ALL_DATA)}"
    data, skipped = _new_records(context.project, data, label, release.images, stack)
    if data is None:
        parsed = _empty(label, release.images)
    else:
        parsed = mrb.read_data(
            data, filename=label, fmt="mrb", images=release.images, context=context
        )
    fingerprint = parsed.fingerprint
    items = parsed.items

    def with_gold():
        for item in items():
            item.gold = GOLD.get(item.meta.get("prior_better"), "")
            yield item

    def released_fingerprint(item: ParsedItem) -> str:
        # As stored before the format seam: the gold was set after the record's hash.
        gold, item.gold = item.gold, ""
        try:
            return fingerprint(item)
        finally:
            item.gold = gold

    def after_write(project, item_ids: list[int]) -> None:
        signals.release_imported.send(
            sender=Item, project=project, item_ids=item_ids, release=info.as_dict()
        )

    parsed.items = with_gold
    parsed.fingerprint = released_fingerprint
    parsed.format = "mrb"
    parsed.unchanged = skipped
    parsed.after_write = after_write
    parsed.extra = {
        "release": info.as_dict(),
        "summary": (
            f"release {info.project} {info.version}: {{}}; cut a release with seed {info.seed} "
            "to reproduce its records"
        ),
    }
    return parsed


# The released label as the item's gold answer.
GOLD = {"Output1": "1", "Output2": "2"}


def _empty(label: str, images: ImageSource) -> ParsedFile:
    """Every record of the release is already in the project."""
    return ParsedFile(
        format="mrb",
        filename=label,
        items=lambda: iter(()),
        count=0,
        ids=[],
        images={},
        image_source=images,
        fingerprint=lambda item: "",
        id_field="ID",
    )


def _records(data, label: str) -> Iterator[tuple[int, int, Any]]:
    """The records of all_data.json, within the import's bounds (each pass
    over them stops at the record cap, as the import's own passes do)."""
    bounds = import_bounds()
    log = ProblemLog(label, bounds.max_errors)
    count = RecordCount(bounds, log)
    for line, index, value in iter_json_array(data, log, max_record_bytes=bounds.max_record_bytes):
        count.add(line=line, index=index)
        yield line, index, value
    log.raise_if_any()


def _new_records(project: Project, data, label: str, images: ImageSource, stack: ExitStack):
    """The records not yet in the project with the same content: `data`
    itself if none is, a temporary JSON file of the others, or None if all
    are; and how many were already there."""
    existing = set(Item.objects.filter(project=project).values_list("external_id", flat=True))
    if not existing:
        return data, 0
    present: dict[str, tuple[int, dict]] = {}
    for _line, index, value in _records(data, label):
        if isinstance(value, dict) and value.get("ID") in existing:
            present[value["ID"]] = (index, value)
    if not present:
        return data, 0
    for ext_id in _differing(project, present, images):
        del present[ext_id]  # the writer's conflict rule decides
    if not present:
        return data, 0
    if len(present) == sum(1 for _ in _records(data, label)):
        return None, len(present)
    # Only the new records, to a temporary JSON array removed with the stack.
    temporary = tempfile.NamedTemporaryFile("w", suffix=".json", encoding="utf-8")  # noqa: SIM115
    out = stack.enter_context(temporary)
    out.write("[\n")
    first = True
    for _line, _index, value in _records(data, label):
        if isinstance(value, dict) and value.get("ID") in present:
            continue
        out.write(("" if first else ",\n") + json.dumps(value, ensure_ascii=False))
        first = False
    out.write("\n]\n")
    out.flush()
    return stack.enter_context(open_dataset_file(Path(out.name))), len(present)


def _differing(project, present: dict[str, tuple[int, dict]], images) -> list[str]:
    items = Item.objects.filter(project=project, external_id__in=list(present)).values_list(
        "external_id",
        "prompt",
        "response_1",
        "response_2",
        "domain__export_category",
        "domain__slug",
        "image__sha256",
    )
    differing = []
    for ext_id, prompt, r1, r2, category, slug, sha in items.iterator(chunk_size=2000):
        _index, record = present[ext_id]
        same = (
            record.get("Text") == prompt
            and {record.get("Output1"), record.get("Output2")} == {r1, r2}
            and record.get("Category") in (category, slug)
            and _image_sha(images, record.get("Image")) == sha
        )
        if not same:
            differing.append(ext_id)
    return differing


def _image_sha(images: ImageSource, ref: Any) -> str | None:
    normal = safe_relative_path(ref) if isinstance(ref, str) else None
    if normal is None:
        return None
    try:
        return hashlib.sha256(images.read(normal, settings.IMAGE_MAX_BYTES)).hexdigest()
    except (OSError, ValueError):
        return None
