"""`manage.py seed_demo`'s best-of-4 project (issue 33): RewardBench 2-style
records made by rules a test can check, brought in through the real
RewardBench 2 import (chosen first), with the demo annotators' picks, and
idempotent; its compare page shows an annotator four responses."""

import json
import re

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from annotate.importing import formats
from annotate.importing.formats import rewardbench2
from annotate.management.commands.seed_demo import ensure_demo_users, ensure_memberships
from annotate.models import Assignment, Item, Judgement, Project, Task
from annotate.models.parts import parts_by_slot
from demo.best_of_four import PROMPTS_PER_SUBSET, SUBSET_RULES, build_best_of_four_records

pytestmark = pytest.mark.django_db


def test_each_records_chosen_completion_is_the_right_one_by_its_rule():
    records = build_best_of_four_records()
    assert len(records) == PROMPTS_PER_SUBSET * len(SUBSET_RULES)
    assert records == build_best_of_four_records()  # seeded
    for record in records:
        assert record["total_completions"] == 4 == len(record["chosen"] + record["rejected"])
        chosen, rejected = record["chosen"][0], record["rejected"]
        assert chosen not in rejected
        if record["subset"] == "Math":
            a, b, c = map(int, re.findall(r"\d+", record["prompt"]))
            assert chosen.endswith(f"The answer is {a * b + c}.")
            assert not any(r.endswith(f"The answer is {a * b + c}.") for r in rejected)
        if record["subset"] == "Precise IF":
            assert len(chosen.split("; ")) == 3 and chosen == chosen.lower()
        # Each line is a RewardBench 2 record this studio reads back byte for byte.
        parsed, problems = rewardbench2.parse_record(json.loads(json.dumps(record)))
        assert not problems and parsed.completions[0] == chosen


def seed(tmp_path):
    """The format's own seed_demo, as manage.py seed_demo calls it (the whole
    command also generates the other demo projects: tests/annotate/test_seed_demo.py)."""
    return rewardbench2.seed_demo(ensure_demo_users(), tmp_path, ensure_memberships)


def test_seed_demo_asks_the_rewardbench2_format_for_its_project():
    assert rewardbench2 in formats.FORMATS and callable(rewardbench2.seed_demo)


def test_seed_demo_makes_a_best_of_four_project_with_picks_and_is_idempotent(tmp_path):
    (seeded,) = seed(tmp_path)
    project = Project.objects.get(slug="demo-bo4")
    records = {r["id"]: r for r in build_best_of_four_records()}
    assert project.task == Task.BEST_OF_N
    assert project.domains.count() == len(SUBSET_RULES)
    items = Item.objects.filter(project=project)
    assert items.count() == len(records)
    for item in items:
        slots = {s: [p.text for p in parts] for s, parts in parts_by_slot(item, html=False).items()}
        record = records[item.external_id]
        assert slots["response_1"] == record["chosen"]  # slot 1 is the correct one
        assert [slots[f"response_{n}"][0] for n in (2, 3, 4)] == record["rejected"]
    votes = Judgement.objects.filter(assignment__item__project=project)
    assert votes.count() == 3 * round(len(records) * 2 / 3)
    assert {v.task for v in votes} == {Task.BEST_OF_N}
    right = votes.filter(choice="1").count() / votes.count()
    assert 0.6 < right < 0.95  # four in five on average

    assert (seeded.created, seeded.votes) == (len(records), votes.count())
    before = (items.count(), votes.count(), Assignment.objects.count())
    (again,) = seed(tmp_path)
    assert (again.created, again.votes) == (0, 0)
    assert (items.count(), votes.count(), Assignment.objects.count()) == before


def test_an_annotator_sees_four_responses_on_the_demo_projects_compare_page(client, tmp_path):
    seed(tmp_path)
    client.force_login(User.objects.get(username="annotator1"))
    response = client.post(reverse("work_start", args=["demo-bo4"]), follow=True)
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-task="best_of_n"' in html
    item = Assignment.objects.get(annotator__username="annotator1", submitted_at=None).item
    for part in parts_by_slot(item, html=False).values():
        assert part[0].text.split("\n")[0][:30] in html
