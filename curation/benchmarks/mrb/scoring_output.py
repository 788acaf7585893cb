"""A scoring Report as JSON (``official`` holds the scorer's table, ``extras``
the rest) and as the text the ``evaluate`` command prints. No Django import.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from curation.benchmarks.mrb.scoring import (
    MACRO_BOOTSTRAP_RESAMPLES,
    MACRO_BOOTSTRAP_SEED,
    OFFICIAL_SEED,
    Report,
    wilson_interval,
)


def _interval(ci: tuple[float, float] | None) -> list[float] | None:
    return None if ci is None else [ci[0], ci[1]]


def report_as_dict(report: Report) -> dict[str, Any]:
    """JSON-ready: ``official`` holds the scorer's table, ``extras`` the rest."""
    cov = report.coverage
    out: dict[str, Any] = {
        "official": {
            "seed": OFFICIAL_SEED,
            "groups": [
                {
                    "name": g.name,
                    "level": g.level,
                    "correct": g.correct,
                    "total": g.total,
                    "accuracy": g.accuracy,
                }
                for g in report.groups
            ],
            "random_fallbacks": report.random_fallbacks,
            "kinds": report.kinds,
            "official_compat": report.official_compat,
        },
        "extras": {
            "macro_average": {
                "value": report.macro,
                "categories": report.macro_categories,
                "ci95": _interval(report.macro_ci),
                "ci_method": (
                    f"stratified bootstrap, {MACRO_BOOTSTRAP_RESAMPLES} resamples, "
                    f"seed {MACRO_BOOTSTRAP_SEED}"
                ),
            },
            "ci95": {g.name: _interval(g.ci) for g in report.groups},
            "ci_method": "Wilson score interval",
            "coverage": {
                "records": cov.n_records,
                "lines": cov.n_lines,
                "scored_lines": cov.n_scored,
                "missing": list(cov.missing),
                "unknown": list(cov.unknown),
                "scored_by_label": cov.scored_by_label,
                "duplicates": cov.duplicates,
                "mismatches": [
                    {
                        "line": m.line,
                        "ID": m.id,
                        "field": m.field,
                        "release": m.expected,
                        "predictions": m.got,
                    }
                    for m in cov.mismatches
                ],
                "strict_accuracy": cov.strict_accuracy,
                "strict_correct": cov.strict_correct,
            },
            "position": [
                {
                    "order": p.order,
                    "picks": p.picks,
                    "first_shown": p.first_shown,
                    "first_shown_rate": p.first_shown_rate,
                    "ci95": _interval(wilson_interval(p.first_shown, p.picks)),
                }
                for p in report.position
            ],
            "consistency": None,
        },
    }
    c = report.consistency
    if c is not None:
        out["extras"]["consistency"] = {
            "swapped_lines": c.n_lines,
            "swapped_accuracy": c.swapped.accuracy,
            "swapped_correct": c.swapped.correct,
            "swapped_scored": c.swapped.total,
            "swapped_random_fallbacks": report.swapped_random_fallbacks,
            "pairs": c.pairs,
            "consistent": c.consistent,
            "rate": c.rate,
            "ci95": _interval(c.ci),
            "both_correct": c.both_correct,
            "missing_swapped": c.missing,
        }
    return out


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4f}"


def _ci(ci: tuple[float, float] | None) -> str:
    return "n/a" if ci is None else f"[{ci[0]:.4f}, {ci[1]:.4f}]"


def _ids(ids: Sequence[str], limit: int) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f", … and {len(ids) - limit} more" if len(ids) > limit else "")


def format_report(report: Report, *, id_limit: int = 10) -> str:
    """The official table, then the extras under their own heading."""
    width = max([len("group"), *(len(g.name) + 2 for g in report.groups)])
    lines = [
        "Official scorer (Multimodal RewardBench scripts/2_get_accuracy.py semantics)",
        "",
        f"{'group':<{width}}  {'correct':>7}  {'total':>6}  {'accuracy':>8}",
    ]
    for g in report.groups:
        name = f"  {g.name}" if g.level == "sub_bucket" else g.name
        lines.append(f"{name:<{width}}  {g.correct:>7}  {g.total:>6}  {_pct(g.accuracy):>8}")
    pooled = [g.name for g in report.groups if g.level == "category"]
    split = [
        name
        for name in pooled
        if any(g.level == "sub_bucket" and g.name.startswith(name + "/") for g in report.groups)
    ]
    lines.append("")
    if split:
        lines.append(
            f"({', '.join(split)}: the official script prints only the sub-buckets; "
            "the category row pools them.)"
        )
    kinds = ", ".join(f"{k}: {n}" for k, n in report.kinds.items()) or "none"
    lines.append(f"Prediction lines by kind: {kinds}.")
    lines.append(
        f"Random verdicts (no [[A]]/[[B]], random.seed({OFFICIAL_SEED})): {report.random_fallbacks}"
    )

    cov = report.coverage
    lines += [
        "",
        "Extras (not computed by the official scorer)",
        "",
        f"Macro average over the {report.macro_categories} categories with predictions: "
        f"{_pct(report.macro)}  "
        f"95% CI {_ci(report.macro_ci)} (stratified bootstrap)",
        "",
        f"{'group':<{width}}  {'95% CI (Wilson)':>18}",
    ]
    for g in report.groups:
        name = f"  {g.name}" if g.level == "sub_bucket" else g.name
        lines.append(f"{name:<{width}}  {_ci(g.ci):>18}")
    lines += [
        "",
        f"Coverage: {cov.n_scored} of {cov.n_lines} lines scored; "
        f"{cov.n_records - len(cov.missing)} of {cov.n_records} release items predicted.",
        f"  missing IDs: {len(cov.missing)}"
        + (f" ({_ids(cov.missing, id_limit)})" if cov.missing else ""),
        (
            f"  unknown IDs (not in the release; --official-compat: lines with Label scored "
            f"against it, {cov.scored_by_label} lines): {len(cov.unknown)}"
            if report.official_compat
            else f"  unknown IDs (not in the release, not scored): {len(cov.unknown)}"
        )
        + (f" ({_ids(cov.unknown, id_limit)})" if cov.unknown else ""),
        f"  repeated IDs (each line counted, as the official script does): {len(cov.duplicates)}"
        + (
            f" ({_ids([f'{k} x{v}' for k, v in cov.duplicates.items()], id_limit)})"
            if cov.duplicates
            else ""
        ),
        f"  lines disagreeing with the release (Label / Meta.Category): {len(cov.mismatches)}"
        + (
            " ("
            + _ids(
                [f"line {m.line} {m.id} {m.field} {m.got}≠{m.expected}" for m in cov.mismatches],
                id_limit,
            )
            + ")"
            if cov.mismatches
            else ""
        ),
        f"  strict accuracy (first line per item, missing = wrong): "
        f"{cov.strict_correct} / {cov.n_records} = {_pct(cov.strict_accuracy)}",
    ]
    for p in report.position:
        lines.append(
            f"First-shown response picked ({p.order} order): {p.first_shown} / {p.picks} = "
            f"{_pct(p.first_shown_rate)}  95% CI {_ci(wilson_interval(p.first_shown, p.picks))}"
        )
    c = report.consistency
    if c is not None:
        lines += [
            "",
            f"Position consistency: {c.consistent} / {c.pairs} = {_pct(c.rate)}  "
            f"95% CI {_ci(c.ci)}",
            f"  swapped-order accuracy: {c.swapped.correct} / {c.swapped.total} = "
            f"{_pct(c.swapped.accuracy)} ({report.swapped_random_fallbacks} random verdicts)",
            f"  correct in both orders: {c.both_correct}; items without a swapped line: "
            f"{c.missing}",
        ]
    return "\n".join(lines) + "\n"
