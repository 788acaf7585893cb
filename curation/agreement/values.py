"""The values agreement statistics take (a number, an Interval, or Undefined
with its reason) and their JSON form in the stored agreement snapshot.

Pure Python, no numpy: pages and the API that only show stored or computed
figures format them without loading the numeric stack (issue 32's memory
targets); curation.agreement.stats computes them and re-exports these."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


@dataclass(frozen=True, slots=True)
class Undefined:
    """A statistic that has no value for this data, and why."""

    reason: str

    def __str__(self) -> str:
        return f"undefined ({self.reason})"


Stat = float | Undefined


class Interval(NamedTuple):
    low: float
    high: float


def to_json(value) -> dict:
    """A statistic as JSON: {"value"}, {"low", "high"} or {"undefined"}."""
    if isinstance(value, Undefined):
        return {"undefined": value.reason}
    if isinstance(value, tuple):
        return {"low": float(value[0]), "high": float(value[1])}
    return {"value": float(value)}


def from_json(value: dict | None):
    """Inverse of to_json; None when the snapshot has nothing yet."""
    if not value:
        return None
    if "undefined" in value:
        return Undefined(value["undefined"])
    if "low" in value:
        return Interval(value["low"], value["high"])
    return value["value"]
