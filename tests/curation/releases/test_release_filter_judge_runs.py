"""A release filter's ensemble with the project's complete project-level judge
runs (issue 36 items 3+4): JudgeVote rows read in canonical terms by the one
reader (curation.releases.ensemble.ensemble_rows), so a run that picks the
label in both orders makes a pair "too easy" exactly as an evaluation with
the same picks does; validated by id; named in the manifest and card."""

import json

import pytest

from curation.models import Evaluation, ItemPrediction, JudgeRun, JudgeVote, Release
from curation.releases import filter_outputs, filters
from curation.releases.build import build_release
from curation.releases.ensemble import EnsembleError, ensemble_rows
from curation.releases.filter_rules import Prediction
from curation.releases.service import create_release, included_verdicts
from tests.curation.releases.test_release_filter_kinds import (  # noqa: F401
    HUMAN,
    LOW,
    SHARE,
    reference_outcomes,
    world,
)
from tests.curation.releases.test_release_filters import ensemble, reference  # noqa: F401
from tests.curation.releases.test_releases import ALL_DOMAINS, make_release_project, media
from tests.factories import make_member

pytestmark = pytest.mark.django_db


def project_run(project, name, status="complete", model="judge-model-7b"):
    return JudgeRun.objects.create(
        project=project, name=name, base_url="http://127.0.0.1:1/v1", model=model,
        max_tokens=16, timeout_seconds=1, swapped=True, status=status,
    )  # fmt: skip


def mirror(project, evaluation_id, name="mirror judge", **kwargs):
    """A project run whose votes are the evaluation's predictions: its pick
    in the original order and, where it has one, in the swapped order."""
    run = project_run(project, name, **kwargs)
    rows = []
    for p in ItemPrediction.objects.filter(evaluation_id=evaluation_id):
        rows.append(JudgeVote(run=run, item_id=p.item_id, order="original", choice=p.choice))
        if p.has_swapped:
            rows.append(
                JudgeVote(run=run, item_id=p.item_id, order="swapped", choice=p.swapped_choice)
            )
    JudgeVote.objects.bulk_create(rows)
    return run


def matched(project, **fields):
    spec = filters.check_filters(project=project, seed=1, **fields)
    return filters.matched_rows(included_verdicts(project, ALL_DOMAINS), spec)


def test_a_run_is_read_as_the_evaluation_with_the_same_picks(world):  # noqa: F811
    project, ids = world
    run = mirror(project, ids[1])
    items = included_verdicts(project, ALL_DOMAINS).values("item_id")
    evaluation = sorted((p.item_id, *p[2:]) for p in ensemble_rows({ids[1]}, items))
    judged = sorted((p.item_id, *p[2:]) for p in ensemble_rows({-run.pk}, items))
    assert judged == evaluation and evaluation
    both = list(ensemble_rows({ids[0], -run.pk}, items))
    assert {p.evaluation_id for p in both} == {ids[0], -run.pk}


def test_a_run_makes_pairs_too_easy_exactly_like_the_equivalent_evaluation(ensemble):  # noqa: F811
    project, evals = ensemble
    ids = [e.pk for e in evals]
    run = mirror(project, ids[1])
    by_evaluations = matched(project, too_easy_ensemble=ids)
    by_run = matched(project, too_easy_ensemble=ids[:1], too_easy_judge_runs=[run.pk])
    assert by_run == by_evaluations
    assert {r[0] for r in by_run} == reference(project, ids)  # the rules' words, directly
    alone = matched(project, too_easy_judge_runs=[run.pk])
    assert alone == matched(project, too_easy_ensemble=ids[1:]) and alone


def test_disagreement_with_a_run_equals_the_equivalent_evaluation(world):  # noqa: F811
    project, ids = world
    run = mirror(project, ids[1])
    shares = {"disagreement_human": HUMAN, "disagreement_share": SHARE}
    by_evaluations = matched(project, disagreement_ensemble=ids, **shares)
    by_run = matched(
        project, disagreement_ensemble=ids[:1], disagreement_judge_runs=[run.pk], **shares
    )
    assert by_run == by_evaluations and by_run
    spec = filters.check_filters(project=project, seed=1, disagreement_ensemble=ids, **shares)
    assert {r[0]: r[4] for r in by_run} == reference_outcomes(project, spec)
    alone = matched(project, disagreement_judge_runs=[run.pk], **shares)
    assert alone == matched(project, disagreement_ensemble=ids[1:], **shares) and alone


def test_a_pair_right_in_both_orders_is_too_easy_and_one_order_is_not(tmp_path):
    project = make_release_project(tmp_path, slug="tjr")
    verdicts = list(included_verdicts(project, ALL_DOMAINS).order_by("item_id"))
    both, one_order, wrong, unanswered = verdicts[:4]
    run = project_run(project, "j")
    other = lambda c: "2" if c == "1" else "1"  # noqa: E731
    JudgeVote.objects.bulk_create(
        [
            JudgeVote(run=run, item_id=both.item_id, order=o, choice=both.final_choice)
            for o in ("original", "swapped")
        ]
        + [JudgeVote(run=run, item_id=one_order.item_id, order="swapped",
                     choice=one_order.final_choice),
           JudgeVote(run=run, item_id=one_order.item_id, order="original", choice=""),
           JudgeVote(run=run, item_id=wrong.item_id, order="original", choice=wrong.final_choice),
           JudgeVote(run=run, item_id=wrong.item_id, order="swapped",
                     choice=other(wrong.final_choice)),
           JudgeVote(run=run, item_id=unanswered.item_id, order="original", choice="")]
    )  # fmt: skip
    rows = matched(project, too_easy_judge_runs=[run.pk])
    assert [r[0] for r in rows] == [both.item_id]
    items = included_verdicts(project, ALL_DOMAINS).values("item_id")
    read = {p.item_id: p for p in ensemble_rows({-run.pk}, items)}
    assert read[one_order.item_id] == Prediction(
        one_order.item_id, -run.pk, one_order.final_choice, "", False
    )
    assert unanswered.item_id not in read  # no verdict in any order: no prediction


def test_the_filter_pass_keeps_its_statement_count(world, django_assert_num_queries):  # noqa: F811
    project, ids = world
    run = mirror(project, ids[1])
    spec = filters.check_filters(
        project=project, seed=1, too_easy_ensemble=ids[:1], too_easy_judge_runs=[run.pk],
        low_consensus=LOW, disagreement_ensemble=ids[:1], disagreement_judge_runs=[run.pk],
        disagreement_human=HUMAN, disagreement_share=SHARE,
    )  # fmt: skip
    release = type("R", (), {"filters": spec})()
    before = included_verdicts(project, ALL_DOMAINS)
    # As with evaluations only: the verdicts, the vote tallies and the
    # ensemble (evaluations UNION ALL runs: one statement), then the lengths.
    with django_assert_num_queries(4):
        rows = filter_outputs.filtered_rows(release, before)
        filter_outputs.counts_of(rows)
        filter_outputs.pair_lengths(filter_outputs.without_filtered(before, rows))
    same = filters.check_filters(
        project=project, seed=1, too_easy_ensemble=ids, low_consensus=LOW,
        disagreement_ensemble=ids, disagreement_human=HUMAN, disagreement_share=SHARE,
    )  # fmt: skip
    assert rows == filters.matched_rows_sql(before, same)


@pytest.mark.parametrize("which", ["unknown", "running", "other project", "release run"])
@pytest.mark.parametrize("field", ["too_easy_judge_runs", "disagreement_judge_runs"])
def test_a_bad_run_is_a_field_error_and_nothing_is_created(world, client, which, field):  # noqa: F811
    project, ids = world
    if which == "unknown":
        run_id = 999999
    elif which == "running":
        run_id = project_run(project, "busy", status="running").pk
    elif which == "other project":
        from tests.factories import make_project

        other = make_project(slug="tjr-other")
        run_id = project_run(other, "theirs").pk
    else:
        from tests.curation.test_constraints import make_judge_run

        base = Release.objects.get(project=project, version="v0")
        done = Evaluation.objects.get(pk=ids[0])  # complete: a leaderboard entry
        run_id = make_judge_run(base, status="complete", evaluation=done).pk
    fields = {field: [run_id]}
    with pytest.raises(EnsembleError, match="Not a complete judge run on this project") as exc:
        create_release(
            project=project, version="v-x", notes="", domains=ALL_DOMAINS, seed=1, user=None,
            enqueue=False, **fields,
        )  # fmt: skip
    assert exc.value.field == field
    client.force_login(make_member(project, role="curator"))
    page = client.post(
        f"/p/{project.slug}/releases/new/",
        {"version": "v-x", "domains": ALL_DOMAINS, "seed": 1, **fields},
    )
    assert page.status_code == 400
    assert "Select a valid choice" in page.context["form"].errors[field][0]
    api = client.post(
        f"/api/v1/projects/{project.slug}/releases/",
        {"version": "v-x", "domains": ALL_DOMAINS, "seed": 1, **fields},
        content_type="application/json",
    )
    assert api.status_code == 400, api.content
    assert "Not a complete judge run" in api.json()["error"]["fields"][field][0]
    assert not Release.objects.filter(project=project, version="v-x").exists()


def test_manifest_card_and_page_name_the_run(world, client):  # noqa: F811
    project, ids = world
    run = mirror(project, ids[1], name="calibrated judge", model="judge-model-7b")
    release = create_release(
        project=project, version="v-jr", notes="", domains=ALL_DOMAINS, seed=11, user=None,
        enqueue=False, too_easy_ensemble=ids[:1], too_easy_judge_runs=[run.pk],
        disagreement_judge_runs=[run.pk],
    )  # fmt: skip
    assert release.filters["too_easy"] == {
        "evaluations": ids[:1], "judge_runs": [run.pk], "action": "drop",
    }  # fmt: skip
    assert release.filters["disagreement"]["evaluations"] == []
    release = build_release(release_id=release.pk)
    assert release.status == "ready", release.error
    folder = media(release.folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    easy = manifest["release_filters"]["too_easy"]
    entry = {"judge_run": run.pk, "name": "calibrated judge", "model": "judge-model-7b",
             "on": "project"}  # fmt: skip
    assert easy["ensemble"][1:] == [entry]
    assert easy["ensemble"][0]["evaluation"] == ids[0]
    assert easy["parameters"] == {}
    assert manifest["release_filters"]["disagreement"]["ensemble"] == [entry]
    expected = matched(project, too_easy_ensemble=ids)
    assert easy["dropped"] == sum(1 for r in expected if r[4] == "too_easy")
    card = (folder / "README.md").read_text()
    assert f"calibrated judge (project judge run #{run.pk}, model judge-model-7b)" in card
    client.force_login(make_member(project, role="curator"))
    page = client.get(f"/p/{project.slug}/releases/{release.pk}/").content.decode()
    assert f"calibrated judge (project judge run #{run.pk}, model judge-model-7b)" in page


def test_the_form_lists_complete_project_runs_only(world, client):  # noqa: F811
    project, _ = world
    done = project_run(project, "done judge")
    project_run(project, "busy judge", status="running")
    client.force_login(make_member(project, role="curator"))
    page = client.get(f"/p/{project.slug}/releases/new/").content.decode()
    assert f'name="too_easy_judge_runs" value="{done.pk}"' in page
    assert f'name="disagreement_judge_runs" value="{done.pk}"' in page
    assert "busy judge" not in page


def test_the_api_takes_judge_runs_beside_evaluation_ids(world, client):  # noqa: F811
    project, ids = world
    run = project_run(project, "api judge")
    client.force_login(make_member(project, role="curator"))
    api = client.post(
        f"/api/v1/projects/{project.slug}/releases/",
        {"version": "v-api-runs", "domains": ALL_DOMAINS, "seed": 1,
         "too_easy_ensemble": ids, "too_easy_judge_runs": [run.pk],
         "disagreement_judge_runs": [run.pk]},
        content_type="application/json",
    )  # fmt: skip
    assert api.status_code == 202, api.content
    body = api.json()["filters"]
    assert body["too_easy"] == {"evaluations": ids, "judge_runs": [run.pk], "action": "drop"}
    assert body["disagreement"]["judge_runs"] == [run.pk]
    assert body["disagreement"]["evaluations"] == []
