"""A lean install (`pip install -e .`, no `parquet` extra) still builds whole
releases: everything but the Parquet copies, and the dataset card does not
mention them."""

import json

import pytest

from curation.releases import parquet, publishing
from tests.curation.releases.test_releases import built, make_release_project

pytestmark = pytest.mark.django_db


def test_a_release_without_pyarrow_has_every_file_but_the_parquet_copies(tmp_path, monkeypatch):
    monkeypatch.setattr(parquet, "available", lambda: False)
    project = make_release_project(tmp_path)
    release = built(project)
    folder = publishing.releases_root() / release.folder.removeprefix("releases/")
    if not folder.exists():
        folder = next((publishing.releases_root() / project.slug).glob("*/"))
    assert (folder / "all_data.json").is_file()
    assert not (folder / "parquet").exists()
    manifest = json.loads((folder / "manifest.json").read_text())
    assert not any("parquet" in name for name in json.dumps(manifest).split('"'))
    # The card names no parquet/ or trl/ file and says why they are missing.
    card = (folder / "README.md").read_text()
    assert "parquet/" not in card.split("---")[1] and "trl" not in card.split("---")[1]
    assert "has no `parquet/` and no `trl/` copies" in card


def test_pyarrow_is_found_where_it_is_installed():
    pytest.importorskip("pyarrow")
    assert parquet.available()
