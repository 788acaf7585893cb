"""Scoring predictions against a Multimodal RewardBench 2 task file. No Django import.

This reproduces the benchmark's official scorer (facebookresearch/MMRB2,
``evaluate/compute_scores/compute_accuracy.py``) rule for rule:

* A task file is ``{"pairs": [...]}``; each pair's ground truth is its
  ``chosen`` (``"A"`` or ``"B"``).
* Predictions map a pair ``id`` to ``{"forward": [...], "reverse": [...]}``;
  only the **first** entry of each list counts, through its ``judgement``.
* A judgement that is missing, ``null`` or empty (any falsy value) is
  skipped: it is neither right nor wrong. Any other value is one judgement
  evaluated.
* The reverse run showed the responses swapped, so its judgement is flipped
  ``A`` <-> ``B`` before comparing; other values are compared unflipped.
* Comparison is exact and case-sensitive: ``"tie"``, ``"a"``, ``"[[A]]"``
  count as wrong.
* A pair of the task file with no entry in the predictions is *missing*; it
  adds nothing to the accuracy. Prediction IDs absent from the task file are
  ignored by the official scorer; here they are counted under ``unknown``.
* Accuracy per task = correct / judgements evaluated (0.0 when none were);
  **overall = all correct / all judgements evaluated across the tasks**, not
  the mean of the task accuracies.
* Percentages print with ``f"{100 * accuracy:.2f}"`` (53.425 % prints 53.42,
  as the float nearest 0.53425 lies below it).

Beyond the official table we also count the same way per ``prompt_source``
(a sub-bucket of a task). A prediction entry that is not shaped as the
format says (not an object, a list that is not a list, a first entry that is
not an object) is an error naming the ID and the field: the official script
would crash on it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

DIRECTIONS = ("forward", "reverse")


class PredictionsError(ValueError):
    """A predictions file that is not in the published format."""


@dataclass
class Tally:
    """Counts of one bucket (a task, or one prompt_source within it)."""

    total_pairs: int = 0
    evaluated_pairs: int = 0
    missing_pairs: int = 0
    correct: int = 0
    judged: int = 0

    @property
    def accuracy(self) -> float:
        return self.correct / self.judged if self.judged else 0.0

    @property
    def percent(self) -> str:
        return percent(self.accuracy)

    def add(self, other: Tally) -> None:
        self.total_pairs += other.total_pairs
        self.evaluated_pairs += other.evaluated_pairs
        self.missing_pairs += other.missing_pairs
        self.correct += other.correct
        self.judged += other.judged


@dataclass
class TaskScore:
    task: str
    tally: Tally
    by_source: dict[str, Tally] = field(default_factory=dict)
    unknown_ids: int = 0


@dataclass
class Scores:
    tasks: list[TaskScore]

    @property
    def overall(self) -> Tally:
        pooled = Tally()
        for task in self.tasks:
            pooled.add(task.tally)
        return pooled


def percent(accuracy: float) -> str:
    return f"{accuracy * 100:.2f}"


def flip(judgement: Any) -> Any:
    if judgement == "A":
        return "B"
    if judgement == "B":
        return "A"
    return judgement


def first_judgement(entry: Any, pair_id: str, direction: str) -> Any:
    """The judgement that counts for one direction of one pair, or None."""
    if not isinstance(entry, Mapping):
        raise PredictionsError(f"prediction {pair_id!r}: expected an object")
    runs = entry.get(direction)
    if runs is None:
        return None
    if not isinstance(runs, list):
        raise PredictionsError(f"prediction {pair_id!r}: field '{direction}' must be a list")
    if not runs:
        return None
    if not isinstance(runs[0], Mapping):
        raise PredictionsError(
            f"prediction {pair_id!r}: field '{direction}[0]' must be an object with a \"judgement\""
        )
    return runs[0].get("judgement")


def _judge(tally: Tally, judgement: Any, chosen: str) -> None:
    if judgement:
        tally.judged += 1
        tally.correct += judgement == chosen


def score_task(task: str, pairs: Iterable[Mapping], predictions: Mapping[str, Any]) -> TaskScore:
    """Score one task file's pairs against one predictions mapping."""
    if not isinstance(predictions, Mapping):
        raise PredictionsError("predictions: expected an object mapping pair IDs to judgements")
    tally = Tally()
    by_source: dict[str, Tally] = {}
    seen: set[str] = set()
    for pair in pairs:
        pair_id, chosen = pair["id"], pair["chosen"]
        seen.add(pair_id)
        one = Tally(total_pairs=1)
        if pair_id not in predictions:
            one.missing_pairs = 1
        else:
            one.evaluated_pairs = 1
            entry = predictions[pair_id]
            _judge(one, first_judgement(entry, pair_id, "forward"), chosen)
            _judge(one, flip(first_judgement(entry, pair_id, "reverse")), chosen)
        tally.add(one)
        by_source.setdefault(str(pair.get("prompt_source", "")), Tally()).add(one)
    unknown = sum(1 for key in predictions if key not in seen)
    return TaskScore(task=task, tally=tally, by_source=by_source, unknown_ids=unknown)


def score_tasks(tasks: Iterable[tuple[str, Iterable[Mapping], Mapping[str, Any]]]) -> Scores:
    """Score several tasks; ``Scores.overall`` pools their judgements."""
    return Scores([score_task(name, pairs, predictions) for name, pairs, predictions in tasks])


def summary_lines(scores: Scores) -> list[str]:
    """The official summary table, with the same widths and rounding."""
    lines = [f"{'Task':<25} {'Accuracy':<12} {'Missing'}", "-" * 50]
    for task in scores.tasks:
        lines.append(f"{task.task:<25} {task.tally.percent:>6}%      {task.tally.missing_pairs}")
    lines.append("-" * 50)
    lines.append(f"{'Overall':<25} {scores.overall.percent:>6}%")
    return lines
