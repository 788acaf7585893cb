"""A release of a project with MMRB2 items (issue 24): MRB files hold the
items of the MRB shape only; mmrb2/<task>.json holds the released pairs of
each MMRB2 domain in the published layout, checksummed in the manifest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.conf import settings

from annotate.importing.mmrb2 import import_mmrb2_from_paths
from annotate.models import Project
from curation.models import ReleaseStatus
from curation.releases.build import build_release
from curation.releases.service import create_release
from tests.annotate.importing.test_mmrb2 import agree_as_published, published_fixture

pytestmark = pytest.mark.django_db


def test_release_writes_mmrb2_files_beside_the_mrb_files(tmp_path):
    source = tmp_path / "mmrb2"
    tasks = published_fixture(source)
    project = Project.objects.create(slug="mm", name="MMRB2", seed=3)
    for task in ("t2i", "reasoning"):
        import_mmrb2_from_paths(project=project, dataset=source / f"{task}.json")
    agree_as_published(project)
    release = create_release(
        project=project,
        version="v1",
        notes="",
        domains=["mmrb2-t2i", "mmrb2-reasoning"],
        seed=1,
        user=None,
        enqueue=False,
    )
    release = build_release(release_id=release.pk)
    assert release.status == ReleaseStatus.READY, release.error
    folder = Path(settings.MEDIA_ROOT) / release.folder
    # The released pairs, byte for byte as published (every pair was agreed).
    for task in ("t2i", "reasoning"):
        assert (folder / "mmrb2" / f"{task}.json").read_bytes() == (
            source / f"{task}.json"
        ).read_bytes()
    for path in json.loads((source / "t2i.json").read_text())["pairs"][1]["response_b"][
        "response_content"
    ]:
        assert (folder / "mmrb2" / path[1]).is_file()
    # MRB records: the one reasoning pair of the MRB shape only.
    records = json.loads((folder / "all_data.json").read_text())
    assert [r["ID"] for r in records] == [tasks["reasoning"][0]["id"]]
    assert "mmrb2/t2i.json" in release.manifest["files"]


def test_curation_pages_show_the_parts_of_an_item_without_a_prompt_image(client, tmp_path):
    from django.urls import reverse

    from annotate.models import Item
    from tests.factories import make_member

    published_fixture(tmp_path)
    project = Project.objects.create(slug="mmc", name="MMRB2 curation")
    import_mmrb2_from_paths(project=project, dataset=tmp_path / "interleaved.json")
    client.force_login(make_member(project, role="curator"))
    item = Item.objects.get(project=project)
    page = client.get(reverse("adjudicate", args=[project.slug, item.pk])).content.decode()
    assert page.count('class="part-img"') == 3
    assert 'alt="Response 1, image 1 of 2"' in page and "Step 1: mix &lt;image1&gt;" in page
    assert 'src=""' not in page


def test_a_release_of_mmrb2_pairs_only_builds_and_scores(tmp_path):
    """No item of the MRB shape (text-to-image only): the MRB files are empty,
    mmrb2/t2i.json holds the pairs, and MMRB2 predictions score against it."""
    from curation.evaluation.service import EvaluationError, evaluate_upload, resolve_benchmark

    source = tmp_path / "mmrb2"
    tasks = published_fixture(source)
    project = Project.objects.create(slug="t2i", name="T2I only", seed=3)
    import_mmrb2_from_paths(project=project, dataset=source / "t2i.json")
    agree_as_published(project)
    release = create_release(
        project=project,
        version="v1",
        notes="",
        domains=["mmrb2-t2i"],
        seed=1,
        user=None,
        enqueue=False,
    )
    release = build_release(release_id=release.pk)
    assert release.status == ReleaseStatus.READY, release.error
    folder = Path(settings.MEDIA_ROOT) / release.folder
    assert json.loads((folder / "all_data.json").read_text()) == []
    assert (folder / "mmrb2" / "t2i.json").read_bytes() == (source / "t2i.json").read_bytes()
    first = tasks["t2i"][0]["id"]  # chosen B; the second pair is missing
    predictions = {first: {"forward": [{"judgement": "B"}], "reverse": [{"judgement": "B"}]}}
    data = json.dumps(predictions).encode()
    evaluation = evaluate_upload(release=release, name="j", predictions=data, filename="p.json")
    overall = evaluation.report["mmrb2"]["overall"]
    assert (overall["correct"], overall["judged"], overall["missing_pairs"]) == (1, 2, 1)
    assert overall["percent"] == "50.00"
    with pytest.raises(EvaluationError, match="no Multimodal RewardBench records"):
        resolve_benchmark(release, b'{"ID": "x", "output": "[[A]]"}\n')
