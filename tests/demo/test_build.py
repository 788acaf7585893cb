"""The demo generator (demo/): deterministic, varied, and written in the
official Multimodal RewardBench shape. `manage.py seed_demo` is tested in
tests/annotate/test_seed_demo.py."""

import io
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from PIL import Image

import demo
from annotate.models import MULTIMODAL_REWARDBENCH_DOMAINS

CATEGORIES = {slug: category for slug, _, category, _ in MULTIMODAL_REWARDBENCH_DOMAINS}
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def demo_items():
    return demo.build_demo_items()


def test_demo_items_are_deterministic_and_each_one_different(demo_items):
    assert [i.external_id for i in demo_items] == [
        i.external_id for i in demo.build_demo_items(demo.DEMO_SEED)
    ]
    assert len({i.external_id for i in demo_items}) == 120
    assert len({i.image_png for i in demo_items}) == 120
    assert len({i.prompt + i.response_1 + i.response_2 for i in demo_items}) == 120


def test_demo_items_mix_near_ties_and_clear_winners(demo_items):
    ties = [i for i in demo_items if i.near_tie]
    assert 8 <= len(ties) <= 16
    assert not any(i.gold for i in ties)
    better = Counter(i.better for i in demo_items)
    assert better["1"] > 40 and better["2"] > 40
    for domain in CATEGORIES:
        assert Counter(i.domain for i in demo_items)[domain] == 20


def test_demo_responses_use_markdown_code_and_latex(demo_items):
    responses = [r for i in demo_items for r in (i.response_1, i.response_2)]
    code = [i for i in demo_items if i.external_id.startswith("code")]
    assert code and all("```" in i.response_1 + i.response_2 for i in code)
    math = [i for i in demo_items if i.external_id.startswith("math")]
    assert math and all("$" in i.response_1 + i.response_2 for i in math)
    assert any("\n| " in r for r in responses)  # a Markdown table
    assert any("\n- " in r for r in responses)  # a list
    assert any("$$" in r for r in responses)


def test_demo_images_are_modest_pngs(demo_items):
    for item in demo_items:
        with Image.open(io.BytesIO(item.image_png)) as img:
            assert img.format == "PNG"
            assert 400 <= img.width <= 640 and 150 <= img.height <= 480
        assert len(item.image_png) < 60_000


def test_mrb_dataset_has_the_official_keys_and_categories(demo_items, tmp_path):
    path = demo.write_mrb_dataset(demo_items, tmp_path, CATEGORIES)
    records = json.loads(path.read_text())
    assert len(records) == 120
    for record, item in zip(records, demo_items, strict=True):
        assert set(record) == {"ID", "Text", "Image", "Output1", "Output2", "Better", "Category"}
        assert record["Category"] == CATEGORIES[item.domain]
        assert record["Better"] == f"Output{item.better}"
        assert (tmp_path / record["Image"]).read_bytes() == item.image_png


def test_demo_package_imports_no_django():
    code = "import sys, demo; print(any(m.split('.')[0] == 'django' for m in sys.modules))"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"
