"""Agreement for rankings and best-of-N picks (issue 33's performance target):
100,000 four-response items x 3 rankings in <= 60 s, no database.

Synthetic rankings (3 of 60 annotators per item, ranks from a per-item
latent order plus noise, so ties and disagreement occur; a random display
order per ranking) are made first and not timed. Timed, each step's wall
time, CPU time and the process's peak RSS after it:

1. RankTable.of(300,000 Ranking objects) (the shape the database rows give);
2. point estimates: pairwise-preference alpha, ordinal alpha, mean Kendall's
   W, mean tau-b (ranking_reliability);
3. item-bootstrap 95 % intervals of those four, 1,000 resamples;
4. position bias of every annotator (chi-squared, BH);
5. best-of-4 picks (each ranking's top, 5 % "none"): PickTable, nominal
   alpha, its bootstrap interval, position bias.

The target is judged on the sum of 1-5. Then, reported and not judged:
Borda and exact Kemeny for --aggregate-items items, one by one (what an
adjudication page asks for one item at a time).

    .venv/bin/python bench/ranking_agreement_bench.py [--items 100000]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import Results, mb, print_table
from curation.agreement import ranking as rk
from curation.agreement import ranking_aggregate as rka
from curation.agreement import ranking_bootstrap as rkb
from curation.agreement import ranking_diagnostics as rkd

TARGET_S = 60.0


def synthetic(n_items: int, per_item: int, n_slots: int, n_annotators: int, seed: int):
    rng = np.random.default_rng(seed)
    latent = rng.permuted(np.tile(np.arange(n_slots), (n_items, 1)), axis=1)
    noisy = latent[:, np.newaxis, :] + rng.normal(0, 1.0, size=(n_items, per_item, n_slots))
    ranks = (
        np.round(noisy).astype(int) - int(np.floor(noisy.min())) + 1
    )  # rounding makes ties; any positive numbers
    raters = np.argsort(rng.random((n_items, n_annotators)), axis=1)[:, :per_item]
    shown = rng.permuted(np.tile(np.arange(n_slots), (n_items * per_item, 1)), axis=1)
    rankings = [
        rk.Ranking(item, int(who), ranks_row, shown_row)
        for item, who, ranks_row, shown_row in zip(
            np.repeat(np.arange(n_items), per_item).tolist(),
            raters.ravel(),
            ranks.reshape(-1, n_slots).tolist(),
            shown.tolist(),
            strict=True,
        )
    ]
    return rankings, rng


def peak_mb() -> float:
    return mb(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


class Steps:
    def __init__(self) -> None:
        self.rows: list[tuple[str, float, float, float]] = []

    def run(self, name: str, fn):
        wall, cpu = time.perf_counter(), time.process_time()
        value = fn()
        self.rows.append((name, time.perf_counter() - wall, time.process_time() - cpu, peak_mb()))
        return value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--rankings", type=int, default=3, help="rankings per item")
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--aggregate-items", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    rankings, rng = synthetic(args.items, args.rankings, args.slots, 60, args.seed)
    base = peak_mb()
    steps = Steps()
    table = steps.run("RankTable.of(Ranking objects)", lambda: rk.RankTable.of(rankings))
    point = steps.run("alpha (pairs, ordinal), W, tau-b", lambda: rk.ranking_reliability(table))
    intervals = steps.run(
        f"bootstrap intervals, {args.resamples} resamples",
        lambda: rkb.ranking_intervals(table, n_resamples=args.resamples, point=point),
    )
    bias = steps.run("position bias (chi2, BH)", lambda: rkd.ranking_position_bias(table))
    tops = rk.unique_tops(table.ranks)
    none = rng.random(len(tops)) < 0.05
    picks = [
        rk.Pick(r.item, r.annotator, None if no or top < 0 else top, args.slots, r.shown)
        for r, top, no in zip(rankings, tops.tolist(), none.tolist(), strict=True)
    ]

    def pick_agreement():
        pick_table = rk.PickTable.of(picks)
        alpha = rk.pick_alpha(pick_table)
        interval = rk.pick_alpha_interval(pick_table, n_resamples=args.resamples)
        return alpha, interval, rkd.pick_position_bias(pick_table)

    pick_alpha, pick_interval, pick_bias = steps.run(
        "picks: table, alpha, interval, bias", pick_agreement
    )
    total_wall = sum(r[1] for r in steps.rows)
    total_cpu = sum(r[2] for r in steps.rows)

    per_item = rk.item_stats(table)
    groups = np.split(
        table.ranks[np.argsort(table.item, kind="stable")], np.cumsum(per_item.n_rankings)[:-1]
    )
    sample = groups[: args.aggregate_items]
    steps.run(
        f"Borda + Kemeny, {len(sample):,} items one by one",
        lambda: [(rka.borda(g), rka.kemeny(g)) for g in sample],
    )

    print(
        f"{args.items:,} items x {args.rankings} rankings of {args.slots} responses "
        f"({len(rankings):,} rankings; peak RSS before timing {base:.0f} MB)"
    )
    print(
        f"pairwise alpha {point.pairwise_alpha:.4f} {intervals['pairwise_alpha']}, "
        f"ordinal alpha {point.ordinal_alpha:.4f} {intervals['ordinal_alpha']}, "
        f"mean W {point.mean_w:.4f} {intervals['mean_w']}, "
        f"mean tau-b {point.mean_tau_b:.4f} {intervals['mean_tau_b']}"
    )
    print(f"pick alpha {pick_alpha:.4f} {pick_interval}")
    flagged = sum(b.flagged for b in bias) + sum(b.flagged for b in pick_bias)
    print(f"annotators flagged for position bias (rankings + picks): {flagged}")
    print()
    print("| step | wall s | CPU s | peak RSS MB |")
    print("|---|---|---|---|")
    for name, wall, cpu, peak in steps.rows:
        print(f"| {name} | {wall:.2f} | {cpu:.2f} | {peak:.0f} |")
    print()
    results = Results()
    results.add(
        "agreement, steps 1-5 (wall / CPU)",
        f"{total_wall:.1f} s / {total_cpu:.1f} s",
        f"<= {TARGET_S:g} s",
        total_wall <= TARGET_S,
    )
    results.add("peak RSS", f"{peak_mb():.0f} MB")
    print_table(results.rows)
    return 1 if results.failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
