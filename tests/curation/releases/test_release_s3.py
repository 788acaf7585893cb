"""End to end on S3-compatible object storage (moto's server on 127.0.0.1):
import with images, thumbnails, an annotator viewing the image through the
media view, a release built, published and downloaded with its checksum,
byte-identical rebuilds, and failed builds that leave nothing published.

The storage settings are the ones config/settings.py makes from the S3_*
variables (read in a fresh process), so these tests cover that configuration,
not a hand-written one. Nothing is read from or written to local media paths.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

import pytest
from django.core.files.base import ContentFile

from annotate.importing.service import import_items_from_paths
from annotate.models import ImageAsset, Item
from curation.models import Release, ReleaseStatus
from curation.releases import build, publishing
from curation.releases.build import build_release
from tests import s3_server
from tests.curation.releases.test_releases import (
    INCLUDED,
    apply_plan,
    new_release,
    write_dataset,
)
from tests.factories import make_member, png_bytes
from tests.fresh_process import run_django
from tests.s3_server import object_bytes, object_keys, s3_env

pytestmark = pytest.mark.django_db

PREFIX = "studio"

# The server, credentials and bucket fixtures (see tests/s3_server.py).
s3_endpoint, aws_env, bucket = s3_server.s3_endpoint, s3_server.aws_env, s3_server.bucket


@pytest.fixture
def s3_storages(s3_endpoint, bucket, settings, tmp_path):
    """Point STORAGES at the test's bucket, as the environment would."""
    result = run_django(
        "import json\nfrom django.conf import settings\nprint(json.dumps(settings.STORAGES))",
        data_dir=tmp_path / "child",
        **s3_env(s3_endpoint, bucket, S3_PREFIX=PREFIX),
    )
    assert result.returncode == 0, result.stderr
    settings.STORAGES = json.loads(result.stdout.strip().splitlines()[-1])
    settings.RELEASE_WORK_DIR = str(tmp_path / "release-work")
    assert publishing.release_storage().__class__.__name__ == "S3Storage"
    return s3_endpoint, bucket


def keys(s3, prefix=""):
    endpoint, name = s3
    return object_keys(endpoint, name, f"{PREFIX}/{prefix}")


def stored(s3, name) -> bytes:
    endpoint, bucket_name = s3
    return object_bytes(endpoint, bucket_name, f"{PREFIX}/{name}")


@pytest.fixture
def project(s3_storages, tmp_path, django_capture_on_commit_callbacks):
    from annotate.models import Project

    project = Project.objects.create(slug="rel", name="S3 release", seed=5)
    project.create_default_domains()
    source = tmp_path / "source"
    dataset = write_dataset(source)
    # One image large enough to need a real thumbnail (the others are 40x30).
    (source / "img" / "gc_1.png").write_bytes(png_bytes(size=(900, 600), color=(10, 120, 30)))
    # The thumbnail task is queued on commit (run inline here).
    with django_capture_on_commit_callbacks(execute=True):
        result = import_items_from_paths(project=project, dataset=dataset, images=source)
    assert result.created == 22
    apply_plan(project)
    return project


def test_import_stores_images_and_thumbnails_in_the_bucket(project, s3_storages, settings):
    assets = list(ImageAsset.objects.all())
    assert len(assets) == 21  # vqa_1 and vqa_2 share one image
    images = keys(s3_storages, "images/")
    assert images == sorted(f"{PREFIX}/{a.file}" for a in assets)
    for asset in assets:
        data = stored(s3_storages, asset.file)
        assert hashlib.sha256(data).hexdigest() == asset.sha256
    big = Item.objects.get(project=project, external_id="gc_1").image
    assert big.thumbnail == f"thumbs/{big.sha256[:2]}/{big.sha256}.webp"
    assert keys(s3_storages, "thumbs/") == [f"{PREFIX}/{big.thumbnail}"]
    small = Item.objects.get(project=project, external_id="gc_2").image
    assert small.thumbnail == small.file  # already thumbnail-sized
    # Nothing went to the local media folder.
    assert not Path(settings.MEDIA_ROOT).exists() or not any(Path(settings.MEDIA_ROOT).rglob("*.*"))


def test_an_annotator_sees_the_item_image_through_the_media_view(project, s3_storages, client):
    annotator = make_member(project, role="annotator")
    client.force_login(annotator)
    response = client.post(f"/p/{project.slug}/work/")
    assert response.status_code == 302
    page = client.get(response["Location"])
    assert page.status_code == 200
    item = Item.objects.get(assignments__annotator=annotator)
    url = item.image.url
    assert url == f"/media/{item.image.file}"  # the view, never a presigned bucket URL
    assert url in page.content.decode()
    image = client.get(url)
    assert image.status_code == 200
    assert image["Content-Type"] == "image/png"
    assert image["X-Content-Type-Options"] == "nosniff"
    assert "default-src 'none'" in image["Content-Security-Policy"]
    assert b"".join(image.streaming_content) == stored(s3_storages, item.image.file)
    big = Item.objects.get(project=project, external_id="gc_1").image
    thumb = client.get(big.thumbnail_url)
    assert thumb.status_code == 200 and thumb["Content-Type"] == "image/webp"
    assert b"".join(thumb.streaming_content) == stored(s3_storages, big.thumbnail)
    assert client.get("/media/images/00/" + "0" * 64 + ".png").status_code == 404
    client.logout()
    assert client.get(url).status_code == 302  # sign-in first


def release_files(s3, release) -> dict[str, bytes]:
    prefix = f"{PREFIX}/{release.folder}/"
    return {
        k[len(prefix) :]: stored(s3, k[len(PREFIX) + 1 :]) for k in keys(s3, release.folder + "/")
    }


def test_a_release_is_built_published_to_the_bucket_and_downloaded(
    project, s3_storages, client, settings
):
    release = build_release(release_id=new_release(project).pk)
    assert release.status == ReleaseStatus.READY, release.error
    assert release.folder == "releases/rel/v1.0"
    assert release.archive == "releases/rel/rel-v1.0.zip"
    archive = stored(s3_storages, release.archive)
    assert hashlib.sha256(archive).hexdigest() == release.sha256
    assert len(archive) == release.size_bytes
    files = release_files(s3_storages, release)
    records = json.loads(files["all_data.json"])
    assert {r["ID"] for r in records} == INCLUDED
    for record in records:  # every image is in the bucket, with the stored bytes
        item = Item.objects.get(project=project, external_id=record["ID"])
        assert files[record["Image"]] == stored(s3_storages, item.image.file)
    manifest = json.loads(files["manifest.json"])
    assert set(manifest["files"]) == set(files) - {"manifest.json"}
    for name, info in manifest["files"].items():
        assert hashlib.sha256(files[name]).hexdigest() == info["sha256"], name
        assert len(files[name]) == info["bytes"], name
    # The zip holds the same files as the published folder.
    with zipfile.ZipFile(io.BytesIO(archive)) as zf:
        zipped = {n.split("/", 1)[1]: zf.read(n) for n in zf.namelist() if not n.endswith("/")}
    assert zipped == files
    # No staging objects and no local work folders remain; nothing was local.
    assert keys(s3_storages, "releases/.building/") == []
    assert not any(p.is_file() for p in Path(settings.RELEASE_WORK_DIR).rglob("*"))
    assert not (Path(settings.MEDIA_ROOT) / "releases").exists()

    curator = make_member(project, role="curator")
    client.force_login(curator)
    response = client.get(f"/p/{project.slug}/releases/{release.pk}/download/")
    assert response.status_code == 200
    body = b"".join(response.streaming_content)
    assert body == archive
    assert response["X-Content-SHA256"] == release.sha256 == hashlib.sha256(body).hexdigest()
    assert response["Content-Length"] == str(len(body))
    assert 'filename="rel-v1.0.zip"' in response["Content-Disposition"]

    # Evaluations read the release's records from the bucket too.
    from curation.evaluation.service import evaluate_upload

    lines = "\n".join(json.dumps({"ID": r["ID"], "Label": "A"}) for r in records).encode()
    evaluation = evaluate_upload(
        release=release, name="always A", predictions=lines, filename="p.jsonl", user=curator
    )
    overall = max(evaluation.report["official"]["groups"], key=lambda g: g["total"])
    assert overall["total"] == len(INCLUDED)
    assert overall["correct"] == sum(r["Better"] == "Output1" for r in records)


def test_the_same_state_and_seed_rebuild_byte_identical_objects(project, s3_storages):
    release = build_release(release_id=new_release(project).pk)
    files = release_files(s3_storages, release)
    archive = stored(s3_storages, release.archive)
    # The build died after publishing, say: failed, and a retry rebuilds over
    # the unrecorded objects.
    Release.objects.filter(pk=release.pk).update(status=ReleaseStatus.FAILED)
    again = build_release(release_id=release.pk)
    assert again.status == ReleaseStatus.READY
    assert release_files(s3_storages, again) == files
    assert stored(s3_storages, again.archive) == archive
    assert again.sha256 == release.sha256


@pytest.mark.parametrize("stage", ["upload", "checksum", "copy", "record"])
def test_a_failed_build_leaves_no_objects_published(project, s3_storages, monkeypatch, stage):
    before = keys(s3_storages)
    if stage == "upload":  # the connection drops half-way through the upload
        real = publishing.save_new
        calls = []

        def flaky(storage, name, path):
            calls.append(name)
            if len(calls) == 10:
                raise ConnectionError("connection reset")
            real(storage, name, path)

        monkeypatch.setattr(publishing, "save_new", flaky)
    elif stage == "checksum":  # what arrived is not what was written
        monkeypatch.setattr(build.exporter, "sha256_file", lambda path: "0" * 64)
    elif stage == "copy":  # copying to the final names fails part-way
        real_copy = publishing.copy_stored
        copies = []

        def flaky_copy(storage, source, destination, fallback):
            copies.append(destination)
            if len(copies) == 5:
                raise ConnectionError("connection reset")
            real_copy(storage, source, destination, fallback)

        monkeypatch.setattr(publishing, "copy_stored", flaky_copy)
    else:  # the transaction fails after the copies (the ready row never commits)
        real_publish = publishing.BucketTarget.publish

        def publish_then_fail(self):
            real_publish(self)
            raise RuntimeError("database went away at commit")

        monkeypatch.setattr(publishing.BucketTarget, "publish", publish_then_fail)

    release = new_release(project)
    with pytest.raises(Exception):  # noqa: B017 - each stage raises its own error
        build_release(release_id=release.pk)
    release.refresh_from_db()
    assert release.status == ReleaseStatus.FAILED and release.error
    assert keys(s3_storages) == before  # nothing under releases/, staging removed
    assert keys(s3_storages, "releases/") == []
    if stage != "copy":
        return
    monkeypatch.undo()
    # After the fault the retry publishes the full release.
    again = build_release(release_id=release.pk)
    assert again.status == ReleaseStatus.READY
    assert hashlib.sha256(stored(s3_storages, again.archive)).hexdigest() == again.sha256


def test_an_error_after_the_ready_row_committed_keeps_the_published_files(
    project, s3_storages, monkeypatch
):
    real_record = build._record_and_publish

    def record_then_fail(*args):
        real_record(*args)
        raise RuntimeError("lost the connection after the commit")

    monkeypatch.setattr(build, "_record_and_publish", record_then_fail)
    release = new_release(project)
    with pytest.raises(RuntimeError):
        build_release(release_id=release.pk)
    release.refresh_from_db()
    assert release.status == ReleaseStatus.READY  # committed: it stays ready
    archive = stored(s3_storages, release.archive)
    assert hashlib.sha256(archive).hexdigest() == release.sha256
    assert json.loads(release_files(s3_storages, release)["all_data.json"])


def test_a_ready_release_is_never_overwritten(project, s3_storages):
    release = build_release(release_id=new_release(project).pk)
    archive = stored(s3_storages, release.archive)
    # Building a ready release again does nothing (releases are immutable) …
    assert build_release(release_id=release.pk).sha256 == release.sha256
    # … and the releases storage does not write over a published name.
    storage = publishing.release_storage()
    name = storage.save(release.archive, ContentFile(b"junk"))
    assert name != release.archive  # stored beside it, under another name
    storage.delete(name)
    assert stored(s3_storages, release.archive) == archive
