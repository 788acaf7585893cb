"""Adaptive votes (issue 36, item 5): after a base number of votes per item,
spend the remaining budget on the items whose label is least certain, and
stop early where the label is settled. Pure (numpy; crowd-kit imported only
when a posterior is fitted): the refit task (curation.quality.adaptive)
and bench/adaptive_sim.py call the same functions, so the bench measures
the rule the queue applies.

The rule, per item of a project in adaptive mode (`plan`):

1. fewer human votes than `base_votes`: it collects them in the ordinary
   claim order (not yet in the adaptive queue);
2. `budget` human votes: settled ("budget");
3. posterior certainty (the probability of its most likely label) at least
   `stop_certainty`: settled ("certain");
4. every human vote and every judge on one side: settled ("agreement"),
   the humans and the judges' ensemble agree;
5. otherwise open for one more vote; the queue serves open items least
   certain first (certainty, then id).

The posterior (`posterior`) is Dawid-Skene (crowd-kit's
``DawidSkene(n_iter=100, tol=1e-6)``) over the current human votes, each
judge an extra worker. Without crowd-kit (the optional ``quality`` extra) it
is the documented fallback `one_coin_posterior`: each worker's accuracy is
their Beta(1, 1)-smoothed agreement with the items' vote majority, and an
item's probability the naive-Bayes combination of its votes. Ties are left
out (they say nothing about which side is better), as in label_quality.
"""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib.util import find_spec

CLASSES = ("1", "2")
DS_ITERATIONS = 100
DS_TOLERANCE = 1e-6
DAWID_SKENE = "dawid_skene"
ONE_COIN = "one_coin"
METHOD_NAMES = {
    DAWID_SKENE: "Dawid-Skene (crowd-kit)",
    ONE_COIN: "one-coin fallback (crowd-kit is not installed)",
}
# A worker's accuracy in the fallback stays inside these bounds: one perfect
# or hopeless worker must not make any item certain on their own.
ONE_COIN_BOUNDS = (0.5, 0.99)
BUDGET_MAX = 50


@dataclass(frozen=True)
class Rule:
    # The defaults are the simulation's (bench/adaptive_sim.py): fixed 3's
    # accuracy with 41 % fewer human votes (docs/decisions.md).
    base_votes: int = 1
    budget: int = 5
    stop_certainty: float = 0.9

    def errors(self) -> dict[str, str]:
        """What is wrong with these parameters, per field (empty: valid)."""
        errors = {}
        if not 1 <= self.base_votes <= BUDGET_MAX:
            errors["adaptive_base_votes"] = f"The base votes run from 1 to {BUDGET_MAX}."
        if not self.base_votes <= self.budget <= BUDGET_MAX:
            errors["adaptive_budget"] = (
                f"The budget runs from the base votes ({self.base_votes}) to {BUDGET_MAX}."
            )
        if not 0.5 < self.stop_certainty < 1:
            errors["adaptive_stop_certainty"] = "The stopping certainty is above 0.5, below 1."
        return errors

    def describe(self) -> str:
        """The rule in plain words, for curators (project page and API)."""
        return (
            f"Every item first gets {self.base_votes} vote{'s' if self.base_votes != 1 else ''}. "
            f"Then the items whose label is least certain get one more vote at a time, "
            f"up to {self.budget} votes. An item stops early when its label is at least "
            f"{self.stop_certainty:.0%} certain, or when every annotator's vote and every "
            f"judge agree on it."
        )


@dataclass(frozen=True)
class Step:
    """What the rule says of one item: the votes it should collect in all
    (`target`), whether it waits in the adaptive queue (`open`), why."""

    target: int
    open: bool
    reason: str


def dawid_skene_available() -> bool:
    return find_spec("crowdkit") is not None


def certainty(p1: float) -> float:
    """The probability of the item's most likely label."""
    return max(p1, 1.0 - p1)


def posterior(
    votes: Iterable[tuple[int, object, str]], *, method: str | None = None
) -> tuple[dict[int, float], str]:
    """(item -> P(label "1"), the method used) from votes (item, worker,
    "1" | "2" | other); judges are workers like annotators. Dawid-Skene when
    crowd-kit is installed (or `method` asks for it), else the one-coin
    fallback."""
    rows = [(item, worker, label) for item, worker, label in votes if label in CLASSES]
    if method is None:
        method = DAWID_SKENE if dawid_skene_available() else ONE_COIN
    if not rows:
        return {}, method
    if method == DAWID_SKENE:
        return dawid_skene_posterior(rows), method
    return one_coin_posterior(rows), method


def dawid_skene_posterior(rows: list[tuple[int, object, str]]) -> dict[int, float]:
    """crowd-kit's DawidSkene posterior of label "1" per item. crowd-kit, not
    a re-derivation: the house rule for statistics (a numpy rewrite, equal to
    1e-9 and ~14 s of CPU faster at 100,000 items, was not kept; the refit
    runs in the isolated child, off the vote path; docs/decisions.md)."""
    import pandas as pd
    from crowdkit.aggregation import DawidSkene

    frame = pd.DataFrame(
        {
            "task": [r[0] for r in rows],
            "worker": [str(r[1]) for r in rows],
            "label": [CLASSES.index(r[2]) for r in rows],
        }
    )
    with warnings.catch_warnings():
        # crowd-kit 1.4 uses pandas keywords that pandas 3 deprecates.
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", FutureWarning)
        proba = DawidSkene(n_iter=DS_ITERATIONS, tol=DS_TOLERANCE).fit_predict_proba(frame)
    proba = proba.reindex(columns=[0, 1], fill_value=0.0)
    return {int(item): float(p) for item, p in proba[0].items()}


def one_coin_posterior(rows: list[tuple[int, object, str]]) -> dict[int, float]:
    """The fallback: each worker's accuracy is (agreements with the item's
    vote majority + 1) / (their votes + 2), kept within ONE_COIN_BOUNDS; an
    item's P("1") combines its votes as independent evidence (naive Bayes,
    equal priors). An item whose votes are split evenly has no majority: it
    counts for no worker's accuracy."""
    by_item: dict[int, list[tuple[object, str]]] = defaultdict(list)
    for item, worker, label in rows:
        by_item[item].append((worker, label))
    agree: dict[object, int] = defaultdict(int)
    seen: dict[object, int] = defaultdict(int)
    for item_votes in by_item.values():
        n1 = sum(1 for _, label in item_votes if label == "1")
        n2 = len(item_votes) - n1
        if n1 == n2:
            continue
        majority = "1" if n1 > n2 else "2"
        for worker, label in item_votes:
            seen[worker] += 1
            agree[worker] += label == majority
    low, high = ONE_COIN_BOUNDS
    accuracy = {
        worker: min(max((agree[worker] + 1) / (seen[worker] + 2), low), high)
        for worker in {w for v in by_item.values() for w, _ in v}
    }
    out = {}
    for item, item_votes in by_item.items():
        log_odds = 0.0
        for worker, label in item_votes:
            weight = math.log(accuracy[worker] / (1.0 - accuracy[worker]))
            log_odds += weight if label == "1" else -weight
        out[item] = 1.0 / (1.0 + math.exp(-log_odds))
    return out


def agreement(human: Iterable[str], judges: Iterable[str]) -> bool:
    """Every human vote and every judge on the same side (at least one of
    each; ties count as disagreement)."""
    labels_h, labels_j = set(human), set(judges)
    return (
        bool(labels_h and labels_j) and len(labels_h | labels_j) == 1 and labels_h <= set(CLASSES)
    )


def step(*, rule: Rule, n_votes: int, p1: float | None, agree: bool) -> Step:
    """The rule for one item with `n_votes` current human votes, its
    posterior P("1") (None: not fitted yet) and whether humans and judges
    agree (module docstring)."""
    if n_votes < rule.base_votes:
        return Step(rule.base_votes, False, "base")
    if n_votes >= rule.budget:
        return Step(n_votes, False, "budget")
    if p1 is not None and certainty(p1) >= rule.stop_certainty:
        return Step(n_votes, False, "certain")
    if agree:
        return Step(n_votes, False, "agreement")
    return Step(n_votes + 1, True, "open")


def plan(
    *,
    rule: Rule,
    human: Mapping[int, list[str]],
    judges: Mapping[int, list[str]],
    p1: Mapping[int, float],
) -> dict[int, Step]:
    """`step` for every item of `human` (item -> its current human labels,
    ties included: an item with only ties has no posterior)."""
    return {
        item: step(
            rule=rule,
            n_votes=len(labels),
            p1=p1.get(item),
            agree=agreement(labels, judges.get(item, ())),
        )
        for item, labels in human.items()
    }


def queue_order(steps: Mapping[int, Step], p1: Mapping[int, float]) -> list[int]:
    """The open items as the queue serves them: least certain first (an item
    with no posterior, only ties, counts as 0.5), then by id."""
    return sorted(
        (item for item, s in steps.items() if s.open),
        key=lambda item: (certainty(p1.get(item, 0.5)), item),
    )
