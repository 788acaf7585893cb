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

Graded votes (issue 30) enter with their strength: a vote is a fourth field,
its signed strength oriented to response 1 (+3 much better ... -3; None on an
A/B scale). CROWDLAB then sees one column per *(annotator, strength level)*
instead of one per annotator, so it estimates a quality and a weight for an
annotator's "much better" apart from their "slightly better" votes: weak votes
agree less with the consensus and the model, so they weigh less, and an item
carried by weak votes leans more on the model ensemble. Everything else is
CROWDLAB's own computation (the probabilities are its posterior, as before);
an annotator's reported quality is the label-weighted mean over their
columns. Dawid-Skene stays on the collapsed labels, one worker per annotator.
On the simulated graded world (simulation.make_graded_world) this raises the
average precision of the queue and brings unanimous wrong labels up; see
bench/label_quality_bench.py. ``mean_strength`` is reported per item (the
mean signed strength of its graded votes, oriented to response 1).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

CLASSES = ("1", "2")  # class index 0 = response 1 better, 1 = response 2 better
LEVELS = 4  # column key = annotator * LEVELS + strength level (0: no strength)
DS_ITERATIONS = 100
DS_TOLERANCE = 1e-6


class QualityUnavailable(RuntimeError):
    """cleanlab or crowd-kit is not installed (pip install -e ".[quality]")."""


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
    mean_strength: float | None = None

    @property
    def unanimous(self) -> bool:
        """At least two non-tie votes, all on one side."""
        return self.n1 + self.n2 >= 2 and (self.n1 == 0 or self.n2 == 0)


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
    graded: bool = False


def label_quality(result: ItemResult, current: str) -> float:
    """CROWDLAB's posterior probability of `current` ("1"/"2")."""
    if current == result.consensus:
        return result.consensus_quality
    return 1.0 - result.consensus_quality


def column_of(annotator: int, strength: int | None) -> int:
    """CROWDLAB's column of a vote: its annotator, apart per strength level."""
    return annotator * LEVELS + (0 if strength is None else abs(strength))


def analyse(
    votes: Iterable[tuple],
    model_p1: Mapping[int, float | None],
    labellers: Iterable[tuple[int, int, str]] = (),
) -> Analysis:
    """CROWDLAB and Dawid-Skene over votes (item, annotator, "1"/"2"/"tie"
    [, signed strength or None]). `labellers`: extra labels (item, labeller,
    "1"/"2") of model judges (issue 36), each labeller a column of its own
    like an annotator (its id must differ from every annotator's), that are
    not votes: they are left out of an item's vote counts, ties and
    strength, and only label items that have votes."""
    try:
        from cleanlab.multiannotator import get_label_quality_multiannotator
        from crowdkit.aggregation import DawidSkene
    except ImportError as exc:
        raise QualityUnavailable(str(exc)) from None
    import pandas as pd

    item_ids: list[int] = []
    annotator_ids: list[int] = []
    column_ids: list[int] = []
    labels: list[int] = []
    ties: dict[int, int] = {}
    strength_sum: dict[int, float] = {}
    strength_n: dict[int, int] = {}
    n_ties = 0
    for item, annotator, choice, *rest in votes:
        strength = rest[0] if rest else None
        if strength is not None:
            strength_sum[item] = strength_sum.get(item, 0) + strength
            strength_n[item] = strength_n.get(item, 0) + 1
        if choice in CLASSES:
            item_ids.append(item)
            annotator_ids.append(annotator)
            column_ids.append(column_of(annotator, strength))
            labels.append(CLASSES.index(choice))
        else:
            ties[item] = ties.get(item, 0) + 1
            n_ties += 1
    if not labels:
        return Analysis((), (), None, 0, n_ties)
    n_human = len(labels)
    voted = set(item_ids)
    for item, labeller, choice in labellers:
        if choice in CLASSES and item in voted:
            item_ids.append(item)
            annotator_ids.append(labeller)
            column_ids.append(column_of(labeller, None))
            labels.append(CLASSES.index(choice))
    items_arr = np.asarray(item_ids, dtype=np.int64)
    ann_arr = np.asarray(annotator_ids, dtype=np.int64)
    lab_arr = np.asarray(labels, dtype=np.int64)
    rows, row_of = np.unique(items_arr, return_inverse=True)
    cols, col_of = np.unique(ann_arr, return_inverse=True)
    graded = bool(strength_n)
    # CROWDLAB's columns: (annotator, strength level); plain annotators on A/B.
    ccols, ccol_of = np.unique(np.asarray(column_ids, dtype=np.int64), return_inverse=True)
    matrix = np.full((len(rows), len(ccols)), np.nan)
    # A revised vote replaces the earlier one (callers pass current votes only).
    matrix[row_of, ccol_of] = lab_arr
    counts = np.zeros((len(rows), 2), dtype=np.int64)
    np.add.at(counts, (row_of[:n_human], lab_arr[:n_human]), 1)

    model = np.array([model_p1.get(int(i)) for i in rows], dtype=object)
    p1 = np.array([0.5 if p is None else float(p) for p in model], dtype=float)
    # cleanlab wants strictly positive probabilities that sum to one.
    p1 = np.clip(p1, 1e-6, 1 - 1e-6)
    pred_probs = np.column_stack([p1, 1.0 - p1])

    if len(ccols) == 1 or len(np.unique(lab_arr)) == 1:
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
            pd.DataFrame(matrix, columns=ccols),
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
        annotators = _annotator_results(out["annotator_stats"], ccols)
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
            mean_strength=(
                strength_sum[int(item)] / strength_n[int(item)] if int(item) in strength_n else None
            ),
        )
        for r, item in enumerate(rows)
    )
    return Analysis(results, annotators, model_weight, n_human, n_ties, graded)


def _annotator_results(stats, columns) -> tuple[AnnotatorResult, ...]:
    """Per annotator from CROWDLAB's per-column statistics: with one column
    each (A/B) its own numbers; with a column per strength level the
    label-weighted means over the annotator's columns."""
    per: dict[int, list[tuple[float, float, int]]] = {}
    for c in columns:
        per.setdefault(int(c) // LEVELS, []).append(
            (
                float(stats.loc[c, "annotator_quality"]),
                float(stats.loc[c, "agreement_with_consensus"]),
                int(stats.loc[c, "num_examples_labeled"]),
            )
        )
    out = []
    for annotator, rows in per.items():
        n = sum(r[2] for r in rows)
        if len(rows) == 1:
            quality, agreement = rows[0][0], rows[0][1]
        else:
            quality = sum(r[0] * r[2] for r in rows) / n
            agreement = sum(r[1] * r[2] for r in rows) / n
        out.append(AnnotatorResult(annotator, quality, agreement, n))
    return tuple(out)


def precision_at_k(ranking: Sequence[int], errors: set[int], k: int) -> float:
    """Share of true label errors among the first k items of a ranking."""
    top = ranking[:k]
    return sum(1 for i in top if i in errors) / len(top) if top else 0.0


def average_precision(ranking: Sequence[int], errors: set[int]) -> float:
    """Average precision of a ranking at finding `errors` (the mean, over the
    errors, of the precision at each one's rank; errors never ranked count
    zero), as sklearn.metrics.average_precision_score on a strict ranking."""
    if not errors:
        return 0.0
    hits = 0
    total = 0.0
    for rank, item in enumerate(ranking, start=1):
        if item in errors:
            hits += 1
            total += hits / rank
    return total / len(errors)


def models_against(model_p1: float | None, label: str) -> float | None:
    """The model ensemble's probability that `label` ("1"/"2") is wrong."""
    if model_p1 is None or label not in CLASSES:
        return None
    return 1.0 - model_p1 if label == "1" else model_p1
