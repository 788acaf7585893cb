"""Seeded worlds with known true labels, to prove the suspected-errors
ranking and Dawid-Skene against simple baselines (issue 23; graded votes,
issue 30). No Django import.

In `make_world` annotators of ANNOTATOR_ACCURACY vote (one with a left
bias), the current label is the votes' majority (a tie: a seeded coin), as
the agreement rule would release it, and judges of JUDGE_ACCURACY answer
both orders (probability.py's smoothed share; the ensemble is their mean).
The queue sorts by CROWDLAB's probability of the current label, lowest
first; the baseline by the current label's vote share alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from curation.quality.label_quality import (
    analyse,
    average_precision,
    label_quality,
    models_against,
    precision_at_k,
)
from curation.quality.probability import ensemble, judge_share, sigmoid

ANNOTATOR_ACCURACY = (0.55, 0.65, 0.75, 0.85, 0.95)
LEFT_BIASED = 1  # index of the annotator with a left bias
LEFT_BIAS = 0.4
JUDGE_ACCURACY = (0.65, 0.72, 0.80)


@dataclass(frozen=True)
class World:
    truth: np.ndarray  # "1"/"2" per item
    votes: list[tuple[int, int, str]]
    current: list[str]
    vote_share: np.ndarray  # share of the current label's votes
    judge_p1: list[list[float | None]]  # per judge, per item
    model_p1: dict[int, float | None]  # the ensemble

    @property
    def errors(self) -> set[int]:
        return {i for i, c in enumerate(self.current) if c != self.truth[i]}


def make_world(*, n_items: int = 2000, votes_per_item: int = 3, seed: int = 0) -> World:
    rng = np.random.default_rng(seed)
    truth = rng.choice(np.array(["1", "2"]), size=n_items)
    left = rng.choice(np.array(["1", "2"]), size=n_items)  # canonical side shown left
    votes: list[tuple[int, int, str]] = []
    current: list[str] = []
    share = np.zeros(n_items)
    n_annotators = len(ANNOTATOR_ACCURACY)
    for i in range(n_items):
        who = rng.choice(n_annotators, size=votes_per_item, replace=False)
        wrong = "2" if truth[i] == "1" else "1"
        counts = {"1": 0, "2": 0}
        for a in who:
            if a == LEFT_BIASED and rng.random() < LEFT_BIAS:
                choice = str(left[i])
            else:
                choice = str(truth[i]) if rng.random() < ANNOTATOR_ACCURACY[a] else wrong
            votes.append((i, int(a), choice))
            counts[choice] += 1
        if counts["1"] == counts["2"]:
            label = "1" if rng.random() < 0.5 else "2"
        else:
            label = "1" if counts["1"] > counts["2"] else "2"
        current.append(label)
        share[i] = counts[label] / votes_per_item
    judge_p1: list[list[float | None]] = []
    for accuracy in JUDGE_ACCURACY:
        per_item: list[float | None] = []
        for i in range(n_items):
            wrong = "2" if truth[i] == "1" else "1"
            picks = [str(truth[i]) if rng.random() < accuracy else wrong for _ in range(2)]
            per_item.append(judge_share(picks))
        judge_p1.append(per_item)
    model = {i: ensemble(j[i] for j in judge_p1) for i in range(n_items)}
    return World(truth, votes, current, share, judge_p1, model)


@dataclass(frozen=True)
class Outcome:
    n_items: int
    n_errors: int
    queue_precision: dict[float, float]  # k as a share of items -> precision@k
    baseline_precision: dict[float, float]
    ds_accuracy: float
    majority_accuracy: float


def evaluate(world: World, *, ks=(0.01, 0.05), seed: int = 0) -> Outcome:
    analysis = analyse(world.votes, world.model_p1)
    by_item = {r.item: r for r in analysis.items}
    n = len(world.current)
    items = [i for i in range(n) if i in by_item]
    queue = sorted(items, key=lambda i: (label_quality(by_item[i], world.current[i]), i))
    order = np.random.default_rng(seed).permutation(n)
    baseline = sorted(items, key=lambda i: (world.vote_share[i], order[i]))
    errors = world.errors
    queue_p = {}
    base_p = {}
    for k in ks:
        size = max(1, round(k * n))
        queue_p[k] = precision_at_k(queue, errors, size)
        base_p[k] = precision_at_k(baseline, errors, size)
    ds = [("1" if by_item[i].ds_p1 >= 0.5 else "2") for i in items]
    ds_accuracy = sum(1 for i, d in zip(items, ds, strict=True) if d == world.truth[i]) / len(items)
    majority = sum(1 for i in items if world.current[i] == world.truth[i]) / len(items)
    return Outcome(n, len(errors), queue_p, base_p, ds_accuracy, majority)


# --- A graded world (issue 30): strengths, unanimous wrong labels -------------------------

GRADED_NOISE = (0.5, 0.7, 0.9, 1.1, 1.4)  # annotators' perception noise, best first
STRENGTH_CUTS = (0.4, 0.9)  # |perceived margin| above these: better, much better
JUDGE_NOISE = 0.6  # a two-order judge (forward and reverse, as Multimodal RewardBench 2's)
REWARD_NOISE = 0.8  # a reward model's score difference
REWARD_SCALE = 2.0


@dataclass(frozen=True)
class GradedWorld:
    """Votes are (item, annotator, choice, signed strength oriented to 1)."""

    truth: np.ndarray
    votes: list[tuple[int, int, str, int]]
    current: list[str]
    model_p1: dict[int, float | None]

    @property
    def errors(self) -> set[int]:
        return {i for i, c in enumerate(self.current) if c != self.truth[i]}

    @property
    def unanimous(self) -> set[int]:
        sides: dict[int, set[str]] = {}
        for item, _, choice, _ in self.votes:
            sides.setdefault(item, set()).add(choice)
        return {i for i, s in sides.items() if len(s) == 1}


def make_graded_world(*, n_items: int = 400, votes_per_item: int = 3, seed: int = 0) -> GradedWorld:
    """Each item has a true side and a margin uniform on [0, 1] (how clear
    the preference is). An annotator perceives the signed margin plus
    Gaussian noise of their own (GRADED_NOISE); the sign is their side, the
    size their strength (1 slightly, 2 better, 3 much better at
    STRENGTH_CUTS): close calls get weak votes, from the good annotators as
    from the poor ones. The label is the majority (odd votes_per_item). Two
    leaderboard entries see the same margin with their own noise: a judge
    answering both orders (the smoothed two-order share of probability.py)
    and a reward model (sigmoid of a score difference); the ensemble is
    their mean."""
    rng = np.random.default_rng(seed)
    sign = rng.choice(np.array([1, -1]), size=n_items)
    margin = rng.uniform(0.0, 1.0, size=n_items)
    truth = np.where(sign > 0, "1", "2")
    votes: list[tuple[int, int, str, int]] = []
    current: list[str] = []
    for i in range(n_items):
        who = rng.choice(len(GRADED_NOISE), size=votes_per_item, replace=False)
        total = 0
        for a in who:
            x = sign[i] * margin[i] + rng.normal(0.0, GRADED_NOISE[a])
            level = 1 + int(abs(x) > STRENGTH_CUTS[0]) + int(abs(x) > STRENGTH_CUTS[1])
            strength = level if x >= 0 else -level
            votes.append((i, int(a), "1" if strength > 0 else "2", strength))
            total += 1 if strength > 0 else -1
        current.append("1" if total > 0 else "2")
    model: dict[int, float | None] = {}
    for i in range(n_items):
        picks = [
            "1" if sign[i] * margin[i] + rng.normal(0.0, JUDGE_NOISE) > 0 else "2" for _ in range(2)
        ]
        diff = sign[i] * margin[i] + rng.normal(0.0, REWARD_NOISE)
        model[i] = ensemble([judge_share(picks), sigmoid(REWARD_SCALE * diff)])
    return GradedWorld(truth, votes, current, model)


@dataclass(frozen=True)
class Ranking:
    average_precision: float
    unanimous_ranks: list[int]  # 1-based ranks of the unanimous wrong labels
    top: int  # the "top" the summary counts in (a fifth of the items)

    @property
    def unanimous_in_top(self) -> int:
        return sum(1 for r in self.unanimous_ranks if r <= self.top)


@dataclass(frozen=True)
class GradedOutcome:
    n_items: int
    n_errors: int
    n_unanimous_errors: int
    before: Ranking  # CROWDLAB on collapsed labels (strength ignored)
    after: Ranking  # CROWDLAB with a column per (annotator, strength level)
    view: Ranking  # "unanimous, but the models disagree", models' confidence against first


def _ranking(order: list[int], errors: set[int], unanimous: set[int], top: int) -> Ranking:
    position = {item: r for r, item in enumerate(order, start=1)}
    ranks = sorted(position[i] for i in errors & unanimous if i in position)
    return Ranking(average_precision(order, errors), ranks, top)


def evaluate_graded(world: GradedWorld) -> GradedOutcome:
    n = len(world.current)
    errors, unanimous = world.errors, world.unanimous
    top = max(1, n // 5)
    outcomes = []
    for votes in ([v[:3] for v in world.votes], world.votes):
        by_item = {r.item: r for r in analyse(votes, world.model_p1).items}
        order = sorted(by_item, key=lambda i: (label_quality(by_item[i], world.current[i]), i))
        outcomes.append(_ranking(order, errors, unanimous, top))
    against = {i: models_against(world.model_p1[i], world.current[i]) for i in unanimous}
    view = sorted(
        (i for i in unanimous if (against[i] or 0.0) > 0.5), key=lambda i: (-(against[i] or 0), i)
    )
    view_errors = errors & unanimous
    outcomes.append(_ranking(view, view_errors, unanimous, top))
    return GradedOutcome(n, len(errors), len(view_errors), *outcomes)
