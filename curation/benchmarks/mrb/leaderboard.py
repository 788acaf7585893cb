"""The Multimodal RewardBench table of a release's leaderboard page: one
row per entry with its official accuracy per column (overall, Category,
sub-bucket) and the extras (Wilson intervals, macro average, coverage,
position consistency), sortable, with a chart and a CSV download.
No Django import."""

from __future__ import annotations

import re
from typing import Any

CHART_COLOURS = ["#2557d6", "#d9480f", "#2b8a3e", "#862e9c", "#e67700", "#0b7285", "#c2255c"]
ENDS = ("low", "high")


def rows_of(evaluations) -> tuple[list[str], list[dict]]:
    """Column names (overall, categories, sub-buckets in release order) and one
    row per evaluation with its accuracy per column and extras."""
    columns: list[str] = []
    rows = []
    for e in evaluations:
        groups = e.report.get("official", {}).get("groups", [])
        for g in groups:
            if g["name"] not in columns:
                columns.append(g["name"])
        extras = e.report.get("extras", {})
        intervals = extras.get("ci95", {})
        coverage = extras.get("coverage", {})
        rows.append(
            {
                "evaluation": e,
                "accuracy": {g["name"]: g["accuracy"] for g in groups},
                # Per column: correct, total and the Wilson 95% interval (extras).
                "counts": {g["name"]: (g["correct"], g["total"]) for g in groups},
                "ci": {g["name"]: _pair(intervals.get(g["name"])) for g in groups},
                "macro": extras.get("macro_average", {}).get("value"),
                "macro_ci": _pair(extras.get("macro_average", {}).get("ci95")),
                "missing": len(coverage.get("missing", [])),
                "unknown": len(coverage.get("unknown", [])),
                "consistency": (extras.get("consistency") or {}).get("rate"),
                # Scored with official_compat: unknown IDs by their own Label.
                "official_compat": e.report.get("official", {}).get("official_compat", False),
                "scored_by_label": extras.get("coverage", {}).get("scored_by_label", 0),
            }
        )
        if extras.get("acc_plus"):  # issue 34: only where the release has groups
            rows[-1]["acc_plus"] = extras["acc_plus"]["value"]
            rows[-1]["acc_plus_counts"] = _acc_plus_counts(extras["acc_plus"])
    return columns, rows


def _acc_plus_counts(acc_plus) -> tuple[int, int] | None:
    return (acc_plus["correct_groups"], acc_plus["groups"]) if acc_plus else None


def has_acc_plus(rows: list[dict]) -> bool:
    """Whether any entry has Acc+ (its release has groups): the column shows."""
    return any(r.get("acc_plus_counts") for r in rows)


def _pair(interval) -> tuple[float, float] | None:
    """A stored interval ([low, high], scoring_output) as a pair, or None."""
    return (interval[0], interval[1]) if interval else None


def sort_rows(rows: list[dict], columns: list[str], sort: str) -> None:
    """Best first by a column's accuracy or the macro average (no value last)."""
    if sort not in columns and sort not in ("macro", "acc_plus"):
        return

    def key(row):
        value = row.get(sort) if sort in ("macro", "acc_plus") else row["accuracy"].get(sort)
        return (value is None, -(value or 0))

    rows.sort(key=key)


def with_cells(rows: list[dict], columns: list[str]) -> None:
    """Each row's colour (chart and table) and its cells in column order."""
    for i, r in enumerate(rows):
        r["colour"] = CHART_COLOURS[i % len(CHART_COLOURS)]
        r["cells"] = [
            {"value": r["accuracy"].get(c), "ci": r["ci"].get(c), "counts": r["counts"].get(c)}
            for c in columns
        ]


def csv_rows(columns: list[str], rows: list[dict]) -> list[list[Any]]:
    """The CSV download: a header, then one line per entry."""
    out: list[list[Any]] = [
        ["model", *columns, "macro_average_extra", "missing_ids_extra", "unknown_ids_extra"]
        + [f"{c} ci95_{end}_extra" for c in [*columns, "macro_average"] for end in ENDS]
    ]
    for r in rows:
        intervals = [r["ci"].get(c) for c in columns] + [r["macro_ci"]]
        out.append(
            [r["evaluation"].name]
            + [_csv_number(r["accuracy"].get(c)) for c in columns]
            + [_csv_number(r["macro"]), r["missing"], r["unknown"]]
            + [_csv_number(ci[i] if ci else None) for ci in intervals for i in (0, 1)]
        )
    if has_acc_plus(rows):  # a release with groups: Acc+ last
        out[0].append("acc_plus_extra")
        for line, r in zip(out[1:], rows, strict=True):
            line.append(_csv_number(r.get("acc_plus")))
    return out


def _csv_number(value) -> str:
    return "" if value is None else f"{value:.6f}"


def chart(columns, rows) -> dict:
    """Accuracy per column (x) for each model (coloured dots), 0-100% on y."""
    width, height, left, right, top, bottom = 760, 260, 44, 12, 12, 80
    step = (width - left - right) / max(1, len(columns))
    points = []
    # Each model has its own place within a column (equal scores never hide
    # each other), with its 95% interval as a whisker.
    spread = min(12.0, step * 0.7 / max(1, len(rows)))

    def y_of(value: float) -> float:
        return round(top + (1 - value) * (height - top - bottom), 1)

    for m, r in enumerate(rows):
        offset = (m - (len(rows) - 1) / 2) * spread
        for i, c in enumerate(columns):
            value = r["accuracy"].get(c)
            if value is None:
                continue
            ci = r["ci"].get(c)
            band = f" (95% CI {100 * ci[0]:.1f} to {100 * ci[1]:.1f}%)" if ci else ""
            points.append(
                {
                    "x": round(left + step * (i + 0.5) + offset, 1),
                    "y": y_of(value),
                    "low": y_of(ci[0]) if ci else None,
                    "high": y_of(ci[1]) if ci else None,
                    "colour": r["colour"],
                    "title": f"{r['evaluation'].name} · {c}: {100 * value:.1f}%{band}",
                }
            )
    # Names break after "/" and "_" (open_/generation/…): a column is narrow.
    labels = [
        {"x": round(left + step * (i + 0.5), 1), "lines": re.split(r"(?<=[/_])", c)}
        for i, c in enumerate(columns)
    ]
    ticks = [
        {"y": round(top + (1 - v / 100) * (height - top - bottom), 1), "label": f"{v}%"}
        for v in (0, 25, 50, 75, 100)
    ]
    return {
        "width": width,
        "height": height,
        "left": left,
        "right": width - right,
        "label_y": height - bottom + 16,
        "points": points,
        "labels": labels,
        "ticks": ticks,
    }
