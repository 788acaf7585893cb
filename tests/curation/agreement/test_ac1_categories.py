"""Issue 30: Gwet's AC1 counts the categories the project's scale can
produce: choices 1 / 2 / tie where a tie is possible (A/B allowing ties,
graded7), 1 / 2 where it is not (A/B without ties, graded6 collapsed), so a
six-point project's AC1 no longer counts a "tie" nobody could give.

The reference is an independent implementation, the irrCAC package
(Gwet's own formulas; `CAC(ratings, categories=...).gwet()`), on a
subjects x raters table built here from the raw votes, to 1e-9."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from django.urls import reverse

from annotate.loop import rules, scales
from annotate.loop.service import claim_next_item, submit_judgement
from annotate.models import Judgement
from curation.agreement import reports
from curation.agreement import stats as agreement
from tests.api.test_annotation_api import token_client
from tests.factories import make_item, make_member, make_project

irr = pytest.importorskip("irrCAC.raw", reason="irrCAC is installed by `make install`")
pd = pytest.importorskip("pandas")


def irr_ac1(rows, categories) -> float:
    """irrCAC's AC1 of (annotator, item, choice) rows: a subjects x raters
    table, NaN where a rater did not vote, every possible category listed
    (digits=15: irrCAC rounds its results to `digits`)."""
    raters = sorted({a for a, _, _ in rows})
    items = sorted({i for _, i, _ in rows})
    table = pd.DataFrame(np.nan, index=items, columns=raters, dtype=object)
    for a, i, choice in rows:
        table.loc[i, a] = choice
    result = irr.CAC(table, categories=list(categories), digits=15).gwet()
    return float(result["est"]["coefficient_value"])


def simulated(kind: str, seed: int, n_items: int = 60) -> list[tuple[int, int, str]]:
    """(annotator, item, collapsed choice): each item leans one way, 1 to 5
    of 7 annotators vote on it (single votes included), noise elsewhere."""
    rng = random.Random(seed)
    if kind == "ab_ties":
        values = ["1", "2", "tie"]
    elif kind == "ab_no_ties":
        values = ["1", "2"]
    else:  # graded6 / graded7: the scale's points, collapsed to their sign
        values = [scales.choice_of(s) for s in scales.POINTS[kind]]
    rows = []
    for item in range(n_items):
        lean = rng.choice(values)
        for annotator in rng.sample(range(7), rng.randint(1, 5)):
            rows.append((annotator, item, lean if rng.random() < 0.7 else rng.choice(values)))
    return rows


# (data, whether the scale has a tie, AC1's categories)
CASES = [
    ("ab_ties", True, ("1", "2", "tie")),
    ("ab_no_ties", False, ("1", "2")),
    ("graded6", False, ("1", "2")),
    ("graded7", True, ("1", "2", "tie")),
]


def votes_of(rows) -> list[agreement.Vote]:
    return [agreement.Vote(item=i, annotator=a, choice=c) for a, i, c in rows]


def patterns_of(rows) -> tuple[np.ndarray, np.ndarray]:
    """Distinct count rows (1, 2, tie) and how many items share each."""
    per_item: dict[int, Counter] = {}
    for _, i, c in rows:
        per_item.setdefault(i, Counter())[c] += 1
    shared = Counter(tuple(counts[c] for c in agreement.CHOICES) for counts in per_item.values())
    return np.array(list(shared)), np.array(list(shared.values()))


@pytest.mark.reference
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(("kind", "offers_tie", "categories"), CASES)
def test_ac1_equals_irrcac_with_the_scales_categories(kind, offers_tie, categories, seed):
    rows = simulated(kind, seed)
    assert agreement.choice_categories(offers_tie=offers_tie) == categories
    expected = irr_ac1(rows, categories)
    summary = agreement.summarise(votes_of(rows), offers_tie=offers_tie)
    assert summary.choice.ac1 == pytest.approx(expected, abs=1e-9)
    # The dashboard's path: the items' tally patterns, each weighted by its items.
    patterns, units = patterns_of(rows)
    weighted = agreement.reliability_of_patterns(
        patterns, units, agreement.CHOICES, producible=categories
    )
    assert weighted.ac1 == pytest.approx(expected, abs=1e-9)
    counts = agreement.choice_matrix(votes_of(rows))[1]
    got = agreement.gwet_ac1(counts, agreement.CHOICES, producible=categories)
    assert got == pytest.approx(expected, abs=1e-9)


@pytest.mark.reference
def test_a_scale_without_ties_no_longer_counts_a_third_category():
    rows = simulated("graded6", 7)
    honest = agreement.summarise(votes_of(rows), offers_tie=False).choice.ac1
    inflated = irr_ac1(rows, ("1", "2", "tie"))
    assert honest == pytest.approx(irr_ac1(rows, ("1", "2")), abs=1e-9)
    assert inflated - honest > 0.01  # what counting the impossible tie added


@pytest.mark.reference
def test_a_tie_possible_but_never_voted_still_counts():
    rows = [r for r in simulated("graded7", 3) if r[2] != "tie"]
    got = agreement.summarise(votes_of(rows), offers_tie=True).choice.ac1
    assert got == pytest.approx(irr_ac1(rows, ("1", "2", "tie")), abs=1e-9)


@pytest.mark.reference
def test_ties_voted_before_the_project_stopped_allowing_them_count():
    """A/B projects can switch ties off after some were given: a column that
    holds votes was a possible category, so q includes it."""
    rows = simulated("ab_ties", 4)
    assert any(c == "tie" for _, _, c in rows)
    got = agreement.summarise(votes_of(rows), offers_tie=False).choice.ac1
    assert got == pytest.approx(irr_ac1(rows, ("1", "2", "tie")), abs=1e-9)


def test_correctness_keeps_its_three_labels_and_bad_categories_are_refused():
    counts = np.array([[2, 0, 0], [1, 1, 0], [0, 2, 0]])
    assert agreement.gwet_ac1(counts) == agreement.gwet_ac1(
        counts, agreement.LABELS, producible=agreement.LABELS
    )
    with pytest.raises(ValueError, match="not among the columns"):
        agreement.reliability(counts, agreement.CHOICES, producible=("1", "2", "draw"))


# --- On the dashboard and the API ---------------------------------------------------------


def graded6_project(seed=11):
    """A graded6 project voted through the service, each annotator seeing the
    order the server chose."""
    rng = random.Random(seed)
    project = make_project(preference_scale="graded6", votes_per_item=3, escalation_votes=0)
    pref = project.domains.get(slug="general_preference")
    for _ in range(20):
        make_item(project, domain=pref)
    for i in range(4):
        user = make_member(project, pseudonym=f"G{i}")
        while (a := claim_next_item(project=project, annotator=user)) is not None:
            lean = 2 if a.item_id % 3 else -1  # each item leans one way (canonical)
            strength = lean if rng.random() < 0.7 else rng.choice(scales.POINTS["graded6"])
            # Given as the annotator would, oriented to the left response.
            shown = rules.canonical_strength(strength, swapped=a.shown_swapped)
            vote = rules.canonical_vote(rules.DisplayedVote(strength=shown), order=a.display_order)
            submit_judgement(assignment_id=a.pk, annotator=user, vote=vote)
    return project


@pytest.mark.reference
@pytest.mark.django_db
def test_a_graded6_dashboard_and_api_show_ac1_over_two_categories(client):
    project = graded6_project()
    rows = list(
        Judgement.objects.filter(is_current=True).values_list(
            "assignment__annotator_id", "assignment__item_id", "choice"
        )
    )
    assert {c for _, _, c in rows} == {"1", "2"}
    expected = irr_ac1(rows, ("1", "2"))
    before = irr_ac1(rows, ("1", "2", "tie"))  # what the dashboard showed until issue 30
    assert before - expected > 0.01
    report = reports.build_report(project)
    total = next(d for d in report.domains if d.key == reports.ALL)
    assert total.summary.choice.ac1 == pytest.approx(expected, abs=1e-9)
    curator = make_member(project, role="curator")
    body = token_client(curator).get(f"/api/v1/projects/{project.slug}/agreement/").json()
    overall = next(d for d in body["domains"] if d["domain"] == "all")
    assert overall["choice"]["ac1"]["value"] == pytest.approx(expected, abs=1e-9)
    client.force_login(curator)
    html = client.get(reverse("agreement", args=[project.slug])).content.decode()
    assert f"{expected:.3f}" in html
