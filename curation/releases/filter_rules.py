"""The release filters' rules on plain per-item tallies (issue 36 item 4):
pure Python, no Django. curation.releases.filters reads the tallies (one
query each) and states the same rules as SQL (`with_outcome`), which the
tests hold equal; at 100,000 items three plain reads and this loop take a
fraction of the SQL form's six grouped subqueries.

The comparisons are written as the SQL's (a count times a share, in floats),
so both give the same answer at a boundary."""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

ORDER = ("too_easy", "low_consensus", "disagreement")


class Human(NamedTuple):
    n: int  # current studio votes
    one: int
    two: int
    tie: int


class Prediction(NamedTuple):
    item_id: int
    evaluation_id: int  # an evaluation's id, or minus a project judge run's
    choice: str
    swapped_choice: str
    has_swapped: bool


def entry_ids(spec: dict) -> set[int]:
    """A filter's ensemble entries: its evaluation ids and minus the id of
    each of its project judge runs (Prediction.evaluation_id's terms)."""
    return set(spec.get("evaluations", [])) | {-r for r in spec.get("judge_runs", [])}


def ensemble_tallies(predictions: Iterable[Prediction], ids: set[int]) -> dict[int, list[int]]:
    """{item: [ensemble votes, for side 1, for side 2]} of the entries `ids`."""
    out: dict[int, list[int]] = {}
    for p in predictions:
        if p.evaluation_id not in ids:
            continue
        row = out.setdefault(p.item_id, [0, 0, 0])
        row[0] += 1 + p.has_swapped
        row[1] += (p.choice == "1") + (p.has_swapped and p.swapped_choice == "1")
        row[2] += (p.choice == "2") + (p.has_swapped and p.swapped_choice == "2")
    return out


def too_easy(predictions: Iterable[Prediction], ids: set[int], labels: dict[int, str]) -> set[int]:
    right: dict[int, set[int]] = {}
    for p in predictions:
        label = labels.get(p.item_id)
        if p.evaluation_id in ids and p.has_swapped and p.choice == label == p.swapped_choice:
            right.setdefault(p.item_id, set()).add(p.evaluation_id)
    return {item for item, entries in right.items() if len(entries) >= len(ids)}


def low_consensus(human: Human | None, threshold: float) -> bool:
    if human is None or human.n <= 0:
        return False
    return float(max(human.one, human.two, human.tie)) < float(human.n) * threshold


def disagreement(human: Human | None, ensemble: list[int] | None, h: float, e: float) -> bool:
    if human is None or human.n <= 0 or not ensemble or ensemble[0] <= 0:
        return False
    n, share = float(human.n), float(ensemble[0])
    e1, e2 = float(ensemble[1]) >= share * e, float(ensemble[2]) >= share * e
    h1, h2, ht = (float(x) >= n * h for x in (human.one, human.two, human.tie))
    return (e2 and (h1 or ht)) or (e1 and (h2 or ht))


def outcomes(
    labels: dict[int, str],
    filters: dict,
    humans: dict[int, Human],
    predictions: list[Prediction],
) -> dict[int, str]:
    """{item: the first filter of ORDER that matches it} (kept items absent)."""
    easy: set[int] = set()
    if "too_easy" in filters:
        easy = too_easy(predictions, entry_ids(filters["too_easy"]), labels)
    ens: dict[int, list[int]] = {}
    if "disagreement" in filters:
        ens = ensemble_tallies(predictions, entry_ids(filters["disagreement"]))
    out: dict[int, str] = {}
    for item in labels:
        if item in easy:
            out[item] = "too_easy"
        elif "low_consensus" in filters and low_consensus(
            humans.get(item), filters["low_consensus"]["threshold"]
        ):
            out[item] = "low_consensus"
        elif "disagreement" in filters:
            d = filters["disagreement"]
            if disagreement(humans.get(item), ens.get(item), d["human"], d["ensemble"]):
                out[item] = "disagreement"
    return out
