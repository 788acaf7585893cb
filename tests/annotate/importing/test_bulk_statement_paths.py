"""common.bulk's raw statements (COPY, INSERT … SELECT unnest … ON CONFLICT
DO NOTHING, the temporary table's INSERT … ON CONFLICT DO UPDATE) leave the
same rows as bulk_create, their ORM twin, on random rows.

Both run on PostgreSQL (the raw path with USE_COPY on, bulk_create with it
off), from the same random values: text with tabs, newlines, backslashes
and quotes (COPY's escapes), JSON of any shape, NULLs, keys already taken.
The column lists of all three statements come from the models' fields
(common.bulk._filled): every field the caller leaves out gets its default,
as bulk_create gives it.
"""

from __future__ import annotations

from unittest import mock

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotate.models import ImageAsset, Item
from common import bulk
from curation.models import Verdict
from tests.conftest import requires_postgres
from tests.factories import make_project

pytestmark = [requires_postgres, pytest.mark.django_db]

TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=30)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
ITEMS = st.lists(
    st.tuples(TEXT, TEXT, TEXT, st.dictionaries(TEXT, JSON, max_size=3), st.integers(1, 9)),
    min_size=1,
    max_size=8,
    unique_by=lambda row: row[0],
)
HEX = st.text("0123456789abcdef", min_size=64, max_size=64)
IMAGES = st.lists(st.tuples(HEX, TEXT.filter(lambda t: len(t) <= 200), st.integers(1, 4096)))
EXAMPLES = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _both(write):
    """What `write()` leaves, read by `write` itself, through COPY and then
    through bulk_create, each rolled back."""
    results = []
    for use_copy in (True, False):
        with transaction.atomic(), mock.patch.object(bulk, "USE_COPY", use_copy):
            assert bulk.copy_available() is use_copy
            results.append(write())
            transaction.set_rollback(True)
    return results


@EXAMPLES
@given(rows=ITEMS)
def test_insert_rows_writes_what_bulk_create_writes(rows):
    names = ("project_id", "domain_id", "external_id", "prompt", "response_1", "meta")
    names += ("votes_needed",)

    def write():
        project = make_project(slug="bulk")
        domain = project.domains.first()
        ids = bulk.insert_rows(
            Item, names, [(project.pk, domain.pk, *row) for row in rows], return_ids=True
        )
        stored = Item.objects.in_bulk(ids)
        skip = {"id", "project_id", "domain_id", "created_at", "updated_at"}
        return [
            {f.attname: getattr(stored[pk], f.attname) for f in Item._meta.concrete_fields}
            | dict.fromkeys(skip)
            for pk in ids
        ]

    copied, created = _both(write)
    assert copied == created
    assert [r["external_id"] for r in copied] == [row[0] for row in rows]
    assert [r["meta"] for r in copied] == [row[3] for row in rows]


@EXAMPLES
@given(taken=st.sets(st.integers(0, 5)), asked=st.lists(st.integers(0, 5)))
def test_insert_per_key_writes_what_bulk_create_ignoring_conflicts_writes(taken, asked):
    def write():
        project = make_project(slug="bulk")
        domain = project.domains.first()
        items = [
            Item.objects.create(project=project, domain=domain, external_id=str(n), votes_needed=3)
            for n in range(6)
        ]
        for n in sorted(taken):
            Verdict.objects.create(item=items[n], project=project, reason="kept")
        keys = list(dict.fromkeys(items[n].pk for n in asked))
        bulk.insert_per_key(Verdict, "item_id", keys, {"project_id": project.pk})
        return sorted(
            (int(v.item.external_id), v.status, v.reason, v.version)
            for v in Verdict.objects.select_related("item").filter(project=project)
        )

    copied, created = _both(write)
    assert copied == created
    assert {row[0] for row in copied} == taken | set(asked)


@EXAMPLES
@given(existing=IMAGES, rows=IMAGES)
def test_insert_or_keep_writes_what_bulk_create_updating_conflicts_writes(existing, rows):
    names = ("sha256", "file", "format", "width", "height", "size_bytes")

    def write():
        for sha, file, size in {sha: (sha, f, s) for sha, f, s in existing}.values():
            ImageAsset.objects.create(
                sha256=sha, file=file, format="OLD", width=1, height=1, size_bytes=size
            )
        new = list({sha: (sha, f, "PNG", 2, 3, s) for sha, f, s in rows}.values())
        ids = bulk.insert_or_keep(ImageAsset, names, new, "sha256")
        stored = ImageAsset.objects.in_bulk(ids)
        return sorted(
            ImageAsset.objects.values_list("sha256", "file", "format", "size_bytes", "thumbnail")
        ), [stored[pk].sha256 for pk in ids]

    copied, created = _both(write)
    assert copied == created
    assert copied[1] == list(dict.fromkeys(sha for sha, _, _ in rows))
