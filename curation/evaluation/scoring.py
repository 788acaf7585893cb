"""Scoring a judge or reward model against a release (DESIGN §8). No Django import.

The official table reproduces the Multimodal RewardBench scorer
(facebookresearch/multimodal_rewardbench, ``scripts/2_get_accuracy.py``, whose
input is written by ``scripts/1_run_model_as_judge_gpt4o.py``). What that
script does, and what this module does with it:

* It walks the **predictions file**, line by line, in file order. Every line
  counts once: the denominator is the number of lines, not the size of the
  data set, and a repeated ID is counted again. Here too: the official table
  counts every original-order line whose ID is in the release; IDs missing
  from the file, IDs unknown to the release and repeated IDs are reported
  under coverage (an extra). Unknown IDs cannot be scored (the truth comes
  from the release, see below), so they are left out of the table.
* The verdict of a judge line is taken from its ``output`` text:
  ``"[[A]]"`` if that substring occurs anywhere (checked first, so a text with
  both gives A), else ``"[[B]]"``, else a random verdict
  ``"A" if random.random() < 0.5 else "B"`` from a generator seeded once with
  ``random.seed(123)`` before the first line. A draw happens only for lines
  without a verdict, in file order, so the i-th verdict-less line always gets
  the i-th draw. The check is case-sensitive and exact (``[[a]]`` or
  ``[[ A ]]`` is no verdict). Lines whose ID is unknown still take their draw,
  so the remaining lines get the same draws as under the official script.
  We use a private ``random.Random(123)`` (same sequence as ``random.seed``)
  and never touch the global generator.
* Assistant A is ``Output1`` and B is ``Output2`` (the judge prompt fills
  ``answer_a`` with Output1); the official gold is
  ``Label = "B" if Better == "Output2" else "A"``, so a line is correct when
  the picked output equals ``Better``.
* Official answer lines carry ``Label`` (that gold, copied from the data) and
  ``Meta.Category``; the script scores against those. We score against the
  release's ``Better`` and ``Category`` instead, and report lines whose
  ``Label``/``Meta.Category`` disagree with the release (a file judged on
  another release, whose Output1/Output2 shuffle differs) as mismatches.
* Buckets: every line counts in ``all`` and in its Category, except that the
  official script replaces ``reasoning`` by ``reasoning/math`` (ID starts
  with ``math``, case-insensitive) or ``reasoning/coding``, and ``safety`` by
  ``safety/bias`` (ID starts with ``pairs``, case-insensitive) or
  ``safety/toxicity``. We print those sub-buckets and, as well, the whole
  Category (its sub-buckets pooled), which the official script does not print.
  Accuracy is correct / lines (micro) in every bucket.

Kinds of prediction line accepted (besides ``ID``; other fields are ignored):

``output``
    Judge text, as above (the official format). A ``Label`` on the same line
    is the official gold and is only cross-checked.
``Label`` (without ``output``)
    A verdict already extracted: exactly ``"A"`` or ``"B"``. The official
    script compares verdicts exactly, so ``"a"`` or ``" A"`` is an error here,
    not a silent miss.
``score_1``, ``score_2``
    Scalar reward-model scores (BaseReward style) for the response shown
    first and second, i.e. Output1 and Output2 in the original order. The
    higher score wins; equal scores are wrong.
``chosen_score``, ``rejected_score``
    Scores of the chosen and rejected responses; correct iff chosen > rejected.

Extras (never mixed into the official numbers): macro average over
categories, 95% intervals (Wilson per bucket, stratified bootstrap for the
macro average), coverage, the share of picks that went to the first-shown
response, and position consistency. For the latter, predictions made with the
two responses swapped carry ``"order": "swapped"`` (or come from a second
file parsed with ``order="swapped"``): the judge saw Output2 as assistant A
and Output1 as B (for scores: ``score_1`` is Output2's). Swapped lines never
enter the official table; they draw their fallback verdicts from their own
``Random(123)`` stream, so the swapped file scores exactly as the official
script would score it on its own.
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from curation.releases.exporter import sub_bucket

OFFICIAL_SEED = 123
ORDERS = ("original", "swapped")
KINDS = ("judge", "label", "scores", "pairs")
BETTER_VALUES = ("Output1", "Output2")
Z_95 = 1.959963984540054
MACRO_BOOTSTRAP_RESAMPLES = 10_000
MACRO_BOOTSTRAP_SEED = 0


class ScoringInputError(ValueError):
    """A predictions or release file that cannot be scored. The message names
    the file, the line (or record) and the field."""

    def __init__(self, source: str, where: str, field_name: str | None, message: str):
        self.source = source
        self.where = where
        self.field = field_name
        self.message = message
        located = f"{source}, {where}" if where else source
        if field_name is not None:
            located += f", field {field_name!r}"
        super().__init__(f"{located}: {message}")


@dataclass(frozen=True, slots=True)
class Prediction:
    line: int
    id: str
    kind: str  # one of KINDS
    order: str = "original"  # one of ORDERS
    verdict: str | None = None  # "A" | "B" for judge (None: no verdict) and label
    score_1: float | None = None  # the response shown first
    score_2: float | None = None
    chosen_score: float | None = None
    rejected_score: float | None = None
    gold_label: str | None = None  # official "Label" next to "output": cross-checked only
    meta_category: str | None = None  # official "Meta.Category": cross-checked only
    text: str | None = None  # the judge's text, kept for per-item drill-down


@dataclass(frozen=True)
class Group:
    name: str
    level: str  # "overall" | "category" | "sub_bucket"
    correct: int
    total: int

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.total if self.total else None

    @property
    def ci(self) -> tuple[float, float] | None:
        return wilson_interval(self.correct, self.total)


@dataclass(frozen=True)
class Mismatch:
    line: int
    id: str
    field: str
    expected: str
    got: str


@dataclass(frozen=True)
class Coverage:
    n_records: int
    n_lines: int  # original-order lines
    n_scored: int  # original-order lines with a known ID
    missing: tuple[str, ...]  # release IDs with no original-order line (release order)
    unknown: tuple[str, ...]  # IDs not in the release, first occurrence order, any order
    duplicates: dict[str, int]  # ID -> original-order lines, for IDs with more than one
    mismatches: tuple[Mismatch, ...]
    strict_correct: int  # first line per release ID correct; missing counts as wrong

    @property
    def strict_accuracy(self) -> float | None:
        return self.strict_correct / self.n_records if self.n_records else None


@dataclass(frozen=True)
class Position:
    """Picks (a verdict or a strictly higher score) of one order."""

    order: str
    picks: int
    first_shown: int

    @property
    def first_shown_rate(self) -> float | None:
        return self.first_shown / self.picks if self.picks else None


@dataclass(frozen=True)
class Consistency:
    n_lines: int  # swapped-order lines
    swapped: Group  # micro accuracy of the swapped lines with known IDs
    pairs: int  # release IDs with a line in both orders (first line of each)
    consistent: int  # both picked the same response (a tie picks none: inconsistent)
    both_correct: int
    missing: int  # release IDs without a swapped line

    @property
    def rate(self) -> float | None:
        return self.consistent / self.pairs if self.pairs else None

    @property
    def ci(self) -> tuple[float, float] | None:
        return wilson_interval(self.consistent, self.pairs)


@dataclass(frozen=True)
class Report:
    groups: tuple[Group, ...]  # "all", then each category and its sub-buckets
    random_fallbacks: int  # original-order judge lines without [[A]]/[[B]]
    kinds: dict[str, int]  # original-order lines per kind
    macro: float | None
    macro_ci: tuple[float, float] | None
    macro_categories: int
    coverage: Coverage
    position: tuple[Position, ...]
    consistency: Consistency | None
    swapped_random_fallbacks: int = 0
    # Per order, release ID -> did its first line pick the chosen response
    # (None: no pick, e.g. equal scores). The per-item results are built from it.
    first_picks: dict[str, dict[str, bool | None]] = dataclasses.field(default_factory=dict)

    def group(self, name: str) -> Group:
        for g in self.groups:
            if g.name == name:
                return g
        raise KeyError(name)


# --------------------------------------------------------------------------- input


def _check_records(records: Sequence[dict], source: str) -> None:
    seen: set[str] = set()
    for index, record in enumerate(records):
        where = f"record {index}"
        if not isinstance(record, dict):
            raise ScoringInputError(source, where, None, "a record must be a JSON object")
        rid = record.get("ID")
        if not isinstance(rid, str) or not rid:
            raise ScoringInputError(source, where, "ID", "missing or not a non-empty string")
        where = f"record {index} (ID {rid!r})"
        if rid in seen:
            raise ScoringInputError(source, where, "ID", "duplicate ID in the release")
        seen.add(rid)
        if record.get("Better") not in BETTER_VALUES:
            raise ScoringInputError(
                source,
                where,
                "Better",
                f"must be 'Output1' or 'Output2', got {record.get('Better')!r}",
            )
        category = record.get("Category")
        if not isinstance(category, str) or not category:
            raise ScoringInputError(source, where, "Category", "missing or not a non-empty string")


def load_release_records(path: str | Path) -> list[dict]:
    """The records of a release: a release folder (its ``all_data.json``) or a
    JSON file holding an array of records. Checks ``ID``, ``Better`` and
    ``Category`` of every record and that IDs are unique."""
    path = Path(path)
    if path.is_dir():
        path = path / "all_data.json"
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ScoringInputError(source, "", None, f"cannot read: {exc.strerror or exc}") from None
    return parse_release_records(text, source)


def parse_release_records(text: str, source: str) -> list[dict]:
    """The records of a release's ``all_data.json`` text (see
    load_release_records); `source` names it in errors."""
    text = text.removeprefix("\ufeff")
    try:
        records = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScoringInputError(
            source, f"line {exc.lineno}", None, f"not valid JSON: {exc.msg}"
        ) from None
    if not isinstance(records, list):
        raise ScoringInputError(source, "", None, "must hold a JSON array of records")
    _check_records(records, source)
    return records


def _number(value: Any, source: str, where: str, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ScoringInputError(source, where, name, f"must be a number, got {value!r}")
    if math.isnan(value):
        raise ScoringInputError(source, where, name, "must be a number, got NaN")
    return float(value)


def _ab(value: Any, source: str, where: str, name: str) -> str:
    if value not in ("A", "B"):
        raise ScoringInputError(
            source,
            where,
            name,
            f'must be exactly "A" or "B" (compared case-sensitively, as the official '
            f"scorer does), got {value!r}",
        )
    return value


def extract_verdict(text: str) -> str | None:
    """The official verdict of judge text: "A" if it contains "[[A]]" (checked
    first), else "B" if it contains "[[B]]", else None (a random verdict)."""
    if "[[A]]" in text:
        return "A"
    if "[[B]]" in text:
        return "B"
    return None


def _parse_line(obj: Any, *, source: str, where: str, line: int, order: str | None) -> Prediction:
    if not isinstance(obj, dict):
        raise ScoringInputError(source, where, None, "a prediction must be a JSON object")
    rid = obj.get("ID")
    if "ID" not in obj:
        raise ScoringInputError(source, where, "ID", "missing")
    if not isinstance(rid, str) or not rid:
        raise ScoringInputError(source, where, "ID", f"must be a non-empty string, got {rid!r}")

    line_order = obj.get("order")
    if line_order is not None and line_order not in ORDERS:
        raise ScoringInputError(
            source, where, "order", f'must be "original" or "swapped", got {line_order!r}'
        )
    if order is not None and line_order is not None and line_order != order:
        raise ScoringInputError(
            source,
            where,
            "order",
            f"the line says {line_order!r} but the whole file was given as {order!r} "
            "predictions: a line cannot be in both orders",
        )
    resolved = line_order or order or "original"

    judge = "output" in obj or "Label" in obj
    scores = "score_1" in obj or "score_2" in obj
    pairs = "chosen_score" in obj or "rejected_score" in obj
    present = [
        name
        for name, flag in (
            ("output/Label", judge),
            ("score_1/score_2", scores),
            ("chosen_score/rejected_score", pairs),
        )
        if flag
    ]
    if len(present) > 1:
        raise ScoringInputError(
            source,
            where,
            None,
            f"ambiguous: fields of more than one kind of prediction ({', '.join(present)})",
        )
    if not present:
        hint = ""
        if "outputs" in obj:
            hint = (
                " ('outputs' holds several samples, which the official scorer does not score; "
                "write one 'output' per line)"
            )
        raise ScoringInputError(
            source,
            where,
            None,
            "no usable field: give 'output' (judge text), 'Label' (\"A\"/\"B\"), "
            f"'score_1' and 'score_2', or 'chosen_score' and 'rejected_score'{hint}",
        )

    meta_category = None
    meta = obj.get("Meta")
    if isinstance(meta, dict) and isinstance(meta.get("Category"), str):
        meta_category = meta["Category"]

    if judge:
        label = _ab(obj["Label"], source, where, "Label") if "Label" in obj else None
        if "output" not in obj:
            return Prediction(line, rid, "label", resolved, verdict=label)
        text = obj["output"]
        if not isinstance(text, str):
            raise ScoringInputError(
                source, where, "output", f"must be the judge's text (a string), got {text!r}"
            )
        return Prediction(
            line,
            rid,
            "judge",
            resolved,
            verdict=extract_verdict(text),
            gold_label=label,
            meta_category=meta_category,
            text=text,
        )
    if scores:
        for name in ("score_1", "score_2"):
            if name not in obj:
                raise ScoringInputError(source, where, name, "missing (give both scores)")
        return Prediction(
            line,
            rid,
            "scores",
            resolved,
            score_1=_number(obj["score_1"], source, where, "score_1"),
            score_2=_number(obj["score_2"], source, where, "score_2"),
            meta_category=meta_category,
        )
    for name in ("chosen_score", "rejected_score"):
        if name not in obj:
            raise ScoringInputError(source, where, name, "missing (give both scores)")
    return Prediction(
        line,
        rid,
        "pairs",
        resolved,
        chosen_score=_number(obj["chosen_score"], source, where, "chosen_score"),
        rejected_score=_number(obj["rejected_score"], source, where, "rejected_score"),
        meta_category=meta_category,
    )


def _unstorable_text(value: Any) -> str | None:
    """Why a decoded line holds text no database or UTF-8 file can store (a
    NUL, an unpaired surrogate), or None. Iterative: the decoder allows
    nesting deeper than a recursive walk would."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            if "\x00" in item:
                return "contains a NUL character (\\u0000)"
            if not item.isascii():
                try:
                    item.encode()
                except UnicodeEncodeError:
                    return (
                        "contains an unpaired surrogate (\\ud800-\\udfff), "
                        "which is not valid Unicode"
                    )
    return None


def parse_predictions(
    lines: Iterable[str], *, filename: str, order: str | None = None
) -> list[Prediction]:
    """Predictions from JSONL lines, in file order. Blank lines are skipped
    (line numbers still count them). ``order="swapped"`` marks every line as a
    swapped-order prediction (a line saying otherwise is an error). Raises
    ``ScoringInputError`` naming the file, line and field of the first problem."""
    if order is not None and order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
    out: list[Prediction] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        where = f"line {number}"
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ScoringInputError(filename, where, None, f"not valid JSON: {exc.msg}") from None
        except RecursionError:
            raise ScoringInputError(
                filename, where, None, "not valid JSON: values are nested too deeply"
            ) from None
        except ValueError as exc:  # an integer past Python's digit limit
            reason = "a number has too many digits" if "digits" in str(exc) else str(exc)
            raise ScoringInputError(filename, where, None, f"not valid JSON: {reason}") from None
        problem = _unstorable_text(obj)
        if problem:
            raise ScoringInputError(filename, where, None, problem)
        out.append(_parse_line(obj, source=filename, where=where, line=number, order=order))
    return out


# --------------------------------------------------------------------------- statistics


def wilson_interval(k: int, n: int, z: float = Z_95) -> tuple[float, float] | None:
    """Wilson score interval for k successes in n trials (None when n == 0)."""
    if n <= 0:
        return None
    p = k / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    # At k = 0 or k = n the bound is exactly 0 or 1; rounding would miss it.
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return low, high


def macro_bootstrap_ci(
    groups: Sequence[Group],
    *,
    n_resamples: int = MACRO_BOOTSTRAP_RESAMPLES,
    seed: int = MACRO_BOOTSTRAP_SEED,
) -> tuple[float, float] | None:
    """Percentile 95% interval of the macro average, resampling lines with
    replacement within each category (stratified bootstrap). Resampling n
    lines of which k are correct gives Binomial(n, k/n) correct ones, so each
    category is drawn as one binomial per resample."""
    used = [g for g in groups if g.total]
    if not used:
        return None
    rng = np.random.default_rng(seed)
    n = np.array([g.total for g in used])
    p = np.array([g.correct / g.total for g in used])
    draws = rng.binomial(n, p, size=(n_resamples, len(used))) / n
    means = draws.mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    return float(low), float(high)


# --------------------------------------------------------------------------- scoring


def _first_shown_slot(order: str) -> str:
    return "Output1" if order == "original" else "Output2"


def _second_shown_slot(order: str) -> str:
    return "Output2" if order == "original" else "Output1"


def _expected_label(better: str, order: str) -> str:
    return "A" if better == _first_shown_slot(order) else "B"


def score(
    records: Sequence[dict], predictions: Sequence[Prediction], *, seed: int = OFFICIAL_SEED
) -> Report:
    """Score predictions (in file order) against release records. See the
    module docstring for the semantics."""
    _check_records(records, "release")
    truth: dict[str, tuple[str, str]] = {}
    categories: list[str] = []
    buckets: dict[str, list[str]] = {}
    for record in records:
        rid, category = record["ID"], record["Category"]
        truth[rid] = (record["Better"], category)
        if category not in buckets:
            categories.append(category)
            buckets[category] = []
        bucket = sub_bucket(category, rid)
        if bucket != category and bucket not in buckets[category]:
            buckets[category].append(bucket)

    # One generator per order: the original-order lines draw exactly the
    # sequence the official script draws for them, whatever is interleaved.
    rngs = {o: random.Random(seed) for o in ORDERS}
    fallbacks: Counter[str] = Counter()
    # Keyed by (level, name) so a category can never collide with "all".
    correct: Counter[tuple[str, str]] = Counter()
    total: Counter[tuple[str, str]] = Counter()
    kinds: Counter[str] = Counter()
    lines_per_order: Counter[str] = Counter()
    picks: Counter[str] = Counter()
    first_picks: Counter[str] = Counter()
    seen: dict[str, Counter[str]] = {o: Counter() for o in ORDERS}
    first_pick: dict[str, dict[str, bool | None]] = {o: {} for o in ORDERS}
    unknown: dict[str, None] = {}
    mismatches: list[Mismatch] = []
    swapped_correct = swapped_total = 0

    for p in predictions:
        order = p.order
        lines_per_order[order] += 1
        if order == "original":
            kinds[p.kind] += 1
        # Which response the line picks, as a slot or directly as chosen/rejected.
        slot: str | None = None
        picks_chosen: bool | None = None
        if p.kind in ("judge", "label"):
            verdict = p.verdict
            if verdict is None:
                # The official draw: "A" if random.random() < 0.5 else "B".
                verdict = "A" if rngs[order].random() < 0.5 else "B"
                fallbacks[order] += 1
            slot = _first_shown_slot(order) if verdict == "A" else _second_shown_slot(order)
        elif p.kind == "scores":
            assert p.score_1 is not None and p.score_2 is not None
            if p.score_1 > p.score_2:
                slot = _first_shown_slot(order)
            elif p.score_2 > p.score_1:
                slot = _second_shown_slot(order)
        else:
            assert p.chosen_score is not None and p.rejected_score is not None
            if p.chosen_score != p.rejected_score:
                picks_chosen = p.chosen_score > p.rejected_score

        known = truth.get(p.id)
        if known is None:
            unknown.setdefault(p.id, None)
            continue
        better, category = known
        if slot is not None:
            picks_chosen = slot == better
            picks[order] += 1
            first_picks[order] += slot == _first_shown_slot(order)
        is_correct = picks_chosen is True

        if p.gold_label is not None and p.gold_label != _expected_label(better, order):
            mismatches.append(
                Mismatch(p.line, p.id, "Label", _expected_label(better, order), p.gold_label)
            )
        if p.meta_category is not None and p.meta_category != category:
            mismatches.append(Mismatch(p.line, p.id, "Meta.Category", category, p.meta_category))

        seen[order][p.id] += 1
        first_pick[order].setdefault(p.id, picks_chosen)
        if order == "swapped":
            swapped_total += 1
            swapped_correct += is_correct
            continue
        keys = {("overall", "all"), ("category", category)}
        bucket = sub_bucket(category, p.id)
        if bucket != category:
            keys.add(("sub_bucket", bucket))
        for key in keys:
            total[key] += 1
            correct[key] += is_correct

    def make(level: str, name: str) -> Group:
        return Group(name, level, correct[level, name], total[level, name])

    groups = [make("overall", "all")]
    category_groups = []
    for category in categories:
        g = make("category", category)
        groups.append(g)
        category_groups.append(g)
        groups.extend(make("sub_bucket", b) for b in sorted(buckets[category]))
    scored_categories = [g for g in category_groups if g.total]
    macro = (
        sum(g.correct / g.total for g in scored_categories) / len(scored_categories)
        if scored_categories
        else None
    )

    original = first_pick["original"]
    coverage = Coverage(
        n_records=len(records),
        n_lines=lines_per_order["original"],
        n_scored=total["overall", "all"],
        missing=tuple(r["ID"] for r in records if r["ID"] not in original),
        unknown=tuple(unknown),
        duplicates={rid: n for rid, n in seen["original"].items() if n > 1},
        mismatches=tuple(mismatches),
        strict_correct=sum(1 for v in original.values() if v is True),
    )

    consistency = None
    if lines_per_order["swapped"]:
        swapped = first_pick["swapped"]
        both = [rid for rid in original if rid in swapped]
        consistency = Consistency(
            n_lines=lines_per_order["swapped"],
            swapped=Group("swapped order", "overall", swapped_correct, swapped_total),
            pairs=len(both),
            consistent=sum(
                1 for rid in both if original[rid] is not None and original[rid] == swapped[rid]
            ),
            both_correct=sum(1 for rid in both if original[rid] is True and swapped[rid] is True),
            missing=sum(1 for r in records if r["ID"] not in swapped),
        )

    return Report(
        groups=tuple(groups),
        random_fallbacks=fallbacks["original"],
        swapped_random_fallbacks=fallbacks["swapped"],
        kinds={k: kinds[k] for k in KINDS if kinds[k]},
        macro=macro,
        macro_ci=macro_bootstrap_ci(category_groups),
        macro_categories=len(scored_categories),
        coverage=coverage,
        position=tuple(Position(o, picks[o], first_picks[o]) for o in ORDERS if lines_per_order[o]),
        consistency=consistency,
        first_picks=first_pick,
    )


# --------------------------------------------------------------------------- output


def _interval(ci: tuple[float, float] | None) -> list[float] | None:
    return None if ci is None else [ci[0], ci[1]]


def report_as_dict(report: Report) -> dict[str, Any]:
    """JSON-ready: ``official`` holds the scorer's table, ``extras`` the rest."""
    cov = report.coverage
    out: dict[str, Any] = {
        "official": {
            "seed": OFFICIAL_SEED,
            "groups": [
                {
                    "name": g.name,
                    "level": g.level,
                    "correct": g.correct,
                    "total": g.total,
                    "accuracy": g.accuracy,
                }
                for g in report.groups
            ],
            "random_fallbacks": report.random_fallbacks,
            "kinds": report.kinds,
        },
        "extras": {
            "macro_average": {
                "value": report.macro,
                "categories": report.macro_categories,
                "ci95": _interval(report.macro_ci),
                "ci_method": (
                    f"stratified bootstrap, {MACRO_BOOTSTRAP_RESAMPLES} resamples, "
                    f"seed {MACRO_BOOTSTRAP_SEED}"
                ),
            },
            "ci95": {g.name: _interval(g.ci) for g in report.groups},
            "ci_method": "Wilson score interval",
            "coverage": {
                "records": cov.n_records,
                "lines": cov.n_lines,
                "scored_lines": cov.n_scored,
                "missing": list(cov.missing),
                "unknown": list(cov.unknown),
                "duplicates": cov.duplicates,
                "mismatches": [
                    {
                        "line": m.line,
                        "ID": m.id,
                        "field": m.field,
                        "release": m.expected,
                        "predictions": m.got,
                    }
                    for m in cov.mismatches
                ],
                "strict_accuracy": cov.strict_accuracy,
                "strict_correct": cov.strict_correct,
            },
            "position": [
                {
                    "order": p.order,
                    "picks": p.picks,
                    "first_shown": p.first_shown,
                    "first_shown_rate": p.first_shown_rate,
                    "ci95": _interval(wilson_interval(p.first_shown, p.picks)),
                }
                for p in report.position
            ],
            "consistency": None,
        },
    }
    c = report.consistency
    if c is not None:
        out["extras"]["consistency"] = {
            "swapped_lines": c.n_lines,
            "swapped_accuracy": c.swapped.accuracy,
            "swapped_correct": c.swapped.correct,
            "swapped_scored": c.swapped.total,
            "swapped_random_fallbacks": report.swapped_random_fallbacks,
            "pairs": c.pairs,
            "consistent": c.consistent,
            "rate": c.rate,
            "ci95": _interval(c.ci),
            "both_correct": c.both_correct,
            "missing_swapped": c.missing,
        }
    return out


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4f}"


def _ci(ci: tuple[float, float] | None) -> str:
    return "n/a" if ci is None else f"[{ci[0]:.4f}, {ci[1]:.4f}]"


def _ids(ids: Sequence[str], limit: int) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f", … and {len(ids) - limit} more" if len(ids) > limit else "")


def format_report(report: Report, *, id_limit: int = 10) -> str:
    """The official table, then the extras under their own heading."""
    width = max([len("group"), *(len(g.name) + 2 for g in report.groups)])
    lines = [
        "Official scorer (Multimodal RewardBench scripts/2_get_accuracy.py semantics)",
        "",
        f"{'group':<{width}}  {'correct':>7}  {'total':>6}  {'accuracy':>8}",
    ]
    for g in report.groups:
        name = f"  {g.name}" if g.level == "sub_bucket" else g.name
        lines.append(f"{name:<{width}}  {g.correct:>7}  {g.total:>6}  {_pct(g.accuracy):>8}")
    pooled = [g.name for g in report.groups if g.level == "category"]
    split = [
        name
        for name in pooled
        if any(g.level == "sub_bucket" and g.name.startswith(name + "/") for g in report.groups)
    ]
    lines.append("")
    if split:
        lines.append(
            f"({', '.join(split)}: the official script prints only the sub-buckets; "
            "the category row pools them.)"
        )
    kinds = ", ".join(f"{k}: {n}" for k, n in report.kinds.items()) or "none"
    lines.append(f"Prediction lines by kind: {kinds}.")
    lines.append(
        f"Random verdicts (no [[A]]/[[B]], random.seed({OFFICIAL_SEED})): {report.random_fallbacks}"
    )

    cov = report.coverage
    lines += [
        "",
        "Extras (not computed by the official scorer)",
        "",
        f"Macro average over the {report.macro_categories} categories with predictions: "
        f"{_pct(report.macro)}  "
        f"95% CI {_ci(report.macro_ci)} (stratified bootstrap)",
        "",
        f"{'group':<{width}}  {'95% CI (Wilson)':>18}",
    ]
    for g in report.groups:
        name = f"  {g.name}" if g.level == "sub_bucket" else g.name
        lines.append(f"{name:<{width}}  {_ci(g.ci):>18}")
    lines += [
        "",
        f"Coverage: {cov.n_scored} of {cov.n_lines} lines scored; "
        f"{cov.n_records - len(cov.missing)} of {cov.n_records} release items predicted.",
        f"  missing IDs: {len(cov.missing)}"
        + (f" ({_ids(cov.missing, id_limit)})" if cov.missing else ""),
        f"  unknown IDs (not in the release, not scored): {len(cov.unknown)}"
        + (f" ({_ids(cov.unknown, id_limit)})" if cov.unknown else ""),
        f"  repeated IDs (each line counted, as the official script does): {len(cov.duplicates)}"
        + (
            f" ({_ids([f'{k} x{v}' for k, v in cov.duplicates.items()], id_limit)})"
            if cov.duplicates
            else ""
        ),
        f"  lines disagreeing with the release (Label / Meta.Category): {len(cov.mismatches)}"
        + (
            " ("
            + _ids(
                [f"line {m.line} {m.id} {m.field} {m.got}≠{m.expected}" for m in cov.mismatches],
                id_limit,
            )
            + ")"
            if cov.mismatches
            else ""
        ),
        f"  strict accuracy (first line per item, missing = wrong): "
        f"{cov.strict_correct} / {cov.n_records} = {_pct(cov.strict_accuracy)}",
    ]
    for p in report.position:
        lines.append(
            f"First-shown response picked ({p.order} order): {p.first_shown} / {p.picks} = "
            f"{_pct(p.first_shown_rate)}  95% CI {_ci(wilson_interval(p.first_shown, p.picks))}"
        )
    c = report.consistency
    if c is not None:
        lines += [
            "",
            f"Position consistency: {c.consistent} / {c.pairs} = {_pct(c.rate)}  "
            f"95% CI {_ci(c.ci)}",
            f"  swapped-order accuracy: {c.swapped.correct} / {c.swapped.total} = "
            f"{_pct(c.swapped.accuracy)} ({report.swapped_random_fallbacks} random verdicts)",
            f"  correct in both orders: {c.both_correct}; items without a swapped line: "
            f"{c.missing}",
        ]
    return "\n".join(lines) + "\n"
