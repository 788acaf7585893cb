"""The agreement dashboard of ranking and best-of-N projects (issue 33,
deliverable 3): every figure is the pure modules' result on the same
canonical rankings, the intervals the background refresh's, and position
bias is read from the displayed order alone (one annotator who always puts
the response shown first on top is flagged after Benjamini-Hochberg)."""

import random

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotate.models import Task
from curation.agreement import ranked_report, ranking, reports
from curation.agreement.ranking_bootstrap import ranking_intervals
from curation.agreement.ranking_diagnostics import pick_position_bias, ranking_position_bias
from curation.models import AgreementCache
from tests.curation.verdicts.ranked_factories import (
    pick_vote,
    rank_vote,
    ranked_item,
    ranked_project,
)
from tests.factories import make_member

pytestmark = pytest.mark.django_db

N_ITEMS = 24


def _competition(scores):
    """Ranks 1 = best from scores (higher better), ties sharing the better rank."""
    return tuple(1 + sum(other > s for other in scores) for s in scores)


@pytest.fixture
def ranked_votes():
    """24 four-response items ranked by three annotators; the first always
    ranks the response displayed first as best (a position bias), the others
    follow a shared preference with noise (and the odd tie)."""
    rng = random.Random(7)
    project = ranked_project(team=3, slug="rk")
    biased, *others = project.team
    for user, name in zip(project.team, ("ann-a", "ann-b", "ann-c"), strict=True):
        user.memberships.filter(project=project).update(pseudonym=name)
    expected = []
    for _ in range(N_ITEMS):
        item = ranked_item(project)
        truth = [rng.random() for _ in range(4)]
        for user in (biased, *others):
            order = "".join(rng.sample("1234", 4))
            if user == biased:
                scores = [-order.index(str(s)) for s in range(1, 5)]
            else:
                scores = [round(t + rng.gauss(0, 0.3), 1) for t in truth]
            ranks = _competition(scores)
            rank_vote(item, ranks, user=user, order=order, decide=False)
            expected.append(
                ranking.Ranking(item.pk, user.pk, ranks, shown=[int(c) - 1 for c in order])
            )
    return project, biased, ranking.RankTable.of(expected)


def test_the_figures_are_the_pure_modules_results(ranked_votes):
    project, biased, table = ranked_votes
    report = ranked_report.build(project, cached=None, from_json=reports.from_json)
    point = ranking.ranking_reliability(table)
    figures = {f.key: f.value for f in report.figures}
    assert figures == {
        "pairwise_alpha": point.pairwise_alpha,
        "ordinal_alpha": point.ordinal_alpha,
        "mean_w": point.mean_w,
        "mean_tau_b": point.mean_tau_b,
    }
    assert all(isinstance(v, float) for v in figures.values())
    assert (report.n_items, report.n_judgements) == (N_ITEMS, 3 * N_ITEMS)
    bias = {row.bias.annotator: row.bias for row in report.bias}
    assert bias == {b.annotator: b for b in ranking_position_bias(table)}
    assert bias[biased.pk].flagged and bias[biased.pk].observed == (N_ITEMS, 0, 0, 0)
    assert [b.flagged for a, b in bias.items() if a != biased.pk] == [False, False]


def test_the_intervals_are_the_refreshs_and_the_page_shows_them(client, ranked_votes):
    project, _, table = ranked_votes
    reports.refresh_cache(project=project)
    cached = AgreementCache.objects.get(project=project).payload["ranked_ci"]
    expected = ranking_intervals(
        table, n_resamples=reports.BOOTSTRAP_RESAMPLES, seed=reports.bootstrap_seed(project)
    )
    assert cached["n"] == 3 * N_ITEMS
    for name, interval in expected.items():
        assert reports.from_json(cached["ci"][name]) == interval
    client.force_login(make_member(project, role="curator"))
    url = reverse("agreement", args=[project.slug])
    client.get(url)
    with CaptureQueriesContext(connection) as queries:
        page = client.get(url)
    assert page.status_code == 200
    # session, user, membership, cache, judgements, ranks, pseudonyms, stuck,
    # the group figure (issue 34: one aggregate, curation.agreement.groups)
    assert len(queries) == 10, [q["sql"] for q in queries]
    html = page.content.decode()
    point = ranking.ranking_reliability(table)
    for name in ("pairwise_alpha", "ordinal_alpha", "mean_w", "mean_tau_b"):
        row = html.split(f'data-key="{name}"')[1].split("</tr>")[0]
        assert f"{getattr(point, name):.3f}" in row
        assert f"[{expected[name].low:.3f}, {expected[name].high:.3f}]" in row
    bias_table = html.split('id="position-bias"')[1].split("</table>")[0]
    flagged_row = bias_table.split("ann-a")[1].split("</tr>")[0]
    assert "position bias" in flagged_row
    assert "position bias</strong>" not in bias_table.split("ann-b")[1].split("</tr>")[0]


def test_best_of_n_picks_get_pick_alpha_and_position_bias():
    rng = random.Random(3)
    project = ranked_project(task=Task.BEST_OF_N, team=2, slug="bon")
    picks = []
    users = list(project.team)
    for _ in range(10):
        item = ranked_item(project)
        for user in users:
            order = "".join(rng.sample("1234", 4))
            choice = rng.choice(["1", "2", "3", "4", "none"])
            pick_vote(item, choice, user=user, order=order, decide=False)
            picks.append(
                ranking.Pick(
                    item.pk,
                    user.pk,
                    None if choice == "none" else int(choice) - 1,
                    4,
                    shown=[int(c) - 1 for c in order],
                )
            )
    table = ranking.PickTable.of(picks)
    report = ranked_report.build(project, cached=None, from_json=reports.from_json)
    assert {f.key: f.value for f in report.figures} == {"pick_alpha": ranking.pick_alpha(table)}
    assert [r.bias for r in report.bias] == sorted(
        pick_position_bias(table), key=lambda b: [u.pk for u in users].index(b.annotator)
    )


def test_a_pairwise_project_keeps_its_dashboard(client):
    from tests.factories import make_project

    project = make_project(slug="pairs")
    client.force_login(make_member(project, role="curator"))
    html = client.get(reverse("agreement", args=[project.slug])).content.decode()
    assert "By domain" in html and "Position bias" not in html
