"""Issue 30, deliverable A: a label audit for every scale. MMRB2 entries join
the audit; graded votes enter with their strength (CROWDLAB with a column per
annotator and strength level); the queue's view "unanimous, but the models
disagree" (page and API); the proof on a simulated graded world."""

from __future__ import annotations

import json
import statistics

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.test import APIClient

from annotate.loop import scales
from curation.models import (
    Evaluation,
    ItemPrediction,
    ItemQuality,
    LabelQualityRun,
    LabelQualityStatus,
    Release,
    Verdict,
)
from curation.quality.service import compute_label_quality, request_label_quality
from tests.curation.quality.conftest import needs_quality_extra
from tests.factories import make_assignment, make_item, make_judgement, make_member, make_project

pytestmark = [needs_quality_extra, pytest.mark.filterwarnings("ignore::DeprecationWarning")]


# --- The pure model -----------------------------------------------------------------------


def test_graded_analysis_equals_cleanlab_on_annotator_strength_columns():
    """With strengths, our wrapper is CROWDLAB on a matrix with a column per
    (annotator, strength level): equal to cleanlab called directly (1e-9)."""
    import pandas as pd
    from cleanlab.multiannotator import get_label_quality_multiannotator

    from curation.quality.label_quality import analyse
    from curation.quality.simulation import make_graded_world

    world = make_graded_world(n_items=300, seed=7)
    ours = analyse(world.votes, world.model_p1)
    columns = sorted({a * 10 + abs(s) for _, a, _, s in world.votes})
    matrix = np.full((300, len(columns)), np.nan)
    for item, a, choice, s in world.votes:
        matrix[item, columns.index(a * 10 + abs(s))] = 0 if choice == "1" else 1
    p1 = np.clip(np.array([world.model_p1[i] for i in range(300)], dtype=float), 1e-6, 1 - 1e-6)
    ref = get_label_quality_multiannotator(
        pd.DataFrame(matrix, columns=columns), np.column_stack([p1, 1 - p1]), verbose=False
    )
    lq = ref["label_quality"]
    assert ours.graded
    assert [r.consensus for r in ours.items] == [
        "1" if c == 0 else "2" for c in lq["consensus_label"]
    ]
    np.testing.assert_allclose(
        [r.consensus_quality for r in ours.items], lq["consensus_quality_score"], atol=1e-9
    )
    # An annotator's quality: the label-weighted mean over their columns.
    stats = ref["annotator_stats"]
    for a in ours.annotators:
        cols = [c for c in columns if c // 10 == a.annotator]
        n = stats.loc[cols, "num_examples_labeled"]
        expected = float((stats.loc[cols, "annotator_quality"] * n).sum() / n.sum())
        assert a.quality == pytest.approx(expected, abs=1e-9)
        assert a.n_labels == int(n.sum())


def test_strength_changes_the_ranking_where_votes_alone_cannot():
    """[3, 6, 6] and [2, 6, 6] on MMRB2's scale are the same 2-1 split; with
    strengths the weaker dissent leaves its label better trusted."""
    from curation.quality.label_quality import analyse
    from curation.quality.simulation import make_graded_world

    world = make_graded_world(n_items=300, seed=3)
    n = 300
    extra = []
    for item, value in ((n, 3), (n + 1, 2)):  # graded6 points of annotator 4's dissent
        for annotator, point in ((0, 6), (1, 6), (4, value)):
            strength = scales.strength_of_value(point, scales.GRADED6)
            extra.append((item, annotator, scales.choice_of(strength), strength))
    model = {**world.model_p1, n: 0.6, n + 1: 0.6}
    graded = {r.item: r for r in analyse(world.votes + extra, model).items}
    collapsed = {r.item: r for r in analyse([v[:3] for v in world.votes + extra], model).items}
    assert collapsed[n].consensus_quality == pytest.approx(collapsed[n + 1].consensus_quality)
    assert graded[n].consensus_quality != pytest.approx(graded[n + 1].consensus_quality)
    assert graded[n].mean_strength == pytest.approx((3 + 3 - 1) / 3)
    assert graded[n + 1].mean_strength == pytest.approx((3 + 3 - 2) / 3)


def test_average_precision_equals_sklearn():
    from sklearn.metrics import average_precision_score

    from curation.quality.label_quality import average_precision

    rng = np.random.default_rng(1)
    ranking = list(rng.permutation(200))
    errors = {int(i) for i in rng.choice(200, size=37, replace=False)}
    truth = [1 if i in errors else 0 for i in ranking]
    scores = list(range(len(ranking), 0, -1))  # a strict ranking, top first
    assert average_precision(ranking, errors) == pytest.approx(
        average_precision_score(truth, scores), abs=1e-9
    )


@pytest.fixture(scope="module")
def graded_outcomes():
    from curation.quality.simulation import evaluate_graded, make_graded_world

    return [evaluate_graded(make_graded_world(n_items=400, seed=s)) for s in range(5)]


@pytest.mark.reference
def test_strength_raises_average_precision_and_lifts_unanimous_wrong_labels(graded_outcomes):
    before = statistics.fmean(o.before.average_precision for o in graded_outcomes)
    after = statistics.fmean(o.after.average_precision for o in graded_outcomes)
    assert after > before + 0.005, (before, after)
    for o in graded_outcomes:
        assert o.n_unanimous_errors >= 5  # the world has unanimous wrong labels to find
        assert statistics.median(o.after.unanimous_ranks) < statistics.median(
            o.before.unanimous_ranks
        )


@pytest.mark.reference
def test_unanimous_view_puts_unanimous_wrong_labels_near_the_top(graded_outcomes):
    for o in graded_outcomes:
        assert o.view.unanimous_ranks, "no unanimous wrong label in the view"
        assert statistics.median(o.view.unanimous_ranks) < statistics.median(
            o.after.unanimous_ranks
        )
        assert o.view.unanimous_in_top >= o.after.unanimous_in_top


# --- MMRB2 entries join the audit ---------------------------------------------------------


def _vote_all(project, team, strength_of=None):
    """Three votes per item on the side its verdict says."""
    for verdict in Verdict.objects.filter(project=project).select_related("item"):
        for k, who in enumerate(team):
            strength = strength_of(verdict.final_choice, k) if strength_of else None
            make_judgement(
                make_assignment(verdict.item, who), verdict.final_choice, strength=strength
            )


@pytest.mark.django_db
def test_an_mmrb2_entry_joins_the_audit_with_both_orders(tmp_path, client):
    from curation.evaluation.service import evaluate_upload
    from tests.curation.evaluation.test_mmrb2_evaluation import (
        EDIT,
        MINDCUBE,
        PREDICTIONS,
        T2I_1,
        T2I_2,
        VSTAR,
        mmrb2_release,
    )

    release = mmrb2_release(tmp_path)
    project = release.project
    team = [make_member(project) for _ in range(3)]
    _vote_all(project, team)
    entry = evaluate_upload(
        release=release,
        name="judge-mm",
        predictions=json.dumps(PREDICTIONS).encode(),
        filename="preds.json",
    )
    assert entry.scoring == "mmrb2"
    rows = {r.external_id: r for r in ItemPrediction.objects.filter(evaluation=entry)}
    # Forward "A" picks response 1 (response_a); the reverse run's "A" picks response 2.
    assert (rows[T2I_1].choice, rows[T2I_1].swapped_choice) == ("2", "2")
    assert rows[T2I_1].p1 == pytest.approx(1 / 6) and rows[T2I_1].correct
    assert (rows[T2I_2].choice, rows[T2I_2].swapped_choice, rows[T2I_2].p1) == ("1", "", 0.75)
    assert rows[EDIT].p1 is None and not rows[EDIT].correct  # "tie" and "b": no pick
    assert (rows[MINDCUBE].choice, rows[MINDCUBE].swapped_choice) == ("", "1")
    assert rows[VSTAR].p1 == 0.75 and not rows[VSTAR].correct
    assert "isg_3" not in rows  # missing from the predictions
    # The drill-down lists them, filtered by task.
    client.force_login(make_member(project, role="curator"))
    page = client.get(
        reverse("entry_items", args=[project.slug, release.pk, entry.pk]),
        {"show": "all", "category": "t2i"},
    )
    assert page.status_code == 200 and page.context["categories"][0] == "t2i"
    assert {r.external_id for r in page.context["page"].object_list} == {T2I_1, T2I_2}

    # An entry scored before per-item rows were kept gets them when it joins.
    ItemPrediction.objects.filter(evaluation=entry).delete()
    assert request_label_quality(project=project, evaluations=[entry.pk])
    assert ItemPrediction.objects.filter(evaluation=entry).count() == len(rows)
    assert compute_label_quality(project_id=project.pk) == LabelQualityStatus.READY
    run = LabelQualityRun.objects.get(project=project)
    assert run.payload["entries"] == ["judge-mm"] and run.payload["n_with_model"] == 4
    quality = {q.item.external_id: q for q in ItemQuality.objects.select_related("item")}
    assert quality[T2I_1].model_p1 == pytest.approx(1 / 6)
    assert quality[VSTAR].models_against == pytest.approx(0.75)  # the label is B
    assert quality[VSTAR].unanimous

    # A file that cannot be read again is a clear refusal, not a crash.
    from django.core.files.storage import default_storage

    from curation.quality.service import LabelQualityError

    ItemPrediction.objects.filter(evaluation=entry).delete()
    default_storage.delete(entry.predictions)
    with pytest.raises(LabelQualityError, match="judge-mm: its predictions file"):
        request_label_quality(project=project, evaluations=[entry.pk])


# --- Graded votes through the job, and the view -------------------------------------------


def graded_project(n_items=30):
    """A graded project whose items 0..2 are unanimous wrong labels the model
    contradicts, with weak votes; the rest agree with the model strongly."""
    project = make_project(slug="graded", preference_scale=scales.GRADED6)
    domain = project.domains.get(slug="general_preference")
    team = [make_member(project) for _ in range(4)]
    release = Release.objects.create(project=project, version="v1")
    entry = Evaluation.objects.create(release=release, name="rm", predictions="p")
    items = []
    for n in range(n_items):
        item = make_item(project, domain=domain, external_id=f"g{n}")
        label = "1" if n % 2 == 0 else "2"
        sign = 1 if label == "1" else -1
        for k in range(3):
            who = team[(n + k) % 4]
            strength = sign * (1 if n < 3 else 3 - (k == 2 and n % 5 == 0))
            make_judgement(make_assignment(item, who), label, strength=strength)
        Verdict.objects.create(
            item=item, project=project, status="agreed", final_choice=label, provenance="unanimous"
        )
        truth_p1 = 0.9 if label == "1" else 0.1
        ItemPrediction.objects.create(
            evaluation=entry, item=item, external_id=item.external_id, category="c",
            sub_bucket="c", chosen=label, choice=label, correct=True,
            p1=1 - truth_p1 if n < 3 else truth_p1,
        )  # fmt: skip
        items.append(item)
    request_label_quality(project=project, evaluations=[entry.pk])
    compute_label_quality(project_id=project.pk)
    return project, items


@pytest.mark.django_db
def test_job_passes_strengths_and_stores_the_view_fields():
    from curation.quality.label_quality import analyse
    from curation.quality.service import GRADED_MODEL, current_votes, ensemble_probabilities

    project, items = graded_project()
    run = LabelQualityRun.objects.get(project=project)
    assert run.payload["graded"] and run.payload["model"] == GRADED_MODEL
    votes = list(current_votes(project))
    assert all(v[3] is not None for v in votes)
    expected = {
        r.item: r for r in analyse(votes, ensemble_probabilities(project, run.evaluations)).items
    }
    for q in ItemQuality.objects.filter(project=project):
        e = expected[q.item_id]
        assert q.consensus_quality == pytest.approx(e.consensus_quality, abs=1e-9)
        assert q.mean_strength == pytest.approx(e.mean_strength)
        assert q.unanimous
    planted = ItemQuality.objects.get(item=items[0])
    assert planted.models_against == pytest.approx(0.9) and planted.mean_strength == 1


@pytest.mark.django_db
def test_unanimous_view_lists_what_the_models_contradict_most_confidently_first(client):
    project, items = graded_project()
    ItemPrediction.objects.filter(item=items[1]).update(p1=0.7)  # label 2: 0.7 against
    compute_again(project)
    curator = make_member(project, role="curator")
    client.force_login(curator)
    url = reverse("label_quality", args=[project.slug])
    page = client.get(url, {"view": "unanimous"})
    assert page.status_code == 200
    listed = [q.item_id for q in page.context["page"].object_list]
    assert listed == [items[0].pk, items[2].pk, items[1].pk]
    assert b"Unanimous, but the models disagree" in page.content
    assert b"Models against the label" in page.content and b"Mean strength" in page.content

    api = APIClient()
    api.force_authenticate(curator)
    body = api.get(f"/api/v1/projects/{project.slug}/label-quality/suspects/?view=unanimous").json()
    assert [r["item_id"] for r in body["results"]] == listed
    assert body["results"][0]["models_against"] == pytest.approx(0.9)
    assert body["results"][0]["unanimous"] and body["results"][0]["mean_strength"] == 1
    assert (
        api.get(f"/api/v1/projects/{project.slug}/label-quality/suspects/?view=nope").status_code
        == 400
    )


def compute_again(project):
    run = LabelQualityRun.objects.get(project=project)
    request_label_quality(project=project, evaluations=run.evaluations)
    compute_label_quality(project_id=project.pk)


@pytest.mark.django_db
def test_unanimous_view_is_paginated_with_constant_queries(client):
    from curation.quality import views

    project, _items = graded_project(n_items=12)
    ItemPrediction.objects.update(p1=0.5)
    ItemPrediction.objects.filter(item__external_id__in=[f"g{n}" for n in range(12)]).update(
        p1=0.95
    )
    compute_again(project)  # every odd item (label 2) is now contradicted
    client.force_login(make_member(project, role="curator"))
    url = reverse("label_quality", args=[project.slug])
    with CaptureQueriesContext(connection) as few:
        client.get(url, {"view": "unanimous", "domain": "knowledge"})  # empty
    old = views.PAGE_SIZE
    views.PAGE_SIZE = 2
    try:
        with CaptureQueriesContext(connection) as many:
            first = client.get(url, {"view": "unanimous"})
        second = client.get(url, {"view": "unanimous", "page": 2})
    finally:
        views.PAGE_SIZE = old
    assert len(many) <= len(few) + 1
    assert len(first.context["page"].object_list) == 2 and first.context["page"].has_next
    assert set(q.item_id for q in second.context["page"].object_list).isdisjoint(
        q.item_id for q in first.context["page"].object_list
    )


@pytest.mark.django_db
@pytest.mark.parametrize(("role", "status"), [("annotator", 403), ("curator", 200), (None, 404)])
def test_unanimous_view_permissions(client, role, status):
    from tests.factories import make_user

    project, _ = graded_project(n_items=6)
    user = make_member(project, role=role) if role else make_user()
    client.force_login(user)
    assert (
        client.get(reverse("label_quality", args=[project.slug]), {"view": "unanimous"}).status_code
        == status
    )
