"""VideoRewardBench-style scoring (pure, no database): accuracy overall,
per dimension and macro equal pandas' on random files with ties, missing
predictions and unknown IDs; bad lines are named by file, line and field."""

from __future__ import annotations

import json
import random

import pandas as pd
import pytest

from curation.benchmarks.videorb import scoring


def random_case(seed: int):
    rng = random.Random(seed)
    samples = [scoring.Sample(f"s{n}", rng.choice(scoring.DIMENSIONS)) for n in range(300)]
    predictions = {}
    for s in samples:
        if rng.random() < 0.1:
            continue  # missing: wrong
        a = rng.choice([0.0, 0.5, 1.0, 2.0])
        predictions[s.id] = (a, a if rng.random() < 0.1 else rng.choice([0.0, 0.5, 1.0]))
    return samples, predictions


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_accuracies_equal_pandas(seed):
    samples, predictions = random_case(seed)
    report = scoring.score(samples, predictions)
    frame = pd.DataFrame(
        {"dimension": [s.dimension for s in samples],
         "correct": [s.id in predictions and predictions[s.id][0] > predictions[s.id][1]
                     for s in samples]}
    )  # fmt: skip
    per = frame.groupby("dimension")["correct"].mean()
    assert report["accuracy"] == pytest.approx(frame["correct"].mean(), abs=1e-9)
    assert report["macro_accuracy"] == pytest.approx(per.mean(), abs=1e-9)
    got = {d["dimension"]: d["accuracy"] for d in report["dimensions"]}
    assert got == pytest.approx(per.to_dict(), abs=1e-9)
    assert [d["dimension"] for d in report["dimensions"]] == list(scoring.DIMENSIONS)
    assert report["missing"] == len(samples) - len(predictions)


def test_reading_counts_unknown_ids_and_names_bad_lines():
    samples = [scoring.Sample("a", "safety"), scoring.Sample("7", "knowledge")]
    text = "\n".join(json.dumps(x) for x in [
        {"id": "a", "chosen_score": 1, "rejected_score": 0},
        {"id": 7, "chosen_score": 0, "rejected_score": 0},
        {"id": "zz", "chosen_score": 1, "rejected_score": 0},
    ])  # fmt: skip
    read, unknown = scoring.read_predictions(text, "p.jsonl", samples)
    assert read == {"a": (1.0, 0.0), "7": (0.0, 0.0)} and unknown == 1
    report = scoring.score(samples, read)
    assert (report["correct"], report["accuracy"]) == (1, 0.5)
    for line, message in [
        ('{"id": "a", "chosen_score": 1}', "p.jsonl:1, field 'rejected_score': is missing"),
        ('{"id": "a", "chosen_score": NaN, "rejected_score": 0}', "expected a finite number"),
        ('{"id": true, "chosen_score": 1, "rejected_score": 0}', "field 'id'"),
        ("[1, 2]", "expected an object"),
        ("{", "not valid JSON"),
    ]:
        with pytest.raises(scoring.PredictionsError, match=message.replace("(", r"\(")):
            scoring.read_predictions(line, "p.jsonl", samples)
    with pytest.raises(scoring.PredictionsError, match="holds no predictions"):
        scoring.read_predictions("\n\n", "p.jsonl", samples)
    assert scoring.looks_like_predictions('{"id": 1, "chosen_score": 1, "rejected_score": 0}')
    assert not scoring.looks_like_predictions('{"id": 1, "rewards": [1, 0]}')
