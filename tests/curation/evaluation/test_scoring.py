"""curation.benchmarks.mrb.scoring: the official Multimodal RewardBench semantics, no database.

Expected numbers are worked by hand in the comments. The random fallback is
re-derived here with the global ``random`` module exactly as the official
script draws (``random.seed(123)`` once, then ``'A' if random.random() < 0.5
else 'B'`` for each verdict-less line), never by calling the code under test.
"""

import io
import json
import random
import re
from contextlib import contextmanager

import pytest
from django.core.management import CommandError, call_command

from curation.benchmarks.mrb.scoring import score, wilson_interval
from curation.benchmarks.mrb.scoring_input import (
    Prediction,
    ScoringInputError,
    extract_verdict,
    load_release_records,
    parse_predictions,
)
from curation.benchmarks.mrb.scoring_output import format_report, report_as_dict


def make_record(rid, better="Output1", category="vqa"):
    return {
        "ID": rid,
        "Text": f"question {rid}",
        "Image": f"images/x/{rid}.jpg",
        "Output1": "one",
        "Output2": "two",
        "Better": better,
        "Category": category,
    }


def lines(*objs):
    return [json.dumps(o) + "\n" for o in objs]


def parse(*objs, order=None):
    return parse_predictions(lines(*objs), filename="preds.jsonl", order=order)


def judge(rid, verdict, **extra):
    text = {"A": "so [[A]]", "B": "so [[B]]", None: "I cannot decide."}[verdict]
    return {"ID": rid, "output": text, **extra}


@contextmanager
def saved_global_random():
    state = random.getstate()
    try:
        yield
    finally:
        random.setstate(state)


def official_draws(n):
    """The official fallback sequence, drawn from the global generator."""
    with saved_global_random():
        random.seed(123)
        return ["A" if random.random() < 0.5 else "B" for _ in range(n)]


# --------------------------------------------------------------------------- verdicts


def test_verdict_a_is_checked_before_b_even_when_b_comes_first_in_the_text():
    assert extract_verdict("First I thought [[B]], but final verdict: [[A]]") == "A"
    assert extract_verdict("[[B]]") == "B"


def test_verdict_check_is_exact_and_case_sensitive():
    assert extract_verdict("[[a]]") is None
    assert extract_verdict("[[ A ]]") is None
    assert extract_verdict("[A]") is None
    assert extract_verdict("Final verdict: [[A]].") == "A"


def test_line_with_both_verdicts_is_scored_as_a():
    records = [make_record("x1", better="Output2")]
    report = score(records, parse({"ID": "x1", "output": "[[B]] ... no, [[A]]"}))
    assert report.group("all").correct == 0  # A = Output1, but Output2 is better
    assert report.random_fallbacks == 0


# --------------------------------------------------------------------------- kinds


def test_judge_text_accuracy_by_hand():
    records = [
        make_record("a", "Output1"),
        make_record("b", "Output2"),
        make_record("c", "Output2"),
        make_record("d", "Output1"),
    ]
    # a: A=Output1 right; b: B=Output2 right; c: A wrong; d: B wrong -> 2/4
    report = score(
        records, parse(judge("a", "A"), judge("b", "B"), judge("c", "A"), judge("d", "B"))
    )
    g = report.group("all")
    assert (g.correct, g.total, g.accuracy) == (2, 4, 0.5)
    assert report.kinds == {"judge": 4}


def test_label_predictions_a_means_output1():
    records = [make_record("a", "Output1"), make_record("b", "Output2"), make_record("c")]
    report = score(
        records,
        parse({"ID": "a", "Label": "A"}, {"ID": "b", "Label": "A"}, {"ID": "c", "Label": "B"}),
    )
    assert (report.group("all").correct, report.group("all").total) == (1, 3)
    assert report.kinds == {"label": 3}


def test_scalar_scores_higher_wins_and_equal_is_wrong():
    records = [
        make_record("a", "Output1"),
        make_record("b", "Output2"),
        make_record("c", "Output1"),
        make_record("d", "Output2"),
    ]
    preds = parse(
        {"ID": "a", "score_1": 2.5, "score_2": -1},  # Output1 wins: right
        {"ID": "b", "score_1": 0.1, "score_2": 0.2},  # Output2 wins: right
        {"ID": "c", "score_1": 1, "score_2": 1.0},  # equal: wrong
        {"ID": "d", "score_1": 3, "score_2": 2},  # Output1 wins: wrong
    )
    report = score(records, preds)
    assert (report.group("all").correct, report.group("all").total) == (2, 4)
    assert report.random_fallbacks == 0
    assert report.kinds == {"scores": 4}


def test_chosen_rejected_pairs_correct_iff_chosen_is_strictly_higher():
    records = [make_record(r) for r in "abc"]
    preds = parse(
        {"ID": "a", "chosen_score": 0.9, "rejected_score": 0.1},
        {"ID": "b", "chosen_score": 0.5, "rejected_score": 0.5},
        {"ID": "c", "chosen_score": -2, "rejected_score": -1},
    )
    report = score(records, preds)
    assert (report.group("all").correct, report.group("all").total) == (1, 3)


def test_official_answer_file_format_is_scored_from_output_not_label():
    # Two lines in the shape of the official outputs/example.jsonl (texts shortened):
    # Label is the gold copied from the data; the verdict comes from "output".
    records = [
        make_record("nocaps_13062", "Output2", "open_generation/correctness_task"),
        make_record("visitbench_235", "Output2", "open_generation/correctness_task"),
    ]
    meta = {"Category": "open_generation/correctness_task"}
    preds = parse(
        {"ID": "nocaps_13062", "Label": "B", "output": "Final verdict: [[B]]", "Meta": meta},
        {"ID": "visitbench_235", "Label": "B", "output": "Final Verdict: [[A]]", "Meta": meta},
    )
    assert [p.kind for p in preds] == ["judge", "judge"]
    report = score(records, preds)
    assert (report.group("all").correct, report.group("all").total) == (1, 2)
    assert report.coverage.mismatches == ()


# --------------------------------------------------------------------------- random fallback


def test_random_fallback_follows_the_official_sequence_in_file_order():
    # 8 lines; lines 2, 3, 5, 7, 8 have no verdict and take draws 0..4 in that order.
    verdicts = ["A", None, None, "B", None, "A", None, None]
    records = [make_record(f"q{i}", "Output1" if i % 3 else "Output2") for i in range(8)]
    preds = parse(*(judge(f"q{i}", v) for i, v in enumerate(verdicts)))
    draws = iter(official_draws(5))
    expected_correct = 0
    for i, v in enumerate(verdicts):
        picked = v if v is not None else next(draws)
        better = records[i]["Better"]
        expected_correct += (picked == "A") == (better == "Output1")
    report = score(records, preds)
    assert report.random_fallbacks == 5
    assert report.group("all").correct == expected_correct


def test_random_fallback_sequence_is_pinned():
    # The official draws for seed 123; all-Output1 gold makes correctness = draw is "A".
    draws = official_draws(10)
    records = [make_record(f"q{i}") for i in range(10)]
    report = score(records, parse(*(judge(f"q{i}", None) for i in range(10))))
    assert report.group("all").correct == draws.count("A")
    # And the other way round: all-Output2 gold scores the B draws.
    records = [make_record(f"q{i}", "Output2") for i in range(10)]
    report = score(records, parse(*(judge(f"q{i}", None) for i in range(10))))
    assert report.group("all").correct == draws.count("B")


def test_each_verdictless_line_gets_its_own_draw_in_order():
    # Compare line by line: one record per line, all Output1, so the line is
    # correct exactly when its draw is "A".
    n = 12
    draws = official_draws(n)
    for k in range(n):
        records = [make_record(f"q{i}") for i in range(n)]
        preds = parse(*(judge(f"q{i}", None) for i in range(n)))
        # Score only line k by making every other line's ID unknown: unknown
        # lines still draw, so line k still gets draw k.
        preds = [p if i == k else Prediction(p.line, f"zz{i}", p.kind) for i, p in enumerate(preds)]
        report = score(records, preds)
        assert report.group("all").correct == (draws[k] == "A"), k


def test_unknown_ids_and_swapped_lines_do_not_shift_the_draws():
    records = [make_record(f"q{i}") for i in range(4)]
    plain = parse(*(judge(f"q{i}", None) for i in range(4)))
    noisy = parse(
        judge("q0", None),
        judge("not-in-release", None),  # takes draw 1, as in the official script
        judge("q1", None, order="swapped"),  # own stream: no effect on the originals
        judge("q1", None),
        judge("q2", None),
        judge("q3", None),
    )
    draws = official_draws(5)
    expected = sum(d == "A" for d in [draws[0], draws[2], draws[3], draws[4]])
    assert score(records, noisy).group("all").correct == expected
    assert score(records, plain).group("all").correct == sum(d == "A" for d in draws[:4])


def test_scoring_leaves_the_global_random_generator_alone():
    records = [make_record("q0")]
    with saved_global_random():
        random.seed(7)
        expected = random.random()
        random.seed(7)
        score(records, parse(judge("q0", None)))
        assert random.random() == expected


def test_scoring_twice_gives_the_same_result():
    records = [make_record(f"q{i}") for i in range(30)]
    preds = parse(*(judge(f"q{i}", None) for i in range(30)))
    assert report_as_dict(score(records, preds)) == report_as_dict(score(records, preds))


# --------------------------------------------------------------------------- buckets


def bucket_records():
    return [
        make_record("mathvista_1", "Output1", "reasoning"),
        make_record("MathVerse_2", "Output2", "reasoning"),  # "math", case-insensitive
        make_record("emma-coding_3", "Output1", "reasoning"),
        make_record("image2struct_4", "Output2", "reasoning"),
        make_record("pairs_1", "Output1", "safety"),
        make_record("PAIRS_2", "Output1", "safety"),  # lower() before the prefix test
        make_record("hatefulmemes_3", "Output2", "safety"),
        make_record("mmmu_1", "Output1", "knowledge"),
        make_record("mmmu_2", "Output2", "knowledge"),
    ]


def test_per_category_and_sub_bucket_numbers_by_hand():
    preds = parse(
        judge("mathvista_1", "A"),  # right  (math)
        judge("MathVerse_2", "A"),  # wrong  (math)
        judge("emma-coding_3", "A"),  # right  (coding)
        judge("image2struct_4", "B"),  # right  (coding)
        judge("pairs_1", "B"),  # wrong  (bias)
        judge("PAIRS_2", "A"),  # right  (bias)
        judge("hatefulmemes_3", "B"),  # right  (toxicity)
        judge("mmmu_1", "A"),  # right
        judge("mmmu_2", "A"),  # wrong
    )
    report = score(bucket_records(), preds)
    table = {g.name: (g.level, g.correct, g.total) for g in report.groups}
    assert table == {
        "all": ("overall", 6, 9),
        "reasoning": ("category", 3, 4),
        "reasoning/coding": ("sub_bucket", 2, 2),
        "reasoning/math": ("sub_bucket", 1, 2),
        "safety": ("category", 2, 3),
        "safety/bias": ("sub_bucket", 1, 2),
        "safety/toxicity": ("sub_bucket", 1, 1),
        "knowledge": ("category", 1, 2),
    }
    # Order: all, then categories in release order, each followed by its sub-buckets.
    assert [g.name for g in report.groups] == [
        "all",
        "reasoning",
        "reasoning/coding",
        "reasoning/math",
        "safety",
        "safety/bias",
        "safety/toxicity",
        "knowledge",
    ]
    # Macro over categories: (3/4 + 2/3 + 1/2) / 3
    assert report.macro == pytest.approx((0.75 + 2 / 3 + 0.5) / 3)
    assert report.macro_categories == 3
    low, high = report.macro_ci
    assert 0 <= low <= report.macro <= high <= 1


def test_category_with_no_predictions_is_listed_as_undefined_and_left_out_of_macro():
    records = [make_record("a", category="vqa"), make_record("b", category="knowledge")]
    report = score(records, parse(judge("a", "A")))
    assert report.group("knowledge").total == 0
    assert report.group("knowledge").accuracy is None
    assert report.group("knowledge").ci is None
    assert report.macro == 1.0
    assert report.macro_categories == 1


@pytest.mark.reference
def test_wilson_interval_matches_the_published_value():
    # 8 of 10, z = 1.96: centre (0.8 + z²/20) / (1 + z²/10) = 0.71674, half-width
    # z / (1 + z²/10) * sqrt(0.8 * 0.2 / 10 + z²/400) = 0.22658 -> [0.4902, 0.9433].
    # 10 of 10: lower bound n / (n + z²) = 10 / 13.8415 = 0.7225.
    low, high = wilson_interval(8, 10)
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)
    assert wilson_interval(0, 0) is None
    low, high = wilson_interval(10, 10)
    assert high == 1.0 and low == pytest.approx(0.7225, abs=1e-4)


# --------------------------------------------------------------------------- coverage


def test_coverage_reports_missing_unknown_and_repeated_ids():
    records = [make_record(r) for r in ("a", "b", "c", "d")]
    preds = parse(
        judge("a", "A"),  # right
        judge("a", "B"),  # repeated: counted again (wrong), as the official script does
        judge("ghost", "A"),  # unknown: not scored
        judge("c", "A"),  # right
    )
    report = score(records, preds)
    cov = report.coverage
    assert (report.group("all").correct, report.group("all").total) == (2, 3)
    assert cov.n_lines == 4
    assert cov.n_scored == 3
    assert cov.missing == ("b", "d")
    assert cov.unknown == ("ghost",)
    assert cov.duplicates == {"a": 2}
    # Strict: first line per item, missing as wrong: a right, c right -> 2 / 4
    assert (cov.strict_correct, cov.strict_accuracy) == (2, 0.5)


def test_lines_judged_on_another_release_are_reported_as_mismatches():
    records = [make_record("a", "Output1", "vqa")]
    preds = parse({"ID": "a", "Label": "B", "output": "[[A]]", "Meta": {"Category": "knowledge"}})
    report = score(records, preds)
    assert report.group("all").correct == 1  # scored against the release, not the line
    assert [(m.line, m.field, m.expected, m.got) for m in report.coverage.mismatches] == [
        (1, "Label", "A", "B"),
        (1, "Meta.Category", "vqa", "knowledge"),
    ]


# --------------------------------------------------------------------------- position


def test_position_consistency_with_swapped_predictions():
    records = [
        make_record("a", "Output1"),
        make_record("b", "Output2"),
        make_record("c", "Output1"),
        make_record("d", "Output1"),
    ]
    original = parse(judge("a", "A"), judge("b", "A"), judge("c", "A"), judge("d", "A"))
    # Swapped: assistant A is Output2.
    swapped = parse(
        judge("a", "B"),  # picks Output1 again: consistent, right both times
        judge("b", "A"),  # picks Output2 (was Output1): inconsistent
        judge("c", "A"),  # picks Output2 (was Output1): inconsistent, always-A bias
        order="swapped",
    )
    report = score(records, original + swapped)
    # The official table ignores swapped lines: a right, b wrong, c right, d right.
    assert (report.group("all").correct, report.group("all").total) == (3, 4)
    c = report.consistency
    assert (c.n_lines, c.pairs, c.consistent, c.both_correct, c.missing) == (3, 3, 1, 1, 1)
    assert c.rate == pytest.approx(1 / 3)
    # Swapped accuracy: a right (Output1), b right (Output2), c wrong -> 2 / 3
    assert (c.swapped.correct, c.swapped.total) == (2, 3)
    positions = {p.order: (p.picks, p.first_shown) for p in report.position}
    assert positions == {"original": (4, 4), "swapped": (3, 2)}


def test_swapped_scores_refer_to_the_first_shown_response():
    records = [make_record("a", "Output2")]
    preds = parse(
        {"ID": "a", "score_1": 0.0, "score_2": 1.0},
        {"ID": "a", "score_1": 1.0, "score_2": 0.0, "order": "swapped"},  # score_1 = Output2
    )
    report = score(records, preds)
    assert report.group("all").correct == 1
    assert report.consistency.swapped.correct == 1
    assert report.consistency.consistent == 1


def test_a_tie_in_either_order_is_not_consistent():
    records = [make_record("a")]
    preds = parse(
        {"ID": "a", "score_1": 1, "score_2": 1},
        {"ID": "a", "score_1": 1, "score_2": 1, "order": "swapped"},
    )
    report = score(records, preds)
    assert (report.consistency.pairs, report.consistency.consistent) == (1, 0)


def test_no_consistency_section_without_swapped_predictions():
    records = [make_record("a")]
    report = score(records, parse(judge("a", "A")))
    assert report.consistency is None
    assert report_as_dict(report)["extras"]["consistency"] is None


# --------------------------------------------------------------------------- malformed input


@pytest.mark.parametrize(
    ("line", "field", "message"),
    [
        ('{"ID": "a", "output": "[[A]]"', None, "not valid JSON"),
        ('["a"]', None, "JSON object"),
        ('{"output": "[[A]]"}', "ID", "missing"),
        ('{"ID": 7, "output": "[[A]]"}', "ID", "non-empty string"),
        ('{"ID": "a"}', None, "no usable field"),
        ('{"ID": "a", "outputs": ["[[A]]", "[[B]]"]}', None, "several samples"),
        ('{"ID": "a", "output": null}', "output", "a string"),
        ('{"ID": "a", "Label": "a"}', "Label", 'exactly "A" or "B"'),
        ('{"ID": "a", "Label": " A"}', "Label", 'exactly "A" or "B"'),
        ('{"ID": "a", "Label": "X", "output": "[[A]]"}', "Label", 'exactly "A" or "B"'),
        ('{"ID": "a", "score_1": 1}', "score_2", "missing"),
        ('{"ID": "a", "score_1": "1", "score_2": 0}', "score_1", "a number"),
        ('{"ID": "a", "score_1": true, "score_2": 0}', "score_1", "a number"),
        ('{"ID": "a", "score_1": NaN, "score_2": 0}', "score_1", "NaN"),
        ('{"ID": "a", "chosen_score": 1}', "rejected_score", "missing"),
        ('{"ID": "a", "output": "[[A]]", "score_1": 1, "score_2": 0}', None, "ambiguous"),
        ('{"ID": "a", "Label": "A", "order": "reversed"}', "order", "original"),
    ],
)
def test_malformed_line_names_file_line_and_field(line, field, message):
    good = json.dumps(judge("ok", "A"))
    with pytest.raises(ScoringInputError) as info:
        parse_predictions([good + "\n", "\n", line + "\n"], filename="p.jsonl")
    err = info.value
    assert (err.source, err.where, err.field) == ("p.jsonl", "line 3", field)
    assert message in str(err)
    assert str(err).startswith("p.jsonl, line 3")


def test_a_line_cannot_claim_the_other_order_of_its_file():
    with pytest.raises(ScoringInputError, match="both orders") as info:
        parse({"ID": "a", "Label": "A", "order": "original"}, order="swapped")
    assert info.value.field == "order"


def test_blank_lines_are_skipped_but_counted():
    preds = parse_predictions(["\n", json.dumps(judge("a", "A")) + "\n", "  \n"], filename="p")
    assert [p.line for p in preds] == [2]


@pytest.mark.parametrize(
    ("record", "field"),
    [
        ({"Better": "Output1", "Category": "vqa"}, "ID"),
        ({"ID": "a", "Better": "output1", "Category": "vqa"}, "Better"),
        ({"ID": "a", "Better": "Output1"}, "Category"),
    ],
)
def test_bad_release_record_names_record_and_field(tmp_path, record, field):
    path = tmp_path / "all_data.json"
    path.write_text(json.dumps([make_record("ok"), record]))
    with pytest.raises(ScoringInputError) as info:
        load_release_records(path)
    assert info.value.field == field
    assert "record 1" in str(info.value)


def test_release_with_duplicate_ids_is_rejected(tmp_path):
    (tmp_path / "all_data.json").write_text(json.dumps([make_record("a"), make_record("a")]))
    with pytest.raises(ScoringInputError, match="duplicate ID"):
        load_release_records(tmp_path)


def test_release_that_is_not_json_names_the_line(tmp_path):
    path = tmp_path / "all_data.json"
    path.write_text('[\n{"ID": "a",\n')
    with pytest.raises(ScoringInputError, match=r"all_data.json, line \d+: not valid JSON"):
        load_release_records(path)


def test_release_is_read_from_a_folder_or_a_file(tmp_path):
    records = [make_record("a"), make_record("b", "Output2")]
    (tmp_path / "all_data.json").write_text(json.dumps(records))
    assert load_release_records(tmp_path) == records
    assert load_release_records(tmp_path / "all_data.json") == records


# --------------------------------------------------------------------------- output


def test_report_dict_keeps_official_numbers_apart_from_extras():
    report = score(bucket_records(), parse(judge("mathvista_1", "A"), judge("ghost", None)))
    out = report_as_dict(report)
    json.dumps(out)  # serialisable
    assert set(out) == {"official", "extras"}
    assert out["official"]["groups"][0] == {
        "name": "all",
        "level": "overall",
        "correct": 1,
        "total": 1,
        "accuracy": 1.0,
    }
    assert out["official"]["random_fallbacks"] == 1
    assert set(out["extras"]) >= {"macro_average", "ci95", "coverage", "position", "consistency"}
    assert out["extras"]["coverage"]["unknown"] == ["ghost"]


def test_text_report_labels_the_extras():
    text = format_report(score(bucket_records(), parse(judge("mathvista_1", "A"))))
    official, extras = text.split("Extras (not computed by the official scorer)")
    assert re.search(r"^  reasoning/math +1 +1 +1\.0000$", official, re.M)
    assert "Macro average" in extras and "missing IDs: 8" in extras


# --------------------------------------------------------------------------- command


def write_jsonl(path, objs):
    path.write_text("".join(lines(*objs)))
    return path


def test_evaluate_command_prints_the_table(tmp_path):
    (tmp_path / "all_data.json").write_text(json.dumps(bucket_records()))
    preds = write_jsonl(tmp_path / "p.jsonl", [judge(r["ID"], "A") for r in bucket_records()])
    swapped = write_jsonl(tmp_path / "s.jsonl", [judge("mathvista_1", "B")])
    out = io.StringIO()
    call_command("evaluate", str(tmp_path), str(preds), "--swapped", str(swapped), stdout=out)
    text = out.getvalue()
    assert "Official scorer" in text and "Extras" in text
    assert "Position consistency: 1 / 1" in text


def test_evaluate_command_json(tmp_path):
    (tmp_path / "all_data.json").write_text(json.dumps([make_record("a")]))
    preds = write_jsonl(tmp_path / "p.jsonl", [{"ID": "a", "Label": "A"}])
    out = io.StringIO()
    call_command("evaluate", str(tmp_path / "all_data.json"), str(preds), "--json", stdout=out)
    assert json.loads(out.getvalue())["official"]["groups"][0]["accuracy"] == 1.0


def test_evaluate_command_reports_bad_lines(tmp_path):
    (tmp_path / "all_data.json").write_text(json.dumps([make_record("a")]))
    preds = tmp_path / "p.jsonl"
    preds.write_text('{"ID": "a", "Label": "A"}\n{"ID": "a", "score_1": 1}\n')
    with pytest.raises(CommandError, match=r"p.jsonl, line 2, field 'score_2': missing"):
        call_command("evaluate", str(tmp_path), str(preds))


# --------------------------------------------------------------------------- size


def test_full_size_file_is_scored():
    # 5,211 lines as in Multimodal RewardBench. Timing is not asserted here.
    categories = ["knowledge", "reasoning", "safety", "vqa"]
    records = [
        make_record(f"id_{i}", "Output1" if i % 2 else "Output2", categories[i % 4])
        for i in range(5211)
    ]
    text = [json.dumps(judge(f"id_{i}", "A" if i % 7 else None)) + "\n" for i in range(5211)]
    report = score(records, parse_predictions(text, filename="big.jsonl"))
    assert report.group("all").total == 5211
    assert report.random_fallbacks == len(range(0, 5211, 7))
