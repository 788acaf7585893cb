"""Every named constraint of the curation app, violated through the ORM.

Each violating write breaks exactly one constraint, so `rejected_by` can
check the IntegrityError names the one under test."""

from pathlib import Path

import pytest
from django.db import IntegrityError, transaction

from curation.models import Mix, MixSource, Verdict, VerdictStatus
from tests.constraints import named_constraints, rejected_by
from tests.factories import make_item, make_project

pytestmark = pytest.mark.django_db

DECIDED = [VerdictStatus.AGREED, VerdictStatus.RESOLVED]
UNDECIDED = [VerdictStatus.NEEDS_VOTES, VerdictStatus.CONTESTED, VerdictStatus.EXCLUDED]


def make_verdict(item=None, **kwargs) -> Verdict:
    item = item or make_item()
    return Verdict.objects.create(item=item, project=item.project, **kwargs)


def test_every_named_constraint_of_curation_has_a_test_here():
    source = Path(__file__).read_text()
    missing = [name for name in named_constraints("curation") if f'"{name}"' not in source]
    assert missing == []


def test_second_verdict_for_one_item_is_rejected():
    verdict = make_verdict()
    with pytest.raises(IntegrityError), transaction.atomic():
        make_verdict(verdict.item)


def test_unknown_verdict_status_is_rejected():
    with rejected_by("curation_verdict_status_valid"):
        make_verdict(status="pending")
    verdict = make_verdict()
    with rejected_by("curation_verdict_status_valid"):
        Verdict.objects.filter(pk=verdict.pk).update(status="pending")


def test_new_verdict_needs_votes_without_side_or_provenance():
    verdict = make_verdict()
    verdict.refresh_from_db()
    assert (verdict.status, verdict.final_choice, verdict.provenance) == ("needs_votes", "", "")


@pytest.mark.parametrize("status", DECIDED)
@pytest.mark.parametrize("final_choice", ["", "x"])
def test_decided_verdict_without_a_side_is_rejected(status, final_choice):
    with rejected_by("curation_verdict_final_choice_iff_decided"):
        make_verdict(status=status, final_choice=final_choice, provenance="majority")


@pytest.mark.parametrize("status", UNDECIDED)
def test_undecided_verdict_with_a_side_is_rejected(status):
    with rejected_by("curation_verdict_final_choice_iff_decided"):
        make_verdict(status=status, final_choice="1")


def test_agreeing_without_recording_the_side_is_rejected():
    verdict = make_verdict()
    queryset = Verdict.objects.filter(pk=verdict.pk)
    with rejected_by("curation_verdict_final_choice_iff_decided"):
        queryset.update(status=VerdictStatus.AGREED, provenance="unanimous")
    queryset.update(status=VerdictStatus.AGREED, provenance="unanimous", final_choice="2")
    verdict.refresh_from_db()
    assert (verdict.status, verdict.final_choice) == ("agreed", "2")


@pytest.mark.parametrize("status", DECIDED)
def test_decided_verdict_without_provenance_is_rejected(status):
    with rejected_by("curation_verdict_provenance_iff_decided"):
        make_verdict(status=status, final_choice="1", provenance="")


@pytest.mark.parametrize("status", UNDECIDED)
def test_undecided_verdict_with_provenance_is_rejected(status):
    with rejected_by("curation_verdict_provenance_iff_decided"):
        make_verdict(status=status, provenance="majority")


def test_reopening_a_decided_verdict_must_clear_side_and_provenance():
    verdict = make_verdict(status=VerdictStatus.RESOLVED, final_choice="1", provenance="gold")
    queryset = Verdict.objects.filter(pk=verdict.pk)
    with rejected_by("curation_verdict_provenance_iff_decided"):
        queryset.update(status=VerdictStatus.CONTESTED, final_choice="")
    queryset.update(status=VerdictStatus.CONTESTED, final_choice="", provenance="")


@pytest.mark.parametrize(
    ("status", "final_choice", "provenance"),
    [
        ("agreed", "1", "unanimous"),
        ("agreed", "2", "majority"),
        ("resolved", "1", "adjudicated"),
        ("resolved", "2", "gold"),
        ("needs_votes", "", ""),
        ("contested", "", ""),
        ("excluded", "", ""),
    ],
)
def test_side_and_provenance_exactly_when_decided_are_accepted(status, final_choice, provenance):
    verdict = make_verdict(status=status, final_choice=final_choice, provenance=provenance)
    verdict.refresh_from_db()
    assert (verdict.status, verdict.final_choice, verdict.provenance) == (
        status,
        final_choice,
        provenance,
    )


@pytest.mark.parametrize(
    ("status", "final_choice", "provenance"),
    [("needs_votes", "", ""), ("contested", "", ""), ("agreed", "1", "majority")],
)
def test_exclusion_category_on_a_verdict_that_is_not_excluded_is_rejected(
    status, final_choice, provenance
):
    with rejected_by("curation_verdict_exclusion_only_when_excluded"):
        make_verdict(
            status=status,
            final_choice=final_choice,
            provenance=provenance,
            exclusion_category="ambiguous",
        )


def test_exclusion_category_on_an_excluded_verdict_is_accepted():
    verdict = make_verdict(status="excluded", exclusion_category="ambiguous")
    queryset = Verdict.objects.filter(pk=verdict.pk)
    # Un-excluding must clear the category as well.
    with rejected_by("curation_verdict_exclusion_only_when_excluded"):
        queryset.update(status=VerdictStatus.CONTESTED)
    queryset.update(status=VerdictStatus.CONTESTED, exclusion_category="")
    assert make_verdict(status="excluded").exclusion_category == ""


def test_unknown_provenance_is_rejected():
    with rejected_by("curation_verdict_provenance_valid"):
        make_verdict(status="agreed", final_choice="1", provenance="banana")
    assert make_verdict(status="agreed", final_choice="2", provenance="gold").provenance == "gold"


def test_unknown_exclusion_category_is_rejected():
    with rejected_by("curation_verdict_exclusion_category_valid"):
        make_verdict(status="excluded", exclusion_category="made_up")
    assert make_verdict(status="excluded", exclusion_category="unsafe").status == "excluded"


def test_unknown_contest_kind_is_rejected():
    with rejected_by("curation_verdict_contest_kind_valid"):
        make_verdict(status="contested", contest_kind="vibes")
    assert make_verdict(status="contested", contest_kind="split").contest_kind == "split"


def make_release(**kwargs):
    from curation.models import Release
    from tests.factories import make_project

    project = kwargs.pop("project", None) or make_project()
    return Release.objects.create(project=project, version=kwargs.pop("version", "v1"), **kwargs)


def test_release_version_is_unique_per_project():
    release = make_release()
    with rejected_by("curation_release_version_per_project"):
        make_release(project=release.project, version="v1")
    assert make_release(project=release.project, version="v2").version == "v2"


def test_unknown_release_status_is_rejected():
    with rejected_by("curation_release_status_valid"):
        make_release(status="shipped")


def test_ready_release_must_be_published_with_a_checksum():
    with rejected_by("curation_release_ready_is_published"):
        make_release(status="ready")
    ok = make_release(status="ready", sha256="a" * 64, archive="x.zip", folder="x", version="v9")
    assert ok.status == "ready"


def test_release_progress_cannot_exceed_total():
    with rejected_by("curation_release_progress_within_total"):
        make_release(progress_done=5, progress_total=4)


def test_release_item_is_listed_once_with_a_valid_side():
    from curation.models import ReleaseItem

    release = make_release()
    item = make_item(release.project)
    fields = {"release": release, "item": item, "external_id": item.external_id, "domain": "vqa"}
    ReleaseItem.objects.create(chosen="1", better="Output1", **fields)
    with rejected_by("curation_releaseitem_once"):
        ReleaseItem.objects.create(chosen="2", better="Output2", **fields)
    other = make_item(release.project)
    fields.update(item=other, external_id=other.external_id)
    with rejected_by("curation_releaseitem_chosen_valid"):
        ReleaseItem.objects.create(chosen="9", better="ranked", **fields)
    with rejected_by("curation_releaseitem_better_valid"):
        ReleaseItem.objects.create(chosen="1", better="Output3", **fields)
    # A record of the pair layout chose one of two; a ranked or best-of-N member
    # names the best of up to eight slots.
    with rejected_by("curation_releaseitem_pair_chosen"):
        ReleaseItem.objects.create(chosen="3", better="Output1", **fields)
    ReleaseItem.objects.create(chosen="8", better="ranked", **fields)
    third = make_item(release.project)
    fields.update(item=third, external_id=third.external_id)
    ReleaseItem.objects.create(chosen="3", better="A", **fields)  # RewardBench 2's best of 4


def test_evaluation_name_is_unique_per_release_and_accuracy_is_a_share():
    from curation.models import Evaluation

    release = make_release(status="ready", sha256="b" * 64, archive="a.zip", folder="a")
    Evaluation.objects.create(release=release, name="m", predictions="p", accuracy=0.5)
    with rejected_by("curation_evaluation_name_per_release"):
        Evaluation.objects.create(release=release, name="m", predictions="p", accuracy=0.5)
    with rejected_by("curation_evaluation_accuracy_range"):
        Evaluation.objects.create(release=release, name="n", predictions="p", accuracy=1.5)
    with rejected_by("curation_evaluation_scoring_valid"):
        Evaluation.objects.create(release=release, name="q", predictions="p", scoring="")
    assert Evaluation.objects.create(release=release, name="o", predictions="p").accuracy is None


def test_judge_endpoint_names_and_settings_are_checked():
    from curation.models import JudgeEndpoint

    release = make_release()
    fields = {"project": release.project, "base_url": "http://127.0.0.1:1/v1", "model": "m"}
    JudgeEndpoint.objects.create(name="a", **fields)
    with rejected_by("curation_judgeendpoint_name_per_project"):
        JudgeEndpoint.objects.create(name="a", **fields)
    with rejected_by("curation_judgeendpoint_temperature_range"):
        JudgeEndpoint.objects.create(name="b", temperature=2.5, **fields)
    with rejected_by("curation_judgeendpoint_max_tokens_positive"):
        JudgeEndpoint.objects.create(name="c", max_tokens=0, **fields)
    with rejected_by("curation_judgeendpoint_timeout_positive"):
        JudgeEndpoint.objects.create(name="d", timeout_seconds=0, **fields)


def make_judge_run(release, **kwargs):
    from curation.models import JudgeRun

    fields = {
        "name": "judge",
        "base_url": "http://127.0.0.1:1/v1",
        "model": "m",
        "temperature": 0.0,
        "max_tokens": 16,
        "timeout_seconds": 1.0,
    }
    fields.update(kwargs)
    return JudgeRun.objects.create(release=release, **fields)


def test_judge_run_rules():
    from curation.models import Evaluation

    release = make_release(status="ready", sha256="c" * 64, archive="j.zip", folder="j")
    make_judge_run(release)
    with rejected_by("curation_judgerun_name_per_release"):
        make_judge_run(release)
    with rejected_by("curation_judgerun_status_valid"):
        make_judge_run(release, name="s", status="paused")
    with rejected_by("curation_judgerun_progress_within_total"):
        make_judge_run(release, name="p", progress_done=3, progress_total=2)
    with rejected_by("curation_judgerun_concurrency_range"):
        make_judge_run(release, name="c", concurrency=0)
    with rejected_by("curation_judgerun_video_as_valid"):
        make_judge_run(release, name="v", video_as="gif")
    for frames in (0, 65):
        with rejected_by("curation_judgerun_video_frames_range"):
            make_judge_run(release, name="f", video_frames=frames)
    with rejected_by("curation_judgerun_scoring_valid"):
        make_judge_run(release, name="x", scoring="")
    with rejected_by("curation_judgerun_complete_has_evaluation"):
        make_judge_run(release, name="e", status="complete")
    evaluation = Evaluation.objects.create(release=release, name="e", predictions="p")
    assert make_judge_run(release, name="e", status="complete", evaluation=evaluation).pk


def test_a_judge_run_is_on_a_release_or_a_project_never_both_nor_neither():
    from curation.models import JudgeRun

    release = make_release(status="ready", sha256="e" * 64, archive="q.zip", folder="q")
    project = release.project
    with rejected_by("curation_judgerun_release_xor_project"):
        make_judge_run(release, name="both", project=project)
    with rejected_by("curation_judgerun_release_xor_project"):
        make_judge_run(None, name="neither")
    on_project = make_judge_run(None, name="p", project=project, status="complete")
    assert on_project.evaluation is None  # a project's run ends in votes, not an entry
    with rejected_by("curation_judgerun_name_per_project"):
        make_judge_run(None, name="p", project=project)
    # The same name on the project's release is another run.
    assert make_judge_run(release, name="p").pk
    assert JudgeRun.objects.filter(project=project).count() == 1


def test_a_judge_vote_is_one_side_or_none_once_per_item_and_order():
    from curation.models import JudgeVote

    release = make_release(status="ready", sha256="f" * 64, archive="v.zip", folder="v")
    run = make_judge_run(None, name="votes", project=release.project)
    item = make_item(release.project)
    JudgeVote.objects.create(run=run, item=item, order="original", choice="1", confidence=0.7)
    JudgeVote.objects.create(run=run, item=item, order="swapped", choice="")
    with rejected_by("curation_judgevote_once_per_order"):
        JudgeVote.objects.create(run=run, item=item, order="original", choice="2")
    other = make_item(release.project)
    with rejected_by("curation_judgevote_order_valid"):
        JudgeVote.objects.create(run=run, item=other, order="perm0", choice="1")
    with rejected_by("curation_judgevote_choice_valid"):
        JudgeVote.objects.create(run=run, item=other, order="original", choice="3")
    for confidence in (-0.1, 1.01):
        with rejected_by("curation_judgevote_confidence_range"):
            JudgeVote.objects.create(run=run, item=other, order="original", confidence=confidence)


def test_judge_output_is_stored_once_per_item_and_pass():
    from curation.models import JudgeOutput

    run = make_judge_run(make_release(status="ready", sha256="d" * 64, archive="k", folder="k"))
    JudgeOutput.objects.create(run=run, external_id="x", order="original", output="[[A]]")
    JudgeOutput.objects.create(run=run, external_id="x", order="swapped", output="[[B]]")
    with rejected_by("curation_judgeoutput_once_per_pass"):
        JudgeOutput.objects.create(run=run, external_id="x", order="original", output="again")
    # Any call key a benchmark names (judge_calls), never an empty one.
    JudgeOutput.objects.create(run=run, external_id="y", order="perm15-run5")
    with rejected_by("curation_judgeoutput_order_valid"):
        JudgeOutput.objects.create(run=run, external_id="y", order="")


# --- Label quality (curation/quality/) ---------------------------------------------------


def _entry_and_item():
    from curation.models import Evaluation, Release

    item = make_item()
    release = Release.objects.create(project=item.project, version="v-lq")
    return Evaluation.objects.create(release=release, name="e", predictions="p"), item


def _prediction(evaluation, item, **kwargs):
    from curation.models import ItemPrediction

    fields = {"external_id": item.external_id, "category": "c", "sub_bucket": "c"}
    fields.update({"chosen": "1", "choice": "1", "correct": True, **kwargs})
    return ItemPrediction.objects.create(evaluation=evaluation, item=item, **fields)


def test_second_prediction_of_one_entry_for_one_item_is_rejected():
    evaluation, item = _entry_and_item()
    _prediction(evaluation, item)
    with rejected_by("curation_itemprediction_one_per_item"):
        _prediction(evaluation, item)


@pytest.mark.parametrize("p1", [-0.01, 1.01])
def test_model_probability_outside_zero_one_is_rejected(p1):
    evaluation, item = _entry_and_item()
    with rejected_by("curation_itemprediction_p1_range"):
        _prediction(evaluation, item, p1=p1)


def test_unknown_label_quality_status_is_rejected():
    from curation.models import LabelQualityRun

    item = make_item()
    with rejected_by("curation_labelqualityrun_status_valid"):
        LabelQualityRun.objects.create(project=item.project, status="done")


@pytest.mark.parametrize(("quality", "ds"), [(1.5, 0.5), (0.5, -0.1)])
def test_item_quality_scores_outside_zero_one_are_rejected(quality, ds):
    from curation.models import ItemQuality

    item = make_item()
    with rejected_by("curation_itemquality_ranges"):
        ItemQuality.objects.create(
            project=item.project,
            item=item,
            n1=1,
            n2=0,
            consensus="1",
            consensus_quality=quality,
            annotator_agreement=1.0,
            ds_p1=ds,
        )


def test_a_mix_version_is_taken_once_per_scope():
    Mix.objects.create(name="mix", version="v1", scope="a")
    Mix.objects.create(name="mix", version="v1", scope="b")  # other projects: allowed
    with rejected_by("curation_mix_version_once_per_scope"):
        Mix.objects.create(name="mix", version="v1", scope="a")


def test_unknown_mix_status_or_mode_is_rejected():
    with rejected_by("curation_mix_status_valid"):
        Mix.objects.create(name="a", version="v1", status="baking")
    with rejected_by("curation_mix_mode_valid"):
        Mix.objects.create(name="b", version="v1", mode="random")


def test_a_ready_mix_is_published():
    with rejected_by("curation_mix_ready_is_published"):
        Mix.objects.create(
            name="a", version="v1", status="ready", sha256="", folder="f", archive="z"
        )
    Mix.objects.create(name="b", version="v1", status="ready", sha256="s", folder="f", archive="z")


def test_mix_progress_stays_within_its_total():
    with rejected_by("curation_mix_progress_within_total"):
        Mix.objects.create(name="a", version="v1", progress_done=3, progress_total=2)


def test_mix_sources_take_a_position_once_with_a_positive_weight():
    mix = Mix.objects.create(name="a", version="v1")
    project = make_project()
    MixSource.objects.create(mix=mix, position=0, project=project)
    with rejected_by("curation_mixsource_position_once"):
        MixSource.objects.create(mix=mix, position=0, project=project)
    with rejected_by("curation_mixsource_weight_positive"):
        MixSource.objects.create(mix=mix, position=1, project=project, weight=0)


# --- a ranked item's final ranks (issue 33) -------------------------------------------


def _ranked_verdict():
    from curation.models import VerdictRank

    verdict = make_verdict(status=VerdictStatus.AGREED, final_choice="3", provenance="majority")
    return verdict, VerdictRank


def test_a_decided_verdict_may_name_any_of_eight_slots_but_no_ninth():
    verdict, _ = _ranked_verdict()
    assert Verdict.objects.get(pk=verdict.pk).final_choice == "3"
    with rejected_by("curation_verdict_final_choice_iff_decided"):
        make_verdict(status=VerdictStatus.AGREED, final_choice="9", provenance="majority")


def test_one_final_rank_per_slot():
    verdict, VerdictRank = _ranked_verdict()
    VerdictRank.objects.create(verdict=verdict, slot=1, rank=1)
    with rejected_by("curation_verdictrank_one_per_slot"):
        VerdictRank.objects.create(verdict=verdict, slot=1, rank=2)


@pytest.mark.parametrize("slot", [0, 9])
def test_a_final_rank_names_one_of_eight_slots(slot):
    verdict, VerdictRank = _ranked_verdict()
    with rejected_by("curation_verdictrank_slot_range"):
        VerdictRank.objects.create(verdict=verdict, slot=slot, rank=1)


@pytest.mark.parametrize("rank", [0, 9])
def test_a_final_rank_is_one_to_eight(rank):
    verdict, VerdictRank = _ranked_verdict()
    with rejected_by("curation_verdictrank_rank_range"):
        VerdictRank.objects.create(verdict=verdict, slot=1, rank=rank)
