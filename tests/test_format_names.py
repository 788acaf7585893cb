"""Formats are seams, not branches (issue 32 item 3): the names of the
Multimodal RewardBench 2 and MM-RLHF-RewardBench formats appear in the
application only in their input format modules and their benchmark modules
(and migrations, templates, tests, docs). Generic code asks the registries;
a mention creeping back into it fails here, naming file and line."""

import ast
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


# --- every registered benchmark key and format name -----------------------------------
#
# The same rule for all of them, found through the registries (a benchmark or
# format added later is guarded with no edit here): its name appears in the
# application's code (names, imports, string values; not comments or
# docstrings) only in the modules that own it, its benchmark package and its
# format module, and in the places allowed below, each saying why.

# Format names that are also words of the studio's own vocabulary (a pair, a
# parquet file, a release, a ranking task): for them only the forms that can
# only mean the format or benchmark are guarded, its export-Category prefix
# ("ranked/") and its module path (curation.benchmarks.ranked, …formats.ranked).
VOCABULARY = {"pairs", "parquet", "release", "ranked"}

# (module, name): why the name must stay there.
ALLOWED = {
    # The MRB/pairs record reader (parse.py) is shared by the two formats that
    # give MRB-shaped records, the JSON/JSONL one and the parquet one; its
    # record shape is named "mrb" (ParsedItem.meta["format"], stored on items).
    ("annotate/importing/parse.py", "mrb"): "the shared MRB/pairs reader",
    ("annotate/importing/hfparquet.py", "mrb"): "parquet rows of the MRB record shape",
    ("annotate/importing/images.py", "mrb"): "the MRB record shape's image field",
    ("annotate/importing/records.py", "mrb"): "the record shapes the shared reader reads",
    # Domain presets of a new project (the six MRB domains, the default),
    # a choice on the setup form and API, not the format.
    ("annotate/setup/presets.py", "mrb"): "domain preset",
    ("annotate/setup/service.py", "mrb"): "domain preset default",
    ("annotate/setup/forms.py", "mrb"): "domain preset default",
    ("annotate/setup/api.py", "mrb"): "domain preset default and help",
    # VL-RewardBench's three domains, a preset too (guarded once a vlrb format
    # or benchmark registers; an allowance of an unregistered name is inert).
    ("annotate/setup/presets.py", "vlrb"): "domain preset",
    ("annotate/setup/api.py", "vlrb"): "domain preset help",
    # Evaluation.scoring's default, fixed in migrations (existing rows).
    ("curation/models/evaluation.py", "mrb"): "model field default",
    # The import service unpacks a studio release zip before a format reads it.
    ("annotate/importing/service.py", "release"): "release zips unpacked first",
    # Formats whose files become MRB-shaped records read them with the MRB
    # format's reader (a parquet file's rows, a release's all_data.json).
    ("annotate/importing/formats/parquet.py", "mrb"): "reads its rows as MRB records",
    ("annotate/importing/formats/release.py", "mrb"): "reads all_data.json as MRB records",
    # MM-RLHF-RewardBench's judge asks MRB's pair prompt (one benchmark's
    # module reusing another's; a shared pair prompt would lift it).
    ("curation/benchmarks/mmrlhf/judge.py", "mrb"): "reuses MRB's judge prompt",
}


def _module_dir(module) -> Path:
    path = Path(module.__file__)
    return path.parent if path.name == "__init__.py" else path


def registered_owners() -> dict[str, set[Path]]:
    """Every registered benchmark key and format name -> the modules owning
    it: a benchmark's package, a format's module, and both for the names of
    a format whose first name is a benchmark's key (rb2 is RewardBench 2's)."""
    import importlib

    from annotate.importing import formats
    from curation.benchmarks import registry

    owners = {
        b.key: {_module_dir(importlib.import_module(type(b).__module__.rpartition(".")[0]))}
        for b in registry.all_benchmarks()
    }
    for module in formats.FORMATS:
        group = {_module_dir(module), *owners.get(module.NAMES[0], ())}
        for name in module.NAMES:
            owners.setdefault(name, set()).update(group)
    return owners


def _docstrings(tree: ast.AST) -> set[int]:
    kinds = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, kinds)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def code_words(path: Path) -> list[tuple[int, str, bool]]:
    """(line, text, is a module path) of the module's names, imports and
    string values (not its docstrings or comments)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = _docstrings(tree)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings:
                out.append((node.lineno, node.value, False))
        elif isinstance(node, ast.Name):
            out.append((node.lineno, node.id, False))
        elif isinstance(node, ast.Attribute):
            out.append((node.lineno, node.attr, False))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, alias.name, True) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            out += [(node.lineno, f"{node.module}.{alias.name}", True) for alias in node.names]
    return out


def _pattern(name: str) -> re.Pattern:
    """The name as a word (case as registered: "MRB" in a sentence is prose);
    a vocabulary word only as a module path or, a benchmark's key, as its
    export-Category prefix."""
    word = re.escape(name)
    if name not in VOCABULARY:
        return re.compile(rf"\b{word}\b")
    from curation.benchmarks import registry

    prefix = rf"(?<![\w-]){word}/|" if name in registry.known_keys() else ""
    return re.compile(rf"{prefix}\.(benchmarks|formats)\.{word}(\.|$)")


def named_outside_owners() -> list[str]:
    owners = registered_owners()
    patterns = {name: _pattern(name) for name in owners}
    found = []
    for package in APPLICATION:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            relative = str(path.relative_to(ROOT))
            words = code_words(path)
            for name, pattern in patterns.items():
                if any(path == o or path.is_relative_to(o) for o in owners[name]):
                    continue
                for line, text, is_path in words:
                    if (is_path or name not in VOCABULARY or "/" in text) and pattern.search(text):
                        found.append(f"{relative}:{line}: {name}: {text[:80]!r}")
    return found


def test_generic_code_names_no_registered_benchmark_or_format():
    """A benchmark key or format name in code outside its own modules fails
    here (file, line, name), unless ALLOWED says why it must stay."""
    found = named_outside_owners()
    left = [f for f in found if (f.split(":")[0], f.split(": ")[1]) not in ALLOWED]
    assert left == []


def test_every_allowed_mention_is_still_there():
    """An allowance nobody needs any more is removed, so the list stays the
    list of what is left to move behind the seams."""
    owners = registered_owners()
    found = {(f.split(":")[0], f.split(": ")[1]) for f in named_outside_owners()}
    stale = [key for key in ALLOWED if key[1] in owners and key not in found]
    assert stale == []


def test_the_guard_sees_every_kind_of_mention(tmp_path):
    """A string, a name, an import and a prefix are found; a comment, a
    docstring and a vocabulary word alone are not."""
    module = tmp_path / "m.py"
    module.write_text(
        '"""About rewardbench2."""\n'
        "from curation.benchmarks.ranked import card  # rewardbench2\n"
        'FMT = "rb2"\n'
        "mmrb2_reader = 1\n"
        'CATEGORY = "ranked/general"\n'
        'WORD = "ranked"\n',
        encoding="utf-8",
    )
    words = code_words(module)
    hits = {
        name
        for name in ("rewardbench2", "rb2", "ranked", "mmrb2")
        for _, text, is_path in words
        if (is_path or name not in VOCABULARY or "/" in text) and _pattern(name).search(text)
    }
    assert hits == {"rb2", "ranked"}
    assert any(_pattern("ranked").search(t) for _, t, _ in words if "benchmarks" in t)
