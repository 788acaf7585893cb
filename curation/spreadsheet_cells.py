"""CSV that a spreadsheet opens as data, never as formulas (CSV injection).

A cell that begins with = + - @, a tab or a carriage return is read by Excel,
LibreOffice and Google Sheets as a formula (=HYPERLINK(...), =cmd|...), and
model names, reasons, IDs and audit JSON come from users and datasets. Such
a cell gets a leading apostrophe (OWASP's advice), which spreadsheets hide;
numbers (-0.25) are left alone.

A cell is not always opened as the one cell it is: a spreadsheet set to a
locale that splits on ";" (or told to split on tabs, "|" or ","), or a tool
that splits lines first, cuts `a;=1+1` into `a` and the formula `=1+1`
(issue 29). So a formula trigger that follows any such separator (spaces or
a quote between them allowed) gets an apostrophe too, after the separator:
`a;'=1+1`. A piece between separators that is a number (`0.5;-0.25`) is
left alone, and so is every cell with no trigger: those are written byte for
byte as before. No Django import."""

from __future__ import annotations

import csv
import re
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# What splits one cell into several when a reader's separator is not ours.
SEPARATORS = ",;\t\r\n|"
# A trigger after a separator: the piece from there to the next separator.
_AFTER_SEPARATOR = re.compile(r"(?<=[,;\t\r\n|])([ \"]*[=+\-@][^,;\t\r\n|]*)")
_SPLIT_TRIGGER = re.compile(r"[,;\t\r\n|][ \"]*[=+\-@]")


def needs_a_look(text: str) -> bool:
    """Whether a spreadsheet could find a formula in `text`. Cheap tests
    first: most cells start with no trigger and hold none at all (an export
    asks this of every text cell)."""
    if text.startswith(FORMULA_STARTS):
        return True
    if "=" in text or "+" in text or "-" in text or "@" in text:
        return _SPLIT_TRIGGER.search(text) is not None
    return False


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return text.strip() == text and text.lower().lstrip("+-") not in ("inf", "infinity", "nan")


def _guard_piece(match: re.Match) -> str:
    piece = match.group(1)
    return piece if _is_number(piece) else "'" + piece


def neutralised(value: Any) -> Any:
    """`value`, with an apostrophe in front of every piece a spreadsheet
    would take as a formula: the cell's start, and any piece that follows a
    separator."""
    if not isinstance(value, str) or not needs_a_look(value):
        return value
    text = _AFTER_SEPARATOR.sub(_guard_piece, value)
    if value.startswith(FORMULA_STARTS) and not _is_number(value):
        text = "'" + text
    return text


class SafeWriter:
    """csv.writer whose rows are neutralised cell by cell."""

    def __init__(self, out, **kwargs):
        self._writer = csv.writer(out, **kwargs)

    def writerow(self, row):
        return self._writer.writerow([neutralised(cell) for cell in row])
