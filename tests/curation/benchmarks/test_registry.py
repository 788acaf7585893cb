"""The benchmark registry finds its benchmarks (issue 32 item 3): every
subpackage of curation.benchmarks with a `benchmark.BENCHMARK`, in the
order of their `position`; and the generic code that once branched on a
benchmark's name asks it instead (the evaluate, export and judge commands'
choices, the per-item results page's filters, the re-keyed ID prefix)."""

from __future__ import annotations

import io
import sys
from types import SimpleNamespace

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

import curation.benchmarks
from curation.benchmarks import registry
from curation.benchmarks.mrb.release_part import record_prefix
from curation.quality.views import filter_options
from curation.releases.rekey import rekeyed_id

BENCHMARK_MODULE = """
class Found:
    key = "found"
    title = "Found on disk"
    position = {position}
    detect_last = False

BENCHMARK = Found()
"""


@pytest.fixture
def extra_package(tmp_path, monkeypatch):
    """A folder on curation.benchmarks' path: subpackages written there are
    subpackages of curation.benchmarks."""
    monkeypatch.setattr(
        curation.benchmarks, "__path__", [*curation.benchmarks.__path__, str(tmp_path)]
    )
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith("curation.benchmarks.found")]:
        del sys.modules[name]


def test_the_built_in_benchmarks_are_discovered_in_their_order():
    built_in = ["mrb", "vlrb", "omni", "ranked", "mmrlhf", "videorb", "mmrb2", "rewardbench2"]
    assert [b.key for b in registry.discover()] == built_in
    assert registry.known_keys()[:8] == built_in


def test_a_new_subpackage_is_a_benchmark_in_its_position(extra_package):
    (extra_package / "found").mkdir()
    (extra_package / "found" / "__init__.py").write_text("")
    (extra_package / "found" / "benchmark.py").write_text(BENCHMARK_MODULE.format(position=15))
    (extra_package / "helpers").mkdir()  # a subpackage without a benchmark module
    (extra_package / "helpers" / "__init__.py").write_text("")
    assert [b.key for b in registry.discover()] == [
        "mrb", "vlrb", "omni", "found", "ranked", "mmrlhf", "videorb", "mmrb2",
        "rewardbench2"]  # fmt: skip


def test_a_benchmark_module_that_fails_to_import_is_an_error(extra_package):
    (extra_package / "found").mkdir()
    (extra_package / "found" / "__init__.py").write_text("")
    (extra_package / "found" / "benchmark.py").write_text("import no_such_module_here\n")
    with pytest.raises(ModuleNotFoundError, match="no_such_module_here"):
        registry.discover()


def test_an_item_in_two_benchmarks_files_gets_one_new_id():
    """A records' re-keyed ID takes the prefix the other benchmark's files
    give the item (its category's own), so both files name it alike."""
    assert registry.id_prefix("mmrb2/reasoning") == "reasoning"
    assert registry.id_prefix("reasoning") is None
    for category, task in (("mmrb2/t2i", "t2i"), ("mmrb2/My Task", "My Task")):
        assert rekeyed_id("s", record_prefix(category, "x_1"), "x_1") == rekeyed_id(
            "s", task, "x_1"
        )
    assert record_prefix("reasoning", "math_1") == "math"
    assert record_prefix("Long Form/Chat", "c_1") == "chat"


def test_the_results_page_filters_are_the_benchmarks():
    mrb = SimpleNamespace(
        scoring="mrb",
        report={
            "official": {
                "groups": [
                    {"name": "all", "level": "overall"},
                    {"name": "reasoning", "level": "category"},
                    {"name": "reasoning/math", "level": "sub_bucket"},
                ]
            }
        },
    )
    assert filter_options(mrb) == (["reasoning"], ["reasoning/math"])
    mmrb2 = SimpleNamespace(
        scoring="mmrb2",
        report={
            "mmrb2": {
                "tasks": [
                    {"task": "t2i", "by_source": [{"source": "genai"}, {"source": "oneig"}]},
                    {"task": "edit", "by_source": [{"source": "emu"}]},
                ]
            }
        },
    )
    assert filter_options(mmrb2) == (["t2i", "edit"], ["emu", "genai", "oneig"])
    assert filter_options(SimpleNamespace(scoring="gone", report={})) == ([], [])


class Toy:
    key = "toy-cli"
    title = "Toy"
    detect_last = False

    def detects(self, head):
        return head.startswith("TOY")


@pytest.fixture
def toy():
    registry.register(Toy())
    yield
    registry.unregister("toy-cli")


def test_the_commands_offer_what_each_benchmark_offers(toy, tmp_path):
    """A benchmark without score_files or export_project is not offered by
    those commands; one whose predictions are detected says how to score them."""
    preds = tmp_path / "p.txt"
    preds.write_text("TOY\n")
    with pytest.raises(CommandError, match="Toy predictions are scored by uploading them"):
        call_command("evaluate", str(tmp_path), str(preds), stdout=io.StringIO())
    with pytest.raises(CommandError, match=r"invalid choice: 'toy-cli' \(choose from .*mrb.*mmrb2"):
        call_command("evaluate", str(tmp_path), str(preds), "--format", "toy-cli")
    with pytest.raises(CommandError, match=r"invalid choice: 'toy-cli' \(choose from .*mmrb2"):
        call_command("export_benchmark", "toy-cli", "p", str(tmp_path))
    with pytest.raises(CommandError, match=r"invalid choice: 'nope' \(choose from .*toy-cli"):
        call_command("judge_release", "p", "v1", "--endpoint", "e", "--scoring", "nope")
