"""CROWDLAB (cleanlab) and Dawid-Skene (crowd-kit) over a project's votes.
No Django import; the two libraries are the optional extra ``quality``.

Input is canonical: every vote is ("1" | "2") for an item by an annotator.
Tie votes are left out of the label matrix (the benchmark format has no tie
class, and a tie says nothing about which side is better); an item whose
votes are all ties is not analysed. The model's probability is the ensemble
P(response 1 better) (see probability.py); an item no selected entry judged
gets the uninformative 0.5, so CROWDLAB leans on the votes there.

What we report per item:

* ``consensus`` and ``consensus_quality``: CROWDLAB's consensus label and its
  quality score (``consensus_method="best_quality"``, ``quality_method="crowdlab"``).
  With two classes the score is CROWDLAB's posterior probability of the
  consensus label, so ``label_quality`` (the posterior probability of the
  *current* label, what the suspected-errors queue sorts by) is that score
  when the current label is the consensus and one minus it otherwise.
* ``ds_p1``: Dawid-Skene's posterior probability of response 1 from the votes
  alone.

Per annotator: CROWDLAB's ``annotator_quality`` and agreement with consensus.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

CLASSES = ("1", "2")  # class index 0 = response 1 better, 1 = response 2 better
DS_ITERATIONS = 100
DS_TOLERANCE = 1e-6


class QualityUnavailable(RuntimeError):
    """cleanlab or crowd-kit is not installed (pip install -e ".[quality]")."""


def libraries_available() -> bool:
    try:
        import cleanlab.multiannotator  # noqa: F401
        import crowdkit.aggregation  # noqa: F401
    except ImportError:
        return False
    return True


@dataclass(frozen=True)
class ItemResult:
    item: int
    n1: int
    n2: int
    n_tie: int
    consensus: str
    consensus_quality: float
    annotator_agreement: float
    model_p1: float | None
    ds_p1: float


@dataclass(frozen=True)
class AnnotatorResult:
    annotator: int
    quality: float
    agreement_with_consensus: float
    n_labels: int


@dataclass(frozen=True)
class Analysis:
    items: tuple[ItemResult, ...]
    annotators: tuple[AnnotatorResult, ...]
    model_weight: float | None
    n_votes: int
    n_ties_left_out: int


def label_quality(result: ItemResult, current: str) -> float:
    """CROWDLAB's posterior probability of `current` ("1"/"2")."""
    if current == result.consensus:
        return result.consensus_quality
    return 1.0 - result.consensus_quality


def analyse(
    votes: Iterable[tuple[int, int, str]], model_p1: Mapping[int, float | None]
) -> Analysis:
    """CROWDLAB and Dawid-Skene over votes (item, annotator, "1"/"2"/"tie")."""
    try:
        from cleanlab.multiannotator import get_label_quality_multiannotator
        from crowdkit.aggregation import DawidSkene
    except ImportError as exc:
        raise QualityUnavailable(str(exc)) from None
    import pandas as pd

    item_ids: list[int] = []
    annotator_ids: list[int] = []
    labels: list[int] = []
    ties: dict[int, int] = {}
    n_ties = 0
    for item, annotator, choice in votes:
        if choice in CLASSES:
            item_ids.append(item)
            annotator_ids.append(annotator)
            labels.append(CLASSES.index(choice))
        else:
            ties[item] = ties.get(item, 0) + 1
            n_ties += 1
    if not labels:
        return Analysis((), (), None, 0, n_ties)
    items_arr = np.asarray(item_ids, dtype=np.int64)
    ann_arr = np.asarray(annotator_ids, dtype=np.int64)
    lab_arr = np.asarray(labels, dtype=np.int64)
    rows, row_of = np.unique(items_arr, return_inverse=True)
    cols, col_of = np.unique(ann_arr, return_inverse=True)
    matrix = np.full((len(rows), len(cols)), np.nan)
    # A revised vote replaces the earlier one (callers pass current votes only).
    matrix[row_of, col_of] = lab_arr
    counts = np.zeros((len(rows), 2), dtype=np.int64)
    np.add.at(counts, (row_of, lab_arr), 1)

    model = np.array([model_p1.get(int(i)) for i in rows], dtype=object)
    p1 = np.array([0.5 if p is None else float(p) for p in model], dtype=float)
    # cleanlab wants strictly positive probabilities that sum to one.
    p1 = np.clip(p1, 1e-6, 1 - 1e-6)
    pred_probs = np.column_stack([p1, 1.0 - p1])

    if len(cols) == 1 or len(np.unique(lab_arr)) == 1:
        # CROWDLAB needs two annotators and both classes to estimate anything;
        # fall back to the votes' own consensus with full agreement.
        consensus = counts.argmax(axis=1)
        quality = counts.max(axis=1) / counts.sum(axis=1)
        agreement = quality
        annotators = tuple(
            AnnotatorResult(int(a), 1.0, 1.0, int(np.sum(col_of == j))) for j, a in enumerate(cols)
        )
        model_weight = None
    else:
        out = get_label_quality_multiannotator(
            pd.DataFrame(matrix, columns=cols),
            pred_probs,
            consensus_method="best_quality",
            quality_method="crowdlab",
            return_detailed_quality=False,
            return_annotator_stats=True,
            return_weights=True,
            verbose=False,
        )
        lq = out["label_quality"]
        consensus = lq["consensus_label"].to_numpy(dtype=np.int64)
        quality = lq["consensus_quality_score"].to_numpy(dtype=float)
        agreement = lq["annotator_agreement"].to_numpy(dtype=float)
        stats = out["annotator_stats"]
        annotators = tuple(
            AnnotatorResult(
                int(a),
                float(stats.loc[a, "annotator_quality"]),
                float(stats.loc[a, "agreement_with_consensus"]),
                int(stats.loc[a, "num_examples_labeled"]),
            )
            for a in cols
        )
        model_weight = float(out["model_weight"])

    frame = pd.DataFrame({"task": items_arr, "worker": ann_arr, "label": lab_arr})
    with warnings.catch_warnings():
        # crowd-kit 1.4 uses pandas keywords that pandas 3 deprecates (copy=, inplace=).
        warnings.simplefilter("ignore", DeprecationWarning)
        posterior = DawidSkene(n_iter=DS_ITERATIONS, tol=DS_TOLERANCE).fit_predict_proba(frame)
    posterior = posterior.reindex(columns=[0, 1], fill_value=0.0)
    ds_p1 = posterior[0].reindex(rows).to_numpy(dtype=float)

    results = tuple(
        ItemResult(
            item=int(item),
            n1=int(counts[r, 0]),
            n2=int(counts[r, 1]),
            n_tie=ties.get(int(item), 0),
            consensus=CLASSES[int(consensus[r])],
            consensus_quality=float(quality[r]),
            annotator_agreement=float(agreement[r]),
            model_p1=None if model[r] is None else float(model[r]),
            ds_p1=float(ds_p1[r]),
        )
        for r, item in enumerate(rows)
    )
    return Analysis(results, annotators, model_weight, len(labels), n_ties)


def precision_at_k(ranking: Sequence[int], errors: set[int], k: int) -> float:
    """Share of true label errors among the first k items of a ranking."""
    top = ranking[:k]
    return sum(1 for i in top if i in errors) / len(top) if top else 0.0
