"""Judges as calibrated helpers (issue 36 item 3): how a judge's votes on a
project's benchmark items compare with the human majority. Pure Python, no
Django import; curation.evaluation.calibration_report feeds it.

Inputs, in canonical terms ("1"/"2": the item's response 1/2 is better;
"tie"):

* human votes: item -> [(annotator, choice)], the current, non-imported
  human judgements of benchmark items;
* a judge's votes: item -> {order: (choice or None, confidence or None)},
  one per order it was asked in ("original", "swapped"); None: no verdict.

The rules (docs/decisions.md, "Calibrated judges"):

* **Human majority**: an item with at least MIN_HUMAN_VOTES votes whose
  most frequent choice is "1" or "2" and strictly more frequent than each
  other choice. Items whose top choice is "tie", or shared by two choices,
  have no majority and are left out (counted); so are items with fewer votes.
* **Accuracy** and **Cohen's kappa**: every answered judge vote (item,
  order) against its item's majority, so a judge asked in both orders is
  scored like an annotator shown a random order. Kappa is Cohen's
  unweighted kappa of those two label lists (sklearn.metrics.cohen_kappa_score).
* **Position consistency**: the share of items answered in both orders
  whose two canonical answers agree.
* **Expected calibration error**, where the judge gave a confidence: the
  answered votes in ten equal-width confidence bins [0, .1), … [.9, 1];
  the sum over bins of (bin size / n) * |accuracy in bin - mean confidence|.
* **Could it stand in for one of three annotators?** For every human vote
  on an item whose *other* votes have a majority (the leave-one-out
  majority), the annotator agrees with it or not, and so does the judge in
  their place (its mean over the orders it answered). The judge can stand in
  when its stand-in agreement is at least the median annotator's
  leave-one-out agreement (annotators with MIN_LOO_CASES cases or more),
  measured on at least MIN_CASES cases; otherwise it cannot, or there is not
  enough data to say.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field

SIDES = ("1", "2")
MIN_HUMAN_VOTES = 2  # fewer votes make no majority to compare with
MIN_CASES = 20  # stand-in cases below which the verdict is "not enough data"
MIN_LOO_CASES = 5  # an annotator's leave-one-out cases to count in the median
ECE_BINS = 10

HumanVotes = Mapping[int, Sequence[tuple[int, str]]]
JudgeVotes = Mapping[int, Mapping[str, tuple[str | None, float | None]]]


def majority(choices: Iterable[str]) -> str | None:
    """The strict majority side of these votes ("1"/"2"), else None."""
    counts = Counter(choices)
    return _majority_of(counts["1"], counts["2"], sum(counts.values()))


def _majority_of(n1: int, n2: int, total: int) -> str | None:
    """The strict majority side given the votes for each side and in all
    (every other vote is a tie vote)."""
    if total < MIN_HUMAN_VOTES:
        return None
    ties = total - n1 - n2
    if n1 > n2 and n1 > ties:
        return "1"
    if n2 > n1 and n2 > ties:
        return "2"
    return None


def cohen_kappa(a: Sequence[str], b: Sequence[str]) -> float | None:
    """Cohen's unweighted kappa of two raters' labels (None where it is
    undefined: no pairs, or chance agreement of 1), as
    sklearn.metrics.cohen_kappa_score computes it."""
    n = len(a)
    if n == 0 or n != len(b):
        return None
    observed = sum(1 for x, y in zip(a, b, strict=True) if x == y) / n
    ca, cb = Counter(a), Counter(b)
    expected = sum(ca[k] * cb[k] for k in set(ca) | set(cb)) / (n * n)
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)


def expected_calibration_error(
    confidences: Sequence[float], correct: Sequence[bool], bins: int = ECE_BINS
) -> float | None:
    """ECE over equal-width bins of [0, 1] (1.0 in the last bin)."""
    n = len(confidences)
    if n == 0:
        return None
    conf_sum = [0.0] * bins
    hits = [0] * bins
    size = [0] * bins
    for c, ok in zip(confidences, correct, strict=True):
        b = min(int(c * bins), bins - 1)
        conf_sum[b] += c
        hits[b] += 1 if ok else 0
        size[b] += 1
    return sum(
        (size[b] / n) * abs(hits[b] / size[b] - conf_sum[b] / size[b])
        for b in range(bins)
        if size[b]
    )


@dataclass
class Figures:
    """One judge's figures on one set of items (a domain, or all)."""

    n_items: int = 0  # items with human votes
    n_majority: int = 0  # of those, with a human majority
    n_tie_or_split: int = 0  # votes enough, but the top is "tie" or shared
    n_too_few_votes: int = 0
    n_judged: int = 0  # majority items the judge answered (at least one order)
    n_votes: int = 0  # answered judge votes (item, order) on majority items
    n_unparsed: int = 0  # judge answers without a verdict (any item)
    accuracy: float | None = None
    kappa: float | None = None
    n_both_orders: int = 0
    position_consistency: float | None = None
    n_with_confidence: int = 0
    ece: float | None = None
    n_cases: int = 0  # stand-in cases: human votes with a leave-one-out majority
    judge_standin_agreement: float | None = None
    human_loo_median: float | None = None
    n_humans_measured: int = 0
    can_stand_in: bool | None = None  # None: not enough data
    verdict: str = ""
    human_loo: dict[int, float] = field(default_factory=dict)

    def summary(self) -> dict:
        """The figures as shown (without the per-annotator agreements)."""
        out = asdict(self)
        del out["human_loo"]
        return out


def figures(humans: HumanVotes, judge: JudgeVotes) -> Figures:
    """The judge's figures against the humans on the items of `humans`."""
    f = Figures(n_items=sum(1 for votes in humans.values() if votes))
    judge_labels: list[str] = []
    human_labels: list[str] = []
    confidences: list[float] = []
    confident_correct: list[bool] = []
    both = consistent = 0
    for item, votes in humans.items():
        if not votes:
            continue
        answers = judge.get(item, {})
        f.n_unparsed += sum(1 for choice, _ in answers.values() if choice is None)
        given = {order: (c, conf) for order, (c, conf) in answers.items() if c is not None}
        if len(given) >= 2:
            both += 1
            consistent += len({c for c, _ in given.values()}) == 1
        label = _majority_of(
            sum(1 for _, c in votes if c == "1"), sum(1 for _, c in votes if c == "2"), len(votes)
        )
        if label is None:
            if len(votes) < MIN_HUMAN_VOTES:
                f.n_too_few_votes += 1
            else:
                f.n_tie_or_split += 1
            continue
        f.n_majority += 1
        if given:
            f.n_judged += 1
        for choice, conf in given.values():
            judge_labels.append(choice)
            human_labels.append(label)
            if conf is not None:
                confidences.append(conf)
                confident_correct.append(choice == label)
    f.n_votes = len(judge_labels)
    if judge_labels:
        f.accuracy = sum(map(str.__eq__, judge_labels, human_labels)) / len(judge_labels)
        f.kappa = cohen_kappa(judge_labels, human_labels)
    f.n_both_orders = both
    f.position_consistency = consistent / both if both else None
    f.n_with_confidence = len(confidences)
    f.ece = expected_calibration_error(confidences, confident_correct)
    _stand_in(f, humans, judge)
    return f


def _stand_in(f: Figures, humans: HumanVotes, judge: JudgeVotes) -> None:
    """Leave-one-out: each annotator's agreement with the others' majority,
    and the judge's in their place (see module)."""
    agree: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    judge_scores: list[float] = []
    for item, votes in humans.items():
        answers = [c for c, _ in judge.get(item, {}).values() if c is not None]
        n1 = sum(1 for _, c in votes if c == "1")
        n2 = sum(1 for _, c in votes if c == "2")
        rest = len(votes) - 1
        for annotator, choice in votes:
            # The majority of the item's other votes: this one taken out.
            others = _majority_of(n1 - (choice == "1"), n2 - (choice == "2"), rest)
            if others is None:
                continue
            agree[annotator][0] += choice == others
            agree[annotator][1] += 1
            if answers:
                judge_scores.append(sum(a == others for a in answers) / len(answers))
    f.human_loo = {a: k / n for a, (k, n) in agree.items() if n >= MIN_LOO_CASES}
    f.n_humans_measured = len(f.human_loo)
    f.n_cases = len(judge_scores)
    if judge_scores:
        f.judge_standin_agreement = math.fsum(judge_scores) / len(judge_scores)
    if f.human_loo:
        f.human_loo_median = statistics.median(f.human_loo.values())
    if f.n_cases < MIN_CASES or f.human_loo_median is None or f.judge_standin_agreement is None:
        f.can_stand_in = None
        f.verdict = (
            f"Not enough data to say: {f.n_cases} stand-in cases (at least {MIN_CASES} are "
            f"needed) and {f.n_humans_measured} annotators with {MIN_LOO_CASES} or more "
            "leave-one-out cases."
        )
        return
    judge_pct, human_pct = _pct(f.judge_standin_agreement), _pct(f.human_loo_median)
    f.can_stand_in = f.judge_standin_agreement >= f.human_loo_median
    if f.can_stand_in:
        f.verdict = (
            f"Yes: in an annotator's place it agrees with the other annotators' majority "
            f"{judge_pct} of the time, at least as often as the median annotator ({human_pct})."
        )
    else:
        f.verdict = (
            f"No: in an annotator's place it agrees with the other annotators' majority "
            f"{judge_pct} of the time, less often than the median annotator ({human_pct})."
        )
    if f.position_consistency is not None and f.position_consistency < 0.9:
        f.verdict += (
            f" Its answer changes with the order of the responses on "
            f"{_pct(1 - f.position_consistency)} of the items asked both ways."
        )


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def report(
    humans: HumanVotes, judge: JudgeVotes, domain_of: Mapping[int, str]
) -> list[tuple[str | None, Figures]]:
    """The judge's figures over all items (domain None) and per domain."""
    by_domain: dict[str, dict[int, Sequence[tuple[int, str]]]] = defaultdict(dict)
    for item, votes in humans.items():
        by_domain[domain_of[item]][item] = votes
    out: list[tuple[str | None, Figures]] = [(None, figures(humans, judge))]
    out += [(domain, figures(by_domain[domain], judge)) for domain in sorted(by_domain)]
    return out
