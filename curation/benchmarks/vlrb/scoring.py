"""Scoring k judge runs per pair exactly as VL-RewardBench's ``cal.py``
(vl-rewardbench/VL_RewardBench, commit 9b10abd; ``main`` calls
``distribution(..., reparse=True, use_llm_parse=False)``, then ``classify``
and ``distribution_dataset``). Pure Python, no Django.

Each run (``inference_hf.py``) shows the two responses in the file's order
when ``random_number == 0`` and swapped when it is 1, and is parsed by::

    pattern = r"(?:Overall Judgment|Therefore)\\s*.*\\s*-*\\s*Answer\\s*(\\d+)\\s*is\\s*(?:the\\s*)?(?:slightly\\s*)?better"
    match = re.search(pattern, response.replace("\\n","").replace("*",""), re.IGNORECASE)
    rejected_response_choice = ranking.index(1 if random_number == 0 else 0) + 1
    # no match: "doesntMatch"; flag_choice == rejected_response_choice: "reject"; else "agree"

(so "Answer 3 is better" counts as agree, as in cal.py). Per item the runs
are counted and the majority decides (``classify``)::

    if agree > total_count / 2: "agree"
    elif reject > total_count / 2: "reject"
    elif doesntMatch > total_count / 2: "doesntMatch"
    else: "other"

with ``total_count`` counting the unparsed runs too. Only "agree" and
"reject" items enter a group's denominator (``group_total += agree_number +
reject_number``): an undecided ("other") or unparsed ("doesntMatch") item
leaves it. Overall = ``sum(group_correct) / sum(group_total)`` (micro);
macro = ``sum(group_correct[k] / group_total[k] for k in task_list) / 3``
over general / hallucination / reasoning, by the official id grouping
(annotate.importing.formats.vlrb.group_of, applied by the caller: Pair.group).

Where the studio says more than cal.py: a release pair without a
prediction is reported as missing (cal.py never sees it; it leaves the
denominator there too); a group with no decided item has no accuracy, and
macro is then the mean over the groups that have one (cal.py divides by
zero), the groups averaged named in ``macro_groups``; every run given is
counted (k = the runs per item; cal.py's ``main`` keeps the first k of a
seeded shuffle of ten, which only picks which runs count when more than k
are given); an unanswered run (a judge call that failed) is unparsed.
"""  # noqa: E501 (the published regex quoted on one line)

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

PATTERN = (
    r"(?:Overall Judgment|Therefore)\s*.*\s*-*\s*Answer\s*(\d+)\s*is\s*(?:the\s*)?"
    r"(?:slightly\s*)?better"
)
_REGEX = re.compile(PATTERN, re.IGNORECASE)
AGREE, REJECT, NO_MATCH, OTHER = "agree", "reject", "doesntMatch", "other"
GROUPS = ("general", "hallucination", "reasoning")  # cal.py's task_list, in its print order
DEFINITIONS = (
    "VL-RewardBench's cal.py: each run's answer is parsed for 'Answer N is better' after "
    "'Overall Judgment' or 'Therefore'; per pair the majority of its k runs (unparsed runs "
    "counted) decides agree or reject, otherwise the pair leaves the denominator; overall = "
    "micro accuracy over the decided pairs, macro = mean of general, hallucination and "
    "reasoning (the official id grouping)."
)


class PredictionsError(ValueError):
    """A predictions file these rules refuse (the message names file, line, field)."""


@dataclass(frozen=True)
class Pair:
    """What scoring needs of one record of the release's file."""

    id: str
    query: str
    response: tuple[str, str]
    ranking: tuple[int, int]  # human_ranking, 0 = preferred
    group: str  # general / hallucination / reasoning, by the official id grouping
    dataset: str  # the source dataset of cal.py's get_dataset_from_id

    @property
    def key(self) -> str:
        """cal.py's item key:
        ``item["id"] + item["query"] + "\\t".join(sorted(item["response"]))``."""
        return self.id + self.query + "\t".join(sorted(self.response))


@dataclass(frozen=True)
class Run:
    output: str | None  # the judge's answer (None: no answer)
    random_number: int  # 0: response[0] shown as Answer 1; 1: swapped


def choice(output: str | None) -> int:
    """cal.py's ``flag_choice``: the N of "Answer N is better", -1 unparsed."""
    match = _REGEX.search((output or "").replace("\n", "").replace("*", ""))
    return int(match.group(1)) if match else -1


def status(run: Run, ranking: tuple[int, int] | list[int]) -> str:
    """cal.py's ``flag_status`` of one run against the human ranking."""
    picked = choice(run.output)
    if picked == -1:
        return NO_MATCH
    rejected = list(ranking).index(1 if run.random_number == 0 else 0) + 1
    return REJECT if picked == rejected else AGREE


def classify(counts: Counter) -> str:
    """cal.py's ``classify`` of one item's run counts."""
    total = counts[AGREE] + counts[REJECT] + counts[NO_MATCH]
    for label in (AGREE, REJECT, NO_MATCH):
        if counts[label] > total / 2:
            return label
    return OTHER


def _rate(correct: int, total: int) -> float | None:
    return correct / total if total else None


def score(pairs: list[Pair], runs: dict[str, list[Run]]) -> dict:
    """The report of `runs` (by pair ID) against the release's pairs."""
    per_item = []
    groups = {g: Counter() for g in GROUPS}
    datasets: dict[str, Counter] = {}
    for pair in pairs:
        given = runs.get(pair.id)
        group, dataset = pair.group, pair.dataset
        groups[group]["items"] += 1
        if not given:
            groups[group]["missing"] += 1
            per_item.append({"id": pair.id, "group": group, "dataset": dataset, "class": None})
            continue
        counts = Counter(status(run, pair.ranking) for run in given)
        label = classify(counts)
        groups[group][label] += 1
        datasets.setdefault(dataset, Counter())[label] += 1
        per_item.append({"id": pair.id, "group": group, "dataset": dataset, "class": label,
                         "runs": [counts[AGREE], counts[REJECT], counts[NO_MATCH]]})  # fmt: skip
    rows = []
    for name, c in groups.items():
        rows.append({"group": name, "items": c["items"], "correct": c[AGREE],
                     "total": c[AGREE] + c[REJECT], "undecided": c[OTHER],
                     "unparsed": c[NO_MATCH], "missing": c["missing"],
                     "accuracy": _rate(c[AGREE], c[AGREE] + c[REJECT])})  # fmt: skip
    decided = [r for r in rows if r["accuracy"] is not None]
    correct, total = sum(r["correct"] for r in rows), sum(r["total"] for r in rows)
    ks = Counter(len(runs[p.id]) for p in pairs if runs.get(p.id))
    return {
        "overall": _rate(correct, total),
        "macro": sum(r["accuracy"] for r in decided) / len(decided) if decided else None,
        "macro_groups": [r["group"] for r in decided],
        "correct": correct,
        "total": total,
        "items": len(pairs),
        "missing": sum(r["missing"] for r in rows),
        "undecided": sum(r["undecided"] for r in rows),
        "unparsed": sum(r["unparsed"] for r in rows),
        "k": max(ks) if ks else 0,
        "runs_per_item": {str(k): n for k, n in sorted(ks.items())},
        "groups": rows,
        "datasets": [
            {
                "dataset": name,
                "correct": c[AGREE],
                "total": c[AGREE] + c[REJECT],
                "accuracy": _rate(c[AGREE], c[AGREE] + c[REJECT]),
            }
            for name, c in sorted(datasets.items())
        ],
        "definitions": DEFINITIONS,
        "per_item": per_item,
    }


# --- reading predictions --------------------------------------------------------------------

PREDICTIONS_SHAPE = (
    'JSONL, one line per pair: {"id": "pair ID", "runs": [{"output": "judge text", '
    '"random_number": 0 or 1}, … k runs]} (random_number 1: the responses were shown '
    "swapped, as inference_hf.py's random_number); or the output file of the official "
    "inference_hf.py itself (k lines per pair with meta.filter_choice and meta.random_number)"
)


def looks_like_predictions(head: str) -> bool:
    """A file's start in one of the two shapes (PREDICTIONS_SHAPE)."""
    try:
        first = json.loads(head.lstrip().split("\n", 1)[0])
    except (ValueError, RecursionError):
        return False
    if isinstance(first, dict) and isinstance(first.get("0"), dict):
        first = first["0"]
    if not isinstance(first, dict):
        return False
    meta = first.get("meta")
    return isinstance(first.get("runs"), list) or (
        isinstance(meta, dict) and "filter_choice" in meta and "random_number" in meta
    )


def _run(value: object, where: str) -> Run:
    if not isinstance(value, dict):
        raise PredictionsError(f"{where}: a run must be an object with output and random_number")
    output, number = value.get("output"), value.get("random_number")
    if output is not None and not isinstance(output, str):
        raise PredictionsError(f"{where} field 'output': must be a string or null")
    if number not in (0, 1) or isinstance(number, bool):
        raise PredictionsError(f"{where} field 'random_number': must be 0 or 1, not {number!r}")
    return Run(output, number)


def read_predictions(
    lines: Iterable[str], filename: str, pairs: list[Pair]
) -> tuple[dict[str, list[Run]], int, int]:
    """(runs by pair ID, repeated IDs, unknown lines) of a predictions file.
    A studio line's repeated ID: its last line counts. Official lines are
    matched by cal.py's key (ID + query + sorted responses) and every line of
    a key adds a run; one whose key is no release pair's is unknown."""
    by_key = {p.key: p.id for p in pairs}
    ids = {p.id for p in pairs}
    runs: dict[str, list[Run]] = {}
    repeated = unknown = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        at = f"{filename}:{number}"
        try:
            value = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise PredictionsError(f"{at}: not JSON ({exc})") from None
        if isinstance(value, dict) and "0" in value:  # cal.py: item["0"] when the file wraps them
            value = value["0"]
        if not isinstance(value, dict):
            raise PredictionsError(f"{at}: expected a JSON object")
        if "runs" in value:
            pair_id = value.get("id")
            if not isinstance(pair_id, str):
                raise PredictionsError(f"{at} field 'id': must be a string")
            if not isinstance(value["runs"], list) or not value["runs"]:
                raise PredictionsError(f"{at} field 'runs': must be a non-empty list of runs")
            given = [_run(r, f"{at} field 'runs' [{n}]") for n, r in enumerate(value["runs"])]
            if pair_id not in ids:
                unknown += 1
                continue
            repeated += pair_id in runs
            runs[pair_id] = given
            continue
        meta = value.get("meta")
        if not isinstance(meta, dict) or "filter_choice" not in meta:
            raise PredictionsError(
                f"{at} field 'runs': missing (nor an official meta.filter_choice)"
            )
        try:
            key = value["id"] + value["query"] + "\t".join(sorted(value["response"]))
        except (KeyError, TypeError):
            raise PredictionsError(
                f"{at} fields 'id', 'query', 'response': an official line needs all three"
            ) from None
        run = _run({"output": meta["filter_choice"], "random_number": meta.get("random_number")},
                   f"{at} field 'meta'")  # fmt: skip
        if key not in by_key:
            unknown += 1
            continue
        runs.setdefault(by_key[key], []).append(run)
    return runs, repeated, unknown
