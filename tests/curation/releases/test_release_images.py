"""curation.releases.build._copy_image: how a release gets its image files. No database."""

import os

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from curation.releases import build, exporter

DATA = b"\x89PNG\r\n\x1a\n not really an image, but bytes all the same"


@pytest.fixture
def item():
    name = default_storage.save("images/ab/abcdef.png", ContentFile(DATA))
    return exporter.ExportItem(
        external_id="vqa_1",
        domain="vqa",
        category="vqa",
        prompt="?",
        image_path="images/vqa/1.png",
        image_sha256="ab" * 32,
        image_ext="png",
        response_1="a",
        response_2="b",
        chosen="1",
        image_source=name,
    )


def test_a_local_storage_image_is_hard_linked(item, tmp_path):
    destination = tmp_path / "release" / "1.png"
    destination.parent.mkdir()
    build._copy_image(item, destination)
    assert destination.read_bytes() == DATA
    assert os.path.samefile(destination, default_storage.path(item.image_source))
    # Removing the release's name leaves the stored image intact.
    destination.unlink()
    assert default_storage.open(item.image_source).read() == DATA


def test_without_hard_links_the_image_is_copied(item, tmp_path, monkeypatch):
    def no_link(*args):
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(build.os, "link", no_link)
    destination = tmp_path / "1.png"
    build._copy_image(item, destination)
    assert destination.read_bytes() == DATA
    assert not os.path.samefile(destination, default_storage.path(item.image_source))


def test_a_storage_without_paths_is_streamed(item, tmp_path, monkeypatch):
    class Remote:  # like S3: open() works, path() does not
        def open(self, name, mode="rb"):
            return default_storage.open(name, mode)

        def path(self, name):
            raise NotImplementedError("This backend doesn't support absolute paths.")

    monkeypatch.setattr(build, "default_storage", Remote())
    destination = tmp_path / "1.png"
    build._copy_image(item, destination)
    assert destination.read_bytes() == DATA
