"""Issue 24, graded preference: Krippendorff's alpha of graded votes at the
ordinal and interval levels (curation.agreement.graded), on the dashboard
and in the API beside the binary collapse. Cross-checked against
krippendorff.alpha on a reliability matrix built here independently
(annotators x items, the MMRB2 value of each vote oriented to response 1,
NaN where an annotator did not vote), to 1e-9."""

import random

import krippendorff
import numpy as np
import pytest
from django.urls import reverse

from annotate.loop import rules, scales
from annotate.loop.service import claim_next_item, submit_judgement
from annotate.models import Assignment, Judgement
from curation.agreement import graded, reports
from curation.agreement.stats import Undefined
from tests.api.test_annotation_api import token_client
from tests.factories import make_item, make_member, make_project

pytestmark = pytest.mark.django_db


def reliability_matrix(rows, scale):
    """rows: (annotator, item, canonical strength). Annotators x items."""
    annotators = sorted({a for a, _, _ in rows})
    items = sorted({i for _, i, _ in rows})
    data = np.full((len(annotators), len(items)), np.nan)
    for a, i, s in rows:
        # The published number: graded6 6 = response 1 much better … 1 = response 2 much better.
        value = {3: 6, 2: 5, 1: 4, -1: 3, -2: 2, -3: 1}[s] if scale == "graded6" else s + 4
        data[annotators.index(a), items.index(i)] = value
    return data


@pytest.mark.parametrize("scale", ["graded6", "graded7"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ordinal_and_interval_alpha_equal_krippendorff_on_a_reliability_matrix(scale, seed):
    rng = random.Random(seed)
    points = scales.POINTS[scale]
    rows = []
    for item in range(40):
        lean = rng.choice(points)
        for annotator in rng.sample(range(6), rng.randint(1, 5)):
            s = lean if rng.random() < 0.6 else rng.choice(points)
            rows.append((annotator, item, s))
    r = graded.graded_reliability([(i, s) for _, i, s in rows], scale)
    data = reliability_matrix(rows, scale)
    domain = list(range(1, len(points) + 1))
    for level, got in (("ordinal", r.ordinal), ("interval", r.interval)):
        expected = krippendorff.alpha(
            reliability_data=data, value_domain=domain, level_of_measurement=level
        )
        assert got == pytest.approx(expected, abs=1e-9)
    assert r.n_values == len(rows)


def test_degenerate_graded_data_is_undefined_not_a_number():
    assert isinstance(graded.graded_reliability([], "graded6").ordinal, Undefined)
    one_each = graded.graded_reliability([(1, 3), (2, -1)], "graded6")
    assert isinstance(one_each.interval, Undefined) and one_each.n_pairable == 0
    same = graded.graded_reliability([(1, 2), (1, 2), (2, 2), (2, 2)], "graded6")
    assert "chance disagreement is zero" in same.ordinal.reason
    with pytest.raises(ValueError):
        graded.graded_alpha(np.zeros((1, 6)), "graded6", "ratio")


def graded_project(seed=5):
    """Votes given through the service, each annotator seeing its own random
    left/right order: the statistic must see only canonical strengths."""
    rng = random.Random(seed)
    project = make_project(preference_scale="graded6", votes_per_item=3, escalation_votes=0)
    pref = project.domains.get(slug="general_preference")
    for _ in range(15):
        make_item(project, domain=pref)
    annotators = [make_member(project, pseudonym=f"A{i}") for i in range(4)]
    for user in annotators:
        while (a := claim_next_item(project=project, annotator=user)) is not None:
            shown = rng.choice(scales.POINTS["graded6"])  # a point as displayed
            vote = rules.DisplayedVote(strength=shown)
            submit_judgement(assignment_id=a.pk, annotator=user, vote=vote)
    return project


def test_the_dashboard_and_api_show_ordinal_interval_and_binary_alpha(client):
    project = graded_project()
    rows = [
        (j.assignment.annotator_id, j.assignment.item_id, j.strength)
        for j in Judgement.objects.select_related("assignment")
    ]
    assert {a.shown_swapped for a in Assignment.objects.all()} == {False, True}
    data = reliability_matrix(rows, "graded6")
    expected = krippendorff.alpha(
        reliability_data=data, value_domain=range(1, 7), level_of_measurement="ordinal"
    )
    report = reports.build_report(project)
    total = next(g for g in report.graded if g.key == "all")
    assert total.reliability.ordinal == pytest.approx(expected, abs=1e-9)
    assert (
        total.binary_alpha == next(d for d in report.domains if d.key == "all").summary.choice.alpha
    )

    curator = make_member(project, role="curator")
    client.force_login(curator)
    html = client.get(reverse("agreement", args=[project.slug])).content.decode()
    for heading in ("ordinal", "interval", "binary collapse"):
        assert f"\N{GREEK SMALL LETTER ALPHA} {heading}" in html
    body = token_client(curator).get(f"/api/v1/projects/{project.slug}/agreement/").json()
    overall = next(d for d in body["domains"] if d["domain"] == "all")
    assert overall["graded"]["alpha_ordinal"]["value"] == pytest.approx(expected, abs=1e-9)
    assert overall["graded"]["scale"] == "graded6"
    assert overall["graded"]["alpha_binary"] == overall["choice"]["alpha"]


def test_an_ab_project_has_no_graded_figures(client):
    project = make_project()
    curator = make_member(project, role="curator")
    assert reports.build_report(project).graded == []
    body = token_client(curator).get(f"/api/v1/projects/{project.slug}/agreement/").json()
    assert all(d["graded"] is None for d in body["domains"])
