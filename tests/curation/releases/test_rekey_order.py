"""Issue 30: every file of a re-keyed release lists its records in the order
of the new IDs, the MMRB2 task files too: kept in the published order, a
new ID would map back to its old one by position for anyone holding the
published file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.conf import settings

from annotate.importing.formats.mmrb2 import import_mmrb2_from_paths
from annotate.models import Project
from curation.models import ReleaseItem, ReleaseStatus
from curation.releases.build import build_release
from curation.releases.rekey import in_new_id_order
from curation.releases.service import create_release
from tests.annotate.importing.test_mmrb2 import agree_as_published, published_fixture

pytestmark = pytest.mark.django_db

N = 240


def many_pairs(root: Path) -> list[str]:
    """A t2i task file of N pairs in the published (ID) order, and the
    reasoning file: IDs gen_0000 … gen_0239, images shared with the fixture."""
    published_fixture(root)
    data = json.loads((root / "t2i.json").read_text())
    template = data["pairs"][0]
    pairs = []
    for n in range(N):
        pair = json.loads(json.dumps(template))
        pair["id"] = f"gen_{n:04d}"
        pair["prompt_content"] = [["text", f"A sign that says {n}"]]
        pairs.append(pair)
    data["pairs"] = pairs
    (root / "t2i.json").write_text(json.dumps(data, indent=2))
    return [p["id"] for p in pairs]


def spearman(a: list[int], b: list[int]) -> float:
    n = len(a)
    d2 = sum((x - y) ** 2 for x, y in zip(a, b, strict=True))
    return 1 - 6 * d2 / (n * (n * n - 1))


def test_rekeyed_task_files_and_records_are_in_new_id_order(tmp_path):
    published = many_pairs(tmp_path / "src")
    project = Project.objects.create(slug="order", name="Order", seed=3)
    for task in ("t2i", "reasoning"):
        import_mmrb2_from_paths(project=project, dataset=tmp_path / "src" / f"{task}.json")
    agree_as_published(project)
    release = create_release(
        project=project,
        version="v1",
        notes="",
        domains=["mmrb2-t2i", "mmrb2-reasoning"],
        seed=1,
        user=None,
        enqueue=False,
        rekey=True,
    )
    release = build_release(release_id=release.pk)
    assert release.status == ReleaseStatus.READY, release.error
    folder = Path(settings.MEDIA_ROOT) / release.folder
    new_of = dict(
        ReleaseItem.objects.filter(release=release).values_list("external_id", "released_id")
    )
    written = [p["id"] for p in json.loads((folder / "mmrb2" / "t2i.json").read_text())["pairs"]]
    assert written == sorted(written) == sorted(new_of[old] for old in published)
    # Nothing of the published order is left: rank correlation near 0.
    position = {new: k for k, new in enumerate(written)}
    rho = spearman(list(range(N)), [position[new_of[old]] for old in published])
    assert abs(rho) < 0.2, rho
    # Every other file of the release, too.
    reasoning = [
        p["id"] for p in json.loads((folder / "mmrb2" / "reasoning.json").read_text())["pairs"]
    ]
    assert reasoning == sorted(reasoning)
    records = [r["ID"] for r in json.loads((folder / "all_data.json").read_text())]
    assert records == sorted(records)
    provenance = [
        json.loads(line)["ID"] for line in (folder / "provenance.jsonl").read_text().splitlines()
    ]
    # Pairs only in task files follow the records, file by file, each in new-ID order.
    task_only = [i for i in provenance if i not in records]
    assert len(task_only) == N + 1
    for prefix in ("t2i_", "reasoning_"):
        of_task = [i for i in task_only if i.startswith(prefix)]
        assert of_task == sorted(of_task)


def test_in_new_id_order_sorts_by_the_new_id():
    rows = [(1, "b_2"), (2, "a_9"), (3, "c_1")]
    assert in_new_id_order(rows, lambda r: r[1][::-1]) == [(3, "c_1"), (1, "b_2"), (2, "a_9")]
