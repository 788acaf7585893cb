"""One writer, one update rule, every record-level option for every format
(issue 32 item 3): task files and releases take `conflicts=metadata|suffix`,
`duplicates` and the domain options as MRB files do; gold changes only on
items nobody has claimed or judged."""

from __future__ import annotations

import json

import pytest

from annotate.importing.options import ImportOptions
from annotate.importing.records import ImportFailed
from annotate.importing.service import import_items_from_paths
from annotate.models import Item, ItemPart
from tests.annotate.importing.test_golden_imports import _release_folder, _zip
from tests.annotate.importing.test_import import write_jsonl
from tests.annotate.importing.test_mmrb2 import published_fixture
from tests.factories import make_project, pairs_record

pytestmark = pytest.mark.django_db


def rewrite(path, change) -> None:
    data = json.loads(path.read_text())
    change(data["pairs"])
    path.write_text(json.dumps(data, indent=2))


def task_import(project, path, **options):
    return import_items_from_paths(project=project, dataset=path, options=ImportOptions(**options))


def test_a_task_file_takes_conflicts_metadata_and_refuses_seen_changes(tmp_path):
    published_fixture(tmp_path)
    project = make_project()
    task_import(project, tmp_path / "t2i.json")
    rewrite(tmp_path / "t2i.json", lambda pairs: pairs[0].update(prompt_source="renamed"))
    result = task_import(project, tmp_path / "t2i.json", conflicts="metadata")
    assert (result.updated, result.unchanged) == (1, 1)
    first = Item.objects.get(external_id__startswith="oneigbench")
    assert first.meta["mmrb2"]["prompt_source"] == "renamed"
    # Text annotators saw: refused under metadata, naming the field as the file does.
    rewrite(tmp_path / "t2i.json", lambda pairs: pairs[0].update(prompt_content=[["text", "X"]]))
    with pytest.raises(ImportFailed) as failure:
        task_import(project, tmp_path / "t2i.json", conflicts="metadata")
    assert "prompt_content differs on 1 record (first: 0)" in str(failure.value)
    assert "cannot change what annotators saw" in str(failure.value)


def test_a_task_file_takes_conflicts_suffix_and_a_second_import_is_a_no_op(tmp_path):
    published_fixture(tmp_path)
    project = make_project()
    task_import(project, tmp_path / "edit.json")
    rewrite(tmp_path / "edit.json", lambda pairs: pairs[0].update(prompt_content=[["text", "Y"]]))
    result = task_import(project, tmp_path / "edit.json", conflicts="suffix")
    assert result.created == 1
    new = Item.objects.get(external_id="emu_edit_9_a_b#2")
    assert new.meta["original_id"] == "emu_edit_9_a_b" and new.prompt == "Y"
    assert list(
        ItemPart.objects.filter(item=new, slot="prompt").values_list("text", flat=True)
    ) == ["Y"]
    again = task_import(project, tmp_path / "edit.json", conflicts="suffix")
    assert (again.created, again.unchanged) == (0, 1)


def test_a_task_file_takes_the_domain_options(tmp_path):
    published_fixture(tmp_path)
    project = make_project()
    result = import_items_from_paths(
        project=project, dataset=tmp_path / "reasoning.json", domain="reasoning"
    )
    assert result.created == 2
    assert set(Item.objects.values_list("domain__slug", flat=True)) == {"reasoning"}
    other = make_project()
    task_import(
        other,
        tmp_path / "t2i.json",
        domain_from="field:prompt_source",
        domain_map={"oneigbench": "vqa", "genai": "knowledge"},
    )
    assert sorted(Item.objects.filter(project=other).values_list("domain__slug", flat=True)) == [
        "knowledge",
        "vqa",
    ]
    assert not other.domains.filter(slug__startswith="mmrb2").exists()  # none was needed


def test_a_task_file_takes_duplicates_keep_first(tmp_path):
    published_fixture(tmp_path)
    rewrite(tmp_path / "t2i.json", lambda pairs: pairs.append(dict(pairs[0])))
    project = make_project()
    with pytest.raises(ImportFailed, match="occurs more than once"):
        task_import(project, tmp_path / "t2i.json")
    result = task_import(project, tmp_path / "t2i.json", duplicates="keep-first")
    assert (result.created, result.duplicates_skipped) == (2, 1)


def test_a_release_takes_conflicts_suffix(tmp_path):
    release = _zip(_release_folder(tmp_path), tmp_path / "release.zip")
    project = make_project()
    import_items_from_paths(project=project, dataset=release)
    # Another item under one of the release's IDs: other text.
    item = Item.objects.get(project=project, external_id="vqa_r1")
    item.content_parts.filter(slot="response_1").update(text="Other.")
    Item.objects.filter(pk=item.pk).update(response_1="Other.", content_hash="other")
    with pytest.raises(ImportFailed, match="Output1 differs on 1 record"):
        import_items_from_paths(project=project, dataset=release)
    result = import_items_from_paths(
        project=project, dataset=release, options=ImportOptions(conflicts="suffix")
    )
    assert (result.created, result.unchanged) == (1, 2)
    copy = Item.objects.get(project=project, external_id="vqa_r1#2")
    assert copy.gold_choice == "1" and copy.meta["original_id"] == "vqa_r1"


def test_gold_changes_only_on_items_nobody_has_claimed(tmp_path):
    rows = [pairs_record("g1"), pairs_record("g2")]
    path = write_jsonl(tmp_path, rows)
    project = make_project()
    import_items_from_paths(project=project, dataset=path, images=tmp_path)
    # The same file read with gold from its labels: only gold differs.
    options = {"gold_from_label": True, "options": ImportOptions(conflicts="metadata")}
    Item.objects.filter(external_id="g2").update(live_assignments=1)
    with pytest.raises(ImportFailed) as failure:
        import_items_from_paths(project=project, dataset=path, images=tmp_path, **options)
    assert "gold differs on 2 records" in str(failure.value)
    assert "nor the gold answer of an item they claimed or judged" in str(failure.value)
    assert set(Item.objects.values_list("gold_choice", flat=True)) == {""}
    Item.objects.filter(external_id="g2").update(live_assignments=0)
    result = import_items_from_paths(project=project, dataset=path, images=tmp_path, **options)
    assert result.updated == 2
    assert "" not in set(Item.objects.values_list("gold_choice", flat=True))
