"""Where a built release goes: the "releases" storage (settings.STORAGES).

A release is always assembled in a local work folder; publishing puts that
folder and its zip under their final names in the storage:

* **local file system** (the default): the work folder is inside the storage,
  so publishing is two renames and the images stay hard links;
* **object storage** (S3): every file is first uploaded under a per-attempt
  staging prefix (`releases/.building/<release>-<attempt>/`), the sizes are
  checked and the zip's SHA-256 recomputed from the uploaded bytes; only then,
  holding the release's row lock, are the objects copied inside the bucket to
  their final names and the release marked ready in the same transaction. A
  build that fails or dies before that leaves nothing under a release's final
  names (staging objects are removed, or expired by a bucket lifecycle rule on
  `releases/.building/` if the worker was killed); one that fails while
  copying removes what it copied.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from django.conf import settings
from django.core.files.storage import Storage, storages

from common.storage import (
    copy_stored,
    delete_names,
    list_names,
    local_path,
    open_stored,
    save_new,
    stored_sizes,
)

log = logging.getLogger(__name__)

# Parallel uploads and copies: each is a round trip of its own on S3.
TRANSFER_THREADS = 8


class PublishError(Exception):
    pass


def release_storage() -> Storage:
    return storages["releases"]


def published_names(slug: str, version: str, *, root: str = "releases") -> tuple[str, str]:
    """The storage names of a release's folder and zip (a training mix's
    under root="mixes", named by the mix's name)."""
    return f"{root}/{slug}/{version}", f"{root}/{slug}/{slug}-{version}.zip"


def releases_root() -> Path:
    """The local folder of published releases (the default, local storage)."""
    return Path(settings.MEDIA_ROOT) / "releases"


def work_root() -> Path:
    """The folder whose `.building/` holds the work folders of builds. For a
    local storage it is inside the storage (publishing is a rename on one file
    system); otherwise RELEASE_WORK_DIR or the system temp folder."""
    local = local_path(release_storage(), "releases")
    if local is not None:
        return local
    if settings.RELEASE_WORK_DIR:
        return Path(settings.RELEASE_WORK_DIR)
    return Path(tempfile.gettempdir()) / "triplet-studio-releases"


def target_for(
    *,
    slug: str,
    version: str,
    pk: int | str,
    folder: Path,
    archive: Path,
    sha256: str,
    root: str = "releases",
):
    """A LocalTarget or a BucketTarget (files already staged and verified)."""
    storage = release_storage()
    folder_name, archive_name = published_names(slug, version, root=root)
    if local_path(storage, "releases") is not None:
        return LocalTarget(storage, folder_name, archive_name, folder, archive)
    target = BucketTarget(storage, folder_name, archive_name, folder, archive)
    target.stage(f"releases/.building/{pk}-{uuid.uuid4().hex}", sha256)
    return target


class LocalTarget:
    def __init__(self, storage: Storage, folder_name: str, archive_name: str, folder, archive):
        self.folder_name, self.archive_name = folder_name, archive_name
        self.work_folder, self.work_archive = folder, archive
        self.final_folder = Path(storage.path(folder_name))
        self.final_archive = Path(storage.path(archive_name))
        self.final_folder.parent.mkdir(parents=True, exist_ok=True)

    def clear_leftovers(self) -> None:
        # Files of an earlier attempt that died after publishing but before
        # recording them (the release was not ready, so nobody saw them).
        if self.final_folder.exists():
            shutil.rmtree(self.final_folder)
        if self.final_archive.exists():
            self.final_archive.unlink()

    def publish(self) -> None:
        os.replace(self.work_archive, self.final_archive)
        os.replace(self.work_folder, self.final_folder)

    def discard(self, *, published: bool) -> None:
        """Nothing to do: the work folder is removed by the build."""


class BucketTarget:
    def __init__(self, storage: Storage, folder_name: str, archive_name: str, folder, archive):
        self.storage = storage
        self.folder_name, self.archive_name = folder_name, archive_name
        files = sorted(p for p in Path(folder).rglob("*") if p.is_file())
        # (local file, final name) for every file of the release, zip last.
        self.files = [(p, f"{folder_name}/{p.relative_to(folder).as_posix()}") for p in files]
        self.files.append((Path(archive), archive_name))
        self.staged: dict[str, str] = {}  # final name -> staging name
        self.copied: list[str] = []

    def stage(self, prefix: str, sha256: str) -> None:
        """Upload every file under `prefix`, then check what arrived."""
        self.prefix = prefix
        self.staged = {final: f"{prefix}/{final}" for _, final in self.files}
        jobs = [(path, self.staged[final]) for path, final in self.files]
        try:
            with ThreadPoolExecutor(TRANSFER_THREADS, thread_name_prefix="release-up") as pool:
                list(pool.map(lambda job: save_new(self.storage, job[1], job[0]), jobs))
            sizes = stored_sizes(self.storage, prefix)
            for path, staged in jobs:
                if sizes.get(staged) != path.stat().st_size:
                    raise PublishError(
                        f"{staged}: {sizes.get(staged)} bytes stored, {path.stat().st_size} written"
                    )
            digest = hashlib.sha256()
            stream = open_stored(self.storage, self.staged[self.archive_name])
            try:
                while chunk := stream.read(1 << 20):
                    digest.update(chunk)
            finally:
                stream.close()
            if digest.hexdigest() != sha256:
                raise PublishError(f"{self.archive_name}: the stored zip's SHA-256 differs")
        except BaseException:
            self._remove_staging()
            raise

    def clear_leftovers(self) -> None:
        """Objects under the final names left by an attempt that died while
        copying (the release was not ready, so nobody was shown them)."""
        names = list_names(self.storage, self.folder_name)
        if self.storage.exists(self.archive_name):
            names.append(self.archive_name)
        delete_names(self.storage, names)

    def publish(self) -> None:
        def copy(job: tuple[Path, str]) -> None:
            path, final = job
            copy_stored(self.storage, self.staged[final], final, fallback=path)
            self.copied.append(final)  # list.append is atomic

        with ThreadPoolExecutor(TRANSFER_THREADS, thread_name_prefix="release-copy") as pool:
            list(pool.map(copy, self.files))

    def discard(self, *, published: bool) -> None:
        """Remove the staging objects, and what was copied if the release was
        not recorded as ready."""
        self._remove_staging()
        if not published:
            try:
                delete_names(self.storage, list(self.copied))
            except Exception:  # a retry removes them (clear_leftovers)
                log.warning("could not remove the copies of a failed release", exc_info=True)

    def _remove_staging(self) -> None:
        try:
            delete_names(self.storage, list_names(self.storage, self.prefix))
        except Exception:  # never shown; a lifecycle rule on releases/.building/ expires them
            log.warning("could not remove staged files under %s", self.prefix, exc_info=True)
