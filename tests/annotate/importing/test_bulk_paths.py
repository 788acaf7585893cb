"""common.bulk: an import writes the same rows through PostgreSQL's COPY as
through bulk_create (the path every other database takes), and the
conflict rules of the two helpers that replace bulk_create's
update_conflicts / ignore_conflicts hold on both paths.

On PostgreSQL the tests run both paths (COPY, then bulk_create with
USE_COPY off); on SQLite only bulk_create exists, and they check that."""

from __future__ import annotations

import pytest
from django.db import connection

from annotate.importing.service import import_items_from_paths
from annotate.models import ImageAsset, Item, ItemPart
from common import bulk
from curation.models import Verdict
from tests.annotate.importing.test_import_parquet import IMAGE, vl_rewardbench, write_parquet
from tests.factories import make_item, make_project, png_bytes

pytestmark = pytest.mark.django_db

POSTGRES = connection.vendor == "postgresql"
PATHS = [True, False] if POSTGRES else [False]


def _item_rows(project):
    """Every stored column of the project's items, parts and verdicts that
    does not depend on when or in which project they were written."""
    skip = {"id", "project", "created_at", "updated_at"}
    names = [f.attname for f in Item._meta.concrete_fields if f.name not in skip]
    items = {}
    for item in Item.objects.filter(project=project).select_related("domain", "image"):
        row = {name: getattr(item, name) for name in names}
        row["domain_id"] = item.domain.slug
        row["image_id"] = item.image.sha256
        row["parts"] = [
            (
                p.slot,
                p.position,
                p.kind,
                p.text,
                p.image.sha256 if p.image else None,
                p.source_path,
                p.html,
                p.rendered_version,
            )
            for p in ItemPart.objects.filter(item=item).select_related("image")
        ]
        verdict = Verdict.objects.get(item=item)
        row["verdict"] = {
            f.attname: getattr(verdict, f.attname)
            for f in Verdict._meta.concrete_fields
            if f.name not in {"id", "item", "project", "updated_at"}
        }
        items[item.external_id] = row
    return items


def _mixed_parquet(tmp_path):
    """Rows with text that COPY's text format must escape, non-ASCII, nested
    source fields and a shared image."""
    shared = png_bytes(color=(1, 2, 3))
    return write_parquet(
        tmp_path / "mixed.parquet",
        {
            "id": ["tab\there", "new\nline", "back\\slash", "ünïcødé ✓"],
            "prompt": ["a\tb", "c\r\nd", "\\N", "null \x01 byte-free"],
            "chosen": ["x" * 5000, " \\t ", "y", "z"],
            "rejected": ["r1", "r2\n\n- list", "r3", "r4 $x^2$"],
            "image": [
                {"bytes": shared, "path": "a.png"},
                {"bytes": png_bytes(color=(9, 9, 9)), "path": "b.png"},
                {"bytes": shared, "path": "c.png"},
                {"bytes": png_bytes(color=(7, 7, 7)), "path": None},
            ],
            "note": ["\ttab", None, 'quote " and \\', "{}"],
            "scores": [[1, 2], [], None, [3]],
        },
        {"image": IMAGE},
    )


@pytest.mark.parametrize("use_copy", PATHS)
def test_the_import_writes_the_same_rows_either_way(tmp_path, monkeypatch, use_copy):
    datasets = [vl_rewardbench(tmp_path, rows=6), _mixed_parquet(tmp_path)]
    reference = {}
    for dataset in datasets:
        project = make_project()
        import_items_from_paths(project=project, dataset=dataset, domain="reasoning")
        reference[dataset] = _item_rows(project)
    monkeypatch.setattr(bulk, "USE_COPY", use_copy)
    assert bulk.copy_available() is (use_copy and POSTGRES)
    for dataset in datasets:
        project = make_project()
        result = import_items_from_paths(project=project, dataset=dataset, domain="reasoning")
        assert result.created == len(reference[dataset])
        assert result.item_ids == sorted(result.item_ids)  # file order
        assert _item_rows(project) == reference[dataset]
        # The re-import changes nothing, whichever path wrote the rows.
        again = import_items_from_paths(project=project, dataset=dataset, domain="reasoning")
        assert (again.created, again.unchanged) == (0, len(reference[dataset]))


@pytest.mark.parametrize("use_copy", PATHS)
def test_insert_rows_returns_ids_in_row_order_and_fills_defaults(monkeypatch, use_copy):
    monkeypatch.setattr(bulk, "USE_COPY", use_copy)
    item = make_item()
    ids = bulk.insert_rows(
        ItemPart,
        ("item_id", "slot", "position", "kind", "text"),
        [(item.pk, "response_1", n, "text", f"part {n}") for n in range(5, 8)],
        return_ids=True,
    )
    parts = ItemPart.objects.in_bulk(ids)
    assert [parts[pk].position for pk in ids] == [5, 6, 7]
    assert [(parts[pk].html, parts[pk].rendered_version, parts[pk].image_id) for pk in ids] == [
        ("", 0, None)
    ] * 3


@pytest.mark.parametrize("use_copy", PATHS)
def test_insert_or_keep_keeps_an_existing_row_and_returns_its_id(monkeypatch, use_copy):
    monkeypatch.setattr(bulk, "USE_COPY", use_copy)
    old = ImageAsset.objects.create(
        sha256="a" * 64, file="images/old.png", format="PNG", width=1, height=1, size_bytes=1
    )
    fields = ("sha256", "file", "format", "width", "height", "size_bytes")
    ids = bulk.insert_or_keep(
        ImageAsset,
        fields,
        [("b" * 64, "images/b.png", "PNG", 2, 2, 2), ("a" * 64, "images/new.png", "JPEG", 3, 3, 3)],
        "sha256",
    )
    assert ids[1] == old.pk
    old.refresh_from_db()
    assert (old.file, old.format, old.width) == ("images/old.png", "PNG", 1)
    assert ImageAsset.objects.get(pk=ids[0]).file == "images/b.png"
    # Twice in one transaction (the temporary table is dropped after use).
    assert bulk.insert_or_keep(ImageAsset, fields, [("c" * 64, "c", "PNG", 1, 1, 1)], "sha256")


@pytest.mark.parametrize("use_copy", PATHS)
def test_insert_per_key_skips_keys_that_have_their_row(monkeypatch, use_copy):
    monkeypatch.setattr(bulk, "USE_COPY", use_copy)
    first, second = make_item(), make_item()
    Verdict.objects.filter(item__in=[first, second]).delete()
    Verdict.objects.create(item=first, project=first.project, reason="kept")
    bulk.insert_per_key(Verdict, "item_id", [first.pk, second.pk], {"project_id": first.project_id})
    assert Verdict.objects.get(item=first).reason == "kept"
    made = Verdict.objects.get(item=second)
    assert (made.project_id, made.status, made.version) == (
        first.project_id,
        Verdict._meta.get_field("status").get_default(),
        0,
    )
