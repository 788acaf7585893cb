"""Reading and writing stored files the same way on the local file system and
on S3-compatible object storage (settings.STORAGES, see README).

Django's Storage API covers saving, deleting and listing. Three things it
does badly on a bucket, so they are here: reading a large file without first
copying all of it into memory (django-storages' S3File spools the whole object,
in memory by default), copying inside the bucket without sending the bytes
through this host, and telling whether a storage has local paths (then the
release build hard-links and renames instead of uploading).
"""

from __future__ import annotations

from pathlib import Path
from typing import IO, Any

from django.core.files import File
from django.core.files.storage import Storage


def local_path(storage: Storage, name: str = "") -> Path | None:
    """The file system path of `name` in a storage, or None for a storage
    without local paths (object storage)."""
    try:
        return Path(storage.path(name))
    except NotImplementedError:
        return None


def _bucket(storage: Storage) -> Any | None:
    # django-storages' S3Storage; any other storage goes through the plain API.
    return getattr(storage, "bucket", None) if hasattr(storage, "bucket_name") else None


def _key(storage: Storage, name: str) -> str:
    # The object key S3Storage itself uses for `name` (its location prefix).
    from storages.utils import clean_name

    return storage._normalize_name(clean_name(name))  # type: ignore[attr-defined]


def open_stored_range(storage: Storage, name: str, start: int, end: int) -> IO[bytes]:
    """A binary stream of bytes `start`..`end` (inclusive) of a stored file:
    the file opened and sought on a file system, a ranged GET on S3 (one
    request, not the whole object). Raises FileNotFoundError."""
    bucket = _bucket(storage)
    if bucket is None:
        stream = storage.open(name, "rb")
        stream.seek(start)
        return stream
    from botocore.exceptions import ClientError

    try:
        return bucket.Object(_key(storage, name)).get(Range=f"bytes={start}-{end}")["Body"]
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in {"NoSuchKey", "404", "NotFound"}:
            raise FileNotFoundError(name) from None
        raise


def open_stored(storage: Storage, name: str) -> IO[bytes]:
    """A binary stream of a stored file, read as it is consumed. Raises
    FileNotFoundError if there is no such file."""
    bucket = _bucket(storage)
    if bucket is None:
        return storage.open(name, "rb")
    from botocore.exceptions import ClientError

    try:
        return bucket.Object(_key(storage, name)).get()["Body"]
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in {"NoSuchKey", "404", "NotFound"}:
            raise FileNotFoundError(name) from None
        raise


def read_stored(storage: Storage, name: str) -> bytes:
    stream = open_stored(storage, name)
    try:
        return stream.read()
    finally:
        stream.close()


def save_new(storage: Storage, name: str, path: Path) -> None:
    """Upload a local file under exactly `name`; refuse if the name is taken
    (a storage that does not overwrite hands back another name)."""
    with path.open("rb") as fh:
        stored = storage.save(name, File(fh, name=path.name))
    if stored != name:
        storage.delete(stored)
        raise FileExistsError(f"{name} already exists in the storage")


def copy_stored(storage: Storage, source: str, destination: str, fallback: Path) -> None:
    """Copy a stored file to a new name: inside the bucket on S3 (the bytes do
    not pass through this host), else by saving the local `fallback` copy."""
    bucket = _bucket(storage)
    if bucket is None:
        save_new(storage, destination, fallback)
        return
    # boto3's managed copy: one CopyObject, multipart for objects over 8 MB.
    bucket.Object(_key(storage, destination)).copy(
        {"Bucket": bucket.name, "Key": _key(storage, source)}
    )


def delete_names(storage: Storage, names: list[str]) -> None:
    """Delete files; on S3 a thousand per request instead of one."""
    bucket = _bucket(storage)
    if bucket is None:
        for name in names:
            storage.delete(name)
        return
    for start in range(0, len(names), 1000):
        keys = [{"Key": _key(storage, name)} for name in names[start : start + 1000]]
        response = bucket.delete_objects(Delete={"Objects": keys, "Quiet": True})
        if response.get("Errors"):
            first = response["Errors"][0]
            raise OSError(f"could not delete {first.get('Key')}: {first.get('Message')}")


def stored_sizes(storage: Storage, prefix: str) -> dict[str, int]:
    """Size in bytes of every file under a folder-like prefix, by name (one
    listing on S3 instead of a request per file)."""
    bucket = _bucket(storage)
    if bucket is None:
        return {name: storage.size(name) for name in list_names(storage, prefix)}
    root = _key(storage, prefix.rstrip("/")) + "/"
    strip = len(root) - len(prefix.rstrip("/")) - 1
    return {obj.key[strip:]: obj.size for obj in bucket.objects.filter(Prefix=root)}


def list_names(storage: Storage, prefix: str) -> list[str]:
    """Every file name under a folder-like prefix (recursively)."""
    bucket = _bucket(storage)
    prefix = prefix.rstrip("/")
    if bucket is not None:
        root = _key(storage, prefix) + "/"
        strip = len(root) - len(prefix) - 1  # the storage's location prefix
        return sorted(obj.key[strip:] for obj in bucket.objects.filter(Prefix=root))
    try:
        folders, files = storage.listdir(prefix)
    except FileNotFoundError:
        return []
    names = [f"{prefix}/{f}" for f in files]
    for folder in folders:
        names.extend(list_names(storage, f"{prefix}/{folder}"))
    return sorted(names)
