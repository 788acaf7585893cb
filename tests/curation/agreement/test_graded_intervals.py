"""Issue 30: ordinal and interval alpha of graded votes get item-bootstrap
95% intervals like nominal alpha, computed by the agreement dashboard's
background refresh, cached, and shown on the dashboard and in the API.
Each resample's alpha equals krippendorff.alpha on the resampled count
matrix to 1e-9; the interval is reproducible from the seed."""

import krippendorff
import numpy as np
import pytest
from django.urls import reverse

from annotate.models import Judgement
from curation.agreement import graded, reports
from curation.agreement.stats import Interval, Undefined
from curation.agreement.tasks import refresh_agreement
from tests.api.test_annotation_api import token_client
from tests.curation.agreement.test_graded_agreement import graded_project
from tests.factories import make_member


def random_counts(seed: int, points: int, units: int = 50) -> np.ndarray:
    rng = np.random.default_rng(seed)
    counts = np.zeros((units, points), dtype=np.int64)
    for row in counts:
        lean = rng.integers(points)
        for _ in range(rng.integers(1, 6)):
            row[lean if rng.random() < 0.6 else rng.integers(points)] += 1
    return counts


@pytest.mark.parametrize("scale,points", [("graded6", 6), ("graded7", 7)])
@pytest.mark.parametrize("level", ["ordinal", "interval"])
@pytest.mark.parametrize("seed", [0, 1])
def test_every_resample_is_krippendorffs_alpha_of_the_resampled_matrix(scale, points, level, seed):
    counts = random_counts(seed, points)
    alphas = graded.bootstrap_graded_alphas(counts, level, n_resamples=40, seed=seed)
    # The draw the docstring names: pairable rows in sorted order, resampled
    # with Generator(PCG64(seed)).integers(0, P, size=(n, P)).
    pairable = counts[counts.sum(axis=1) >= 2]
    pairable = pairable[np.lexsort(pairable.T[::-1])]
    draws = np.random.Generator(np.random.PCG64(seed)).integers(
        0, len(pairable), size=(40, len(pairable))
    )
    for got, rows in zip(alphas, draws, strict=True):
        expected = krippendorff.alpha(
            value_counts=pairable[rows],
            value_domain=list(range(1, points + 1)),
            level_of_measurement=level,
        )
        assert got == pytest.approx(expected, abs=1e-9)


def test_the_interval_is_reproducible_from_the_seed_and_ignores_row_order():
    counts = random_counts(3, 6, units=80)
    first = graded.bootstrap_graded_ci(counts, "graded6", "ordinal", seed=7)
    assert isinstance(first, Interval) and first.low < first.high
    assert graded.bootstrap_graded_ci(counts, "graded6", "ordinal", seed=7) == first
    shuffled = counts[np.random.default_rng(0).permutation(len(counts))]
    assert graded.bootstrap_graded_ci(shuffled, "graded6", "ordinal", seed=7) == first
    assert graded.bootstrap_graded_ci(counts, "graded6", "ordinal", seed=8) != first
    point = graded.graded_alpha(counts, "graded6", "ordinal")
    assert first.low <= point <= first.high


def test_data_without_a_defined_alpha_has_no_interval():
    single = np.array([[1, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 2]])
    assert (
        "chance disagreement is zero"
        in graded.bootstrap_graded_ci(single, "graded6", "interval").reason
    )
    assert isinstance(graded.bootstrap_graded_ci(np.zeros((0, 6)), "graded6", "ordinal"), Undefined)
    # One informative item: most resamples repeat it and have no variation.
    one = np.array([[1, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 0]])
    assert (
        "resamples have no variation"
        in graded.bootstrap_graded_ci(one, "graded6", "ordinal").reason
    )


@pytest.mark.django_db
def test_the_background_refresh_puts_graded_intervals_on_the_dashboard_and_api(client):
    project = graded_project()
    curator = make_member(project, role="curator")
    api = token_client(curator)
    url = f"/api/v1/projects/{project.slug}/agreement/"
    before = next(d for d in api.get(url).json()["domains"] if d["domain"] == "all")
    assert before["graded"]["alpha_ordinal_ci95"] is None  # not computed yet

    refresh_agreement(project.pk)  # the Celery task, run inline

    votes = Judgement.objects.filter(strength__isnull=False).values_list(
        "assignment__item_id", "strength"
    )
    _, counts = graded.value_matrix(list(votes), "graded6")
    expected = {
        level: graded.bootstrap_graded_ci(
            counts,
            "graded6",
            level,
            n_resamples=reports.BOOTSTRAP_RESAMPLES,
            seed=reports.bootstrap_seed(project),
        )
        for level in ("ordinal", "interval")
    }
    assert all(isinstance(ci, Interval) for ci in expected.values())
    report = reports.build_report(project)
    total = next(g for g in report.graded if g.key == "all")
    domain = next(g for g in report.graded if g.key == "general_preference")
    assert total.ordinal_ci == domain.ordinal_ci == expected["ordinal"]
    assert total.interval_ci == expected["interval"]
    assert total.binary_ci == next(d for d in report.domains if d.key == "all").alpha_ci

    body = api.get(url).json()
    overall = next(d for d in body["domains"] if d["domain"] == "all")["graded"]
    for level in ("ordinal", "interval"):
        assert overall[f"alpha_{level}_ci95"]["low"] == pytest.approx(
            expected[level].low, abs=1e-12
        )
        assert overall[f"alpha_{level}_ci95"]["high"] == pytest.approx(
            expected[level].high, abs=1e-12
        )
    assert (
        overall["alpha_binary_ci95"]
        == next(d for d in body["domains"] if d["domain"] == "all")["choice"]["alpha_ci95"]
    )

    client.force_login(curator)
    html = client.get(reverse("agreement", args=[project.slug])).content.decode()
    graded_table = html.split('id="graded"', 1)[1].split("</table>", 1)[0]
    for ci in expected.values():
        assert f"[{ci.low:.3f}, {ci.high:.3f}]" in graded_table
