"""The data grid's filters and sorts select and order exactly what a plain
reference does (every verdict of the project read with the ORM, filtered and
sorted in Python), on a random small dataset, through every way the grid
reads them: a page at a time (GridRows, as the page and the API read it),
all at once (grid_rows), the count, and the ids a bulk action takes
(matching). Runs on SQLite and PostgreSQL (each gets its own query shapes:
flags and searches are item_id = ANY(ARRAY(...)) on PostgreSQL only)."""

from __future__ import annotations

import random
import string

import pytest
from django.core.paginator import Paginator
from django.db import connection

from annotate.models import Judgement
from curation.grid.filters import (
    SORTS,
    GridRows,
    _flagged_items,
    among,
    grid_rows,
    matching,
    searched_items,
)
from curation.models import Verdict
from tests.factories import make_assignment, make_item, make_project

pytestmark = pytest.mark.django_db

WORDS = ["chart", "red", "axis", "cat", "label", "graph", "sum", "bar", "tree", "sky"]
STATES = [
    {"status": "needs_votes"},
    {"status": "agreed", "final_choice": "1", "provenance": "unanimous"},
    {"status": "agreed", "final_choice": "2", "provenance": "majority"},
    {"status": "contested", "contest_kind": "tie_majority"},
    {"status": "contested", "contest_kind": "problem"},
    {"status": "contested", "contest_kind": "split"},
    {"status": "resolved", "final_choice": "2", "provenance": "adjudicated"},
    {"status": "excluded", "exclusion_category": "broken"},
]


def random_project(rng: random.Random, n: int):
    """`n` items over the project's domains with random states, tallies,
    gold, prompts and problem flags (current and revised away)."""
    project = make_project(votes_per_item=3)
    domains = list(project.domains.all())
    for _ in range(n):
        external_id = "".join(rng.choices(string.ascii_lowercase + string.digits, k=6))
        item = make_item(
            project,
            domain=rng.choice(domains),
            external_id=external_id,
            prompt=" ".join(rng.choices(WORDS, k=4)),
            gold_choice=rng.choice(["", "", "", "1", "2"]),
            image=None,
            votes_1=rng.randint(0, 3),
            votes_2=rng.randint(0, 3),
            votes_tie=rng.choice([0, 0, 1]),
        )
        Verdict.objects.create(item=item, project=project, **rng.choice(STATES))
        flag = rng.random()
        if flag < 0.25:  # a current vote flags a problem
            a = make_assignment(item, status="submitted", submitted_at=item.created_at)
            Judgement.objects.create(
                assignment=a, choice="1", flagged_problem=True, problem_reason="blank"
            )
        elif flag < 0.35:  # a flag its annotator took back: not flagged
            a = make_assignment(item, status="submitted", submitted_at=item.created_at)
            Judgement.objects.create(
                assignment=a,
                choice="1",
                flagged_problem=True,
                problem_reason="blank",
                is_current=False,
            )
            Judgement.objects.create(assignment=a, choice="2", revision=2)
    return project


def reference(project, f: dict) -> list[int]:
    """The item ids `f` selects, in the grid's order: plain ORM reads,
    filtering and sorting in Python."""
    flagged = set(
        Judgement.objects.filter(
            flagged_problem=True, is_current=True, assignment__item__project=project
        ).values_list("assignment__item_id", flat=True)
    )
    rows = []
    for v in Verdict.objects.filter(project=project).select_related("item__domain"):
        item = v.item
        n = item.votes_1 + item.votes_2 + item.votes_tie
        share = max(item.votes_1, item.votes_2, item.votes_tie) / n if n else 0.0
        q = (f.get("q") or "").lower()
        keep = [
            not f.get("status") or v.status == f["status"],
            not f.get("kind") or v.contest_kind == f["kind"],
            not f.get("domain") or item.domain.slug == f["domain"],
            f.get("votes_min") is None or n >= f["votes_min"],
            f.get("votes_max") is None or n <= f["votes_max"],
            f.get("agreement_min") is None or share >= f["agreement_min"],
            f.get("agreement_max") is None or share <= f["agreement_max"],
            f.get("flagged") != "yes" or v.item_id in flagged,
            f.get("flagged") != "no" or v.item_id not in flagged,
            f.get("gold") != "yes" or item.gold_choice != "",
            f.get("gold") != "no" or item.gold_choice == "",
            not q or q in item.external_id.lower() or q in item.prompt.lower(),
        ]
        if all(keep):
            rows.append((v, n, share))
    sort = f.get("sort") or "id"
    key = {
        "id": lambda r: (r[0].item_id,),
        "external_id": lambda r: (r[0].item.external_id, r[0].item_id),
        "votes": lambda r: (r[1], r[0].item_id),
        "agreement": lambda r: (r[2], r[0].item_id),
        "updated": lambda r: (r[0].updated_at, r[0].item_id),
        "status": lambda r: (r[0].status, r[0].item_id),
    }[sort.lstrip("-")]
    rows.sort(key=key, reverse=sort.startswith("-"))
    return [v.item_id for v, _, _ in rows]


def random_filter(rng: random.Random) -> dict:
    f: dict = {"sort": rng.choice(list(SORTS))}
    # Each filter in about one case in four, so that most cases select something.
    maybe = lambda values: rng.choice(values) if rng.random() < 0.25 else None  # noqa: E731
    f["status"] = maybe(["needs_votes", "agreed", "contested", "resolved", "excluded"])
    f["kind"] = maybe(["tie_majority", "problem"])
    f["domain"] = maybe(["vqa", "reasoning", "safety"])
    f["votes_min"] = maybe([1, 3, 5])
    f["votes_max"] = maybe([2, 4])
    f["agreement_min"] = maybe([0.5, 2 / 3, 0.8])
    f["agreement_max"] = maybe([0.5, 0.7, 1.0])
    f["flagged"] = maybe(["yes", "no"])
    f["gold"] = maybe(["yes", "no"])
    f["q"] = maybe(["chart", "a", "RED AX", "7"])
    return {k: v for k, v in f.items() if v is not None}


def test_every_way_the_grid_reads_equals_the_reference():
    rng = random.Random(31)
    project = random_project(rng, 70)
    random_project(rng, 25)  # another project's items never show
    checked = 0
    filters = [{}, *({"sort": s} for s in SORTS), *(random_filter(rng) for _ in range(120))]
    for f in filters:
        expected = reference(project, f)
        assert [v.item_id for v in grid_rows(project, f)] == expected, f
        assert list(matching(project, f).values_list("item_id", flat=True)) == expected, f
        paginator = Paginator(GridRows(project, f), 7)
        assert paginator.count == len(expected), f
        paged = [v.item_id for n in paginator.page_range for v in paginator.page(n).object_list]
        assert paged == expected, f
        checked += bool(expected)
    # The random filters are not all empty: most select something.
    assert checked > len(filters) // 2


def test_flags_and_searches_select_the_same_rows_in_both_forms():
    rng = random.Random(7)
    project = random_project(rng, 40)
    rows = Verdict.objects.filter(project=project).order_by("item_id")
    phrase = project.items.order_by("pk").first().prompt[3:12].upper()  # (across words)
    cases = [
        (_flagged_items(), {"flagged": "yes"}),
        (searched_items(project, "CHART"), {"q": "CHART"}),
        (searched_items(project, phrase), {"q": phrase}),
    ]
    forms = [False, True] if connection.vendor == "postgresql" else [False]  # (ANY is PostgreSQL's)
    for items, f in cases:
        expected = reference(project, f)
        assert expected, f
        for any_array in forms:
            selected = among(rows, items, any_array=any_array).values_list("item_id", flat=True)
            assert list(selected) == expected, (f, any_array)


def test_a_page_past_the_end_and_an_empty_match():
    project = random_project(random.Random(3), 5)
    assert GridRows(project, {"q": "no such words"})[0:50] == []
    assert GridRows(project, {})[50:100] == []
    with pytest.raises(TypeError):
        GridRows(project, {})[0]
