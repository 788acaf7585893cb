"""Formats are seams, not branches (issue 32 item 3): the names of the
Multimodal RewardBench 2 and MM-RLHF-RewardBench formats appear in the
application only in their input format modules and their benchmark modules
(and migrations, templates, tests, docs). Generic code asks the registries;
a mention creeping back into it fails here, naming file and line."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APPLICATION = ("annotate", "curation", "common", "config")
FORMATS = ROOT / "annotate" / "importing" / "formats"
BENCHMARKS = ROOT / "curation" / "benchmarks"
# Each guarded name and the modules that own it: its reader and its benchmark.
GUARDS = {
    "mmrb2": (re.compile("mmrb2", re.IGNORECASE), (FORMATS / "mmrb2", BENCHMARKS / "mmrb2")),
    "mmrlhf": (
        re.compile("mmrlhf", re.IGNORECASE),
        (FORMATS / "mmrlhf.py", BENCHMARKS / "mmrlhf"),
    ),
}
NAME, OWNERS = GUARDS["mmrb2"]


def generic_modules(owners=OWNERS) -> list[Path]:
    return [
        path
        for package in APPLICATION
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.parts
        and not any(path == o or path.is_relative_to(o) for o in owners)
    ]


def mentions(paths: list[Path], name=NAME) -> list[str]:
    return [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in paths
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if name.search(line)
    ]


@pytest.mark.parametrize("guard", sorted(GUARDS))
def test_generic_code_names_no_format(guard):
    name, owners = GUARDS[guard]
    modules = generic_modules(owners)
    assert len(modules) > 100
    assert mentions(modules, name) == []


@pytest.mark.parametrize("guard", sorted(GUARDS))
def test_the_owning_modules_are_where_the_name_is(guard):
    """The search finds the name where it is (in either case), so the test
    above is not passing for want of looking."""
    name, owners = GUARDS[guard]
    for owner in owners:
        files = [owner] if owner.is_file() else sorted(owner.rglob("*.py"))
        assert mentions(files, name), owner
    assert NAME.search("An MMRB2 task file") and NAME.search("mmrb2/t2i.json")
    assert GUARDS["mmrlhf"][0].search("format=MMRLHF")
