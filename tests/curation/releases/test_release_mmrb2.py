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
from curation.models import ReleaseStatus, Verdict
from curation.releases.build import build_release
from curation.releases.service import create_release
from tests.annotate.importing.test_mmrb2 import published_fixture

pytestmark = pytest.mark.django_db


def test_release_writes_mmrb2_files_beside_the_mrb_files(tmp_path):
    source = tmp_path / "mmrb2"
    tasks = published_fixture(source)
    project = Project.objects.create(slug="mm", name="MMRB2", seed=3)
    for task in ("t2i", "reasoning"):
        import_mmrb2_from_paths(project=project, dataset=source / f"{task}.json")
    Verdict.objects.filter(project=project).update(
        status="agreed", final_choice="1", provenance="unanimous"
    )
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


def test_a_rekeyed_release_publishes_label_free_ids_and_keeps_the_map_for_curators(
    client, tmp_path
):
    from django.urls import reverse

    from curation.evaluation import mmrb2_scoring
    from curation.evaluation.mmrb2_service import score_release
    from tests.curation.evaluation.test_mmrb2_evaluation import PREDICTIONS
    from tests.factories import make_member

    source = tmp_path / "mmrb2"
    tasks = published_fixture(source)
    project = Project.objects.create(slug="rk", name="Rekeyed", seed=3)
    for task in tasks:
        import_mmrb2_from_paths(project=project, dataset=source / f"{task}.json")
    Verdict.objects.filter(project=project).update(
        status="agreed", final_choice="1", provenance="unanimous"
    )
    release = create_release(
        project=project,
        version="v1",
        notes="",
        domains=[f"mmrb2-{t}" for t in tasks],
        seed=1,
        user=None,
        enqueue=False,
        rekey=True,
    )
    assert len(release.rekey_salt) == 32
    release = build_release(release_id=release.pk)
    assert release.status == ReleaseStatus.READY, release.error
    folder = Path(settings.MEDIA_ROOT) / release.folder
    originals = {p["id"]: p for pairs in tasks.values() for p in pairs}
    assert set(release.id_map) == set(originals)
    names = {m for p in originals.values() for m in (p["response_a"]["model_name"],)}
    names |= {p["response_b"]["model_name"] for p in originals.values()}
    published = {}
    for task in tasks:
        text = (folder / "mmrb2" / f"{task}.json").read_text()
        for old in originals:
            assert json.dumps(old) not in text  # neither an ID nor an image name
        for pair in json.loads(text)["pairs"]:
            published[pair["id"]] = pair
            assert not any(name in pair["id"] for name in names)
            for kind, path in pair["response_a"]["response_content"]:
                assert kind != "image" or path.startswith(f"images/{pair['id']}_")
    assert set(published) == set(release.id_map.values())
    for old, new in release.id_map.items():
        assert published[new]["chosen"] == originals[old]["chosen"]
    assert "rekeyed" in release.manifest["mmrb2_ids"]
    # The salt and the map are not in any published file.
    for path in folder.rglob("*.json"):
        assert release.rekey_salt not in path.read_text()
    assert release.rekey_salt not in (folder / "manifest.json").read_text()
    # Predictions under the new IDs score as they would under the old ones.
    renamed = {release.id_map.get(k, k): v for k, v in PREDICTIONS.items()}
    report = score_release(release, renamed)
    plain = mmrb2_scoring.score_tasks(
        [(t, tasks[t], PREDICTIONS) for t in ("t2i", "edit", "interleaved", "reasoning")]
    )
    assert report["overall"]["correct"] == plain.overall.correct == 4
    assert report["overall"]["judged"] == plain.overall.judged == 7
    # The map: curators download it; the release API says only that it is re-keyed.
    client.force_login(make_member(project, role="curator"))
    response = client.get(reverse("release_id_map", args=[project.slug, release.pk]))
    assert json.loads(response.content) == release.id_map
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(make_member(project, role="curator"))
    detail = api.get(reverse("api_release", args=[project.slug, release.pk])).json()
    assert detail["rekey"] is True and release.rekey_salt not in json.dumps(detail)
    assert not any(old in json.dumps(detail) for old in originals)
    body = api.get(reverse("api_release_id_map", args=[project.slug, release.pk])).json()
    assert body == {"rekeyed": True, "ids": release.id_map}
    # Building again (a retry) gives the same IDs: the salt is the release's.
    from curation.releases.mmrb2 import rekeyed_id

    old = next(iter(release.id_map))
    task = next(t for t, pairs in tasks.items() if any(p["id"] == old for p in pairs))
    assert release.id_map[old] == rekeyed_id(release.rekey_salt, task, old)


def test_a_release_of_mmrb2_pairs_only_builds_and_scores(tmp_path):
    """No item of the MRB shape (text-to-image only): the MRB files are empty,
    mmrb2/t2i.json holds the pairs, and MMRB2 predictions score against it."""
    from curation.evaluation.mmrb2_service import evaluate_mmrb2, resolve_format
    from curation.evaluation.service import EvaluationError

    source = tmp_path / "mmrb2"
    tasks = published_fixture(source)
    project = Project.objects.create(slug="t2i", name="T2I only", seed=3)
    import_mmrb2_from_paths(project=project, dataset=source / "t2i.json")
    Verdict.objects.filter(project=project).update(
        status="agreed", final_choice="1", provenance="unanimous"
    )
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
    evaluation = evaluate_mmrb2(release=release, name="j", predictions=data, filename="p.json")
    overall = evaluation.report["mmrb2"]["overall"]
    assert (overall["correct"], overall["judged"], overall["missing_pairs"]) == (1, 2, 1)
    assert overall["percent"] == "50.00"
    with pytest.raises(EvaluationError, match="only MMRB2 pairs"):
        resolve_format(release, b'{"ID": "x", "output": "[[A]]"}\n')
