"""Releases and mixes read an item's content from its parts (issue 32 item
1): curation.releases.content.item_contents, one query per chunk, flattened
by annotate's one rule; the Item's flat columns are not what they write."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotate.models import Item, Task, derive_item_text, image_part, text_part, write_item_content
from annotate.models.parts import derived_columns, parts_by_slot
from curation.releases.content import item_contents
from tests.curation.releases.test_exporter import check_release_folder
from tests.curation.releases.test_releases import (
    INCLUDED,
    built,
    make_release_project,
    media,
)
from tests.factories import make_image, make_item, make_project

pytestmark = pytest.mark.django_db


def test_item_contents_equal_the_derived_columns_in_one_query():
    project = make_project(task=Task.BEST_OF_N)
    pair = make_item(project=project)
    four = make_item(project=project)
    image = make_image()
    write_item_content(
        four,
        [text_part("Which one?"), image_part(image.pk, "src/q.png"), text_part("Think.")],
        [[text_part(f"R{k}")] for k in range(1, 5)],
    )
    with CaptureQueriesContext(connection) as queries:
        contents = item_contents([pair.pk, four.pk])
    assert len(queries) == 1
    for item in (pair, four):
        columns = derived_columns(parts_by_slot(item, html=False))
        got = contents[item.pk]
        assert (got.prompt, got.response_1, got.response_2, got.image_path) == (
            columns["prompt"],
            columns["response_1"],
            columns["response_2"],
            columns["image_path"],
        )
    pair.refresh_from_db()
    assert (contents[pair.pk].image_sha256, contents[pair.pk].image_file) == (
        pair.image.sha256,
        pair.image.file,
    )
    assert contents[four.pk].responses == ("R1", "R2", "R3", "R4")
    assert contents[four.pk].prompt == "Which one?\n\nThink."
    assert contents[four.pk].image_sha256 is None  # not the MRB shape


def test_a_release_writes_the_parts_not_the_flat_columns(tmp_path):
    project = make_release_project(tmp_path)
    # A flat column out of step with the parts (only derived_columns may
    # write it): the release still writes what annotators saw.
    Item.objects.filter(project=project, external_id="vqa_1").update(
        response_1="stale copy", prompt="stale prompt"
    )
    release = built(project)
    records = {r["ID"]: r for r in check_release_folder(media(release.folder))}
    assert set(records) == INCLUDED
    vqa_1 = records["vqa_1"]
    assert "stale copy" not in (vqa_1["Output1"], vqa_1["Output2"])
    assert "vqa_1 first response" in (vqa_1["Output1"], vqa_1["Output2"])
    assert vqa_1["Text"].startswith("Question about vqa_1")
    # Derived again, the columns agree with the parts once more.
    item = Item.objects.get(project=project, external_id="vqa_1")
    derive_item_text(item)
    assert item.response_1 == "vqa_1 first response"


def test_a_training_mix_reads_the_parts_not_the_flat_columns(tmp_path):
    from types import SimpleNamespace

    from curation.releases.mixes.build import read_candidates

    project = make_release_project(tmp_path)
    Item.objects.filter(project=project, external_id="vqa_1").update(response_2="stale copy")
    candidates = read_candidates(SimpleNamespace(release_id=None, project_id=project.pk))
    assert {c.external_id for c in candidates} == INCLUDED
    [vqa_1] = [c for c in candidates if c.external_id == "vqa_1"]
    assert (vqa_1.response_1, vqa_1.response_2) == ("vqa_1 first response", "vqa_1 second response")
    assert vqa_1.image_sha256 and vqa_1.image_ext == "png"
