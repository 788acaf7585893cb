"""Timing of curation.agreement.stats on synthetic votes (no database).

Issue targets: point estimates for all domains at 100,000 items x 5 votes in
<= 200 ms; item-bootstrap CI at 5,211 items x 1,000 resamples in <= 5 s.

    .venv/bin/python bench/agreement_bench_pure.py
"""

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from curation.agreement.diagnostics import annotator_stats, item_stats
from curation.agreement.stats import (
    CHOICES,
    LABELS,
    Vote,
    bootstrap_alpha_ci,
    choice_matrix,
    correctness_matrix,
    reliability,
    summarise,
)


def synthetic_votes(n_items: int, per_item: int, n_annotators: int, seed: int) -> list[Vote]:
    rng = np.random.default_rng(seed)
    truth = rng.choice(3, size=n_items, p=[0.45, 0.45, 0.10])
    votes = []
    for item in range(n_items):
        raters = rng.choice(n_annotators, size=per_item, replace=False)
        agree = rng.random(per_item) < 0.75
        noise = rng.choice(3, size=per_item)
        labels = rng.choice(3, size=(per_item, 2), p=[0.6, 0.3, 0.1])
        swapped = rng.random(per_item) < 0.5
        for j in range(per_item):
            votes.append(
                Vote(
                    item=item,
                    annotator=int(raters[j]),
                    choice=CHOICES[truth[item] if agree[j] else noise[j]],
                    correct_1=LABELS[labels[j, 0]],
                    correct_2=LABELS[labels[j, 1]],
                    shown_swapped=bool(swapped[j]),
                    seconds=float(rng.gamma(4, 10)),
                    gold="",
                )
            )
    return votes


def best_of(fn, repeat: int) -> float:
    """Best wall-clock time of ``repeat`` runs (the machine may be shared)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    votes = synthetic_votes(100_000, 5, 60, seed=1)
    summary = summarise(votes)
    print(f"alpha={summary.choice.alpha:.4f} correctness alpha={summary.correctness.alpha:.4f}")
    t = best_of(lambda: summarise(votes), 5)
    print(f"summarise(500,000 Vote objects, 100,000 items x 5): {t * 1000:.0f} ms")

    _, choice_counts = choice_matrix(votes)
    _, label_counts = correctness_matrix(votes)
    t = best_of(lambda: (reliability(choice_counts, CHOICES), reliability(label_counts, LABELS)), 5)
    print(f"point estimates from count matrices (choice + correctness): {t * 1000:.0f} ms")

    t = best_of(lambda: item_stats(votes), 1)
    print(f"item_stats(500,000 votes): {t * 1000:.0f} ms")
    t = best_of(lambda: annotator_stats(votes), 1)
    print(f"annotator_stats(500,000 votes, 60 annotators): {t * 1000:.0f} ms")

    _, counts = choice_matrix(synthetic_votes(5_211, 5, 60, seed=2))
    ci = bootstrap_alpha_ci(counts, n_resamples=1000, seed=0)
    t = best_of(lambda: bootstrap_alpha_ci(counts, n_resamples=1000, seed=0), 3)
    print(f"bootstrap_alpha_ci(5,211 items, B=1,000): {t * 1000:.0f} ms -> {ci}")


if __name__ == "__main__":
    main()
