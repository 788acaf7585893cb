"""The background label-quality job: CROWDLAB + Dawid-Skene over a project's
current votes with the selected model ensemble, cached and refreshable."""

import pytest

from curation.models import (
    Evaluation,
    ItemPrediction,
    ItemQuality,
    LabelQualityRun,
    LabelQualityStatus,
    Release,
    Verdict,
)
from curation.quality.service import (
    LabelQualityError,
    compute_label_quality,
    ensemble_probabilities,
    request_label_quality,
)
from tests.curation.quality.conftest import needs_quality_extra
from tests.factories import make_assignment, make_item, make_judgement, make_member, make_project

pytestmark = [
    pytest.mark.django_db,
    needs_quality_extra,
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

N_ITEMS = 40
PLANTED = (3, 11, 27)  # a unanimous wrong majority that every judge contradicts


def make_world(judges=2):
    """40 items, 4 annotators, 3 votes each; the truth is response 1 on even
    items and 2 on odd ones; annotator 3 errs on every fifth item; the three
    planted items were voted wrong by everybody. Two judge entries agree
    with the truth (P = 0.9 / 0.1)."""
    project = make_project(slug="lq")
    domain = project.domains.get(slug="general_preference")
    team = [make_member(project) for _ in range(4)]
    release = Release.objects.create(project=project, version="v1")
    entries = [
        Evaluation.objects.create(release=release, name=f"judge-{n}", predictions="p")
        for n in range(judges)
    ]
    items = []
    for n in range(N_ITEMS):
        item = make_item(project, domain=domain, external_id=f"item_{n}")
        truth = "1" if n % 2 == 0 else "2"
        wrong = "2" if truth == "1" else "1"
        label = wrong if n in PLANTED else truth
        for k in range(3):
            who = team[(n + k) % 4]
            choice = label
            if who == team[3] and n % 5 == 0 and n not in PLANTED:
                choice = wrong
            make_judgement(make_assignment(item, who), choice)
        Verdict.objects.create(
            item=item, project=project, status="agreed", final_choice=label, provenance="majority"
        )
        for e in entries:
            ItemPrediction.objects.create(
                evaluation=e,
                item=item,
                external_id=item.external_id,
                category="c",
                sub_bucket="c",
                chosen=label,
                choice=truth,
                correct=truth == label,
                p1=0.9 if truth == "1" else 0.1,
            )
        items.append(item)
    return project, entries, items, team


def test_job_ranks_the_planted_wrong_labels_first_and_caches_the_result():
    project, entries, items, team = make_world()
    assert request_label_quality(project=project, evaluations=[e.pk for e in entries])
    assert compute_label_quality(project_id=project.pk) == LabelQualityStatus.READY
    run = LabelQualityRun.objects.get(project=project)
    assert run.status == LabelQualityStatus.READY and run.computed_at is not None
    assert run.payload["n_items"] == N_ITEMS and run.payload["n_with_model"] == N_ITEMS
    assert set(run.payload["annotators"]) == {str(u.pk) for u in team}
    rows = list(ItemQuality.objects.filter(project=project).order_by("label_quality"))
    assert len(rows) == N_ITEMS
    planted = {items[n].pk for n in PLANTED}
    assert {r.item_id for r in rows[: len(PLANTED)]} == planted
    for r in rows[: len(PLANTED)]:
        # Unanimous votes, yet the least trusted labels: the models disagree.
        assert r.n1 + r.n2 == 3 and min(r.n1, r.n2) == 0
        assert r.model_p1 == (0.1 if r.label == "1" else 0.9)
        assert r.label_quality < rows[len(PLANTED)].label_quality
    # Dawid-Skene uses the votes alone: it keeps the unanimous (wrong) label.
    for r in rows[: len(PLANTED)]:
        assert (r.ds_p1 > 0.5) == (r.label == "1")


def test_job_result_equals_the_analysis_of_the_same_votes():
    from curation.quality.label_quality import analyse, label_quality
    from curation.quality.service import current_votes

    project, entries, *_ = make_world()
    request_label_quality(project=project, evaluations=[entries[0].pk])
    compute_label_quality(project_id=project.pk)
    expected = analyse(
        list(current_votes(project)), ensemble_probabilities(project, [entries[0].pk])
    )
    stored = {r.item_id: r for r in ItemQuality.objects.filter(project=project)}
    labels = dict(Verdict.objects.values_list("item_id", "final_choice"))
    for e in expected.items:
        row = stored[e.item]
        assert row.consensus == e.consensus
        assert row.consensus_quality == pytest.approx(e.consensus_quality, abs=1e-9)
        assert row.ds_p1 == pytest.approx(e.ds_p1, abs=1e-9)
        assert row.label_quality == pytest.approx(label_quality(e, labels[e.item]), abs=1e-9)


def test_ensemble_is_the_mean_of_the_selected_entries_only():
    project, entries, items, _ = make_world(judges=3)
    ItemPrediction.objects.filter(evaluation=entries[2]).update(p1=0.5)
    both = ensemble_probabilities(project, [entries[0].pk, entries[2].pk])
    assert both[items[0].pk] == pytest.approx((0.9 + 0.5) / 2)
    assert ensemble_probabilities(project, [entries[0].pk])[items[0].pk] == 0.9


def test_a_second_request_while_one_is_queued_queues_nothing_and_a_refresh_recomputes():
    project, entries, *_ = make_world()
    assert request_label_quality(project=project, evaluations=[entries[0].pk])
    assert not request_label_quality(project=project, evaluations=[entries[0].pk])
    compute_label_quality(project_id=project.pk)
    first = LabelQualityRun.objects.get(project=project).computed_at
    assert compute_label_quality(project_id=project.pk) == "skipped"  # nothing queued
    assert request_label_quality(project=project, evaluations=[])
    compute_label_quality(project_id=project.pk)
    run = LabelQualityRun.objects.get(project=project)
    assert run.computed_at > first and run.payload["n_with_model"] == 0
    assert ItemQuality.objects.filter(project=project).count() == N_ITEMS


def test_entries_of_another_project_are_refused():
    project, *_ = make_world()
    other = make_project(slug="other")
    release = Release.objects.create(project=other, version="v1")
    foreign = Evaluation.objects.create(release=release, name="x", predictions="p")
    with pytest.raises(LabelQualityError, match="No such leaderboard entries"):
        request_label_quality(project=project, evaluations=[foreign.pk])
    assert not LabelQualityRun.objects.filter(project=project).exists()
