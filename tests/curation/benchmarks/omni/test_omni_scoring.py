"""Omni-RewardBench's scorers (issue 34) against re-derivations of the
published rules: the parse, the judge accuracies with and without ties, the
retry seam, and the scalar accuracies (ε = -1 and the tie-calibrated sweep)."""

from __future__ import annotations

import json

import pytest

from curation.benchmarks.base import EvaluationError
from curation.benchmarks.omni import scoring
from curation.benchmarks.omni.benchmark import BENCHMARK, score_text


def ref_parse(text):
    if ("[[A]]" in text and "[[B]]" in text) or ("\\boxed{A}" in text and "\\boxed{B}" in text):
        return None
    for kw, label in [
        ("[[A]]", "response1"),
        ("[[B]]", "response2"),
        ("\\boxed{A}", "response1"),
        ("\\boxed{B}", "response2"),
        ("[[C]]", "tie"),
        ("\\boxed{C}", "tie"),
    ]:
        if kw in text:
            return label
    return None


ANSWERS = [
    "x [[A]]",
    "[[B]] y",
    "[[A]] then [[B]]",
    "\\boxed{A}",
    "\\boxed{A} \\boxed{B}",
    "[[C]]",
    "\\boxed{C}",
    "[[a]]",
    "",
    "\\boxed{B} [[C]]",
    "[[C]] [[A]]",
    "\\boxed{A} and [[B]]",
]


@pytest.mark.parametrize("text", ANSWERS)
def test_parse_is_the_published_rule(text):
    assert scoring.parse_judgement(text) == ref_parse(text)
    assert BENCHMARK.judge_unparsed(text) is (ref_parse(text) is None)


def test_the_retry_seam():
    # `for retry in range(5)`: five attempts in all, the first and 4 re-asks.
    assert BENCHMARK.judge_retries == 4
    assert BENCHMARK.judge_unparsed("[[A]] or [[B]]") and not BENCHMARK.judge_unparsed("[[C]]")


ITEMS = [
    scoring.Item("p1a", "text_to_text", "response1", "p1", "Be brief."),
    scoring.Item("p1b", "text_to_text", "tie", "p1", "Be exact."),  # same pair, other criterion
    scoring.Item("p2", "text_to_text", "response2"),
    scoring.Item("p3", "text_to_text", "tie"),
    scoring.Item("i1", "text_to_image", "response2", "p1", "Be brief."),
    scoring.Item("i2", "text_to_image", "response1"),
]
OUTPUTS = {
    "p1a": "[[A]]",
    "p1b": "[[C]]",
    "p2": "[[A]] and [[B]]",  # a final miss
    "p3": "\\boxed{C}",
    "i1": "\\boxed{B}",
}  # i2 missing


@pytest.mark.parametrize("ties", [False, True])
def test_judge_accuracy_per_task(ties):
    text = "\n".join(
        json.dumps({"id": k, "output": v, "with_ties": ties}) for k, v in OUTPUTS.items()
    )
    report = score_text(ITEMS, text, "p.jsonl")
    for row in report["tasks"]:
        counted = [i for i in ITEMS if i.task == row["task"] and (ties or i.gold != "tie")]
        right = sum(ref_parse(OUTPUTS.get(i.id, "")) == i.gold for i in counted)
        assert row["items"] == len(counted)
        assert row["accuracy"] == pytest.approx(right / len(counted), abs=1e-9)
    means = [r["accuracy"] for r in report["tasks"]]
    assert report["overall"] == pytest.approx(sum(means) / len(means), abs=1e-9)
    assert report["tasks"][0]["accuracy"] == pytest.approx(3 / 4 if ties else 1 / 2)


def ref_cell(h, m, eps):
    if h == 0:
        return "Thm" if abs(m) <= eps else "Th"
    if abs(m) <= eps:
        return "Tm"
    return "C" if h * m > 0 else "D"


def ref_with_ties(h, m):
    """Brute force: the sorted prefixes the published sweep visits."""
    order = sorted(range(len(h)), key=lambda k: abs(m[k]))
    best = None
    for k in range(1, len(h) + 1):
        tied = set(order[:k])
        cells = [ref_cell(h[j], m[j], abs(m[j]) if j in tied else -1) for j in range(len(h))]
        acc = (cells.count("C") + cells.count("Thm")) / len(cells)
        best = acc if best is None else max(best, acc)
    return best


CASES = [
    ([1, -1, 0, 1, -1, 0, 1, -1, 0], [0.8, 0.1, -0.4, 0.3, -0.3, -0.1, 0.3, -0.1, -0.1]),
    ([1, 1, 0, 0, -1], [0.0, 0.5, 0.0, 0.2, 0.5]),  # m = 0 and equal |m|
    ([0, 0, 1], [3.0, -2.0, 1.0]),
    ([1, -1], [2.0, -2.0]),
]


@pytest.mark.parametrize("h,m", CASES)
def test_scalar_accuracies_are_the_published_ones(h, m):
    cells = [ref_cell(a, b, -1) for a, b in zip(h, m, strict=True)]
    c, d, tm = cells.count("C"), cells.count("D"), cells.count("Tm")
    assert scoring.accuracy_without_ties(h, m) == pytest.approx(c / (c + d + tm), abs=1e-9)
    assert scoring.accuracy_with_ties(h, m)[0] == pytest.approx(ref_with_ties(h, m), abs=1e-9)


def test_scalar_predictions_per_task():
    scores = {
        "p1a": [0.9, 0.1],
        "p1b": [0.5, 0.45],
        "p2": [0.2, 0.2],
        "p3": [1.0, 0.0],
        "i1": [0.0, 1.0],
    }
    text = "\n".join(json.dumps({"id": k, "scores": v}) for k, v in scores.items())
    report = score_text(ITEMS, text, "s.jsonl")
    t2t, t2i = report["tasks"]
    ids = ["p1a", "p1b", "p2", "p3"]
    h = [scoring.HUMAN[i.gold] for i in ITEMS[:4]]
    m = [scores[k][0] - scores[k][1] for k in ids]
    assert t2t["accuracy"] == pytest.approx(1 / 2, abs=1e-9)  # m = 0 counts as D
    assert t2t["accuracy_with_ties"] == pytest.approx(ref_with_ties(h, m), abs=1e-9)
    assert t2i["missing"] == 1 and t2i["accuracy"] == 1.0


def test_bad_predictions_name_line_and_field():
    with pytest.raises(EvaluationError, match=r"p.jsonl:2, field 'scores'"):
        score_text(ITEMS, '{"id": "p2", "output": "[[A]]"}\n{"id": "p3", "scores": [1]}', "p.jsonl")
    with pytest.raises(EvaluationError, match=r"p.jsonl:2: one file holds one kind"):
        score_text(ITEMS, '{"id": "p2", "output": "x"}\n{"id": "p3", "scores": [1, 2]}', "p.jsonl")


def test_lines_may_name_items_by_the_files_id_task_and_criteria():
    line = {"id": "p1", "task": "text_to_text", "criteria": "Be exact.", "predicted": "tie",
            "with_ties": True}  # fmt: skip
    report = score_text(ITEMS, json.dumps(line), "p.jsonl")
    assert report["tasks"][0]["correct"] == 1 and report["unknown_ids"] == 0
    with pytest.raises(EvaluationError, match=r"p.jsonl:1, field 'task': ID 'p1' names 3 items"):
        score_text(ITEMS, '{"id": "p1", "predicted": "tie"}', "p.jsonl")
    with pytest.raises(EvaluationError, match=r"p.jsonl:1, field 'criteria': ID 'p1' names 2"):
        score_text(ITEMS, '{"id": "p1", "task": "text_to_text", "output": "x"}', "p.jsonl")


def test_with_distinct_margins_the_sweep_is_the_max_over_epsilon_of_a_full_recount():
    h = [1, -1, 0, 1, 0, -1, 1, 0]
    m = [0.05, -0.3, 0.02, -0.4, 0.6, 0.1, 0.9, -0.01]
    best = max((s[0] + s[4]) / len(h) for s in (scoring.suff_stats(h, m, abs(e)) for e in m))
    accuracy, epsilon = scoring.accuracy_with_ties(h, m)
    assert accuracy == pytest.approx(best, abs=1e-9)
    c, _, _, _, thm = scoring.suff_stats(h, m, epsilon)
    assert accuracy == pytest.approx((c + thm) / len(h), abs=1e-9)


def test_the_judge_prompt_offers_c_only_with_ties():
    from curation.benchmarks.omni import judge

    assert "[[C]]" in judge.system_prompt("Be brief.", with_ties=True)
    without = judge.system_prompt("Be brief.", with_ties=False)
    assert "[[C]]" not in without and "Be brief." in without and "[[A]]" in without
