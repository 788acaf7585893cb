"""Imports leave a trace (issue 31): who imported what, with which options,
what it did (counts) and the SHA-256 of each file, in the project's setup
history (SetupEvent "import") and, through the `import_recorded` signal, in
curation's audit log. Both the import page and the API call
`import_recorded_items`, so a browser import and a script's are recorded
the same way. A refused import writes nothing, this record included."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from django.core.files.uploadedfile import UploadedFile
from django.db import transaction

from annotate import signals
from annotate.importing.options import ImportOptions
from annotate.importing.service import ImportResult
from annotate.models import Project
from annotate.setup.models import SetupEvent

CHUNK = 1 << 20


def file_sha256(source) -> str:
    """SHA-256 of an uploaded file (read in chunks, then rewound) or of a
    local file; "" for what is not one file (a folder, an s3:// address)."""
    digest = hashlib.sha256()
    if isinstance(source, UploadedFile):
        for chunk in source.chunks(CHUNK):
            digest.update(chunk)
        source.seek(0)
        return digest.hexdigest()
    path = Path(source) if isinstance(source, str | Path) else None
    if path is None or not path.is_file():
        return ""
    with path.open("rb") as fh:
        while chunk := fh.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _name(source) -> str:
    if isinstance(source, UploadedFile):
        return Path(source.name or "upload").name
    if isinstance(source, Path):  # a staged upload (annotate.importing.staging)
        return source.name
    return str(source or "")


def import_recorded_items(
    *,
    project: Project,
    actor,
    surface: str,
    do_import: Callable[..., ImportResult],
    dataset,
    images=None,
    resolve: Callable[[str], Path] | None = None,
    **options,
) -> ImportResult:
    """Run `do_import` (uploads or server paths) and record it. `resolve`
    turns a server path into the local file to hash (None: hash as given)."""

    def digest(source) -> str:
        if source is None or source == "":
            return ""
        if resolve is not None and isinstance(source, str):
            try:
                return file_sha256(resolve(source))
            except Exception:  # an s3:// address or a path the import will refuse itself
                return ""
        return file_sha256(source)

    hashes = {"dataset_sha256": digest(dataset), "images_sha256": digest(images)}
    result = do_import(project=project, dataset=dataset, images=images, **options)
    record_import(
        project=project,
        actor=actor,
        surface=surface,
        files={"dataset": _name(dataset), "images": _name(images), **hashes},
        options=options,
        result=result,
    )
    return result


def _jsonable_options(options: dict) -> dict:
    out: dict[str, object] = {}
    for key, value in options.items():
        if isinstance(value, ImportOptions):
            out.update(
                duplicates=value.duplicates,
                domain_from=value.domain_from,
                domain_map=dict(value.domain_map),
                conflicts=value.conflicts,
            )
        else:
            out[key] = value
    return out


def record_import(
    *, project: Project, actor, surface: str, files: dict, options: dict, result: ImportResult
) -> SetupEvent:
    counts = {
        "format": result.format,
        "created": result.created,
        "updated": result.updated,
        "unchanged": result.unchanged,
        "images_stored": result.images_stored,
        "duplicates_skipped": result.duplicates_skipped,
        "duplicates_renamed": result.duplicates_renamed,
    }
    after = {
        "via": surface,
        **{k: v for k, v in files.items() if v},
        "options": _jsonable_options(options),
        "counts": counts,
    }
    with transaction.atomic():
        event = SetupEvent.objects.create(
            project=project, actor=actor, action="import", before={}, after=after
        )
        signals.import_recorded.send(
            sender=record_import,
            project=project,
            actor=actor,
            details=after,
            summary=f"{files.get('dataset') or 'dataset'}: {result.summary()}",
        )
    return event
