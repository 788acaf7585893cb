"""Calibration report benchmark (issue 36 item 3): the pure computation of
curation.evaluation.calibration.report on a seeded world, and what it says.

    .venv/bin/python bench/calibration_bench.py [--items 100000] [--seed 1]

Each item has a truth; three of thirty annotators vote on it, each right
with probability 0.8 (else a uniform pick of 1/2/tie); a judge answers both
orders, right with probability 0.75 per order, and states a confidence
uniform in [0.5, 1]. Prints the wall time of the report (all domains plus
four domains) and the overall figures and verdict.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from curation.evaluation.calibration import report


def world(n_items: int, seed: int):
    rng = random.Random(seed)
    humans, judge, domain_of = {}, {}, {}
    for item in range(n_items):
        truth = rng.choice("12")
        humans[item] = [
            (a, truth if rng.random() < 0.8 else rng.choice(["1", "2", "tie"]))
            for a in rng.sample(range(1, 31), 3)
        ]
        judge[item] = {
            order: (truth if rng.random() < 0.75 else rng.choice("12"), rng.uniform(0.5, 1.0))
            for order in ("original", "swapped")
        }
        domain_of[item] = rng.choice(["vqa", "chart", "ocr", "math"])
    return humans, judge, domain_of


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    humans, judge, domain_of = world(args.items, args.seed)
    start = time.perf_counter()
    rows = report(humans, judge, domain_of)
    seconds = time.perf_counter() - start
    overall = rows[0][1]
    print(
        f"report over {args.items:,} items x 3 votes, judge in both orders, 4 domains: "
        f"{seconds:.2f} s"
    )
    print(
        f"accuracy {overall.accuracy:.4f}  kappa {overall.kappa:.4f}  "
        f"position consistency {overall.position_consistency:.4f}  ECE {overall.ece:.4f}"
    )
    print(
        f"stand-in {overall.judge_standin_agreement:.4f} vs median annotator "
        f"{overall.human_loo_median:.4f}: {overall.verdict}"
    )


if __name__ == "__main__":
    main()
