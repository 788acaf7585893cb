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
3. Graded votes (issue 30; simulation.make_graded_world): --graded-items items
   x 3 graded votes (five annotators of different noise, close calls voted
   weakly), a two-order judge and a reward model as the ensemble. For each
   seed, before (CROWDLAB on the collapsed label, strength ignored) and after
   (CROWDLAB with a column per annotator and strength level): the average
   precision of the queue at finding the wrong labels, and the ranks of the
   unanimous wrong labels (median; how many in the top fifth); then the same
   ranks in the view "unanimous, but the models disagree".

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
from curation.quality.simulation import (
    evaluate,
    evaluate_graded,
    make_graded_world,
    make_world,
)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--votes", type=int, default=3)
    parser.add_argument("--big-items", type=int, default=100_000)
    parser.add_argument("--graded-items", type=int, default=400)
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

    if args.graded_items:
        graded(args.graded_items, args.seeds)

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


def graded(n_items: int, seeds: int) -> None:
    print(f"\n3. Graded votes: {n_items} items x 3 graded votes, {seeds} seeds")
    print(
        "   AP = average precision of the queue at finding wrong labels; unanimous = the "
        "wrong labels with every vote on one side (median rank; in the top fifth)\n"
    )
    print(
        "| seed | wrong | unanimous wrong | AP before | AP after | unanimous median rank "
        "before / after / view | in top 20 % before / after / view |"
    )
    print("|---:|---:|---:|---:|---:|---|---|")
    rows = []
    for seed in range(seeds):
        o = evaluate_graded(make_graded_world(n_items=n_items, seed=seed))
        rows.append(o)
        print(
            f"| {seed} | {o.n_errors} | {o.n_unanimous_errors} | "
            f"{o.before.average_precision:.3f} | {o.after.average_precision:.3f} | "
            f"{_median(o.before)} / {_median(o.after)} / {_median(o.view)} | "
            f"{o.before.unanimous_in_top} / {o.after.unanimous_in_top} / "
            f"{o.view.unanimous_in_top} of {o.n_unanimous_errors} |"
        )

    def mean(f):
        return statistics.fmean(f(o) for o in rows)

    print(
        f"| mean | {mean(lambda o: o.n_errors):.1f} | {mean(lambda o: o.n_unanimous_errors):.1f} | "
        f"{mean(lambda o: o.before.average_precision):.3f} | "
        f"{mean(lambda o: o.after.average_precision):.3f} | "
        f"{mean(lambda o: _median_value(o.before)):.1f} / "
        f"{mean(lambda o: _median_value(o.after)):.1f} / "
        f"{mean(lambda o: _median_value(o.view)):.1f} | "
        f"{mean(lambda o: o.before.unanimous_in_top):.1f} / "
        f"{mean(lambda o: o.after.unanimous_in_top):.1f} / "
        f"{mean(lambda o: o.view.unanimous_in_top):.1f} |"
    )


def _median_value(ranking) -> float:
    return statistics.median(ranking.unanimous_ranks) if ranking.unanimous_ranks else float("nan")


def _median(ranking) -> str:
    return f"{_median_value(ranking):g}"


if __name__ == "__main__":
    main()
