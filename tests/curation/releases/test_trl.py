"""Releases that TRL and `datasets` take as they are: trl/<domain>.parquet
(conversational rows, images embedded), the card's `configs:`, dpo/ image
paths relative to the .jsonl file.

The last three tests need `datasets` (and TRL, torch, transformers): they
are skipped in the normal suite, where those are not installed (about 6 GB);
`make check-trl` makes a venv with them and runs this file."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from curation.benchmarks.mrb import records
from curation.benchmarks.mrb.benchmark import BENCHMARK as MRB
from curation.releases import card, exporter, trl
from tests.curation.releases.test_exporter import card_front_matter, check_release_folder
from tests.curation.releases.test_parquet import build, make_items

HERE = Path(__file__).resolve().parent
NEEDS_TRL = "TRL, torch and transformers are not installed here: `make check-trl` runs this test"


@pytest.fixture
def release(tmp_path):
    rows = make_items({"general_correctness": 5, "reasoning": 4, "safety": 0})
    folder = tmp_path / "rel"
    manifest = build(folder, rows, trl=True)
    return folder, manifest, rows


def test_a_row_is_conversational_with_plain_string_contents():
    row = trl.conversational_row(
        id="x", prompt="Q?", chosen="good", rejected="bad", category="vqa",
        images=[(b"\x89PNG", "images/a.png")],
    )  # fmt: skip
    assert row == {
        "id": "x",
        "prompt": [{"role": "user", "content": "Q?"}],
        "chosen": [{"role": "assistant", "content": "good"}],
        "rejected": [{"role": "assistant", "content": "bad"}],
        "images": [{"bytes": b"\x89PNG", "path": "images/a.png"}],
        "category": "vqa",
    }
    assert list(row) == list(trl.COLUMNS)


def test_the_decided_response_is_chosen_whichever_slot_it_came_from():
    item = make_items({"general_correctness": 3})[0]["item"]
    for chosen, (good, bad) in {"1": ("first", "second"), "2": ("second", "first")}.items():
        row = trl.row_of_item(dataclasses.replace(item, chosen=chosen), [])
        assert row["chosen"][0]["content"].startswith(good)
        assert row["rejected"][0]["content"].startswith(bad)


def test_the_files_hold_every_record_once_with_its_image(release):
    folder, manifest, _ = release
    check_release_folder(folder)  # includes check_trl_folder and the card's configs
    assert pq.read_table(folder / "trl" / "safety.parquet").num_rows == 0
    for slug in ("general_correctness", "reasoning", "safety"):
        entry = manifest["files"][f"trl/{slug}.parquet"]
        assert entry["sha256"] == exporter.sha256_file(folder / "trl" / f"{slug}.parquet")


def test_the_schema_carries_the_features_datasets_decodes(release):
    folder, _, _ = release
    schema = pq.read_schema(folder / "trl" / "reasoning.parquet")
    assert schema.names == list(trl.COLUMNS)
    message = pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))
    assert schema.field("prompt").type == message == schema.field("chosen").type
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    assert schema.field("images").type == pa.list_(image)
    features = json.loads(schema.metadata[b"huggingface"])["info"]["features"]
    assert features["images"] == {"feature": {"_type": "Image"}, "_type": "List"}
    assert features == trl.hf_features() and list(features) == list(trl.COLUMNS)


def test_the_same_inputs_give_byte_identical_files(tmp_path):
    rows = make_items({"general_correctness": 130, "reasoning": 2}, shared_image_every=9)
    files = []
    for name in ("a", "b"):
        build(tmp_path / name, rows, trl=True, row_group_rows=50)
        folder = tmp_path / name
        files.append({p: (folder / p).read_bytes() for p in exporter.release_files(folder)})
    assert files[0] == files[1]
    meta = pq.ParquetFile(tmp_path / "a" / "trl" / "general_correctness.parquet").metadata
    assert meta.num_rows == 130 and meta.num_row_groups == 2  # 100 + 30 (TRL's own row groups)


def test_the_card_front_matter_names_one_split_per_domain_with_records(release):
    folder, _, _ = release
    configs = {c["config_name"]: c["data_files"] for c in card_front_matter(folder)["configs"]}
    # A `train` split of every domain first (issue 31: split="train" works),
    # then one split per domain with records.
    assert configs == {
        name: [
            {
                "split": "train",
                "path": [f"{d}/general_correctness.parquet", f"{d}/reasoning.parquet"],
            },
            {"split": "general_correctness", "path": f"{d}/general_correctness.parquet"},
            {"split": "reasoning", "path": f"{d}/reasoning.parquet"},
        ]
        for name, d in (("default", "parquet"), ("trl", "trl"))
    }
    text = (folder / "README.md").read_text(encoding="utf-8")
    for needle in ('remove_columns("images")', "max_length=None", "RewardTrainer", "../images/"):
        assert needle in text


def test_without_pyarrow_the_default_config_is_the_per_domain_json():
    lines = card.card_configs(["a", "b"], parquet=False, trl=False)
    assert "\n".join(lines) == (
        "---\nconfigs:\n- config_name: default\n  data_files:\n"
        "  - split: train\n    path:\n    - a.json\n    - b.json\n"
        "  - split: a\n    path: a.json\n  - split: b\n    path: b.json\n---\n"
    )


def test_split_names_are_word_characters_and_never_clash():
    assert card.split_names(["a-b", "a_b", "c", "a-b-2"]) == {
        "a-b": "a_b", "a_b": "a_b_2", "c": "c", "a-b-2": "a_b_2_2",
    }  # fmt: skip


def test_dpo_image_paths_are_relative_to_the_jsonl_file(release):
    folder, _, _ = release
    line = json.loads((folder / "dpo" / "reasoning.jsonl").read_text().splitlines()[0])
    assert line["images"][0].startswith("../images/")
    assert (folder / "dpo" / line["images"][0]).is_file()


def _run(tmp_path, args, *, timeout=900):
    """A subprocess offline, with its Hugging Face caches under tmp_path."""
    env = {
        **os.environ,
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf"),
        "TOKENIZERS_PARALLELISM": "false",
    }
    proc = subprocess.run(
        [sys.executable, *args], env=env, capture_output=True, text=True, timeout=timeout,
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_datasets_loads_the_folder_by_its_card(release, tmp_path):
    """load_dataset(<folder>) gives the records (not an image folder labelled
    by domain), load_dataset(<folder>, "trl") the TRL rows with PIL images,
    and the card's recipe casts the dpo/ paths from another directory."""
    pytest.importorskip("datasets", reason="`datasets` is not installed: `make check-trl` has it")
    folder, _, rows = release
    script = f"""
import json, os
from datasets import Features, Image, List, load_dataset
from curation.releases import trl
folder = {str(folder)!r}
records = load_dataset(folder)
rows = load_dataset(folder, "trl")
path = os.path.join(folder, "dpo", "reasoning.jsonl")
dpo = load_dataset("json", data_files=path, split="train")
dpo = dpo.map(lambda r: {{"images": [os.path.join(os.path.dirname(path), p) for p in r["images"]]}})
dpo = dpo.cast_column("images", List(Image()))
print(json.dumps({{
    "default": {{k: v.num_rows for k, v in records.items()}},
    "columns": records["reasoning"].column_names,
    "image": type(records["reasoning"][0]["Image"]).__name__,
    "trl": {{k: v.num_rows for k, v in rows.items()}},
    "trl_image": type(rows["reasoning"][0]["images"][0]).__name__,
    "trl_prompt": rows["reasoning"][0]["prompt"],
    "features_match": Features.from_dict(trl.hf_features()).to_dict() == trl.hf_features(),
    "dpo_image": dpo[0]["images"][0].size,
}}))
"""
    out = _run(tmp_path, ["-c", f"import sys; sys.path.insert(0, {os.getcwd()!r})\n{script}"])
    assert out["default"] == out["trl"] == {"train": 9, "general_correctness": 5, "reasoning": 4}
    assert out["columns"] == list(records.RECORD_KEYS)
    assert out["image"].endswith("ImageFile") and out["trl_image"].endswith("ImageFile")
    first = next(r["item"] for r in rows if r["item"].domain == "reasoning")
    assert out["trl_prompt"] == [{"role": "user", "content": first.prompt}]
    assert out["features_match"] is True
    assert len(out["dpo_image"]) == 2


def test_trl_trains_on_a_release_vision_dpo_and_text_reward(release, tmp_path):
    """TRL's format helpers, then 2 steps of DPOTrainer on a tiny Qwen2.5-VL
    (images through its processor) and of RewardTrainer on a tiny Qwen2
    (images dropped), all built from configs: nothing is downloaded."""
    for module in ("trl", "torch", "transformers", "torchvision"):
        pytest.importorskip(module, reason=NEEDS_TRL)
    folder, _, _ = release
    out = _run(tmp_path, [str(HERE / "trl_run.py"), str(folder), "general_correctness"])
    print(json.dumps(out, indent=1))  # shown by `make check-trl` (pytest -s)
    assert out["default_splits"] == out["trl_splits"] == ["general_correctness", "reasoning"]
    assert out["trl_columns"] == list(trl.COLUMNS)
    assert out["is_conversational"] is True
    assert out["image_type"].endswith("ImageFile")
    # Text only: a separator (the chat template) between prompt and answer.
    assert out["templated"]["prompt"].endswith("<|im_start|>assistant\n")
    # Vision: TRL put the image placeholder before the prompt text itself.
    assert out["multimodal_prompt"] == [["image", "text"]]
    assert "<|vision_start|><|image_pad|><|vision_end|>What is shown" in out["vision_prompt"]
    for trainer in ("dpo", "reward"):
        assert out[trainer]["steps"] == 2
        assert math.isfinite(out[trainer]["loss"])


def test_without_parquet_datasets_loads_the_per_domain_json(tmp_path):
    """A release built where pyarrow is missing: the default config is the
    per-domain JSON, still the records rather than an image folder."""
    pytest.importorskip("datasets", reason="`datasets` is not installed: `make check-trl` has it")
    rows = make_items({"general_correctness": 3, "reasoning": 2})
    folder = tmp_path / "rel"
    by_id = {row["item"].external_id: row["bytes"] for row in rows}
    ids: dict[str, list[str]] = {}
    for row in rows:
        ids.setdefault(row["item"].domain, []).append(row["item"].external_id)
    exporter.write_release(
        folder,
        (row["item"] for row in rows),
        meta=exporter.ReleaseMeta(project="p", project_name="P", version="v1", seed=1,
                                  snapshot_at="", domains=[("general_correctness", "G",
                                  "open_generation/correctness_task"),
                                  ("reasoning", "R", "reasoning")],
                                  card_sections=[MRB]),
        shape=records,
        ids_by_domain=ids,
        copy_image=lambda item, destination: destination.write_bytes(by_id[item.external_id]),
    )  # fmt: skip
    script = f"""
import json
from datasets import load_dataset
ds = load_dataset({str(folder)!r})
print(json.dumps({{k: [v.num_rows, v.column_names] for k, v in ds.items()}}))
"""
    out = _run(tmp_path, ["-c", script])
    columns = list(records.RECORD_KEYS)
    assert out == {
        "train": [5, columns],
        "general_correctness": [3, columns],
        "reasoning": [2, columns],
    }
