"""Issue 31: releases and training mixes share one `configs:` layout and
naming, read with the Hugging Face `datasets` library from another working
directory: a `trl` config in both, `split="train"` (every domain) and one
split per domain in every config, the default config documented, and the
card names only configs whose files exist."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from curation.releases import publishing
from curation.releases.card import ALL_SPLIT, configs_yaml, split_names
from tests.curation.releases.mixes.test_mixes import mixed, unzip, world  # noqa: F401
from tests.curation.releases.test_releases import INCLUDED, built, make_release_project

pytestmark = pytest.mark.django_db
datasets = pytest.importorskip("datasets")


def front_matter(root: Path) -> dict:
    text = (root / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return yaml.safe_load(text[4 : text.index("\n---\n", 4)])


@pytest.fixture
def elsewhere(tmp_path, monkeypatch):
    """Load from a working directory that is not the folder, offline, with a
    cache of its own."""
    away = tmp_path / "elsewhere"
    away.mkdir()
    monkeypatch.chdir(away)
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return tmp_path / "hf-cache"


def load(folder: Path, cache: Path, *args, **kw):
    return datasets.load_dataset(str(folder), *args, cache_dir=str(cache), **kw)


def test_a_release_loads_by_config_and_split_from_anywhere(tmp_path, elsewhere):
    release = built(make_release_project(tmp_path, slug="hf"))
    root = Path(publishing.release_storage().path(release.folder))
    configs = {c["config_name"]: c for c in front_matter(root)["configs"]}
    assert set(configs) == {"default", "trl"}
    domains = [e["split"] for e in configs["trl"]["data_files"] if e["split"] != ALL_SPLIT]

    records = load(root, elsewhere, split="train")
    assert sorted(records["ID"]) == sorted(INCLUDED)
    pairs = load(root, elsewhere, "trl", split="train")
    assert len(pairs) == len(INCLUDED)
    assert set(pairs.column_names) >= {"id", "prompt", "chosen", "rejected", "images"}
    by_domain = load(root, elsewhere, "trl")
    assert set(by_domain) == {ALL_SPLIT, *domains}
    assert sum(len(by_domain[d]) for d in domains) == len(INCLUDED)
    card = (root / "README.md").read_text()
    assert "The `default` config is the benchmark records, `trl` the TRL preference rows" in card
    assert f"`{ALL_SPLIT}` (every domain together" in card
    assert all(f"`{d}`" in card for d in domains)
    assert 'load_dataset("path/to/this/folder", "trl", split="train")' in card


def test_a_mix_has_the_same_configs_and_loads_the_same_way(world, tmp_path, elsewhere):  # noqa: F811
    mix = mixed(world[3])
    root = unzip(mix, tmp_path / "out")
    configs = {c["config_name"]: c for c in front_matter(root)["configs"]}
    assert set(configs) == {"default", "trl"}
    pairs = load(root, elsewhere, "trl", split="train")
    rows = sum(len(f.read_text().splitlines()) for f in (root / "dpo").glob("*.jsonl"))
    assert len(pairs) == rows > 0
    default = load(root, elsewhere, split="train")
    assert sorted(default["id"]) == sorted(pairs["id"])
    card = (root / "README.md").read_text()
    assert 'load_dataset("path/to/this/folder", "trl", split="train")' in card
    assert "data_files=" not in card  # no snippet that only works inside the folder


def test_every_config_has_train_and_a_split_per_domain_and_train_is_reserved():
    names = split_names(["train", "a-b", "a_b"])
    assert names == {"train": "train_2", "a-b": "a_b", "a_b": "a_b_2"}
    text = "\n".join(configs_yaml([("default", "{}.json")], ["knowledge", "vqa"]))
    parsed = yaml.safe_load(text.strip("-\n"))
    files = parsed["configs"][0]["data_files"]
    assert files[0] == {"split": "train", "path": ["knowledge.json", "vqa.json"]}
    assert files[1:] == [
        {"split": "knowledge", "path": "knowledge.json"},
        {"split": "vqa", "path": "vqa.json"},
    ]


def test_release_and_mix_dpo_rows_have_one_schema(world, tmp_path):  # noqa: F811
    """dpo/ holds chat messages in a release and in a mix (it used to be plain
    strings in one and messages in the other under the same name)."""
    import json

    release = world[2]
    release_root = Path(publishing.release_storage().path(release.folder))
    mix_root = unzip(mixed(world[3]), tmp_path / "out")

    def first_row(root: Path) -> dict:
        path = next(p for p in sorted((root / "dpo").glob("*.jsonl")) if p.stat().st_size)
        return json.loads(path.read_text().splitlines()[0])

    ours, theirs = first_row(release_root), first_row(mix_root)
    shape = {"prompt": "user", "chosen": "assistant", "rejected": "assistant"}
    for row in (ours, theirs):
        for key, role in shape.items():
            assert [m["role"] for m in row[key]] == [role] and isinstance(
                row[key][0]["content"], str
            )
        assert isinstance(row["images"], list) and (release_root / "dpo").is_dir()
    assert set(ours) <= set(theirs) and set(theirs) - set(ours) == {"source"}
    pairs = datasets.load_dataset(
        "json", data_files=str(release_root / "dpo" / "*.jsonl"), split="train"
    )
    assert pairs[0]["chosen"][0]["role"] == "assistant" and len(pairs) > 0
