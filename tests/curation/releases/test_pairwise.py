"""Pairwise decompositions of ranked releases for training (issue 33, item
5): the rule on its own, then a ranked RewardBench 2 release with ties cut
with each mode (counts and contents of pairwise/<domain>.parquet, card and
manifest, frozen ranks), a training mix built from it, and the files loaded
with `datasets` (skipped where it is not installed, as test_trl.py)."""

from __future__ import annotations

import itertools
import json
import os
import zipfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from django.conf import settings
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.importing.service import import_items_from_paths
from annotate.models import Item, Task
from curation.models import ReleaseItem, ReleaseStatus, Verdict, VerdictRank
from curation.releases import pairwise, publishing, trl
from curation.releases.build import build_release
from curation.releases.mixes.build import build_mix
from curation.releases.mixes.service import PROVENANCES, STATUSES, SourceChoice, create_mix
from curation.releases.service import ReleaseError, create_release
from tests.curation.releases.test_exporter import card_front_matter
from tests.curation.releases.test_trl import _run
from tests.factories import make_member, make_project

# --- the rule (pure) --------------------------------------------------------------


def brute_force(ranks, mode):
    """Every (i, j) of different ranks, i better; `best`: i among the first."""
    n = len(ranks)
    out = [(i + 1, j + 1) for i, j in itertools.permutations(range(n), 2) if ranks[i] < ranks[j]]
    if mode == pairwise.BEST:
        out = [(i, j) for i, j in out if ranks[i - 1] == min(ranks)]
    return sorted(out)


@pytest.mark.parametrize("mode", [pairwise.BEST, pairwise.ALL])
def test_pairs_equal_a_brute_force_count_over_every_ranking_with_ties(mode):
    for n in (2, 3, 4):
        for ranks in itertools.product(range(1, n + 1), repeat=n):
            got = pairwise.pairs(ranks, mode)
            assert got == brute_force(ranks, mode)
            assert all(ranks[c - 1] < ranks[r - 1] for c, r in got)  # ties never pair


def test_small_ranking_with_ties():
    assert pairwise.pairs((1, 2, 2, 4), "best") == [(1, 2), (1, 3), (1, 4)]
    assert pairwise.pairs((1, 2, 2, 4), "all") == [(1, 2), (1, 3), (1, 4), (2, 4), (3, 4)]
    assert pairwise.pairs((2, 1, 1, 4), "best") == [(2, 1), (2, 4), (3, 1), (3, 4)]
    assert pairwise.pairs((1, 1, 1), "all") == [] == pairwise.pairs((1, 1, 1), "best")
    assert pairwise.pick_ranks(4, 3) == (2, 2, 1, 2)
    assert pairwise.parse_ranks(pairwise.ranks_text((1, 2, 2, 4))) == (1, 2, 2, 4)
    with pytest.raises(ValueError):
        pairwise.pairs((1, 2), "some")


# --- a ranked release ---------------------------------------------------------------

# id -> (completions, final ranks or None for a best-of-N pick, final_choice)
RANKED = {
    "a-ranked": (["A0", "A1", "A2", "A3"], (1, 2, 2, 4), "1"),
    "b-top-tie": (["B0", "B1", "B2", "B3"], (2, 1, 1, 4), "2"),
    "c-pick": (["C0", "C1", "C2", "C3"], None, "3"),
    "d-all-tied": (["D0", "D1", "D2"], (1, 1, 1), "1"),
}


def _record(ext_id, completions):
    return {
        "id": ext_id, "prompt": f"Question {ext_id}?", "chosen": completions[:1],
        "rejected": completions[1:], "num_correct": 1, "num_incorrect": len(completions) - 1,
        "total_completions": len(completions), "models": [], "subset": "Factuality",
        "additional_metadata": {},
    }  # fmt: skip


@pytest.fixture
def ranked_project(tmp_path):
    project = make_project(slug="ranked", task=Task.RANKING, seed=5)
    path = tmp_path / "rb2.jsonl"
    path.write_text("".join(json.dumps(_record(k, v[0])) + "\n" for k, v in RANKED.items()))
    assert import_items_from_paths(project=project, dataset=path).created == len(RANKED)
    for ext_id, (_, ranks, choice) in RANKED.items():
        item = Item.objects.get(project=project, external_id=ext_id)
        Verdict.objects.filter(item=item).update(
            status="agreed", final_choice=choice, provenance="majority"
        )
        if ranks:
            verdict = Verdict.objects.get(item=item)
            VerdictRank.objects.bulk_create(
                VerdictRank(verdict=verdict, slot=s + 1, rank=r) for s, r in enumerate(ranks)
            )
    return project


def expected_pairs(mode):
    out = {}
    for ext_id, (completions, ranks, choice) in RANKED.items():
        ranks = ranks or pairwise.pick_ranks(len(completions), int(choice))
        for c, r in pairwise.pairs(ranks, mode):
            out[f"{ext_id}:{c}>{r}"] = (completions[c - 1], completions[r - 1])
    return out


def cut(project, mode, version="v1"):
    domains = list(project.domains.filter(slug__startswith="rb2-").values_list("slug", flat=True))
    release = create_release(
        project=project, version=version, notes="", domains=domains, seed=1, user=None,
        enqueue=False, pairwise=mode,
    )  # fmt: skip
    release = build_release(release_id=release.pk)
    assert release.status == ReleaseStatus.READY, release.error
    return release, Path(settings.MEDIA_ROOT) / release.folder


@pytest.mark.django_db
@pytest.mark.parametrize("mode", ["best", "all"])
def test_a_ranked_release_writes_its_pairs_in_the_trl_layout(ranked_project, mode):
    release, folder = cut(ranked_project, mode)
    path = folder / "pairwise" / "rb2-factuality.parquet"
    table = pq.read_table(path)
    assert table.schema.names == list(trl.COLUMNS)
    assert table.schema.metadata == trl.arrow_schema().metadata  # the datasets features
    rows = table.to_pylist()
    got = {r["id"]: (r["chosen"][0]["content"], r["rejected"][0]["content"]) for r in rows}
    assert got == expected_pairs(mode)
    assert len(rows) == {"best": 3 + 4 + 3, "all": 5 + 5 + 3}[mode]  # d-all-tied: none
    first = next(r for r in rows if r["id"].startswith("a-ranked"))
    assert first["prompt"] == [{"role": "user", "content": "Question a-ranked?"}]
    assert first["images"] == [] and first["category"] == "rewardbench2/Factuality"

    manifest = json.loads((folder / "manifest.json").read_text())
    section = manifest["pairwise"]
    assert section["mode"] == mode and section["total_pairs"] == len(rows)
    assert section["items"] == {"rb2-factuality": 4}
    assert "ties" in section["rule"]
    assert "pairwise/rb2-factuality.parquet" in manifest["files"]
    card = (folder / "README.md").read_text()
    assert pairwise.MODES[mode] in card and f"(`{mode}`)" in card
    configs = {c["config_name"]: c["data_files"] for c in card_front_matter(folder)["configs"]}
    assert configs["pairwise"][1] == {
        "split": "rb2_factuality", "path": "pairwise/rb2-factuality.parquet",
    }  # fmt: skip
    frozen = dict(ReleaseItem.objects.filter(release=release).values_list("external_id", "ranks"))
    assert frozen == {"a-ranked": "1,2,2,4", "b-top-tie": "2,1,1,4", "c-pick": "2,2,1,2",
                      "d-all-tied": "1,1,1"}  # fmt: skip
    assert release.pairwise == mode


@pytest.mark.django_db
def test_without_a_mode_there_is_no_pairwise_folder_and_a_bad_mode_is_refused(ranked_project):
    release, folder = cut(ranked_project, "")
    assert not (folder / "pairwise").exists()
    assert "pairwise" not in json.loads((folder / "manifest.json").read_text())
    assert "pairwise" not in (folder / "README.md").read_text()
    assert set(ReleaseItem.objects.filter(release=release).values_list("ranks", flat=True)) == {""}
    with pytest.raises(ReleaseError):
        create_release(project=ranked_project, version="v9", notes="", domains=["rb2-factuality"],
                       seed=1, user=None, enqueue=False, pairwise="pairs")  # fmt: skip


@pytest.mark.django_db
def test_the_api_and_form_take_the_mode(ranked_project, client):
    curator = make_member(ranked_project, role="curator")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=curator).key}")
    url = f"/api/v1/projects/{ranked_project.slug}/releases/"
    r = api.post(url, {"version": "v2", "domains": ["rb2-factuality"], "pairwise": "all"},
                 format="json")  # fmt: skip
    assert r.status_code == 202, r.content
    assert r.json()["pairwise"] == "all"
    r = api.post(url, {"version": "v3", "pairwise": "pairs"}, format="json")
    assert r.status_code == 400 and "pairwise" in r.content.decode()
    client.force_login(curator)
    page = client.get(reverse("release_new", args=[ranked_project.slug]))
    assert page.status_code == 200
    assert 'name="pairwise"' in page.content.decode()


@pytest.mark.django_db
def test_a_mix_built_from_a_ranked_release_takes_its_pairs(ranked_project, tmp_path):
    cut(ranked_project, "all")
    user = make_member(ranked_project, role="curator")
    mix = create_mix(
        user=user, name="mix", version="v1", sources=[SourceChoice("ranked", "v1")],
        statuses=list(STATUSES), provenances=list(PROVENANCES), seed=3, enqueue=False,
    )  # fmt: skip
    mix = build_mix(mix_id=mix.pk)
    assert mix.status == ReleaseStatus.READY, mix.error
    expected = expected_pairs("all")
    # The pairs of one item share its prompt: none is a duplicate of another.
    assert mix.report["sources"][0]["kept"] == len(expected)
    assert mix.report["sources"][0]["duplicates"] == 0
    with zipfile.ZipFile(publishing.release_storage().path(mix.archive)) as zf:
        zf.extractall(tmp_path / "mix")
    root = tmp_path / "mix" / f"mix-{mix.version}"
    rows = pq.read_table(root / "trl" / "rb2-factuality.parquet").to_pylist()
    got = {
        r["id"].removeprefix("ranked@v1:"): (r["chosen"][0]["content"], r["rejected"][0]["content"])
        for r in rows
    }
    assert got == expected
    assert all(r["images"] == [] for r in rows)
    dpo = [json.loads(line) for line in (root / "dpo" / "rb2-factuality.jsonl").open()]
    assert len(dpo) == len(expected) and dpo[0]["images"] == []


@pytest.mark.django_db
def test_datasets_loads_the_pairwise_config_as_it_loads_trl(ranked_project, tmp_path):
    pytest.importorskip("datasets", reason="`datasets` is not installed: `make check-trl` has it")
    _, folder = cut(ranked_project, "best")
    script = f"""
import json
from datasets import load_dataset
from curation.releases import trl
pairs = load_dataset({str(folder)!r}, "pairwise")
print(json.dumps({{
    "splits": {{k: v.num_rows for k, v in pairs.items()}},
    "columns": pairs["train"].column_names,
    "features": pairs["train"].features.to_dict() == trl.hf_features(),
    "first": pairs["train"][0]["chosen"],
}}))
"""
    out = _run(tmp_path, ["-c", f"import sys; sys.path.insert(0, {os.getcwd()!r})\n{script}"])
    n = len(expected_pairs("best"))
    assert out["splits"] == {"train": n, "rb2_factuality": n}
    assert out["columns"] == list(trl.COLUMNS) and out["features"] is True
    assert out["first"][0]["role"] == "assistant"
