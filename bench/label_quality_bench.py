"""Label-quality benchmark (issue 23): proof on simulated truth, and speed.

    .venv/bin/python bench/label_quality_bench.py [--items 2000] [--seeds 5]
                                                  [--votes 3] [--big-items 100000]

1. Simulated truth (curation/quality/simulation.py): a seeded world with known
   labels, five annotators of accuracy 0.55-0.95 (one with a left bias) and
   three two-order judges of accuracy 0.65, 0.72, 0.80 scored as leaderboard
   entries. For each seed: precision@k (k = 1 %, 5 % of items) of the
   suspected-errors queue (CROWDLAB's probability of the current label,
   lowest first) against the baseline "rank by vote split alone", and
   Dawid-Skene's label accuracy against majority vote. Printed per seed and
   as the mean.
2. Speed of the analysis itself (CROWDLAB + Dawid-Skene, curation.quality.
   label_quality.analyse) at --big-items items x 5 votes with 3 entries: wall
   time and this process's peak RSS (target <= 30 s and <= 1 GB in the worker).

Needs the quality extra: pip install -e ".[quality]".
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from curation.quality.label_quality import analyse, libraries_available
from curation.quality.simulation import evaluate, make_world


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--votes", type=int, default=3)
    parser.add_argument("--big-items", type=int, default=100_000)
    args = parser.parse_args()
    if not libraries_available():
        sys.exit('The quality extra is not installed: pip install -e ".[quality]"')
    warnings.simplefilter("ignore", DeprecationWarning)

    print(f"1. Simulated truth: {args.items} items x {args.votes} votes, {args.seeds} seeds\n")
    header = (
        f"{'seed':>4}  {'errors':>6}  {'queue P@1%':>10}  {'split P@1%':>10}  "
        f"{'queue P@5%':>10}  {'split P@5%':>10}  {'DS acc':>7}  {'MV acc':>7}"
    )
    print(header)
    outcomes = []
    for seed in range(args.seeds):
        o = evaluate(
            make_world(n_items=args.items, votes_per_item=args.votes, seed=seed), seed=seed
        )
        outcomes.append(o)
        print(
            f"{seed:>4}  {o.n_errors:>6}  {o.queue_precision[0.01]:>10.3f}  "
            f"{o.baseline_precision[0.01]:>10.3f}  {o.queue_precision[0.05]:>10.3f}  "
            f"{o.baseline_precision[0.05]:>10.3f}  {o.ds_accuracy:>7.4f}  "
            f"{o.majority_accuracy:>7.4f}"
        )

    def mean(f):
        return statistics.fmean(f(o) for o in outcomes)

    print(
        f"{'mean':>4}  {mean(lambda o: o.n_errors):>6.0f}  "
        f"{mean(lambda o: o.queue_precision[0.01]):>10.3f}  "
        f"{mean(lambda o: o.baseline_precision[0.01]):>10.3f}  "
        f"{mean(lambda o: o.queue_precision[0.05]):>10.3f}  "
        f"{mean(lambda o: o.baseline_precision[0.05]):>10.3f}  "
        f"{mean(lambda o: o.ds_accuracy):>7.4f}  {mean(lambda o: o.majority_accuracy):>7.4f}"
    )

    if args.big_items:
        print(f"\n2. Analysis speed: {args.big_items} items x 5 votes, 3 entries")
        world = make_world(n_items=args.big_items, votes_per_item=5, seed=0)
        before = peak_rss_mb()
        start = time.perf_counter()
        result = analyse(world.votes, world.model_p1)
        seconds = time.perf_counter() - start
        print(
            f"   CROWDLAB + Dawid-Skene over {result.n_votes} votes: {seconds:.1f} s "
            f"(target <= 30 s); peak RSS {peak_rss_mb():.0f} MB "
            f"(before: {before:.0f} MB; target <= 1024 MB)"
        )


if __name__ == "__main__":
    main()
