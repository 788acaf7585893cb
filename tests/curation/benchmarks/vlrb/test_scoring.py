"""VL-RewardBench's scorer (curation.benchmarks.vlrb.scoring, pure) against
cal.py's rule re-derived in tests/curation/benchmarks/vlrb/official.py: the
same group accuracies, micro and macro to 1e-9, from the studio's shape and
from the official inference output alike; the official grouping; bad
predictions named by line and field."""

from __future__ import annotations

import json

import pytest

from annotate.importing.formats.vlrb import group_of
from curation.benchmarks.vlrb import scoring
from curation.benchmarks.vlrb.benchmark import pairs_of
from tests.curation.benchmarks.vlrb import official

PAIRS = pairs_of("".join(json.dumps(r) + "\n" for r in official.records()))


def score(text: str) -> dict:
    runs, repeated, unknown = scoring.read_predictions(text.splitlines(), "p.jsonl", PAIRS)
    assert (repeated, unknown) == (0, 0)
    return scoring.score(PAIRS, runs)


@pytest.mark.parametrize("shape", [official.studio_lines, official.official_lines])
def test_scores_equal_cal_py_rederived(shape):
    report = score(shape())
    expected = official.cal_py([json.loads(x) for x in official.official_lines().splitlines()])
    by = {g["group"]: g for g in report["groups"]}
    for group, accuracy in expected["groups"].items():
        assert by[group]["accuracy"] == pytest.approx(accuracy, abs=1e-9)
    assert report["overall"] == pytest.approx(expected["overall"], abs=1e-9)
    assert report["macro"] == pytest.approx(expected["macro"], abs=1e-9)
    assert report["macro_groups"] == ["general", "hallucination", "reasoning"]


def test_each_edge_case_is_classified_as_cal_py_does():
    report = score(official.studio_lines())
    classes = {e["id"]: e["class"] for e in report["per_item"]}
    assert classes == {
        "RLAIF-V_0": "agree", "RLAIF-V_1": "reject", "RLHF-V-Dataset_2": "agree",
        "RLHF-V-Dataset_3": "other", "rlaif-v_4": "other", "hallucination_pair-5": "doesntMatch",
        "hallucination_pair-6": "doesntMatch", "wildvision_battle_7": "agree",
        "wildvision-battle_8": "agree", "vlfeedback_9": "reject", "plainid10": "agree",
        "mathverse_11": "agree", "mmmu_pro_12": "other", "mmmu-pro_13": "agree",
        "Mathverse_14": "agree", "RLHF_15": None,
    }  # fmt: skip
    by = {g["group"]: g for g in report["groups"]}
    # hallucination: RLAIF-V_0 ✓, RLAIF-V_1 ✗, RLHF-V-Dataset_2 ✓ decided; 3 out.
    assert (by["hallucination"]["correct"], by["hallucination"]["total"]) == (2, 3)
    assert (by["hallucination"]["undecided"], by["hallucination"]["unparsed"]) == (1, 2)
    assert by["hallucination"]["missing"] == 1 and by["hallucination"]["items"] == 7
    # general: wildvision ✓✓, vlfeedback ✗, plainid10 ✓, Mathverse_14 ✓; rlaif-v_4 undecided.
    assert (by["general"]["correct"], by["general"]["total"], by["general"]["undecided"]) == (
        4, 5, 1,
    )  # fmt: skip
    assert (by["reasoning"]["correct"], by["reasoning"]["total"]) == (2, 2)
    assert report["overall"] == pytest.approx(8 / 10, abs=1e-9)
    assert report["macro"] == pytest.approx((4 / 5 + 2 / 3 + 1) / 3, abs=1e-9)
    assert (report["k"], report["missing"], report["undecided"], report["unparsed"]) == (5, 1, 3, 2)


def test_the_official_grouping_keeps_upper_case_rlaif_and_rlhf_in_hallucination():
    assert group_of("RLAIF-V-Dataset_1") == group_of("RLHF-V_2") == "hallucination"
    assert group_of("hallucination_pair-3") == "hallucination"
    assert group_of("rlaif-v_4") == group_of("Mathverse_5") == group_of("plain") == "general"
    assert group_of("mmmu-pro_6") == group_of("mathverse_7") == "reasoning"
    for pair_id, _ in official.PAIRS:
        mapping = {"vlfeedback": "general", "povid": "hallucination", "rlhf-v": "hallucination",
                   "rlaif-v": "hallucination", "reasoning_tasks": "reasoning",
                   "wildvision-battle": "general"}  # fmt: skip
        assert group_of(pair_id) == mapping[official.get_dataset_from_id(pair_id)]


def test_the_regex_is_cal_pys():
    assert scoring.choice("Overall Judgment:\n**Answer 2** is slightly better") == 2
    assert scoring.choice("therefore answer 1 is the better") == 1
    assert scoring.choice("Answer 1 is better.") == -1  # no "Overall Judgment"/"Therefore"
    # Greedy: the last "Answer N is better" after the first cue.
    assert scoring.choice("Therefore Answer 1 is better. Therefore Answer 2 is better") == 2
    assert scoring.choice(None) == -1


def test_a_group_without_decided_pairs_leaves_the_macro_mean():
    pairs = [p for p in PAIRS if group_of(p.id) != "reasoning"]
    runs, _, _ = scoring.read_predictions(official.studio_lines().splitlines(), "p", pairs)
    report = scoring.score(pairs, runs)
    assert report["macro_groups"] == ["general", "hallucination"]
    assert report["macro"] == pytest.approx((4 / 5 + 2 / 3) / 2, abs=1e-9)


def test_unknown_and_repeated_lines_are_counted():
    text = official.studio_lines()
    extra = json.dumps({"id": "nope", "runs": [{"output": "x", "random_number": 0}]})
    _runs, repeated, unknown = scoring.read_predictions(
        [*text.splitlines(), text.splitlines()[0], extra], "p", PAIRS
    )
    assert (repeated, unknown) == (1, 1)


@pytest.mark.parametrize(
    "line, message",
    [
        ("not json", "p.jsonl:2: not JSON"),
        ('{"id": 3, "runs": []}', "p.jsonl:2 field 'id': must be a string"),
        ('{"id": "a", "runs": []}', "p.jsonl:2 field 'runs': must be a non-empty list"),
        ('{"id": "a", "runs": [{"output": "x", "random_number": 2}]}',
         "p.jsonl:2 field 'runs' [0] field 'random_number': must be 0 or 1"),
        ('{"id": "a", "runs": [{"output": 5, "random_number": 0}]}',
         "p.jsonl:2 field 'runs' [0] field 'output': must be a string or null"),
        ('{"id": "a", "verdict": "A"}', "p.jsonl:2 field 'runs': missing"),
        ('{"id": "a", "meta": {"filter_choice": "x", "random_number": 0}}',
         "p.jsonl:2 fields 'id', 'query', 'response'"),
    ],
)  # fmt: skip
def test_bad_predictions_name_line_and_field(line, message):
    first = official.studio_lines().splitlines()[0]
    with pytest.raises(scoring.PredictionsError) as failed:
        scoring.read_predictions([first, line], "p.jsonl", PAIRS)
    assert str(failed.value).startswith(message), str(failed.value)


def test_both_shapes_are_detected():
    assert scoring.looks_like_predictions(official.studio_lines())
    assert scoring.looks_like_predictions(official.official_lines())
    assert not scoring.looks_like_predictions('{"id": "a", "ranking": [1, 2]}')
    assert not scoring.looks_like_predictions('{"ID": "a", "output": "[[A]]"}')
