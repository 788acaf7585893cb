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

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

DIRECTIONS = ("forward", "reverse")
# What one predictions file may hold: a release holds at most 200,000 pairs
# (the import's cap), and one pair's judgements are a few kB (the same bound
# as a line of MRB predictions). Past either the file is refused: the
# entries are decoded and kept, so these bound what a hostile file costs.
MAX_ENTRIES = 200_000
MAX_ENTRY_CHARS = 1024 * 1024


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


# --------------------------------------------------------------------------- reading a file


# The start of an MRB prediction line (an object whose first key is "ID").
_MRB_LINE = re.compile(r'\{\s*"ID"\s*:')


def looks_like_predictions(head: str) -> bool:
    """Whether a file starting with `head` is in this format rather than MRB's
    JSONL: its first non-blank line is not one JSON object with an ``ID``
    (``json.dump(indent=2)`` writes a lone ``{`` first; a one-line file is
    ``{"<id>": {"forward": ...}}``)."""
    for line in head.splitlines():
        if not line.strip():
            continue
        try:
            first = json.loads(line)
        except (ValueError, RecursionError):  # invalid, or nested too deep: the reader says so
            stripped = line.lstrip()
            return stripped.startswith("{") and _MRB_LINE.match(stripped) is None
        return isinstance(first, dict) and "ID" not in first
    return False


def _located(filename: str, text: str, pos: int) -> str:
    return f"{filename}, line {text.count(chr(10), 0, pos) + 1}"


def _decode_entry(decoder, text: str, pos: int, filename: str, pair_id: str, limit: int):
    """(value, end) of the prediction at `pos`, decoded from a window of the
    text grown until it fits; refused past `limit` characters, so that no
    entry (a million empty lists, say) costs more than a bounded amount."""
    window = 8192
    while True:
        stop = min(len(text), pos + min(window, limit + 1))
        try:
            value, used = decoder.raw_decode(text[pos:stop])
        except json.JSONDecodeError as exc:
            if stop < len(text) and window <= limit:
                window *= 4  # cut by the window, or a real error: a larger one tells
                continue
            if stop < len(text):
                raise PredictionsError(
                    f"{_located(filename, text, pos)}: prediction {pair_id!r}: "
                    f"larger than {limit} characters, the most one prediction may hold"
                ) from None
            raise PredictionsError(
                f"{_located(filename, text, pos + exc.pos)}: prediction {pair_id!r}: "
                f"not valid JSON: {exc.msg}"
            ) from None
        except RecursionError:
            raise PredictionsError(
                f"{_located(filename, text, pos)}: prediction {pair_id!r}: "
                "values are nested too deeply"
            ) from None
        except ValueError as exc:  # an integer past Python's digit limit
            reason = "a number has too many digits" if "digits" in str(exc) else str(exc)
            raise PredictionsError(
                f"{_located(filename, text, pos)}: prediction {pair_id!r}: not valid JSON: {reason}"
            ) from None
        return value, pos + used


def read_predictions(
    text: str,
    filename: str,
    *,
    max_entries: int = MAX_ENTRIES,
    max_entry: int = MAX_ENTRY_CHARS,
) -> tuple[dict[str, dict], int]:
    """The predictions of one file's text, entry by entry: only the first
    judgement of each direction is kept (nothing else counts), so memory
    holds the text and one entry at a time. Returns (a predictions mapping
    score_task takes, number of IDs given more than once: as ``json.load``
    does, the last one wins). Raises PredictionsError naming the file, the
    line, the pair ID and the field."""
    decoder = json.JSONDecoder()
    text = text.removeprefix("\ufeff")
    pos = _skip(text, 0)
    if pos >= len(text) or text[pos] != "{":
        raise PredictionsError(
            f"{filename}: expected a JSON object mapping pair IDs to "
            '{"forward": [...], "reverse": [...]}'
        )
    kept: dict[str, dict] = {}
    repeated = 0
    pos = _skip(text, pos + 1)
    if pos < len(text) and text[pos] == "}":
        pos += 1
    else:
        while True:
            if pos >= len(text) or text[pos] != '"':
                raise PredictionsError(f"{_located(filename, text, pos)}: expected a pair ID")
            try:
                pair_id, pos = decoder.raw_decode(text, pos)
            except json.JSONDecodeError as exc:
                raise PredictionsError(
                    f"{_located(filename, text, exc.pos)}: a pair ID is not valid JSON: {exc.msg}"
                ) from None
            pos = _skip(text, pos)
            if pos >= len(text) or text[pos] != ":":
                raise PredictionsError(
                    f"{_located(filename, text, pos)}: expected ':' after {pair_id!r}"
                )
            value_at = _skip(text, pos + 1)
            if len(kept) >= max_entries and pair_id not in kept:
                raise PredictionsError(
                    f"{_located(filename, text, value_at)}: more than {max_entries} pair IDs, "
                    "the most one file may hold (a release holds at most 200,000 pairs)"
                )
            entry, pos = _decode_entry(decoder, text, value_at, filename, pair_id, max_entry)
            compact: dict[str, list] = {}
            try:
                for direction in DIRECTIONS:
                    judgement = first_judgement(entry, pair_id, direction)
                    if isinstance(entry.get(direction), list) and entry[direction]:
                        compact[direction] = [{"judgement": judgement}]
            except PredictionsError as exc:
                raise PredictionsError(f"{_located(filename, text, value_at)}: {exc}") from None
            repeated += pair_id in kept
            kept[pair_id] = compact
            pos = _skip(text, pos)
            if pos < len(text) and text[pos] == ",":
                pos = _skip(text, pos + 1)
                continue
            if pos < len(text) and text[pos] == "}":
                pos += 1
                break
            raise PredictionsError(
                f"{_located(filename, text, pos)}: expected ',' or '}}' after {pair_id!r}"
            )
    if _skip(text, pos) != len(text):
        raise PredictionsError(
            f"{_located(filename, text, pos)}: extra data after the predictions object"
        )
    return kept, repeated


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


# --------------------------------------------------------------------------- the report


def _tally_dict(tally: Tally) -> dict[str, Any]:
    return {
        "total_pairs": tally.total_pairs,
        "evaluated_pairs": tally.evaluated_pairs,
        "missing_pairs": tally.missing_pairs,
        "correct": tally.correct,
        "judged": tally.judged,
        "accuracy": tally.accuracy,
        "percent": tally.percent,
    }


def report_as_dict(scores: Scores, *, unknown_ids: int = 0, repeated_ids: int = 0) -> dict:
    """JSON-ready: per task (and per prompt_source in it), overall pooled."""
    return {
        "tasks": [
            {
                "task": t.task,
                **_tally_dict(t.tally),
                "by_source": [
                    {"source": source, **_tally_dict(tally)}
                    for source, tally in sorted(t.by_source.items())
                ],
            }
            for t in scores.tasks
        ],
        "overall": _tally_dict(scores.overall),
        "unknown_ids": unknown_ids,
        "repeated_ids": repeated_ids,
        "summary": summary_lines(scores),
    }
