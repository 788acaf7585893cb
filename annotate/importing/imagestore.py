"""Storing an import's images: content-addressed files (by SHA-256), copied
in threads while the rows are inserted, and orphans removed when the
transaction rolls back.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future, ThreadPoolExecutor

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from annotate.importing.images import stored_image_bytes
from annotate.importing.records import IMAGE_BATCH, IMAGE_THREADS, ImageInfo, ImageLimits
from annotate.importing.sources import ImageSource
from annotate.models import ImageAsset
from common.bulk import insert_or_keep

log = logging.getLogger(__name__)

IMAGE_EXTENSIONS = {"PNG": "png", "JPEG": "jpg", "WEBP": "webp", "GIF": "gif"}


def image_storage_name(sha256: str, fmt: str) -> str:
    return f"images/{sha256[:2]}/{sha256}.{IMAGE_EXTENSIONS.get(fmt, 'bin')}"


_ASSET_FIELDS = ("sha256", "file", "format", "width", "height", "size_bytes")


def store_images(needed, copies: ImageCopies) -> tuple[dict[str, int], list[int]]:
    """Store images not yet stored (content-addressed) and create their rows.
    Returns ids by sha256 and the ids of newly created rows."""
    shas = list(needed)
    known: dict[str, int] = {}
    for start in range(0, len(shas), 5000):
        known.update(
            ImageAsset.objects.filter(sha256__in=shas[start : start + 5000]).values_list(
                "sha256", "pk"
            )
        )
    new_rows = []
    for sha, info in needed.items():
        if sha in known:
            continue
        name = image_storage_name(sha, info.format)
        copies.start(name, info)
        new_rows.append((sha, name, info.format, info.width, info.height, info.size_bytes))
    # The insert returns the rows' ids (common.bulk.insert_or_keep: COPY on
    # PostgreSQL, else bulk_create with ON CONFLICT ... DO UPDATE, which
    # PostgreSQL and SQLite 3.35+ return them for, not DO NOTHING): querying
    # them back by sha256 was a statement with 5,000 parameters per 5,000
    # images, which psycopg prepares after 5 runs; the plan PostgreSQL then
    # keeps was made when the table looked empty (its rows are not committed
    # yet), a sequential scan comparing every row with 5,000 strings: ~75 s
    # for 100,000 images. A conflict (the same image stored meanwhile by a
    # concurrent import) keeps the row there: its id is returned.
    new_ids = insert_or_keep(ImageAsset, _ASSET_FIELDS, new_rows, "sha256")
    for row, pk in zip(new_rows, new_ids, strict=True):
        known[row[0]] = pk
    return known, new_ids


class ImageCopies:
    """Copies images from the source into the default storage in threads (file
    I/O releases the GIL) while the caller goes on inserting rows. Leaving the
    block waits for every copy; each name saved is in `written` before the
    first error is raised, so the caller can remove orphans."""

    def __init__(self, source: ImageSource, limits: ImageLimits, written: list[str]):
        self.source = source
        self.limits = limits
        self.written = written
        self.batch: list[tuple[str, ImageInfo]] = []
        self.futures: list[Future[tuple[list[str], Exception | None]]] = []

    def __enter__(self) -> ImageCopies:
        self.pool = ThreadPoolExecutor(IMAGE_THREADS, thread_name_prefix="import-store")
        return self

    def start(self, name: str, info: ImageInfo) -> None:
        self.batch.append((name, info))
        if len(self.batch) >= IMAGE_BATCH:
            self._submit()

    def _submit(self) -> None:
        self.futures.append(self.pool.submit(self._copy_batch, self.batch))
        self.batch = []

    def _copy_batch(self, batch: list[tuple[str, ImageInfo]]) -> tuple[list[str], Exception | None]:
        saved: list[str] = []
        try:
            for name, info in batch:
                data = stored_image_bytes(self.source, info, self.limits)
                # No exists() first (a round trip per image on remote storages):
                # these images have no row, so their file is almost never there
                # (only left by a failed import, or being written by a concurrent one).
                stored = default_storage.save(name, ContentFile(data))
                if stored != name:  # the storage kept the existing file and renamed ours
                    default_storage.delete(stored)
                else:
                    saved.append(stored)
        except Exception as exc:
            return saved, exc
        return saved, None

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None and self.batch:
            self._submit()
        error: BaseException | None = None
        if exc_type is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)
        for future in self.futures:
            try:
                saved, failure = future.result()
            except BaseException as cancelled:  # an interrupt, or cancelled below
                saved, failure = [], cancelled
            self.written.extend(saved)
            if failure is not None and error is None and exc_type is None:
                error = failure
                self.pool.shutdown(wait=False, cancel_futures=True)
        self.pool.shutdown()
        if error is not None:
            raise error


def remove_orphans(names: list[str]) -> None:
    """Delete files this import wrote if no row refers to them (the
    transaction rolled back)."""
    if not names:
        return
    referenced = set(ImageAsset.objects.filter(file__in=names).values_list("file", flat=True))
    for name in names:
        if name not in referenced:
            try:
                default_storage.delete(name)
            except OSError:
                log.warning("could not remove orphan image %s", name)
