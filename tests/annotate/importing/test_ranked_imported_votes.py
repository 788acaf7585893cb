"""Published rankings (the ranked format's `rankings`) cast as votes and as
gold (issue 33): an N-slot ranking vote of imported-1 in a ranking project
(slot rows, votes_ranked, the ranking rule deciding), a pick in a best-of-N
one, and the slot ranked first as the item's gold."""

from __future__ import annotations

import json

import pytest

from annotate.importing.imported_votes import PublishedVote, as_task
from annotate.importing.service import import_items_from_paths
from annotate.models import Item, Judgement, JudgementSlot, Task
from curation.models import Verdict
from tests.factories import make_project

pytestmark = pytest.mark.django_db

RECORDS = [
    {"id": "q1", "prompt": "p1", "responses": ["a", "b", "c", "d"], "rankings": [2, 1, 3, 3]},
    {"id": "q2", "prompt": "p2", "responses": ["x", "y", "z"], "rankings": [1, 1, 2]},
    {"id": "q3", "prompt": "p3", "responses": ["u", "v"], "rankings": [2, 1]},
]


@pytest.fixture
def dataset(tmp_path):
    path = tmp_path / "ranked.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    return path


def slot_ranks(item: Item) -> list[int | None]:
    rows = JudgementSlot.objects.filter(judgement__assignment__item=item).order_by("slot")
    return [row.rank for row in rows]


def test_a_ranking_project_gets_one_ranking_vote_per_record(dataset):
    project = make_project(slug="rk", task=Task.RANKING, votes_per_item=1)
    result = import_items_from_paths(project=project, dataset=dataset, cast_votes=True)
    assert result.created == 3 and result.votes_cast == 3
    items = {i.external_id: i for i in Item.objects.filter(project=project)}
    assert slot_ranks(items["q1"]) == [2, 1, 3, 3]
    assert slot_ranks(items["q2"]) == [1, 1, 3]  # competition form
    for item in items.values():
        (judgement,) = Judgement.objects.filter(assignment__item=item)
        assert (judgement.task, judgement.choice, judgement.imported) == (Task.RANKING, "", True)
        assert judgement.assignment.annotator.username == "imported-rk-1"
        n = len(RECORDS[int(item.external_id[1]) - 1]["responses"])
        assert judgement.assignment.display_order == "1234"[:n]
        assert (item.votes_ranked, item.votes_1, item.votes_2, item.votes_tie) == (1, 0, 0, 0)
    # One vote is all the project asks: the ranking rule looked at each item
    # (one ranking: Kendall's W is undefined, so the curator decides).
    q1 = Verdict.objects.get(item=items["q1"])
    assert q1.status == "contested" and "Kendall's W undefined" in q1.reason
    assert "top 0-1-0-0" in q1.reason  # the vote's first place is slot 2


def test_a_best_of_n_project_gets_the_pick_of_the_first_place(dataset):
    project = make_project(slug="bon", task=Task.BEST_OF_N, votes_per_item=3)
    result = import_items_from_paths(project=project, dataset=dataset, cast_votes=True)
    assert result.votes_cast == 2  # q2's first place is tied: no pick cast
    picks = dict(
        Judgement.objects.filter(assignment__item__project=project).values_list(
            "assignment__item__external_id", "choice"
        )
    )
    assert picks == {"q1": "2", "q3": "2"}
    assert not JudgementSlot.objects.filter(judgement__assignment__item__project=project).exists()
    q1 = Item.objects.get(project=project, external_id="q1")
    assert q1.votes_ranked == 1 and len(q1.assignments.get().display_order) == 4


def test_gold_from_label_is_the_slot_ranked_first(dataset):
    project = make_project(slug="gold", task=Task.RANKING)
    import_items_from_paths(project=project, dataset=dataset, gold_from_label=True)
    gold = dict(Item.objects.filter(project=project).values_list("external_id", "gold_choice"))
    assert gold == {"q1": "2", "q2": "", "q3": "2"}
    assert not Judgement.objects.filter(assignment__item__project=project).exists()


def test_a_slot_past_the_second_can_be_gold(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"id": "g", "prompt": "p", "responses": list("abcdefgh"),
                                "rankings": [8, 7, 6, 5, 4, 3, 2, 1]}) + "\n")  # fmt: skip
    project = make_project(slug="g8", task=Task.RANKING)
    import_items_from_paths(project=project, dataset=path, gold_from_label=True)
    assert Item.objects.get(project=project).gold_choice == "8"


def test_a_ranking_becomes_each_tasks_answer():
    vote = PublishedVote(ranks=(2, 1, 2))
    assert as_task(vote, Task.RANKING) == PublishedVote(ranks=(2, 1, 2))
    assert as_task(vote, Task.BEST_OF_N).choice == "2"
    assert as_task(PublishedVote(ranks=(1, 1, 3)), Task.BEST_OF_N) is None
    assert as_task(PublishedVote(ranks=(2, 1)), Task.PAIRWISE) == PublishedVote(choice="2")
    assert as_task(PublishedVote(ranks=(1, 1)), Task.PAIRWISE) == PublishedVote(choice="tie")
    assert as_task(PublishedVote(choice="1"), Task.RANKING) == PublishedVote(choice="1")
