"""Ranked scoring (issue 33): top-1 accuracy and Kendall's τ-b against the
human ranking, equal to a re-derivation from their definitions (τ-b from
pair counts, not scipy) to 1e-9; predictions read strictly."""

from __future__ import annotations

import json
import math
from itertools import combinations

import numpy as np
import pytest
from scipy import stats

from curation.benchmarks.ranked import scoring


def tau_b_by_pairs(x, y):
    """Kendall's τ-b from its definition: (C - D) / sqrt((n0 - n1)(n0 - n2))."""
    concordant = discordant = ties_x = ties_y = 0
    for i, j in combinations(range(len(x)), 2):
        dx, dy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
        if dx == 0 and dy == 0:
            continue
        if dx == 0:
            ties_x += 1
        elif dy == 0:
            ties_y += 1
        elif dx == dy:
            concordant += 1
        else:
            discordant += 1
    denominator = math.sqrt((concordant + discordant + ties_x) * (concordant + discordant + ties_y))
    return None if denominator == 0 else (concordant - discordant) / denominator


def top1_by_sets(human, scores):
    best = {k for k, r in enumerate(human) if r == min(human)}
    top = [k for k, s in enumerate(scores) if s == max(scores)]
    return sum(k in best for k in top) / len(top)


def fixture(seed=3, prompts=60):
    rng = np.random.default_rng(seed)
    out, preds = [], {}
    for n in range(prompts):
        size = int(rng.integers(2, 9))
        raw = rng.integers(1, size + 1, size=size)  # ties likely
        ranks = tuple(int(r) for r in scoring_competition(raw))
        category = ["math", "chat", "vision"][n % 3]
        out.append(scoring.Prompt(f"p{n}", category, ranks))
        if n % 7 == 6:
            continue  # missing
        if n % 5 == 0:
            preds[f"p{n}"] = {"ranking": [int(r) for r in rng.integers(1, size + 1, size=size)]}
        else:
            preds[f"p{n}"] = {"scores": [float(x) for x in np.round(rng.normal(size=size), 1)]}
    preds["p1"] = {"scores": [1.0] * len(out[1].ranks)}  # every model score tied: τ undefined
    return out, preds


def scoring_competition(raw):
    return [1 + sum(o < r for o in raw) for r in raw]


def reference(prompts, preds):
    rows = {}
    for p in prompts:
        pred = preds.get(p.id)
        if pred is None:
            row = (0.0, None)
        else:
            scores = pred["scores"] if "scores" in pred else [-r for r in pred["ranking"]]
            row = (top1_by_sets(p.ranks, scores), tau_b_by_pairs(p.ranks, [-s for s in scores]))
        rows.setdefault(p.category, []).append(row)
    every = [r for rs in rows.values() for r in rs]

    def summary(rs):
        taus = [t for _, t in rs if t is not None]
        return np.mean([r for r, _ in rs]), (np.mean(taus) if taus else None), len(taus)

    return summary(every), {c: summary(rs) for c, rs in rows.items()}


def test_report_equals_a_re_derivation_to_1e_9():
    prompts, preds = fixture()
    text = "".join(json.dumps({"id": k, **v}) + "\n" for k, v in preds.items())
    parsed, repeated, unknown = scoring.read_predictions(
        text, "p.jsonl", {p.id: len(p.ranks) for p in prompts}
    )
    assert (repeated, unknown) == (0, 0)
    report = scoring.score(prompts, parsed)
    (top1, tau, n_tau), by = reference(prompts, preds)
    assert report["top1"] == pytest.approx(top1, abs=1e-9)
    assert report["tau_b"] == pytest.approx(tau, abs=1e-9)
    assert report["tau_prompts"] == n_tau
    assert report["missing"] == sum(p.id not in preds for p in prompts) > 0
    for c in report["categories"]:
        ref_top1, ref_tau, ref_n = by[c["category"]]
        assert c["top1"] == pytest.approx(ref_top1, abs=1e-9)
        assert c["tau_b"] == pytest.approx(ref_tau, abs=1e-9)
        assert c["tau_prompts"] == ref_n
    assert "studio's definitions" in report["definitions"]


def test_per_prompt_rules_on_hand_made_cases():
    # Model ties two at its top, one a human first: half a point.
    assert scoring.top1([1, 2, 3], [-1.0, -1.0, 0.0]) == 0.5
    # Humans tie two firsts: the model's single top is one of them.
    assert scoring.top1([1, 1, 3], [0.0, -2.0, -1.0]) == 1.0
    assert scoring.top1([1, 2, 2], [0.0, -1.0, 1.0]) == 0.0
    # Same order: τ-b 1; reversed: -1; ties corrected as scipy's variant b.
    assert scoring.tau_b([1, 2, 3, 4], [1, 2, 3, 4]) == pytest.approx(1.0)
    assert scoring.tau_b([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    human, model = [1, 2, 2, 4, 5], [2.0, 1.0, 3.0, 3.0, 5.0]
    expected = stats.kendalltau(human, model, variant="b").statistic
    assert scoring.tau_b(human, model) == pytest.approx(tau_b_by_pairs(human, model), abs=1e-12)
    assert scoring.tau_b(human, model) == pytest.approx(expected, abs=1e-12)
    assert scoring.tau_b([1, 1], [1.0, 2.0]) is None


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": "a", "scores": [1, 2]}', "p.jsonl:1, field 'scores': holds 2 values; the "
         "prompt has 3 responses"),
        ('{"id": "a", "scores": [1, "x", 2]}', "p.jsonl:1, field 'scores': expected a list of "
         "finite numbers"),
        ('{"id": "a", "ranking": [0, 1, 2]}', "p.jsonl:1, field 'ranking': places are integers "
         "from 1 (best)"),
        ('{"id": "a", "scores": [1, 2, 3], "ranking": [1, 2, 3]}', "p.jsonl:1: give one of "
         "'scores' (higher is better) or 'ranking'"),
        ('{"scores": [1, 2, 3]}', "p.jsonl:1, field 'id': expected the prompt's ID (a string)"),
        ("{broken", "p.jsonl:1: not valid JSON"),
        ("", "p.jsonl: holds no predictions"),
    ],
)  # fmt: skip
def test_bad_predictions_name_file_line_and_field(line, message):
    with pytest.raises(scoring.PredictionsError) as failed:
        scoring.read_predictions(line + "\n", "p.jsonl", {"a": 3})
    assert str(failed.value).startswith(message)


def test_repeated_ids_keep_the_last_and_unknown_ids_are_counted():
    text = (
        '{"id": "a", "scores": [0, 1]}\n{"id": "a", "scores": [1, 0]}\n'
        '{"id": "zz", "scores": [1, 2, 3, 4]}\n'
    )
    parsed, repeated, unknown = scoring.read_predictions(text, "p.jsonl", {"a": 2})
    assert (repeated, unknown) == (1, 1)
    assert parsed["a"].keys == (-1.0, -0.0)


def test_a_ranking_file_is_detected_and_a_scores_file_must_be_named():
    from curation.benchmarks import registry

    assert registry.detect('{"id": "q1", "ranking": [2, 1, 3]}\n').key == "ranked"
    # {"id", "scores"} is RewardBench 2's shape too (and MMRB2's detection, asked
    # first, takes any object line without "ID"): name "ranked" for it.
    assert registry.detect('{"id": "q1", "scores": [0.5, 0.1]}\n').key != "ranked"


def acc_plus_by_pairs(prompts, preds, groups):
    """Acc+ re-derived: each prompt's pairwise decomposition (every two
    responses the humans placed apart, better first), all pairs right with a
    strictly higher score for the better one; then all prompts of a group."""
    right = {}
    for p in prompts:
        pred = preds.get(p.id)
        if pred is None:
            right[p.id] = False
            continue
        scores = pred["scores"] if "scores" in pred else [-r for r in pred["ranking"]]
        pairs = [
            (i, j) if p.ranks[i] < p.ranks[j] else (j, i)
            for i, j in combinations(range(len(p.ranks)), 2)
            if p.ranks[i] != p.ranks[j]
        ]
        right[p.id] = all(scores[better] > scores[worse] for better, worse in pairs)
    by_group = {}
    for p in prompts:
        key = groups.get(p.id) or f"own:{p.id}"
        by_group[key] = by_group.get(key, True) and right[p.id]
    return sum(by_group.values()) / len(by_group), len(by_group)


@pytest.mark.parametrize("grouped", [False, True])
def test_acc_plus_equals_the_pairwise_re_derivation(grouped):
    prompts, preds = fixture(seed=11, prompts=90)
    # Some prompts ordered exactly right, so that groups can be all right.
    for p in prompts[::4]:
        preds[p.id] = {"scores": [-float(r) for r in p.ranks]}
    groups = {p.id: f"g{n // 3}" for n, p in enumerate(prompts) if n % 9 != 8} if grouped else {}
    text = "".join(json.dumps({"id": k, **v}) + "\n" for k, v in preds.items())
    parsed, _, _ = scoring.read_predictions(text, "p.jsonl", {p.id: len(p.ranks) for p in prompts})
    report = scoring.score(prompts, parsed, groups)
    value, count = acc_plus_by_pairs(prompts, preds, groups)
    assert report["acc_plus"]["groups"] == count
    assert report["acc_plus"]["value"] == pytest.approx(value, abs=1e-9)
    assert 0 < value < 1


def test_acc_plus_is_strict_on_model_ties_and_ignores_human_ties():
    prompt = scoring.Prompt("a", "c", (1, 1, 3))  # the humans tie the first two
    assert scoring.pairs_right(prompt.ranks, (0.0, 0.0, 1.0))  # their tie needs no order
    assert scoring.pairs_right(prompt.ranks, (0.5, 0.0, 1.0))
    assert not scoring.pairs_right(prompt.ranks, (0.0, 1.0, 1.0))  # a model tie is wrong
    assert not scoring.pairs_right(prompt.ranks, (2.0, 0.0, 1.0))
