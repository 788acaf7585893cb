"""Project judge runs (issue 36 item 3) join the label-error audit as extra
labellers: one CROWDLAB/Dawid-Skene column per run, its label the side it
picked in both orders; never counted as votes."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from curation.models import ItemQuality, JudgeRun, JudgeVote, LabelQualityRun, Release
from curation.quality.label_quality import analyse
from curation.quality.service import (
    LabelQualityError,
    compute_label_quality,
    current_votes,
    judge_labels,
    request_label_quality,
)
from tests.curation.quality.conftest import needs_quality_extra
from tests.curation.quality.test_label_quality_job import N_ITEMS, PLANTED, make_world
from tests.factories import make_member

pytestmark = [
    pytest.mark.django_db,
    needs_quality_extra,
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]


def make_project_run(project, name):
    """A finished judge run over the project's items."""
    return JudgeRun.objects.create(
        project=project,
        name=name,
        base_url="http://127.0.0.1:1/v1",
        model="m",
        max_tokens=16,
        timeout_seconds=1,
        swapped=True,
        status="complete",
    )


def add_votes(run, items, picks):
    """picks(n) -> (original, swapped) choice of the n-th item."""
    rows = []
    for n, item in enumerate(items):
        for order, choice in zip(("original", "swapped"), picks(n), strict=True):
            rows.append(JudgeVote(run=run, item=item, order=order, choice=choice))
    JudgeVote.objects.bulk_create(rows)


def truth(n):
    return "1" if n % 2 == 0 else "2"


@pytest.fixture
def world():
    project, _entries, items, team = make_world(judges=0)
    right = make_project_run(project, "right judge")
    add_votes(right, items, lambda n: (truth(n), truth(n)))
    # Always the first response shown: its two orders never agree.
    biased = make_project_run(project, "biased judge")
    add_votes(biased, items, lambda n: ("1", "2"))
    return project, items, team, right, biased


def planted_quality(project, items):
    rows = dict(ItemQuality.objects.filter(project=project).values_list("item_id", "label_quality"))
    return [rows[items[n].pk] for n in PLANTED]


def test_a_judge_run_labels_items_where_its_two_orders_agree(world):
    project, items, _team, right, biased = world
    labels = sorted(judge_labels(project, [right.pk, biased.pk]))
    assert labels == sorted((item.pk, -right.pk, truth(n)) for n, item in enumerate(items))


def test_the_audit_takes_the_judges_as_labellers_and_not_as_votes(world):
    project, items, team, right, biased = world
    request_label_quality(project=project, evaluations=[])
    compute_label_quality(project_id=project.pk)
    without = planted_quality(project, items)
    assert request_label_quality(project=project, evaluations=[], judge_runs=[right.pk, biased.pk])
    compute_label_quality(project_id=project.pk)
    run = LabelQualityRun.objects.get(project=project)
    assert run.judge_runs == sorted([right.pk, biased.pk])
    payload = run.payload
    assert set(payload["annotators"]) == {str(u.pk) for u in team}
    assert set(payload["judges"]) == {"right judge"}  # the biased one gave no label
    assert payload["judges"]["right judge"]["n_labels"] == N_ITEMS
    assert payload["n_votes"] == 3 * N_ITEMS  # human votes only
    for row in ItemQuality.objects.filter(project=project):
        assert row.n1 + row.n2 + row.n_tie == 3
    # A judge that contradicts the unanimous wrong labels makes them less trusted.
    with_judge = planted_quality(project, items)
    assert all(w < o for w, o in zip(with_judge, without, strict=True))
    # The stored result is the analysis of the same votes and labels.
    expected = analyse(
        list(current_votes(project)), {}, list(judge_labels(project, [right.pk, biased.pk]))
    )
    stored = dict(
        ItemQuality.objects.filter(project=project).values_list("item_id", "consensus_quality")
    )
    for e in expected.items:
        assert stored[e.item] == pytest.approx(e.consensus_quality, abs=1e-9)


def test_labellers_on_items_without_votes_or_with_a_tie_are_left_out():
    votes = [(1, 10, "1"), (1, 11, "1"), (2, 10, "2"), (2, 11, "2")]
    result = analyse(votes, {}, [(1, -5, "2"), (3, -5, "1"), (2, -5, "tie")])
    assert {r.item for r in result.items} == {1, 2}
    assert result.n_votes == 4
    assert {(r.item, r.n1, r.n2) for r in result.items} == {(1, 2, 0), (2, 0, 2)}
    assert {a.annotator: a.n_labels for a in result.annotators}[-5] == 1


def test_only_this_projects_own_judge_runs_may_label(world):
    project, _items, _team, right, _biased = world
    release = Release.objects.create(project=project, version="v-judge")
    on_release = JudgeRun.objects.create(
        release=release,
        name="r",
        base_url="http://x/v1",
        model="m",
        max_tokens=1,
        timeout_seconds=1,
    )
    with pytest.raises(LabelQualityError, match="No such judge runs"):
        request_label_quality(project=project, evaluations=[], judge_runs=[on_release.pk])
    with pytest.raises(LabelQualityError, match="No such judge runs"):
        request_label_quality(project=project, evaluations=[], judge_runs=[right.pk + 999])


def test_curators_pick_the_judges_on_the_page_and_in_the_api(world, client):
    project, _items, _team, right, _biased = world
    curator = make_member(project, role="curator")
    client.force_login(curator)
    page = client.get(reverse("label_quality", args=[project.slug])).content.decode()
    assert "Judges as labellers" in page and "right judge" in page
    client.post(reverse("label_quality_refresh", args=[project.slug]), {"judges": [right.pk]})
    assert LabelQualityRun.objects.get(project=project).judge_runs == [right.pk]
    LabelQualityRun.objects.filter(project=project).update(status="ready")
    api = APIClient()
    api.force_authenticate(curator)
    url = f"/api/v1/projects/{project.slug}/label-quality/refresh/"
    response = api.post(url, {"evaluations": [], "judge_runs": []}, format="json")
    assert response.status_code == 202 and response.json()["judge_runs"] == []
