"""Server-side import roots: datasets and images already on the server,
referenced by path instead of uploaded (as Label Studio's local-files storage
does), so a 50 GB image folder need not be zipped and sent through a browser.

An admin lists the folders in the ``IMPORT_ROOTS`` setting (environment,
comma-separated absolute paths, or ``s3://bucket/prefix`` for a bucket: see
annotate.importing.roots_s3). A server path is an absolute path under one
of them, or a path relative to a root (the first root holding it is used).
Every path is confined to its root: a path with a ``..`` part is refused
outright, and the path is resolved (symlinks followed) before it is checked,
so a symlink leading out of the root is refused too. Images a dataset names
resolve in the folder given for them, or else in the dataset's own folder
(also confined: DirectoryImageSource checks each image's real path).
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from django.conf import settings

from annotate.importing.records import ImportFailed, ImportProblem, brief
from annotate.importing.roots_s3 import SCHEME, import_bucket_items


def import_roots() -> list[Path]:
    """The local folders among the roots."""
    return [Path(root) for root in settings.IMPORT_ROOTS if not root.startswith(SCHEME)]


def bucket_roots() -> list[str]:
    """The s3://bucket/prefix roots (annotate.importing.roots_s3)."""
    return [root for root in settings.IMPORT_ROOTS if root.startswith(SCHEME)]


def roots_enabled() -> bool:
    return bool(settings.IMPORT_ROOTS)


class OutsideRoots(ImportFailed):
    """A server path that is not under an import root (or cannot be used)."""

    def __init__(self, path: str, message: str):
        super().__init__([ImportProblem(brief(path, 200, quote=False), message)])


def resolve_server_path(path: str) -> Path:
    """The real path of `path` inside an import root. Raises OutsideRoots if
    server paths are off, the path has a `..` part, leaves every root (also
    through a symlink) or does not exist."""
    roots = import_roots()
    if not roots:
        raise OutsideRoots(path, "server paths are off: no import roots are configured")
    text = path.strip()
    if not text or "\x00" in text:
        raise OutsideRoots(path, "give a path under an import root")
    if ".." in PurePosixPath(text.replace("\\", "/")).parts:
        raise OutsideRoots(path, "a server path may not contain '..'")
    candidates = [Path(text)] if os.path.isabs(text) else [root / text for root in roots]
    for candidate in candidates:
        real = Path(os.path.realpath(candidate))
        root = next((r for r in roots if real.is_relative_to(os.path.realpath(r))), None)
        if root is None:
            if os.path.isabs(text) or os.path.lexists(candidate):
                raise OutsideRoots(path, "is not under an import root (symlinks are followed)")
            continue
        if not real.exists():
            continue
        return real
    raise OutsideRoots(path, "not found under the import roots")


def import_server_items(*, project, dataset: str, images: str | None = None, **options):
    """Import a dataset (a file, a release zip or a release folder) and its
    images from server paths confined to the import roots."""
    from annotate.importing.service import import_items_from_paths

    if dataset.strip().startswith(SCHEME):
        if not bucket_roots():
            raise OutsideRoots(dataset, "no s3:// import root is configured")
        return import_bucket_items(
            project=project, dataset=dataset.strip(), images=images, roots=bucket_roots(), **options
        )
    dataset_path = resolve_server_path(dataset)
    if images:
        images_path: Path | None = resolve_server_path(images)
    elif dataset_path.is_file() and dataset_path.suffix.lower() != ".zip":
        images_path = dataset_path.parent  # image paths resolve beside the dataset
    else:
        images_path = None
    return import_items_from_paths(
        project=project, dataset=dataset_path, images=images_path, **options
    )
