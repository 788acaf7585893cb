"""Omni-RewardBench's video and audio tasks imported with their clips
(demo.clips), released byte for byte with the clips beside them (issue 35)."""

from __future__ import annotations

import json

import pytest

from annotate.importing.service import import_items_from_paths
from annotate.models import Item, ItemPart
from curation.models import Verdict
from tests.annotate.importing.test_omni_format import media_records
from tests.curation.benchmarks.omni.test_omni_end_to_end import release_of
from tests.factories import make_project

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("task", ["text_to_audio", "text_video_to_text"])
def test_media_tasks_import_and_release_byte_for_byte(tmp_path, task):
    project = make_project(slug="omni-media", seed=3)
    values, files = media_records(task)
    for name, data in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    path = tmp_path / f"{task}_preferences.json"
    path.write_text(json.dumps(values, indent=4, ensure_ascii=False), encoding="utf-8")
    result = import_items_from_paths(project=project, dataset=path)
    assert result.created == 2
    kinds = set(ItemPart.objects.filter(item__project=project).values_list("kind", flat=True))
    assert kinds == {"text", "video" if task == "text_video_to_text" else "audio"}
    for item in Item.objects.filter(project=project):
        choice = item.gold_choice or "tie"
        Verdict.objects.filter(pk=item.verdict.pk).update(
            status="agreed" if choice != "tie" else "resolved", final_choice=choice,
            provenance="majority")  # fmt: skip
    _release, folder = release_of(project)
    assert (folder / f"omni/{task}_preferences.json").read_bytes() == path.read_bytes()
    for name, data in files.items():
        assert (folder / "omni/media_data" / name).read_bytes() == data
