"""Formatting of statistics: numbers, intervals and "undefined" with its reason."""

import re

from django import template
from django.utils.html import escape, format_html
from django.utils.safestring import mark_safe

from curation.agreement import values as agreement  # no numpy: issue 32

register = template.Library()


def _number(value: float, style: str) -> str:
    if style == "pct":
        return f"{100 * value:.1f}%"
    if style == "signed":
        return f"{value:+.3f}"
    if style == "p":
        return "< 0.001" if value < 0.001 else f"{value:.3f}"
    return f"{value:.3f}"


@register.filter
def stat(value, style: str = ""):
    """`{{ x|stat }}`, `{{ x|stat:"pct" }}`, `{{ x|stat:"signed" }}`, `{{ x|stat:"p" }}`."""
    if value is None:
        return format_html('<span class="muted" title="not computed yet">{}</span>', "…")
    if isinstance(value, agreement.Undefined):
        return format_html('<span class="undefined" title="{}">undefined</span>', value.reason)
    if isinstance(value, agreement.Interval):
        return format_html("[{}, {}]", _number(value.low, style), _number(value.high, style))
    return _number(float(value), style)


@register.filter
def wrap_slashes(value: str):
    """A long "a_b/c_d" column name may break after each slash or underscore
    (a narrow table)."""
    parts = [escape(p) for p in re.split(r"(?<=[/_])", str(value))]
    return mark_safe("<wbr>".join(parts))


@register.filter
def ci_range(interval) -> str:
    """A 95% interval as "83.2\u2013100.0" (in %, the column says so)."""
    if not interval:
        return ""
    return f"{100 * interval[0]:.1f}\u2013{100 * interval[1]:.1f}"
