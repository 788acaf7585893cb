"""Adaptive votes against fixed k votes per item on seeded known-truth
worlds (issue 36, item 5). No database: the rule and the posterior are
annotate.loop.adaptive's, the very functions the refit task and the queue
use.

A world: N items with a true label ("1"/"2"), ANNOTATORS of mixed
reliability (each vote correct with that probability; who votes on an item
is drawn uniformly among the annotators who have not voted on it), and
JUDGES that label every item once (correct with their accuracy; judges are
not human votes and cost nothing here).

- fixed k: every item gets k human votes; the label is the posterior's most
  likely one (humans + judges, as the app fits it).
- adaptive: every item gets the base votes, then rounds: fit the posterior,
  apply the rule (adaptive.plan), give one vote to each of the `refit_every`
  least certain open items (adaptive.queue_order), as the queue serves
  open items between two refits; until no item is open.

Run:  python bench/adaptive_sim.py [--items 10000] [--seeds 0 1 2] [--rules 1:5:0.9 ...]
(figures in bench/README.md)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from annotate.loop import adaptive

ANNOTATORS = (0.95, 0.85, 0.70, 0.55, 0.95, 0.85, 0.70, 0.55)
JUDGES = (0.80, 0.75)


@dataclass(frozen=True)
class World:
    truth: np.ndarray  # 0: "1" is right, 1: "2" is right
    annotators: tuple[float, ...]
    judge_labels: dict[int, list[str]]
    seed: int


@dataclass(frozen=True)
class Outcome:
    policy: str
    votes: int
    accuracy: float


def make_world(*, n_items: int, seed: int, annotators=ANNOTATORS, judges=JUDGES) -> World:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 2, size=n_items)
    judge_labels: dict[int, list[str]] = {i: [] for i in range(n_items)}
    for accuracy in judges:
        right = rng.random(n_items) < accuracy
        for i in range(n_items):
            judge_labels[i].append(adaptive.CLASSES[truth[i] if right[i] else 1 - truth[i]])
    return World(truth, tuple(annotators), judge_labels, seed)


class _Votes:
    """The human votes given so far, drawn with the world's own stream."""

    def __init__(self, world: World, stream: int):
        self.world = world
        self.rng = np.random.default_rng([world.seed, stream])
        self.who: dict[int, list[int]] = {i: [] for i in range(len(world.truth))}
        self.labels: dict[int, list[str]] = {i: [] for i in range(len(world.truth))}
        self.spent = 0

    def give(self, item: int) -> bool:
        free = [a for a in range(len(self.world.annotators)) if a not in self.who[item]]
        if not free:
            return False
        annotator = free[int(self.rng.integers(len(free)))]
        right = self.rng.random() < self.world.annotators[annotator]
        truth = int(self.world.truth[item])
        self.who[item].append(annotator)
        self.labels[item].append(adaptive.CLASSES[truth if right else 1 - truth])
        self.spent += 1
        return True

    def rows(self):
        for item, who in self.who.items():
            for annotator, label in zip(who, self.labels[item], strict=True):
                yield item, f"a{annotator}", label
        for item, labels in self.world.judge_labels.items():
            for j, label in enumerate(labels):
                yield item, f"judge{j}", label


def _accuracy(world: World, p1: dict[int, float]) -> float:
    right = 0
    for i, truth in enumerate(world.truth):
        p = p1.get(i, 0.5)
        label = 0 if p > 0.5 else 1 if p < 0.5 else -1  # an even split is wrong
        right += label == truth
    return right / len(world.truth)


def run_fixed(world: World, k: int, *, method: str | None = None) -> Outcome:
    votes = _Votes(world, stream=k)
    for item in range(len(world.truth)):
        for _ in range(k):
            votes.give(item)
    p1, _ = adaptive.posterior(votes.rows(), method=method)
    return Outcome(f"fixed k={k}", votes.spent, _accuracy(world, p1))


def run_adaptive(
    world: World, rule: adaptive.Rule, *, refit_every: int, method: str | None = None
) -> Outcome:
    votes = _Votes(world, stream=100 + rule.budget)
    for item in range(len(world.truth)):
        for _ in range(rule.base_votes):
            votes.give(item)
    while True:
        p1, _ = adaptive.posterior(votes.rows(), method=method)
        steps = adaptive.plan(rule=rule, human=votes.labels, judges=world.judge_labels, p1=p1)
        order = adaptive.queue_order(steps, p1)
        given = sum(votes.give(item) for item in order[:refit_every])
        if not given:
            break
    name = f"adaptive base={rule.base_votes} budget={rule.budget} stop={rule.stop_certainty:g}"
    return Outcome(name, votes.spent, _accuracy(world, p1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--refit-every", type=int, default=1000)
    parser.add_argument("--method", choices=sorted(adaptive.METHOD_NAMES), default=None)
    parser.add_argument(
        "--rules",
        nargs="+",
        default=["2:5:0.95", "1:3:0.95", "1:5:0.95", "1:5:0.9", "1:4:0.95"],
        help="adaptive rules as base:budget:stop (2:5:0.95 is a new project's default)",
    )
    args = parser.parse_args()
    rules = [
        adaptive.Rule(*(f(v) for f, v in zip((int, int, float), r.split(":"), strict=True)))
        for r in args.rules
    ]
    results: dict[str, list[Outcome]] = {}
    started = time.perf_counter()
    for seed in args.seeds:
        world = make_world(n_items=args.items, seed=seed)
        runs = [partial(run_fixed, world, k) for k in range(1, 6)]
        runs += [partial(run_adaptive, world, rule, refit_every=args.refit_every) for rule in rules]
        for run in runs:
            out = run(method=args.method)
            results.setdefault(out.policy, []).append(out)
            # One line per run as it ends (a long run shows its progress).
            print(f"# seed {seed}: {out.policy}: {out.votes} votes, {out.accuracy:.4f}", flush=True)
    method = args.method or (
        adaptive.DAWID_SKENE if adaptive.dawid_skene_available() else adaptive.ONE_COIN
    )
    if len(args.seeds) > 1:
        print()
    fixed3 = statistics.mean(o.accuracy for o in results["fixed k=3"])
    fixed3_votes = statistics.mean(o.votes for o in results["fixed k=3"])
    print(
        f"{args.items} items, seeds {args.seeds}, annotators {ANNOTATORS}, judges {JUDGES}, "
        f"posterior {adaptive.METHOD_NAMES[method]}, refit every {args.refit_every} votes"
    )
    print("| policy | human votes (mean) | votes vs fixed 3 | accuracy mean | min-max |")
    print("|---|---:|---:|---:|---:|")
    for policy, outs in results.items():
        votes = statistics.mean(o.votes for o in outs)
        acc = [o.accuracy for o in outs]
        mark = " ✓" if statistics.mean(acc) >= fixed3 and votes <= 0.7 * fixed3_votes else ""
        print(
            f"| {policy}{mark} | {votes:,.0f} | {votes / fixed3_votes - 1:+.0%} | "
            f"{statistics.mean(acc):.4f} | {min(acc):.4f}-{max(acc):.4f} |"
        )
    print(
        f"✓: fixed 3's mean accuracy with at least 30 % fewer human votes. "
        f"{time.perf_counter() - started:.0f} s"
    )


if __name__ == "__main__":
    main()
