"""Hostile dataset files and archives through both ways in: the management
command and the admin upload page.

Every case must end in a success or in a clear error that names the file
(and, where there is one, the line and field); never an unexpected exception,
a 500, or a partial import (rows and stored image files are counted before
and after). The first half pins the bugs the fuzzing found, one test each;
the second half generates inputs with hypothesis (derandomized, no example
database, bounded example counts) so CI runs the same cases every time.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.files.storage import default_storage

from annotate.importing import ImportFailed
from annotate.models import ImageAsset, Item
from annotate.services import import_items_from_paths
from curation.models import Verdict
from tests.factories import make_project, png_bytes

pytestmark = pytest.mark.django_db


# --- Helpers ------------------------------------------------------------------------


def mrb_record(external_id: str = "vqa_1", **overrides) -> dict:
    record = {
        "ID": external_id,
        "Text": f"What is shown in {external_id}?",
        "Image": "images/red.png",
        "Output1": "A red square.",
        "Output2": "A blue circle.",
        "Better": "Output1",
        "Category": "vqa",
    }
    record.update(overrides)
    return record


def pairs_record(external_id: str = "pairs_1", **overrides) -> dict:
    record = {
        "id": external_id,
        "prompt": f"What is shown in {external_id}?",
        "chosen": f"chosen answer for {external_id}",
        "rejected": f"rejected answer for {external_id}",
        "image": "images/red.png",
        "category": "vqa",
    }
    record.update(overrides)
    return record


def mrb_text(records: list) -> str:
    """One record per line: record n starts on line n + 2."""
    return "[\n" + ",\n".join(json.dumps(r) for r in records) + "\n]\n"


def jsonl_text(records: list) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def stored_files() -> list[str]:
    root = Path(default_storage.location)
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def snapshot() -> tuple:
    return (
        Item.objects.count(),
        ImageAsset.objects.count(),
        Verdict.objects.count(),
        stored_files(),
    )


def import_bytes(tmp_path: Path, name: str, data: bytes | str, images=None):
    """Import `data` saved as `name` with an image folder holding images/red.png;
    returns the result, or the ImportFailed."""
    folder = tmp_path / "in"
    (folder / "images").mkdir(parents=True, exist_ok=True)
    (folder / "images" / "red.png").write_bytes(png_bytes())
    path = folder / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    try:
        return import_items_from_paths(
            project=make_project(), dataset=path, images=folder if images is None else images
        )
    except ImportFailed as failure:
        return failure


def refused(tmp_path: Path, name: str, data: bytes | str, images=None) -> list[str]:
    """The problems of a refused import, after checking nothing was written."""
    before = snapshot()
    outcome = import_bytes(tmp_path, name, data, images)
    assert isinstance(outcome, ImportFailed), outcome
    assert snapshot() == before
    return [str(p) for p in outcome.problems]


# --- Regressions: JSON the decoder itself gives up on ------------------------------------


@pytest.mark.parametrize("name", ["data.json", "data.jsonl"])
def test_json_nested_beyond_the_decoders_limit_is_an_error_not_a_crash(tmp_path, name):
    deep = "[" * 100_000 + "]" * 100_000
    good = json.dumps(mrb_record("ok") if name == "data.json" else pairs_record("ok"))
    bad = good[:-1] + f', "junk": {deep}}}'
    text = f"[\n{good},\n{bad}\n]\n" if name == "data.json" else f"{good}\n{bad}\n"
    assert refused(tmp_path, name, text) == [
        f"{name}:3: record 1: invalid JSON: values are nested too deeply"
        if name == "data.json"
        else f"{name}:2: record 1: invalid JSON: values are nested too deeply"
    ]


@pytest.mark.parametrize("name", ["data.json", "data.jsonl"])
def test_integer_too_long_to_convert_is_an_error_not_a_crash(tmp_path, name):
    record = json.dumps(mrb_record() if name == "data.json" else pairs_record())
    text = record[:-1] + ', "n": ' + "9" * 5000 + "}"
    text = f"[\n{text}\n]" if name == "data.json" else text + "\n"
    assert refused(tmp_path, name, text) == [
        f"{name}:{2 if name == 'data.json' else 1}: record 0: "
        "invalid JSON: a number has too many digits"
    ]
