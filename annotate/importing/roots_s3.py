"""Import roots on a bucket: ``s3://bucket/prefix`` entries of IMPORT_ROOTS.

A server path ``s3://bucket/key`` is confined to a root by its key: no
``..`` part (S3 keys are plain names, but what a path means must not depend
on who reads it), and the key is under the root's prefix in the root's
bucket. The dataset object is downloaded to a temporary file (streamed, never
whole in memory); its images are read from the bucket one object at a time,
by the same checks as images from a folder. The bucket is reached with the
site's S3 settings when it uses S3 storage (S3_ENDPOINT_URL, S3_REGION and
the keys), else with boto3's own chain (AWS_* variables, instance role).
"""

from __future__ import annotations

import posixpath
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from django.conf import settings

from annotate.importing.records import ImportFailed, ImportProblem, brief
from annotate.importing.sources import ImageSource

SCHEME = "s3://"


def split(url: str) -> tuple[str, str]:
    """(bucket, key) of an s3:// URL (the key without a trailing slash)."""
    bucket, _, key = url[len(SCHEME) :].partition("/")
    return bucket, key.strip("/")


def _refuse(url: str, message: str) -> ImportFailed:
    return ImportFailed([ImportProblem(brief(url, 200, quote=False), message)])


def confined(url: str, roots: list[str]) -> tuple[str, str]:
    """(bucket, key) of a server path under one of the s3:// roots."""
    bucket, key = split(url)
    if not bucket or not key or "\x00" in key:
        raise _refuse(url, "give an s3://bucket/key path under an import root")
    if ".." in PurePosixPath(key).parts or key != posixpath.normpath(key):
        raise _refuse(url, "a server path may not contain '..' or empty parts")
    for root in roots:
        root_bucket, prefix = split(root)
        if bucket == root_bucket and (not prefix or key == prefix or key.startswith(prefix + "/")):
            return bucket, key
    raise _refuse(url, "is not under an import root")


def client():
    import boto3
    from botocore.config import Config

    options = {
        "endpoint_url": getattr(settings, "S3_ENDPOINT_URL", "") or None,
        "region_name": None,
        "config": Config(max_pool_connections=16),
    }
    storage = settings.STORAGES.get("default", {}).get("OPTIONS", {})
    if storage.get("access_key"):
        options["aws_access_key_id"] = storage["access_key"]
        options["aws_secret_access_key"] = storage.get("secret_key")
    if storage.get("region_name"):
        options["region_name"] = storage["region_name"]
    return boto3.client("s3", **options)


def _missing(exc) -> bool:
    return exc.response.get("Error", {}).get("Code") in {"NoSuchKey", "404", "NotFound"}


class BucketImageSource(ImageSource):
    """Images under a key prefix of a bucket (a ref is a key below it)."""

    def __init__(self, bucket: str, prefix: str):
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self.label = f"{SCHEME}{bucket}/{self.prefix}"
        self.s3 = client()  # boto3 clients may be shared between threads

    def read(self, ref: str, max_bytes: int) -> bytes:
        from botocore.exceptions import ClientError

        key = posixpath.join(self.prefix, ref) if self.prefix else ref
        try:
            body = self.s3.get_object(Bucket=self.bucket, Key=key)
        except ClientError as exc:
            if _missing(exc):
                raise FileNotFoundError(f"'{ref}' not found under {self.label}") from None
            raise OSError(f"cannot be read from {self.label} ({exc})") from None
        if body["ContentLength"] > max_bytes:
            body["Body"].close()
            raise ValueError(
                f"image is {body['ContentLength']} bytes, more than the limit of {max_bytes}"
            )
        return body["Body"].read()


@contextmanager
def downloaded(bucket: str, key: str) -> Iterator[Path]:
    """The object, streamed to a temporary file named like it."""
    from botocore.exceptions import ClientError

    with tempfile.TemporaryDirectory(prefix="import-s3-") as tmp:
        path = Path(tmp) / posixpath.basename(key)
        try:
            body = client().get_object(Bucket=bucket, Key=key)["Body"]
            with path.open("wb") as out:
                shutil.copyfileobj(body, out, 1 << 20)
        except ClientError as exc:
            url = f"{SCHEME}{bucket}/{key}"
            if _missing(exc):
                raise _refuse(url, "not found under the import roots") from None
            raise _refuse(url, f"cannot be read ({exc})") from None
        yield path


def import_bucket_items(*, project, dataset: str, images: str | None, roots: list[str], **options):
    """import_server_items for s3:// paths."""
    from annotate.importing.service import import_items_from_paths

    bucket, key = confined(dataset, roots)
    if images:
        if not images.startswith(SCHEME):
            raise _refuse(images, "with an s3:// dataset, give the images as s3:// too")
        image_bucket, image_prefix = confined(images, roots)
    else:
        image_bucket, image_prefix = bucket, posixpath.dirname(key)
    source = BucketImageSource(image_bucket, image_prefix)
    with downloaded(bucket, key) as path:
        if path.suffix.lower() == ".zip":
            return import_items_from_paths(project=project, dataset=path, **options)
        # The images are in the bucket: neither a folder nor a zip on disk.
        return import_items_from_paths(
            project=project, dataset=path, image_source=source, **options
        )
