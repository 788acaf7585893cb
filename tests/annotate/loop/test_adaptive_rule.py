"""Adaptive votes' pure rule (annotate.loop.adaptive) and the simulation
bench that calls it (bench/adaptive_sim.py). No database."""

import importlib.util
import math
import sys
from pathlib import Path

import pytest

from annotate.loop import adaptive
from annotate.loop.adaptive import Rule, Step

# A fixed dataset: 6 items, 3 annotators and a judge, one annotator often wrong.
VOTES = [
    (1, "a", "1"), (1, "b", "1"), (1, "c", "2"), (1, "judge7", "1"),
    (2, "a", "2"), (2, "b", "2"), (2, "c", "2"),
    (3, "a", "1"), (3, "c", "2"), (3, "judge7", "2"),
    (4, "b", "1"), (4, "c", "1"), (4, "judge7", "1"),
    (5, "a", "2"), (5, "b", "1"), (5, "c", "1"), (5, "judge7", "2"),
    (6, "a", "1"), (6, "b", "tie"), (6, "c", "2"),
]  # fmt: skip


def test_posterior_is_crowd_kits_dawid_skene():
    pd = pytest.importorskip("pandas")
    crowdkit = pytest.importorskip("crowdkit.aggregation")
    p1, method = adaptive.posterior(VOTES, method=adaptive.DAWID_SKENE)
    assert method == adaptive.DAWID_SKENE
    rows = [v for v in VOTES if v[2] in ("1", "2")]
    frame = pd.DataFrame(
        {
            "task": [r[0] for r in rows],
            "worker": [r[1] for r in rows],
            "label": [0 if r[2] == "1" else 1 for r in rows],
        }
    )
    reference = crowdkit.DawidSkene(n_iter=100, tol=1e-6).fit_predict_proba(frame)
    assert set(p1) == set(reference.index)
    for item, p in p1.items():
        assert p == pytest.approx(float(reference.loc[item, 0]), abs=1e-9)


def test_one_coin_fallback_is_its_documented_formula():
    p1, method = adaptive.posterior(VOTES, method=adaptive.ONE_COIN)
    assert method == adaptive.ONE_COIN
    # By hand: majorities (item: side) 1: 1, 2: 2, 3: 2, 4: 1; 5 is split
    # 2-2 and 6 1-1 (its tie left out): no majority, they count for nobody.
    # a: 1 and 2 agree, 3 not -> (2 + 1) / (3 + 2); b: 1, 2, 4 agree -> 4/5;
    # c: 2, 3, 4 agree, 1 not -> 4/6; judge7: 1, 3, 4 agree -> 4/5.
    accuracy = {"a": 3 / 5, "b": 4 / 5, "c": 4 / 6, "judge7": 4 / 5}

    def logit(q):
        return math.log(q / (1 - q))

    def expected(item):
        z = sum(
            logit(accuracy[w]) * (1 if label == "1" else -1)
            for i, w, label in VOTES
            if i == item and label in ("1", "2")
        )
        return 1 / (1 + math.exp(-z))

    assert set(p1) == {1, 2, 3, 4, 5, 6}
    for item, p in p1.items():
        assert p == pytest.approx(expected(item), abs=1e-12)


def test_no_votes_no_posterior():
    assert adaptive.posterior([(1, "a", "tie")], method=adaptive.ONE_COIN) == ({}, "one_coin")


RULE = Rule(base_votes=2, budget=4, stop_certainty=0.9)


@pytest.mark.parametrize(
    ("n_votes", "p1", "agree", "expected"),
    [
        (0, None, False, Step(2, False, "base")),
        (1, 0.99, True, Step(2, False, "base")),  # the base votes come first, always
        (2, 0.95, False, Step(2, False, "certain")),
        (2, 0.05, False, Step(2, False, "certain")),
        (2, 0.6, True, Step(2, False, "agreement")),
        (2, 0.6, False, Step(3, True, "open")),
        (3, None, False, Step(4, True, "open")),
        (4, 0.5, False, Step(4, False, "budget")),
    ],
)
def test_step(n_votes, p1, agree, expected):
    assert adaptive.step(rule=RULE, n_votes=n_votes, p1=p1, agree=agree) == expected


def test_humans_and_judges_agree_only_when_all_on_one_side():
    assert adaptive.agreement(["1", "1"], ["1", "1"])
    assert not adaptive.agreement(["1", "1"], ["1", "2"])
    assert not adaptive.agreement(["1", "2"], ["1"])
    assert not adaptive.agreement(["1", "1"], [])  # no judge: no ensemble to agree with
    assert not adaptive.agreement(["tie", "tie"], ["tie"])


def test_plan_and_queue_order_least_certain_first():
    human = {1: ["1", "2"], 2: ["1", "1"], 3: ["2", "1"], 4: ["1"], 5: ["2", "2"]}
    judges = {2: ["1"], 5: ["1"]}
    p1 = {1: 0.55, 2: 0.7, 3: 0.4, 4: 0.9, 5: 0.2}
    steps = adaptive.plan(rule=RULE, human=human, judges=judges, p1=p1)
    assert steps[2].reason == "agreement"
    assert steps[4].reason == "base"
    assert steps[5] == Step(3, True, "open")  # judges disagree with the humans
    # 1: 0.55, 3: 0.6, 5: 0.8.
    assert adaptive.queue_order(steps, p1) == [1, 3, 5]
    # Equal certainty: by id.
    assert adaptive.queue_order(steps, {1: 0.6, 3: 0.4, 5: 0.6}) == [1, 3, 5]


@pytest.mark.parametrize(
    ("rule", "fields"),
    [
        (Rule(2, 5, 0.95), set()),
        (Rule(0, 5, 0.95), {"adaptive_base_votes"}),
        (Rule(3, 2, 0.95), {"adaptive_budget"}),
        (Rule(2, 51, 0.95), {"adaptive_budget"}),
        (Rule(2, 5, 0.5), {"adaptive_stop_certainty"}),
        (Rule(2, 5, 1.0), {"adaptive_stop_certainty"}),
    ],
)
def test_rule_validation(rule, fields):
    assert set(rule.errors()) == fields


def test_rule_in_plain_words():
    text = Rule(2, 5, 0.95).describe()
    assert "first gets 2 votes" in text and "up to 5 votes" in text and "95%" in text


def _bench():
    path = Path(__file__).resolve().parents[3] / "bench" / "adaptive_sim.py"
    spec = importlib.util.spec_from_file_location("adaptive_sim", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["adaptive_sim"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_simulation_on_a_small_world_is_deterministic():
    sim = _bench()
    rule = Rule(base_votes=1, budget=4, stop_certainty=0.95)

    def run():
        world = sim.make_world(n_items=60, seed=3)
        return (
            sim.run_fixed(world, 3, method=adaptive.ONE_COIN),
            sim.run_adaptive(world, rule, refit_every=10, method=adaptive.ONE_COIN),
        )

    first, second = run(), run()
    assert first == second
    fixed, adaptive_run = first
    assert fixed.votes == 180
    assert 60 <= adaptive_run.votes <= 240
    assert 0.5 < adaptive_run.accuracy <= 1


def test_the_rule_imports_no_django():
    """The bench runs it without a project (DESIGN §3: pure science modules)."""
    import subprocess

    code = (
        "import sys, annotate.loop.adaptive; "
        "sys.exit(any(m == 'django' or m.startswith('django.') for m in sys.modules))"
    )
    root = Path(__file__).resolve().parents[3]
    result = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("seed", range(6))
def test_numpy_dawid_skene_equals_crowd_kits(seed):
    """The refit's Dawid-Skene (numpy, for speed at 100,000 items) is
    crowd-kit's to 1e-9: random projects with workers of mixed accuracy,
    items with one to five votes, and a judge that only ever says "1"."""
    import random

    pytest.importorskip("crowdkit.aggregation")
    rng = random.Random(seed)
    rows = []
    n_items = (5, 60, 800)[seed % 3]
    for item in range(n_items):
        truth = rng.choice("12")
        for w in rng.sample(range(12), rng.choice([1, 2, 3, 5])):
            right = rng.random() < 0.55 + 0.04 * w
            rows.append((item * 7 + 3, f"a{w}", truth if right else "12"[truth == "1"]))
    if seed % 2 == 0:
        rows += [(i * 7 + 3, "judge-ones", "1") for i in range(0, n_items, 3)]
    ours = adaptive.dawid_skene_posterior(rows)
    reference = adaptive.crowd_kit_dawid_skene(rows)
    assert set(ours) == set(reference)
    assert max(abs(ours[item] - reference[item]) for item in ours) <= 1e-9
    # One label seen: crowd-kit's own answer.
    same = [(1, "a", "2"), (2, "b", "2")]
    assert adaptive.dawid_skene_posterior(same) == adaptive.crowd_kit_dawid_skene(same)
