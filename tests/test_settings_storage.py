"""config/settings.py, storage part: the local file system by default; an
S3-compatible bucket when STORAGE_BACKEND=s3 or S3_BUCKET is set; incomplete
or wrong S3 settings stop the process naming the variable. Each case starts a
fresh interpreter (settings are read once, at import)."""

from __future__ import annotations

import json

import pytest

from tests import s3_server
from tests.fresh_process import SETTINGS_VARIABLES, run_django
from tests.s3_server import object_bytes, s3_env

# The server, credentials and bucket fixtures (see tests/s3_server.py).
s3_endpoint, aws_env, bucket = s3_server.s3_endpoint, s3_server.aws_env, s3_server.bucket

REPORT = """
import json
from django.conf import settings
print(json.dumps({"storages": settings.STORAGES, "work_dir": settings.RELEASE_WORK_DIR}))
"""


def report(tmp_path, code=REPORT, **env) -> dict:
    result = run_django(code, data_dir=tmp_path, **env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def refused(tmp_path, **env) -> str:
    result = run_django("print('started')", data_dir=tmp_path, **env)
    assert result.returncode != 0, result.stdout
    assert "ImproperlyConfigured" in result.stderr
    return result.stderr.strip().splitlines()[-1]


def test_every_storage_variable_is_isolated_in_the_child():
    assert {
        "STORAGE_BACKEND",
        "S3_BUCKET",
        "S3_ENDPOINT_URL",
        "S3_REGION",
        "S3_ACCESS_KEY_ID",
        "S3_SECRET_ACCESS_KEY",
        "S3_PREFIX",
        "S3_ADDRESSING_STYLE",
        "RELEASE_WORK_DIR",
    } <= SETTINGS_VARIABLES


def test_the_local_file_system_is_the_default_for_images_and_releases(tmp_path):
    storages = report(tmp_path)["storages"]
    local = "django.core.files.storage.FileSystemStorage"
    assert storages["default"] == {"BACKEND": local}
    assert storages["releases"] == {"BACKEND": local}


def test_a_bucket_alone_selects_s3_with_every_option(tmp_path):
    env = {
        "S3_BUCKET": "studio",
        "S3_ENDPOINT_URL": "http://127.0.0.1:9000",
        "S3_REGION": "eu-west-1",
        "S3_ACCESS_KEY_ID": "AKID",
        "S3_SECRET_ACCESS_KEY": "secret",
        "S3_PREFIX": "/triplet/prod/",
        "S3_ADDRESSING_STYLE": "path",
        "RELEASE_WORK_DIR": str(tmp_path / "work"),
    }
    got = report(tmp_path, **env)
    images, releases = got["storages"]["default"], got["storages"]["releases"]
    assert images["BACKEND"] == releases["BACKEND"] == "storages.backends.s3.S3Storage"
    common = {
        "bucket_name": "studio",
        "endpoint_url": "http://127.0.0.1:9000",
        "region_name": "eu-west-1",
        "access_key": "AKID",
        "secret_key": "secret",
        "location": "triplet/prod",
        "addressing_style": "path",
        "default_acl": None,
    }
    assert images["OPTIONS"].items() >= common.items()
    assert releases["OPTIONS"].items() >= common.items()
    # images are content-addressed (a rewrite is the same bytes); releases never overwrite
    assert images["OPTIONS"]["file_overwrite"] is True
    assert releases["OPTIONS"]["file_overwrite"] is False
    assert got["work_dir"] == str(tmp_path / "work")


def test_without_keys_boto3_chooses_the_credentials(tmp_path):
    options = report(tmp_path, STORAGE_BACKEND="s3", S3_BUCKET="studio")["storages"]["default"][
        "OPTIONS"
    ]
    assert options["access_key"] is None and options["secret_key"] is None
    assert options["endpoint_url"] is None and options["location"] == ""


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"STORAGE_BACKEND": "s3"}, "STORAGE_BACKEND=s3 needs S3_BUCKET"),
        ({"STORAGE_BACKEND": "gcs", "S3_BUCKET": "b"}, "STORAGE_BACKEND='gcs'"),
        ({"S3_BUCKET": "b", "S3_ACCESS_KEY_ID": "AKID"}, "S3_SECRET_ACCESS_KEY"),
        ({"S3_BUCKET": "b", "S3_SECRET_ACCESS_KEY": "s"}, "S3_ACCESS_KEY_ID"),
        ({"S3_BUCKET": "b", "S3_ENDPOINT_URL": "127.0.0.1:9000"}, "S3_ENDPOINT_URL"),
        ({"S3_BUCKET": "b", "S3_ADDRESSING_STYLE": "dns"}, "S3_ADDRESSING_STYLE"),
    ],
)
def test_incomplete_or_wrong_s3_settings_stop_the_process(tmp_path, env, message):
    assert message in refused(tmp_path, **env)


ROUND_TRIP = """
import json, tempfile
from pathlib import Path
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage, storages
from common.storage import list_names, local_path, read_stored, save_new
saved = default_storage.save("images/ab/abc.png", ContentFile(b"image bytes"))
again = default_storage.save("images/ab/abc.png", ContentFile(b"image bytes"))
source = Path(tempfile.mkdtemp()) / "release.txt"
source.write_bytes(b"release bytes")
save_new(storages["releases"], "releases/p/v1/all_data.json", source)
try:
    save_new(storages["releases"], "releases/p/v1/all_data.json", source)
    overwrite = "allowed"
except FileExistsError:
    overwrite = "refused"
print(json.dumps({
    "saved": [saved, again],
    "read": read_stored(default_storage, saved).decode(),
    "local": local_path(default_storage, saved) is None,
    "listed": list_names(storages["releases"], "releases/p"),
    "overwrite": overwrite,
}))
"""


def test_the_configured_bucket_is_used_for_images_and_releases(tmp_path, s3_endpoint, bucket):
    got = report(
        tmp_path,
        ROUND_TRIP,
        **s3_env(s3_endpoint, bucket, S3_PREFIX="site-a", MEDIA_ROOT=str(tmp_path / "media")),
    )
    assert got == {
        "saved": ["images/ab/abc.png", "images/ab/abc.png"],  # content-addressed: same name
        "read": "image bytes",
        "local": True,
        "listed": ["releases/p/v1/all_data.json"],
        "overwrite": "refused",
    }
    # Under the prefix, in the bucket, and nothing on the local disk.
    assert object_bytes(s3_endpoint, bucket, "site-a/images/ab/abc.png") == b"image bytes"
    assert object_bytes(s3_endpoint, bucket, "site-a/releases/p/v1/all_data.json") == (
        b"release bytes"
    )
    assert not (tmp_path / "media").exists() or not any((tmp_path / "media").rglob("*.*"))
