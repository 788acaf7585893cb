"""Reading a JSONL predictions file, the steps the benchmarks' scorers share
(pure: no Django import); each scorer keeps its own fields and messages."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any


def first_line_object(head: str) -> dict | None:
    """The JSON object on the first line of a file's start (`head`), or None
    when that line is no JSON object (or nested too deeply to read)."""
    first = head.lstrip().split("\n", 1)[0]
    try:
        record = json.loads(first)
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def prediction_lines(
    text: str, filename: str, error: type[Exception], expected: str
) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """Each non-blank line of `text` as (its number, ``file:line``, its JSON object);
    a line that is not JSON, nested too deeply, or not an object raises
    `error` naming the file and line (`expected`: what the object holds)."""
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{filename}:{n}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(f"{where}: not valid JSON ({exc.msg})") from None
        except RecursionError:
            raise error(f"{where}: values nested too deeply") from None
        if not isinstance(record, dict):
            raise error(f"{where}: expected an object with {expected}")
        yield n, where, record
