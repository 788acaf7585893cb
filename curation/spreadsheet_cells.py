"""CSV that a spreadsheet opens as data, never as formulas (CSV injection).

A cell that begins with = + - @, a tab or a carriage return is read by Excel,
LibreOffice and Google Sheets as a formula (=HYPERLINK(...), =cmd|...), and
model names, reasons, IDs and audit JSON come from users and datasets. Such
a cell gets a leading apostrophe (OWASP's advice), which spreadsheets hide;
numbers (-0.25) are left alone. No Django import."""

from __future__ import annotations

import csv
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return text.strip() == text and text.lower().lstrip("+-") not in ("inf", "infinity", "nan")


def neutralised(value: Any) -> Any:
    """`value`, with an apostrophe in front if a spreadsheet would take it
    as a formula."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _is_number(value):
        return "'" + value
    return value


class SafeWriter:
    """csv.writer whose rows are neutralised cell by cell."""

    def __init__(self, out, **kwargs):
        self._writer = csv.writer(out, **kwargs)

    def writerow(self, row):
        return self._writer.writerow([neutralised(cell) for cell in row])
