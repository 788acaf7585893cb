"""The published benchmarks the studio releases and scores, one module each,
and the one dispatch table that finds them (DESIGN §3 and §8).

`BUILT_IN` lists them in the order a release holds their files and a page
shows their tables. Nothing outside this package names a benchmark: the
release build, the evaluation service, the judge runner and the leaderboard
loop over `for_domains(...)` / `in_release(...)` and ask each one.
`register` adds another (tests register a toy one this way).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.utils.module_loading import import_string

from curation.benchmarks.base import Benchmark, EvaluationError

BUILT_IN = (
    "curation.benchmarks.mrb.benchmark.BENCHMARK",
    "curation.benchmarks.mmrb2.benchmark.BENCHMARK",
    "curation.benchmarks.rewardbench2.benchmark.BENCHMARK",
)

_registry: dict[str, Benchmark] = {}


def _load() -> dict[str, Benchmark]:
    if not _registry:
        for path in BUILT_IN:
            benchmark = import_string(path)
            _registry.setdefault(benchmark.key, benchmark)
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
