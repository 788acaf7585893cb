"""The judge of ranked releases (curation.benchmarks.ranked.judge): the
N-way prompt in an order drawn from the run's seed, the ranking-line parser,
and a run through the judge runner against the fake OpenAI server, scored by
the ranked scorer (top-1 and τ-b, unparseable verdicts as missing)."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

from curation.benchmarks import registry
from curation.benchmarks.ranked import judge
from curation.benchmarks.ranked.benchmark import release_prompts
from curation.benchmarks.ranked.card import FILE
from tests.curation.benchmarks.ranked.test_ranked_end_to_end import (
    ranked_project,  # noqa: F401 (a fixture)
    release_of,
)
from tests.curation.benchmarks.ranked.test_scoring import tau_b_by_pairs, top1_by_sets
from tests.curation.evaluation.fake_openai import FakeJudge

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("text", "n", "places"),
    [
        ("[[C]] > [[A]] = [[B]] > [[D]]", 4, [2, 2, 1, 4]),
        ("[[B]]>[[A]]", 2, [2, 1]),
        ("[[A]] = [[B]]", 2, [1, 1]),
        ("I think [[A]] > [[B]] at first.\nFinal: [[D]] > [[C]] > [[B]] = [[A]]", 4, [3, 3, 2, 1]),
        # The last complete chain counts; an incomplete later one does not.
        ("[[B]] > [[C]] > [[A]]\nso [[A]] > [[B]]", 3, [3, 1, 2]),
    ],
)
def test_a_ranking_line_is_read_as_places(text, n, places):
    assert judge.parse_ranking(text, n) == places


@pytest.mark.parametrize(
    "text",
    [None, "", "[[A]]", "[[A]] > [[B]] > [[C]]", "[[A]] > [[A]] > [[B]] > [[C]]",
     "[[A]] > [[B]] > [[C]] > [[E]]", "[[A]] < [[B]] < [[C]] < [[D]]", "A > B > C > D",
     "[[a]] > [[b]] > [[c]] > [[d]]"],
)  # fmt: skip
def test_anything_else_is_unparseable(text):
    assert judge.parse_ranking(text, 4) is None


def test_the_shown_order_comes_from_the_seed_and_maps_back():
    orders = {tuple(judge.shown_order(seed, "q", "rank", 6)) for seed in range(40)}
    assert len(orders) > 10 and all(sorted(o) == list(range(6)) for o in orders)
    assert judge.shown_order(7, "q", "rank", 6) == judge.shown_order(7, "q", "rank", 6)
    order = [2, 0, 3, 1]  # A shows response 2, B response 0, ...
    assert judge.file_ranking([1, 2, 3, 4], order) == [2, 4, 1, 3]


def test_the_prompt_states_the_syntax_it_parses():
    for n in range(2, 9):
        example = judge.example(n)
        assert judge.parse_ranking(example, n) is not None
        assert example in judge.SYSTEM_PROMPT.format(n=n, labels="", example=example)
    assert judge.example(4) == "[[B]] > [[C]] = [[D]] > [[A]]"


BLOCK = re.compile(r"\[The Start of Assistant ([A-H])'s Answer\]\n(.*?)\n\[The End", re.S)


class FakeRanker(FakeJudge):
    """Knows each record by its question; checks the shown order is the
    seed's; answers a chain the test's `answer(record_id, shown)` gives."""

    def _check(self, payload):
        system, user = payload["messages"]
        content = user["content"]
        text = content if isinstance(content, str) else content[0]["text"]
        record = self.by_prompt[text.split("\n", 2)[1]]
        shown = [record["responses"].index(answer) for _, answer in BLOCK.findall(text)]
        expect = judge.shown_order(self.seed, record["ID"], judge.CALL, len(shown))
        assert shown == expect, "shown order is not the seed's"
        assert (
            f"every label {', '.join(f'[[{c}]]' for c in 'ABCDEFGH'[: len(shown)])}"
            in (system["content"])
        )
        if record["images"]:
            assert content[1]["image_url"]["url"].startswith("data:image/png;base64,")
        self.shown[record["ID"]] = shown
        return record["ID"], judge.CALL, self.answer(record["ID"], shown)


def chain(places_by_shown: list[int]) -> str:
    """A ranking line for places per shown label (the fake's answer; its
    text is '…Verdict: [[<this>]]', so the outer brackets are left off)."""
    labels = sorted(range(len(places_by_shown)), key=lambda k: places_by_shown[k])
    out = "ABCDEFGH"[labels[0]]
    for prev, k in itertools.pairwise(labels):
        sign = " = " if places_by_shown[k] == places_by_shown[prev] else " > "
        out += "]]" + sign + "[[" + "ABCDEFGH"[k]
    return out


def test_a_run_ranks_every_record_and_scores_it_by_top1_and_tau(ranked_project, settings):  # noqa: F811
    from curation.evaluation.judge_runs import run_judge, start_judge_run
    from curation.models import JudgeOutput, JudgeRunStatus
    from tests.curation.evaluation.test_judge_runner import API_KEY, MODEL, make_endpoint

    settings.JUDGE_BACKOFF_BASE = 0.01
    settings.JUDGE_MAX_RETRIES = 1
    project, _ = ranked_project
    release, folder = release_of(project)
    records = registry.get("ranked").judge_records(release)
    human = {p.id: p.ranks for p in release_prompts(release)}
    # The judge's ranking in the file's order: the humans' for q1, reversed
    # for q3, unparseable for q4 (missing); q2 and the rest as the humans.
    judged = {"q3": [9 - r for r in human["q3"]]}

    def answer(record_id, shown):
        if record_id == "q4":
            return "A]] is best, then [[B"
        ranking = judged.get(record_id, list(human[record_id]))
        return chain([ranking[index] for index in shown])

    with FakeRanker(api_key=API_KEY, model=MODEL, records=[]) as fake:
        fake.by_prompt = {r["prompt"]: r for r in records}
        fake.answer, fake.shown = answer, {}
        run = start_judge_run(
            release=release, endpoint=make_endpoint(release, fake), name="ranker",
            swapped=False, concurrency=2, user=None, enqueue=False,
        )  # fmt: skip
        assert run.scoring == "ranked" and run.progress_total == len(records)
        fake.seed = run.seed
        run = run_judge(run_id=run.pk)
        assert fake.problems == []
    assert run.status == JudgeRunStatus.COMPLETE, run.error
    assert set(JudgeOutput.objects.filter(run=run).values_list("order", flat=True)) == {"rank"}
    # Different records were shown in different orders (the seed's draws).
    assert any(shown != sorted(shown) for shown in fake.shown.values())
    report = run.evaluation.report["ranked"]
    ids = [r["ID"] for r in records]
    top1 = [0.0 if i == "q4" else
            top1_by_sets(human[i], [-v for v in judged.get(i, human[i])]) for i in ids]  # fmt: skip
    taus = [tau_b_by_pairs(np.array(human[i]), np.array(judged.get(i, human[i]), dtype=float))
            for i in ids if i != "q4"]  # fmt: skip
    taus = [t for t in taus if t is not None]
    assert report["missing"] == 1 and report["prompts"] == len(ids)
    assert report["top1"] == pytest.approx(np.mean(top1), abs=1e-9)
    assert report["tau_b"] == pytest.approx(np.mean(taus), abs=1e-9)
    assert report["tau_b"] < 1.0  # q3 reversed
    assert (folder / FILE).exists()


def test_a_run_with_no_readable_ranking_fails_saying_why(ranked_project):  # noqa: F811
    project, _ = ranked_project
    release, _ = release_of(project)
    records = registry.get("ranked").judge_records(release)

    class Run:
        pk, seed = 3, 11

    outputs = {(r["ID"], "rank"): "They are all fine." for r in records}
    with pytest.raises(Exception, match="ranking line"):
        registry.get("ranked").judge_predictions(outputs, records, Run())
