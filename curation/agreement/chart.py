"""The agreement dashboard's chart: alpha per domain with its bootstrap
interval, as coordinates for a server-rendered SVG (no JavaScript)."""

from __future__ import annotations

from collections.abc import Sequence

from curation.agreement import stats as agreement

CHART_WIDTH, CHART_HEIGHT = 640, 240
CHART_LEFT, CHART_RIGHT, CHART_TOP, CHART_BOTTOM = 48, 16, 16, 56


def alpha_chart(rows: Sequence) -> dict:
    """Coordinates for a dot-and-whisker chart of alpha (with its CI) per domain."""
    lows = [0.0]
    for r in rows:
        if isinstance(r.summary.choice.alpha, float):
            lows.append(r.summary.choice.alpha)
        if isinstance(r.alpha_ci, agreement.Interval):
            lows.append(r.alpha_ci.low)
    y_min = max(-1.0, min(-0.2, (min(lows) // 0.2) * 0.2))
    y_max = 1.0
    plot_h = CHART_HEIGHT - CHART_TOP - CHART_BOTTOM
    plot_w = CHART_WIDTH - CHART_LEFT - CHART_RIGHT

    def y(value: float) -> float:
        return round(CHART_TOP + (y_max - value) / (y_max - y_min) * plot_h, 1)

    step = plot_w / max(1, len(rows))
    points = []
    for i, r in enumerate(rows):
        x = round(CHART_LEFT + step * (i + 0.5), 1)
        alpha = r.summary.choice.alpha
        words = r.title.split(" ", 1)
        point = {"x": x, "label": r.title, "lines": words, "defined": isinstance(alpha, float)}
        if isinstance(alpha, float):
            point.update(y=y(alpha), value=f"{alpha:.3f}")
        if isinstance(r.alpha_ci, agreement.Interval):
            point.update(y_low=y(r.alpha_ci.low), y_high=y(r.alpha_ci.high))
        points.append(point)
    ticks = []
    value = y_max
    while value >= y_min - 1e-9:
        ticks.append({"y": y(value), "label": f"{value:.1f}"})
        value = round(value - 0.2, 10)
    return {
        "width": CHART_WIDTH,
        "height": CHART_HEIGHT,
        "left": CHART_LEFT,
        "right": CHART_WIDTH - CHART_RIGHT,
        "bottom": CHART_HEIGHT - CHART_BOTTOM,
        "label_y": CHART_HEIGHT - CHART_BOTTOM + 18,
        "zero": y(0.0),
        "points": points,
        "ticks": ticks,
    }
