"""Server-side import roots: datasets and images already on the server,
referenced by path instead of uploaded (as Label Studio's local-files storage
does), so a 50 GB image folder need not be zipped and sent through a browser.

An admin lists the folders in the ``IMPORT_ROOTS`` setting (environment,
comma-separated absolute paths, or ``s3://bucket/prefix`` for a bucket: see
annotate.importing.roots_s3), and a site admin chooses per project which of
them it may read (``Project.import_roots``; annotate.setup.service.
set_import_roots). A server path is an absolute path under one
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


def project_roots(project) -> list[str]:
    """The site's roots that `project` may read: those a site admin chose for
    it (``Project.import_roots``), in the site's order. A chosen root the site
    no longer lists is ignored. Each team reads only its own folders
    (issue 29: the roots used to be every project's)."""
    chosen = set(project.import_roots or ())
    return [root for root in settings.IMPORT_ROOTS if root in chosen]


def import_roots(roots: list[str]) -> list[Path]:
    """The local folders among `roots`."""
    return [Path(root) for root in roots if not root.startswith(SCHEME)]


def bucket_roots(roots: list[str]) -> list[str]:
    """The s3://bucket/prefix roots among `roots` (annotate.importing.roots_s3)."""
    return [root for root in roots if root.startswith(SCHEME)]


def roots_enabled(project) -> bool:
    """Whether `project` may import by server path at all."""
    return bool(project_roots(project))


NO_ROOTS = (
    "server paths are off for this project: a site admin chooses which import roots it may read"
)


class OutsideRoots(ImportFailed):
    """A server path that is not under an import root (or cannot be used)."""

    def __init__(self, path: str, message: str):
        super().__init__([ImportProblem(brief(path, 200, quote=False), message)])


def resolve_server_path(path: str, allowed: list[str]) -> Path:
    """The real path of `path` inside one of the `allowed` roots. Raises
    OutsideRoots if there are none, the path has a `..` part, leaves every
    root (also through a symlink) or does not exist."""
    roots = import_roots(allowed)
    if not roots:
        raise OutsideRoots(path, NO_ROOTS)
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


def import_server_items(
    *,
    project,
    dataset: str,
    images: str | None = None,
    roots: list[str] | None = None,
    **options,
):
    """Import a dataset (a file, a release zip or a release folder) and its
    images from server paths confined to the project's import roots
    (`roots` overrides them: the CLI, whose operator has a shell, passes
    all the site's)."""
    from annotate.importing.service import import_items_from_paths

    allowed = project_roots(project) if roots is None else roots
    if dataset.strip().startswith(SCHEME):
        if not bucket_roots(allowed):
            raise OutsideRoots(dataset, "no s3:// import root is open to this project")
        return import_bucket_items(
            project=project,
            dataset=dataset.strip(),
            images=images,
            roots=bucket_roots(allowed),
            **options,
        )
    dataset_path = resolve_server_path(dataset, allowed)
    if images:
        images_path: Path | None = resolve_server_path(images, allowed)
    elif dataset_path.is_file() and dataset_path.suffix.lower() != ".zip":
        images_path = dataset_path.parent  # image paths resolve beside the dataset
    else:
        images_path = None
    return import_items_from_paths(
        project=project, dataset=dataset_path, images=images_path, **options
    )
