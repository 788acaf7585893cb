"""The MMRB2 scorer's rules, on fixtures whose figures are counted by hand."""

import re

import pytest

from curation.benchmarks.mmrb2.scoring import (
    PredictionsError,
    percent,
    score_task,
    score_tasks,
    summary_lines,
)

IMAGE_PAIRS = [
    {"id": "p1", "chosen": "A", "prompt_source": "oneigbench"},
    {"id": "p2", "chosen": "B", "prompt_source": "oneigbench"},
    {"id": "p3", "chosen": "A", "prompt_source": "wise"},
    {"id": "p4", "chosen": "B", "prompt_source": "wise"},
]
IMAGE_PREDICTIONS = {
    # Only the first judgement of each list counts; reverse is flipped.
    "p1": {"forward": [{"judgement": "A"}, {"judgement": "B"}], "reverse": [{"judgement": "B"}]},
    # Case-sensitive, exact: "tie" and "a" (flipped: still "a") are wrong.
    "p2": {"forward": [{"judgement": "tie"}], "reverse": [{"judgement": "a"}]},
    # Null and empty lists are skipped: evaluated pair, no judgement.
    "p3": {"forward": [{"judgement": None}], "reverse": []},
    # p4 is missing; "p9" is not in the task file.
    "p9": {"forward": [{"judgement": "A"}]},
}
REASONING_PAIRS = [{"id": "q1", "chosen": "B", "prompt_source": "blink"}]
REASONING_PREDICTIONS = {"q1": {"forward": [{"judgement": ""}], "reverse": [{"judgement": "A"}]}}


def test_one_task_counts_as_the_official_scorer():
    score = score_task("task1_image", IMAGE_PAIRS, IMAGE_PREDICTIONS)
    t = score.tally
    assert (t.total_pairs, t.evaluated_pairs, t.missing_pairs) == (4, 3, 1)
    assert (t.correct, t.judged) == (2, 4)
    assert t.accuracy == 0.5
    assert score.unknown_ids == 1
    assert (score.by_source["oneigbench"].correct, score.by_source["oneigbench"].judged) == (2, 4)
    wise = score.by_source["wise"]
    assert (wise.judged, wise.missing_pairs, wise.evaluated_pairs, wise.accuracy) == (0, 1, 1, 0.0)


def test_overall_pools_judgements_not_task_means():
    scores = score_tasks(
        [
            ("task1_image", IMAGE_PAIRS, IMAGE_PREDICTIONS),
            ("task4_reasoning", REASONING_PAIRS, REASONING_PREDICTIONS),
        ]
    )
    assert [s.tally.accuracy for s in scores.tasks] == [0.5, 1.0]
    assert (scores.overall.correct, scores.overall.judged) == (3, 5)
    assert scores.overall.accuracy == pytest.approx(0.6, abs=1e-12)  # the mean would be 0.75
    assert summary_lines(scores)[-1] == f"{'Overall':<25}  60.00%"
    assert summary_lines(scores)[2] == f"{'task1_image':<25}  50.00%      1"


def test_percent_rounds_as_the_official_print():
    assert percent(0.53425) == "53.42"
    assert percent(2 / 3) == "66.67"
    assert percent(0.0) == "0.00"


@pytest.mark.parametrize(
    "entry, message",
    [
        ("A", "expected an object"),
        ({"forward": "A"}, "field 'forward' must be a list"),
        ({"reverse": ["A"]}, "field 'reverse[0]' must be an object"),
    ],
)
def test_malformed_predictions_name_the_pair_and_field(entry, message):
    with pytest.raises(PredictionsError, match=re.escape(message)) as caught:
        score_task("t", [{"id": "p1", "chosen": "A"}], {"p1": entry})
    assert "'p1'" in str(caught.value)


def test_predictions_must_be_an_object():
    with pytest.raises(PredictionsError, match="expected an object mapping"):
        score_task("t", [], [])


def test_a_file_is_read_entry_by_entry_keeping_what_counts():
    import json

    from curation.benchmarks.mmrb2.scoring import read_predictions

    text = json.dumps(
        {
            "p1": {"forward": [{"judgement": "A", "metadata": {"x": 1}}, {"judgement": "B"}]},
            "p2": {"forward": [], "reverse": [{"judgement": None}]},
            "p1 ": {},
        },
        indent=2,
    )
    kept, repeated = read_predictions("\ufeff" + text, "f.json")
    assert kept == {
        "p1": {"forward": [{"judgement": "A"}]},
        "p2": {"reverse": [{"judgement": None}]},
        "p1 ": {},
    }
    assert repeated == 0
    # As json.load: a repeated ID's last entry wins; the repeat is counted.
    kept, repeated = read_predictions('{"a": {"forward": [{"judgement": "A"}]}, "a": {}}', "f")
    assert kept == {"a": {}} and repeated == 1
    # Scoring what was kept equals scoring the whole file.
    pairs = [{"id": "p1", "chosen": "A"}, {"id": "p2", "chosen": "B"}]
    whole = score_task("t", pairs, json.loads(text)).tally
    again = score_task("t", pairs, read_predictions(text, "f")[0]).tally
    assert (whole.correct, whole.judged, whole.missing_pairs) == (
        again.correct,
        again.judged,
        again.missing_pairs,
    )
    assert read_predictions("{}", "f") == ({}, 0)


@pytest.mark.parametrize(
    "head, mmrb2",
    [
        ('{\n  "p1": {\n', True),  # json.dump(indent=2)
        ('{"p1": {"forward": [{"judgement": "A"}]}}', True),  # one line
        ('{"ID": "x", "output": "[[A]]"}\n{"ID": "y"', False),  # MRB JSONL
        ('\n\n{"ID": "x", "Label": "A"}', False),
        ("", False),
        ("ID,output", False),
    ],
)
def test_the_format_is_seen_from_the_first_line(head, mmrb2):
    from curation.benchmarks.mmrb2.scoring import looks_like_predictions

    assert looks_like_predictions(head) is mmrb2
