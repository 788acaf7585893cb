"""The published benchmarks the studio releases and scores, one module each,
and the one dispatch table that finds them (DESIGN §3 and §8).

Every subpackage of curation.benchmarks whose `benchmark` module has a
`BENCHMARK` is one, found on first use, in the order of their `position`
(the order a release holds their files and a page shows their tables).
Nothing outside this package names a benchmark: the release build, the
evaluation service and command, the judge runner and the leaderboard loop
over `for_domains(...)` / `in_release(...)` / `all_benchmarks()` and ask each
one. `register` adds another (tests register a toy one this way).
"""

from __future__ import annotations

import importlib
import pkgutil
import threading
from collections.abc import Callable, Sequence
from typing import Any

from django.utils.functional import lazy

from curation.benchmarks.base import Benchmark, EvaluationError

_registry: dict[str, Benchmark] = {}
_loading = threading.Lock()
_loaded = threading.Event()


def discover() -> list[Benchmark]:
    """The `benchmark.BENCHMARK` of every subpackage of this package, by
    `position` then key (a stable order, whatever the file system's)."""
    package = importlib.import_module(__package__)
    found = []
    for module in pkgutil.iter_modules(package.__path__):
        if not module.ispkg:
            continue
        name = f"{__package__}.{module.name}.benchmark"
        try:
            found.append(importlib.import_module(name).BENCHMARK)
        except ModuleNotFoundError as exc:
            if exc.name != name:  # a missing import inside it is an error
                raise
    return sorted(found, key=lambda benchmark: (benchmark.position, benchmark.key))


def _load() -> dict[str, Benchmark]:
    if not _loaded.is_set():
        with _loading:  # threads of one process: discovered once, seen whole
            if not _loaded.is_set():
                found: dict[str, Benchmark] = {}
                for benchmark in discover():
                    if benchmark.key in found:
                        raise ValueError(f"two benchmark modules have the key {benchmark.key!r}")
                    found[benchmark.key] = benchmark
                _registry.update(found)
                _loaded.set()
    return _registry


def register(benchmark: Benchmark) -> None:
    """Add a benchmark after the built-in ones (its key must be new)."""
    registry = _load()
    if benchmark.key in registry:
        raise ValueError(f"a benchmark {benchmark.key!r} is already registered")
    registry[benchmark.key] = benchmark


def unregister(key: str) -> None:
    _load().pop(key, None)


def all_benchmarks() -> list[Benchmark]:
    return list(_load().values())


def known_keys() -> list[str]:
    return list(_load())


def get(key: str) -> Benchmark:
    try:
        return _load()[key]
    except KeyError:
        raise EvaluationError(f"Unknown benchmark {key!r}: use one of {known_keys()}.") from None


def for_domains(domains: Sequence[Any]) -> list[Benchmark]:
    """The benchmarks whose files a release of these domains holds."""
    return [b for b in all_benchmarks() if b.serves(domains)]


def in_release(release: Any) -> list[Benchmark]:
    """The benchmarks whose files a built release holds (its manifest says)."""
    return [b for b in all_benchmarks() if b.in_release(release)]


def default_for(release: Any) -> Benchmark | None:
    """The release's most specific benchmark: the first one it holds that
    recognises its own predictions (not the `detect_last` catch-all), else
    the catch-all. A judge run scores by it unless told otherwise."""
    held = in_release(release)
    specific = [b for b in held if not b.detect_last]
    return (specific or held or [None])[0]


def detect(head: str) -> Benchmark:
    """The benchmark whose predictions shape this file's start has."""
    benchmarks = all_benchmarks()
    for b in benchmarks:
        if not b.detect_last and b.detects(head):
            return b
    return next(b for b in benchmarks if b.detect_last)


def offering(member: str) -> list[Benchmark]:
    """The benchmarks that offer one of the optional members
    (base.OptionalMembers: score_files, export_project, id_prefix, …)."""
    return [b for b in all_benchmarks() if hasattr(b, member)]


def id_prefix(category: str) -> str | None:
    """The prefix the benchmark whose category this is gives a re-keyed ID
    of its items in its own files (None: no benchmark claims it), so that a
    benchmark writing the same item elsewhere gives it the same new ID."""
    for benchmark in offering("id_prefix"):
        prefix = benchmark.id_prefix(category)
        if prefix is not None:
            return prefix
    return None


def described(build: Callable[[list[Benchmark]], str]) -> str:
    """A text made from the registered benchmarks when it is shown, not when
    it is defined (help texts of classes made at import time)."""
    return lazy(lambda: build(all_benchmarks()), str)()
