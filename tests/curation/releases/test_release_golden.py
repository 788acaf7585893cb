"""Issue 24 changed what an item is (content as parts) but not what an MRB
release holds: the record files of a fixed project are the same bytes as
before the change (digests taken on main at b75863e, before issue 24)."""

import hashlib
from pathlib import Path

import pytest
from django.conf import settings

from tests.curation.releases.test_releases import built, make_release_project

pytestmark = pytest.mark.django_db

# Files whose bytes depend on the build's time (manifest, card, provenance
# timestamps) are left out; every record, DPO line and image is in.
TIMED = {"manifest.json", "README.md", "provenance.jsonl"}
GOLDEN = "8c1930b613f0c0e2f8c050def2674838a59cb29b0b48f65266e15959f4aedf9d"


def test_mrb_release_records_are_the_bytes_they_were_before_parts(tmp_path):
    project = make_release_project(tmp_path, slug="golden")
    release = built(project)
    folder = Path(settings.MEDIA_ROOT) / release.folder
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        if rel in TIMED:
            continue
        digest.update(rel.encode() + b"\0" + path.read_bytes() + b"\0")
    assert digest.hexdigest() == GOLDEN
