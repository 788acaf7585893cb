"""The VL-RewardBench format (annotate.importing.formats.vlrb): official
JSON lines in any json.dumps style (or none) give their line back byte for
byte from what the import stores; repeated official IDs import with the
duplicates option; a re-keyed release keeps the official grouping."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.conf import settings

from annotate.importing.formats import vlrb
from annotate.importing.options import ImportOptions
from annotate.importing.records import ImportFailed
from annotate.importing.service import import_items_from_paths
from annotate.models import Item
from curation.releases.build import build_release
from tests.curation.benchmarks.vlrb import official
from tests.curation.benchmarks.vlrb.test_vlrb_end_to_end import decide_as_imported, write_official
from tests.curation.releases.test_releases import new_release
from tests.factories import make_project

pytestmark = pytest.mark.django_db


def test_every_line_style_comes_back_byte_for_byte(tmp_path):
    rows = official.records()[:4]
    write_official(tmp_path, rows)
    lines = [
        json.dumps(rows[0]),
        json.dumps(rows[1], separators=(",", ":"), ensure_ascii=False),
        json.dumps(rows[2], ensure_ascii=False),
        json.dumps(rows[3]).replace('": ', '":  '),  # no json.dumps style: kept raw
    ]
    path = tmp_path / "styles.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    project = make_project()
    assert import_items_from_paths(project=project, dataset=path).created == 4
    for line, row in zip(lines, rows, strict=True):
        item = Item.objects.get(project=project, external_id=row["id"])
        meta = item.meta["vlrb"]
        again = vlrb.record_line(
            meta, query=item.prompt, responses=[item.response_1, item.response_2],
            ranking=meta["human_ranking"],
        )  # fmt: skip
        assert again == line


def test_repeated_official_ids_are_refused_then_imported_with_suffixes(tmp_path):
    rows = official.records()[:3]
    rows.append({**rows[0], "query": "Another question", "image": rows[1]["image"]})
    path = write_official(tmp_path, rows)
    project = make_project()
    with pytest.raises(ImportFailed) as failed:
        import_items_from_paths(project=project, dataset=path)
    assert failed.value.problems[0].field == "id"
    options = ImportOptions(duplicates="suffix")
    result = import_items_from_paths(project=project, dataset=path, options=options)
    assert result.created == 4
    renamed = Item.objects.get(project=project, external_id="RLAIF-V_0#2")
    assert renamed.domain.export_category == "hallucination"


def test_a_rekeyed_release_keeps_the_official_prefix_and_group(tmp_path):
    project = make_project(slug="vlrb-rk")
    import_items_from_paths(project=project, dataset=write_official(tmp_path))
    decide_as_imported(project)
    release = build_release(
        release_id=new_release(
            project, domains=["general", "hallucination", "reasoning"], rekey=True
        ).pk
    )
    assert release.status == "ready", release.error
    folder = Path(settings.MEDIA_ROOT) / release.folder
    text = (folder / "vlrb/vl_rewardbench.jsonl").read_text()
    records = [json.loads(x) for x in text.splitlines()]
    ids = [r["id"] for r in records]
    assert not set(ids) & {p for p, _ in official.PAIRS}
    assert ids == sorted(ids)
    groups = [vlrb.group_of(x) for x in ids]
    assert groups.count("hallucination") == 7 and groups.count("reasoning") == 3
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["vlrb"]["groups"] == {"general": 6, "hallucination": 7, "reasoning": 3}
