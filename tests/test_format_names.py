"""Formats are seams, not branches (issue 32 item 3): the name of the
Multimodal RewardBench 2 format appears in the application only in its
input format module and its benchmark module (and migrations, templates,
tests, docs). Generic code asks the registries; a mention creeping back
into it fails here, naming file and line."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APPLICATION = ("annotate", "curation", "common", "config")
NAME = re.compile("mmrb2", re.IGNORECASE)
# The modules that own the format: its reader and its benchmark.
OWNERS = (
    ROOT / "annotate" / "importing" / "formats" / "mmrb2",
    ROOT / "curation" / "benchmarks" / "mmrb2",
)


def generic_modules() -> list[Path]:
    return [
        path
        for package in APPLICATION
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.parts and not any(path.is_relative_to(o) for o in OWNERS)
    ]


def mentions(paths: list[Path]) -> list[str]:
    return [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in paths
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if NAME.search(line)
    ]


def test_generic_code_names_no_format():
    modules = generic_modules()
    assert len(modules) > 100
    assert mentions(modules) == []


def test_the_owning_modules_are_where_the_name_is():
    """The search finds the name where it is (in either case), so the test
    above is not passing for want of looking."""
    for owner in OWNERS:
        assert mentions(sorted(owner.rglob("*.py"))), owner
    assert NAME.search("An MMRB2 task file") and NAME.search("mmrb2/t2i.json")
