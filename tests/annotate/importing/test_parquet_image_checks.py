"""A parquet import checks its row images in threads as it reads the rows
(hfparquet.RowImages with limits), each image hashed once: the problems
and the stored images are exactly those of checking them afterwards (the
spool without limits, as every other source is checked)."""

from __future__ import annotations

import pytest

from annotate.importing import hfparquet
from annotate.importing.records import ImportFailed
from annotate.importing.service import import_items_from_paths
from annotate.models import Item
from tests.annotate.importing.test_import_parquet import IMAGE, write_parquet
from tests.factories import make_project, png_bytes

pytestmark = pytest.mark.django_db


def _rows(tmp_path, images):
    n = len(images)
    return write_parquet(
        tmp_path / "rows.parquet",
        {
            "id": [f"r{i}" for i in range(n)],
            "prompt": ["p"] * n,
            "chosen": ["a"] * n,
            "rejected": ["b"] * n,
            "image": [{"bytes": data, "path": path} for data, path in images],
        },
        {"image": IMAGE},
    )


def _import_both_ways(tmp_path, monkeypatch, images):
    """(outcome with checks while reading, outcome with checks afterwards);
    an outcome is the problems' text or the stored items and images."""
    dataset = _rows(tmp_path, images)
    calls = []
    check_batch = hfparquet._check_batch
    monkeypatch.setattr(
        hfparquet, "_check_batch", lambda *a: calls.append(len(a[1])) or check_batch(*a)
    )
    outcomes = []
    real = hfparquet.RowImages
    for ahead in (True, False):
        if not ahead:
            monkeypatch.setattr(
                hfparquet, "RowImages", lambda label, fallback, limits: real(label, fallback)
            )
        project = make_project()
        try:
            import_items_from_paths(project=project, dataset=dataset, domain="reasoning")
        except ImportFailed as exc:
            outcomes.append(str(exc))
            continue
        outcomes.append(
            sorted(
                Item.objects.filter(project=project).values_list(
                    "external_id", "image_path", "image__sha256", "image__width", "image__format"
                )
            )
        )
    return outcomes, calls


def test_problems_are_the_same_when_images_are_checked_while_reading(
    tmp_path, monkeypatch, settings
):
    settings.IMAGE_MAX_BYTES = 2_000
    good = png_bytes()
    big = png_bytes(size=(300, 300), fmt="BMP")  # over the byte limit (and not allowed)
    images = [
        (good, "ok.png"),
        (good[: len(good) // 2], "truncated.png"),
        (b"not an image at all", "text.png"),
        (big, "big.bmp"),
        (png_bytes(fmt="GIF"), None),
        (png_bytes(color=(1, 1, 1), fmt="JPEG")[:-200], "cut.jpg"),
    ]
    (ahead, after), calls = _import_both_ways(tmp_path, monkeypatch, images)
    assert sum(calls) == len(images)  # each distinct image checked once, ahead
    assert ahead == after
    assert "truncated.png" in ahead and "text.png" in ahead
    assert "more than the limit of 2000" in ahead


def test_stored_images_are_the_same_when_checked_while_reading(tmp_path, monkeypatch):
    shared = png_bytes(color=(5, 6, 7))
    images = [(shared, "a.png"), (png_bytes(fmt="JPEG"), "b.jpg"), (shared, "c.png")]
    (ahead, after), calls = _import_both_ways(tmp_path, monkeypatch, images)
    assert sum(calls) == 2  # the shared bytes once
    assert ahead == after
    assert [row[0] for row in ahead] == ["r0", "r1", "r2"]
    assert ahead[0][2] == ahead[2][2]  # one image, hashed once, for both rows
