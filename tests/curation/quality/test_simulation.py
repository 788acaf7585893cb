"""Proof on simulated truth (issue 23, deliverable 6): the suspected-errors
ranking beats ranking by vote split, and Dawid-Skene is at least as accurate as
majority vote, in a seeded world with known labels."""

import numpy as np
import pytest

from tests.curation.quality.conftest import needs_quality_extra

pytestmark = [
    needs_quality_extra,
    pytest.mark.reference,
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]


@pytest.fixture(scope="module")
def outcome():
    from curation.quality.simulation import evaluate, make_world

    return evaluate(make_world(n_items=2000, seed=23), seed=23)


def test_the_world_has_label_errors_to_find(outcome):
    # 3 votes from annotators of accuracy 0.55-0.95: roughly one label in six is wrong.
    assert 0.08 < outcome.n_errors / outcome.n_items < 0.3


def test_queue_beats_the_vote_split_baseline_at_five_percent(outcome):
    queue, baseline = outcome.queue_precision[0.05], outcome.baseline_precision[0.05]
    assert queue >= baseline + 0.3, (queue, baseline)
    assert queue >= 0.8


def test_queue_is_at_least_as_precise_as_the_baseline_at_one_percent(outcome):
    assert outcome.queue_precision[0.01] >= outcome.baseline_precision[0.01]


def test_dawid_skene_is_at_least_as_accurate_as_majority_vote(outcome):
    assert outcome.ds_accuracy >= outcome.majority_accuracy


def test_analysis_equals_the_libraries_called_directly():
    """Our wrapper passes the votes and probabilities through unchanged: the
    consensus, its quality, annotator quality and the Dawid-Skene posterior
    equal cleanlab's and crowd-kit's own output on the same matrix (1e-9)."""
    import pandas as pd
    from cleanlab.multiannotator import get_label_quality_multiannotator
    from crowdkit.aggregation import DawidSkene

    from curation.quality.label_quality import analyse
    from curation.quality.simulation import make_world

    world = make_world(n_items=300, seed=5)
    ours = analyse(world.votes, world.model_p1)
    matrix = np.full((300, 5), np.nan)
    for item, annotator, choice in world.votes:
        matrix[item, annotator] = 0 if choice == "1" else 1
    p1 = np.clip(np.array([world.model_p1[i] for i in range(300)], dtype=float), 1e-6, 1 - 1e-6)
    ref = get_label_quality_multiannotator(
        pd.DataFrame(matrix, columns=range(5)),
        np.column_stack([p1, 1 - p1]),
        verbose=False,
    )
    lq = ref["label_quality"]
    assert [r.consensus for r in ours.items] == [
        "1" if c == 0 else "2" for c in lq["consensus_label"]
    ]
    np.testing.assert_allclose(
        [r.consensus_quality for r in ours.items], lq["consensus_quality_score"], atol=1e-9
    )
    np.testing.assert_allclose(
        [a.quality for a in ours.annotators],
        ref["annotator_stats"].loc[list(range(5)), "annotator_quality"],
        atol=1e-9,
    )
    frame = pd.DataFrame(
        [(i, a, 0 if c == "1" else 1) for i, a, c in world.votes],
        columns=["task", "worker", "label"],
    )
    posterior = DawidSkene(n_iter=100, tol=1e-6).fit_predict_proba(frame)
    np.testing.assert_allclose(
        [r.ds_p1 for r in ours.items], posterior[0].reindex(range(300)), atol=1e-9
    )


def test_ties_are_left_out_and_an_all_tie_item_is_not_analysed():
    from curation.quality.label_quality import analyse

    votes = [(1, 1, "1"), (1, 2, "1"), (1, 3, "tie"), (2, 1, "tie"), (2, 2, "tie")]
    votes += [(3, 1, "2"), (3, 2, "1"), (3, 3, "2")]
    result = analyse(votes, {1: 0.9, 3: None})
    by_item = {r.item: r for r in result.items}
    assert set(by_item) == {1, 3}
    assert (by_item[1].n1, by_item[1].n2, by_item[1].n_tie) == (2, 0, 1)
    assert result.n_ties_left_out == 3
    assert by_item[3].model_p1 is None
