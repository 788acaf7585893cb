"""Every named constraint of the annotate app, violated through the ORM.

`objects.create()` does not run model validation, so these writes reach the
database as they are; transitions are written with `.update()`, as the
services do. `rejected_by` checks the IntegrityError came from the named
constraint, not from another one that happened to fire first."""

from datetime import timedelta
from pathlib import Path

import pytest
from django.db import DataError, IntegrityError, transaction
from django.db.models import F, ProtectedError
from django.utils import timezone

from annotate.models import (
    AssignmentStatus,
    Choice,
    Domain,
    DomainKind,
    ImageAsset,
    Item,
    ItemPart,
    Judgement,
    JudgementSlot,
    Membership,
    ProgressCounter,
    Project,
    ProjectPause,
    QualificationAnswer,
    QualificationAttempt,
    Role,
)
from tests.constraints import named_constraints, rejected_by
from tests.factories import (
    make_assignment,
    make_image,
    make_item,
    make_judgement,
    make_media,
    make_member,
    make_project,
    make_user,
)

pytestmark = pytest.mark.django_db

HEX64 = "0123456789abcdef" * 4


def test_every_named_constraint_of_annotate_has_a_test_here():
    source = Path(__file__).read_text()
    missing = [name for name in named_constraints("annotate") if f'"{name}"' not in source]
    assert missing == []


# --- Project ----------------------------------------------------------------------


@pytest.mark.parametrize("votes", [0, 51])
def test_votes_per_item_outside_1_to_50_is_rejected(votes):
    with rejected_by("annotate_project_votes_per_item_range"):
        make_project(votes_per_item=votes)


def test_votes_per_item_cannot_be_updated_out_of_range():
    project = make_project()
    with rejected_by("annotate_project_votes_per_item_range"):
        Project.objects.filter(pk=project.pk).update(votes_per_item=0)


@pytest.mark.parametrize("votes", [1, 50])
def test_votes_per_item_at_the_bounds_is_accepted(votes):
    assert make_project(votes_per_item=votes).votes_per_item == votes


@pytest.mark.parametrize("share", [0.5, 0.0, 1.01])
def test_agree_share_outside_half_to_one_is_rejected(share):
    with rejected_by("annotate_project_agree_share_range"):
        make_project(agree_share=share)


@pytest.mark.parametrize("share", [0.51, 1.0])
def test_agree_share_above_half_up_to_one_is_accepted(share):
    assert make_project(agree_share=share).agree_share == share


@pytest.mark.parametrize("least_w", [-0.01, 1.01])
def test_ranking_least_w_outside_0_to_1_is_rejected(least_w):
    with rejected_by("annotate_project_ranking_least_w_range"):
        make_project(ranking_least_w=least_w)


@pytest.mark.parametrize("least_w", [0.0, 1.0])
def test_ranking_least_w_at_the_bounds_is_accepted(least_w):
    assert make_project(ranking_least_w=least_w).ranking_least_w == least_w


def test_zero_minute_lease_is_rejected():
    project = make_project(lease_minutes=1)
    with rejected_by("annotate_project_lease_positive"):
        Project.objects.filter(pk=project.pk).update(lease_minutes=0)
    project.refresh_from_db()
    assert project.lease_minutes == 1


# --- Membership -------------------------------------------------------------------


def test_second_membership_of_same_user_in_same_project_is_rejected():
    project, other = make_project(), make_project()
    user = make_member(project, role=Role.ANNOTATOR)
    make_member(other, user=user, role=Role.CURATOR)
    with rejected_by("annotate_membership_one_per_user"):
        Membership.objects.create(project=project, user=user, role=Role.CURATOR)
    assert Membership.objects.filter(user=user).count() == 2


def test_unknown_role_is_rejected():
    project = make_project()
    with rejected_by("annotate_membership_role_valid"):
        make_member(project, role="owner")


def test_every_role_is_accepted():
    project = make_project()
    for role in Role.values:
        make_member(project, role=role)
    assert sorted(project.memberships.values_list("role", flat=True)) == sorted(Role.values)


# --- Domain -------------------------------------------------------------------------


def test_second_domain_with_same_slug_in_same_project_is_rejected():
    project, other = make_project(), make_project()
    # Both projects already hold the default "vqa" domain.
    assert Domain.objects.filter(slug="vqa", project__in=[project, other]).count() == 2
    with rejected_by("annotate_domain_slug_per_project"):
        Domain.objects.create(
            project=project,
            slug="vqa",
            title="VQA again",
            export_category="vqa2",
            kind="preference",
        )


def test_second_domain_with_same_export_category_in_same_project_is_rejected():
    project = make_project()
    with rejected_by("annotate_domain_category_per_project"):
        Domain.objects.create(
            project=project,
            slug="vqa2",
            title="VQA again",
            export_category="vqa",
            kind="preference",
        )
    Domain.objects.create(
        project=project, slug="vqa2", title="VQA again", export_category="vqa2", kind="preference"
    )


def test_unknown_domain_kind_is_rejected():
    project = make_project()
    with rejected_by("annotate_domain_kind_valid"):
        Domain.objects.create(
            project=project, slug="rank", title="Ranking", export_category="rank", kind="ranking"
        )
    for kind in DomainKind.values:
        Domain.objects.create(
            project=project, slug=f"x-{kind}", title=kind, export_category=f"x/{kind}", kind=kind
        )


# --- ImageAsset ---------------------------------------------------------------------


def _image(sha256=HEX64, **kwargs) -> ImageAsset:
    fields = {"file": "images/x.png", "format": "PNG", "width": 2, "height": 2, "size_bytes": 9}
    fields.update(kwargs)
    return ImageAsset.objects.create(sha256=sha256, **fields)


@pytest.mark.parametrize(
    "sha256",
    [HEX64.upper(), HEX64[:63], HEX64[:63] + "g", "", HEX64[:63] + "\n"],
    ids=["uppercase", "too-short", "not-hex", "empty", "newline-inside-64"],
)
def test_sha256_that_is_not_64_lowercase_hex_digits_is_rejected(sha256):
    with rejected_by("annotate_image_sha256_hex"):
        _image(sha256=sha256)


def test_sha256_with_trailing_newline_is_rejected():
    # 65 characters: PostgreSQL refuses the length (DataError) before the
    # check; SQLite has no length limit, so the regex alone must refuse it.
    with pytest.raises((IntegrityError, DataError)), transaction.atomic():
        _image(sha256=HEX64 + "\n")


def test_sha256_of_64_lowercase_hex_digits_is_accepted():
    assert _image().sha256 == HEX64
    assert len(make_image().sha256) == 64


@pytest.mark.parametrize("size", [(0, 2), (2, 0)], ids=["zero-width", "zero-height"])
def test_image_without_area_is_rejected(size):
    width, height = size
    with rejected_by("annotate_image_dimensions_positive"):
        _image(width=width, height=height)
    assert _image(width=1, height=1).width == 1


# --- MediaAsset (issue 35) -----------------------------------------------------------


def test_media_sha256_that_is_not_64_lowercase_hex_digits_is_rejected():
    with rejected_by("annotate_media_sha256_hex"):
        make_media(sha256="A" * 64)


def test_video_without_area_is_rejected_and_audio_has_none():
    with rejected_by("annotate_media_video_dimensions_positive"):
        make_media("video", width=0)
    assert make_media("audio").width == 0


# --- Item -----------------------------------------------------------------------------


def test_second_item_with_same_external_id_in_same_project_is_rejected():
    item = make_item(external_id="mathvista_17")
    other = make_item(external_id="mathvista_17")
    assert other.project != item.project
    with rejected_by("annotate_item_external_id_per_project"):
        make_item(project=item.project, external_id="mathvista_17")


def test_a_qualification_or_check_item_without_gold_is_rejected():
    with rejected_by("annotate_item_gate_has_gold"):
        make_item(purpose="check", gold_choice="")
    assert make_item(purpose="check", gold_choice="1").purpose == "check"


def test_an_unknown_item_purpose_is_rejected():
    with rejected_by("annotate_item_purpose_valid"):
        make_item(purpose="training", gold_choice="1")


# --- Ongoing checks (issue 36 item 2) -------------------------------------------------


def test_a_check_or_qualification_item_that_needs_votes_is_rejected():
    with rejected_by("annotate_item_gate_needs_no_votes"):
        make_item(purpose="check", gold_choice="1", votes_needed=3)
    item = make_item(purpose="qualification", gold_choice="2")
    assert item.votes_needed == 0
    with rejected_by("annotate_item_gate_needs_no_votes"):
        Item.objects.filter(pk=item.pk).update(votes_needed=1)


@pytest.mark.parametrize("rate", [-0.1, 1.5])
def test_a_check_rate_outside_0_to_1_is_rejected(rate):
    with rejected_by("annotate_project_check_rate_range"):
        make_project(check_rate=rate)


@pytest.mark.parametrize("threshold", [-0.01, 1.01])
def test_a_check_threshold_outside_0_to_1_is_rejected(threshold):
    with rejected_by("annotate_project_check_threshold_range"):
        make_project(check_threshold=threshold)


def _pause(project, annotator, **fields):
    values = {
        "paused_at": timezone.now(),
        "reason": "below",
        "right": 1,
        "total": 10,
        "low": 0.02,
        "high": 0.4,
        "threshold": 0.7,
        "minimum": 10,
    }
    values.update(fields)
    return ProjectPause.objects.create(project=project, annotator=annotator, **values)


def test_a_second_open_pause_of_one_annotator_in_one_project_is_rejected():
    project, user = make_project(), make_user()
    _pause(project, user, reinstated_at=timezone.now())  # lifted: history
    _pause(project, user)
    _pause(make_project(), user)  # another project
    with rejected_by("annotate_projectpause_one_open"):
        _pause(project, user)


def test_a_pause_with_more_right_than_checks_is_rejected():
    with rejected_by("annotate_projectpause_right_within_total"):
        _pause(make_project(), make_user(), right=11, total=10)


# --- Qualification (issue 36) ---------------------------------------------------------


@pytest.mark.parametrize("mark", [-0.1, 1.5])
def test_a_qualification_pass_mark_outside_0_to_1_is_rejected(mark):
    with rejected_by("annotate_project_qualification_pass_mark_range"):
        make_project(qualification_pass_mark=mark)


def _attempt(**kwargs):
    project = make_project()
    fields = {"project": project, "annotator": make_member(project), "started_at": timezone.now()}
    return QualificationAttempt.objects.create(**{**fields, **kwargs})


def test_a_second_open_qualification_attempt_is_rejected():
    first = _attempt()
    with rejected_by("annotate_qualification_one_open_attempt"):
        QualificationAttempt.objects.create(
            project=first.project, annotator=first.annotator, started_at=timezone.now()
        )
    first.finished_at = timezone.now()
    first.save()
    QualificationAttempt.objects.create(  # a retry once the first is finished
        project=first.project, annotator=first.annotator, started_at=timezone.now()
    )


def test_more_right_than_total_is_rejected():
    with rejected_by("annotate_qualification_right_within_total"):
        _attempt(right=3, total=2)


def test_an_open_attempt_cannot_have_passed():
    with rejected_by("annotate_qualification_passed_when_finished"):
        _attempt(passed=True)


def test_two_answers_to_one_item_of_an_attempt_are_rejected():
    attempt = _attempt()
    item = make_item(attempt.project, purpose="qualification", gold_choice="1")
    fields = {"attempt": attempt, "item": item, "display_order": "12", "choice": "1"}
    QualificationAnswer.objects.create(**fields, correct=True, answered_at=timezone.now())
    with rejected_by("annotate_qualification_one_answer_per_item"):
        QualificationAnswer.objects.create(**fields, correct=True, answered_at=timezone.now())


# --- ItemPart (issue 24) --------------------------------------------------------------


def test_two_parts_at_one_position_of_a_slot_are_rejected():
    item = make_item()  # has prompt parts at positions 0 and 1
    with rejected_by("annotate_itempart_position_per_slot"):
        ItemPart.objects.create(item=item, slot="prompt", position=1, kind="text", text="x")


def test_unknown_part_slot_is_rejected():
    with rejected_by("annotate_itempart_slot_valid"):
        ItemPart.objects.create(item=make_item(), slot="answer", position=0, kind="text")


@pytest.mark.parametrize(
    "fields",
    [
        {"kind": "image"},  # an image part without its image
        {"kind": "text", "with_image": True},  # a text part with one
        {"kind": "text", "source_path": "a.png"},
        {"kind": "video"},  # a video part without its file
        {"kind": "audio", "with_image": True},
        {"kind": "image", "with_image": True, "with_media": True},
        {"kind": "text", "with_media": True},
    ],
)
def test_part_whose_kind_does_not_match_its_content_is_rejected(fields):
    fields = dict(fields)
    if fields.pop("with_image", False):
        fields["image"] = make_image()
    if fields.pop("with_media", False):
        fields["media"] = make_media()
    with rejected_by("annotate_itempart_kind_matches_content"):
        ItemPart.objects.create(item=make_item(), slot="response_1", position=5, **fields)


def test_image_and_text_parts_anywhere_are_accepted():
    item = make_item()
    ItemPart.objects.create(
        item=item, slot="response_1", position=1, kind="image", image=make_image()
    )
    ItemPart.objects.create(item=item, slot="response_1", position=2, kind="text", text="  ")
    ItemPart.objects.create(
        item=item, slot="response_1", position=3, kind="video", media=make_media()
    )
    ItemPart.objects.create(
        item=item, slot="prompt", position=5, kind="audio", media=make_media("audio")
    )
    assert item.content_parts.filter(slot="response_1").count() == 4


def test_an_image_in_a_part_cannot_be_deleted():
    item = make_item(image=None)
    image = make_image()
    ItemPart.objects.create(item=item, slot="prompt", position=5, kind="image", image=image)
    with pytest.raises(ProtectedError):
        image.delete()


def test_unknown_gold_choice_is_rejected():
    with rejected_by("annotate_item_gold_valid"):
        make_item(gold_choice="9")  # an N-slot item's best slot is 1..8


def test_empty_or_canonical_gold_choice_is_accepted():
    project = make_project()
    for gold in ["", "1", "2"]:
        assert make_item(project=project, gold_choice=gold).gold_choice == gold


def test_item_a_curator_closed_before_any_vote_needs_none():
    # 0: what a curator's decision leaves on an item that had no vote yet.
    assert make_item(votes_needed=0).votes_needed == 0


def test_more_live_assignments_than_votes_needed_is_rejected():
    item = make_item(votes_needed=2, live_assignments=1)
    # The claim increments the counter in SQL; the last free slot may be taken...
    Item.objects.filter(pk=item.pk).update(live_assignments=F("live_assignments") + 1)
    # ...but not one more.
    with rejected_by("annotate_item_live_within_needed"):
        Item.objects.filter(pk=item.pk).update(live_assignments=F("live_assignments") + 1)
    item.refresh_from_db()
    assert item.live_assignments == 2


def test_item_created_over_its_overlap_is_rejected():
    with rejected_by("annotate_item_live_within_needed"):
        make_item(votes_needed=3, live_assignments=4)


@pytest.mark.parametrize(
    "column",
    [f"correct_{r}_{label}" for r in "12" for label in ("yes", "no", "unsure")],
)
def test_label_tally_below_zero_is_rejected(column):
    item = make_item()
    Item.objects.filter(pk=item.pk).update(**{column: F(column) + 1})
    Item.objects.filter(pk=item.pk).update(**{column: F(column) - 1})
    with rejected_by("annotate_item_label_tallies_nonnegative"):
        Item.objects.filter(pk=item.pk).update(**{column: F(column) - 1})
    item.refresh_from_db()
    assert getattr(item, column) == 0


# --- Assignment ------------------------------------------------------------------------


def test_second_assignment_of_same_item_to_same_annotator_is_rejected():
    item = make_item()
    annotator = make_user()
    make_assignment(item, annotator)
    make_assignment(item)  # another annotator on the same item is fine
    with rejected_by("annotate_assignment_one_per_annotator"):
        make_assignment(item, annotator)
    assert item.assignments.count() == 2


def test_unknown_assignment_status_is_rejected():
    item = make_item()
    with rejected_by("annotate_assignment_status_valid"):
        make_assignment(item, status="done")
    assignment = make_assignment(item)
    with rejected_by("annotate_assignment_status_valid"):
        type(assignment).objects.filter(pk=assignment.pk).update(status="done")


def test_every_assignment_status_is_accepted():
    item = make_item()
    now = timezone.now()
    for status in AssignmentStatus.values:
        make_assignment(item, status=status, submitted_at=now)
    assert sorted(item.assignments.values_list("status", flat=True)) == sorted(
        AssignmentStatus.values
    )


@pytest.mark.parametrize("lease", [timedelta(0), timedelta(seconds=-1)], ids=["equal", "before"])
def test_lease_not_after_claim_is_rejected(lease):
    now = timezone.now()
    with rejected_by("annotate_assignment_lease_after_claim"):
        make_assignment(make_item(), claimed_at=now, lease_expires_at=now + lease)


def test_lease_after_claim_is_accepted():
    now = timezone.now()
    assignment = make_assignment(
        make_item(), claimed_at=now, lease_expires_at=now + timedelta(microseconds=1)
    )
    assert assignment.lease_expires_at > assignment.claimed_at


def test_submitted_assignment_without_submission_time_is_rejected():
    assignment = make_assignment(make_item())
    queryset = type(assignment).objects.filter(pk=assignment.pk)
    with rejected_by("annotate_assignment_submitted_has_time"):
        queryset.update(status=AssignmentStatus.SUBMITTED)
    with rejected_by("annotate_assignment_submitted_has_time"):
        make_assignment(make_item(), status=AssignmentStatus.SUBMITTED)
    # Only submitted needs the time; with it, submitting is accepted.
    queryset.update(status=AssignmentStatus.SKIPPED)
    queryset.update(status=AssignmentStatus.SUBMITTED, submitted_at=timezone.now())


# --- Judgement ----------------------------------------------------------------------------


def test_same_revision_of_a_judgement_twice_is_rejected():
    assignment = make_assignment(make_item())
    make_judgement(assignment, revision=1)
    with rejected_by("annotate_judgement_revision_unique"):
        make_judgement(assignment, revision=1, is_current=False)


def test_second_current_judgement_for_one_assignment_is_rejected():
    assignment = make_assignment(make_item())
    first = make_judgement(assignment, choice="1")
    with rejected_by("annotate_judgement_one_current_per_assignment"):
        make_judgement(assignment, choice="2", revision=2)
    # A revision supersedes: clear the old current row, then add the new one.
    Judgement.objects.filter(pk=first.pk).update(is_current=False)
    make_judgement(assignment, choice="2", revision=2)
    make_judgement(assignment, choice="tie", revision=3, is_current=False)
    assert assignment.judgements.filter(is_current=True).get().revision == 2


@pytest.mark.parametrize("choice", ["", "3", "A"])
def test_choice_outside_1_2_tie_is_rejected(choice):
    with rejected_by("annotate_judgement_choice_valid"):
        make_judgement(make_assignment(make_item()), choice=choice)


def test_canonical_choices_are_accepted():
    item = make_item()
    for choice in Choice.values:
        make_judgement(make_assignment(item), choice=choice)
    assert Judgement.objects.filter(assignment__item=item).count() == len(Choice.values)


@pytest.mark.parametrize("field", ["correct_1", "correct_2"])
def test_unknown_correctness_answer_is_rejected(field):
    with rejected_by("annotate_judgementslot_correctness_valid"):
        make_judgement(make_assignment(make_item()), **{field: "maybe"})


def test_correctness_answers_are_accepted():
    item = make_item()
    for answer in ["", "yes", "no", "unsure"]:
        make_judgement(make_assignment(item), correct_1=answer, correct_2=answer)


def a_judgement(**fields) -> Judgement:
    return Judgement.objects.create(assignment=make_assignment(make_item()), **fields)


def test_an_unknown_task_is_rejected():
    with rejected_by("annotate_judgement_task_valid"):
        a_judgement(task="rating", choice="1")


@pytest.mark.parametrize(
    "task,choice",
    [
        ("pairwise", "3"),
        ("pairwise", "none"),
        ("best_of_n", "tie"),
        ("best_of_n", "0"),
        ("best_of_n", ""),
        ("ranking", "1"),
        ("ranking", "tie"),
    ],
)
def test_a_choice_that_is_not_its_tasks_answer_is_rejected(task, choice):
    with rejected_by("annotate_judgement_choice_valid"):
        a_judgement(task=task, choice=choice)


@pytest.mark.parametrize(
    "task,choice", [("best_of_n", "4"), ("best_of_n", "none"), ("ranking", ""), ("pairwise", "2")]
)
def test_best_of_n_picks_a_slot_or_none_and_a_ranking_has_no_choice(task, choice):
    assert a_judgement(task=task, choice=choice).pk


def test_a_strength_on_a_vote_that_is_no_pair_is_rejected():
    with rejected_by("annotate_judgement_strength_matches_choice"):
        a_judgement(task="best_of_n", choice="1", strength=2)


def test_a_slot_answered_twice_in_one_judgement_is_rejected():
    judgement = a_judgement(choice="1")
    JudgementSlot.objects.create(judgement=judgement, slot=1, correctness="yes")
    with rejected_by("annotate_judgementslot_one_per_slot"):
        JudgementSlot.objects.create(judgement=judgement, slot=1, grade="A")


@pytest.mark.parametrize("slot", [0, 10])
def test_a_slot_outside_1_to_9_is_rejected(slot):
    with rejected_by("annotate_judgementslot_slot_range"):
        JudgementSlot.objects.create(judgement=a_judgement(choice="1"), slot=slot, grade="A")


@pytest.mark.parametrize("rank", [0, 10])
def test_a_rank_outside_1_to_9_is_rejected(rank):
    judgement = a_judgement(task="ranking", choice="")
    with rejected_by("annotate_judgementslot_rank_range"):
        JudgementSlot.objects.create(judgement=judgement, slot=1, rank=rank)


def test_a_slot_row_without_any_answer_is_rejected():
    with rejected_by("annotate_judgementslot_answers_something"):
        JudgementSlot.objects.create(judgement=a_judgement(choice="1"), slot=2)


def test_a_ranking_with_ties_has_a_rank_per_slot():
    judgement = a_judgement(task="ranking", choice="")
    for slot, rank in [(1, 2), (2, 1), (3, 2), (4, 3)]:
        JudgementSlot.objects.create(judgement=judgement, slot=slot, rank=rank)
    assert list(judgement.slots.order_by("slot").values_list("rank", flat=True)) == [2, 1, 2, 3]


@pytest.mark.parametrize("confidence", [0, 4])
def test_confidence_outside_1_to_3_is_rejected(confidence):
    with rejected_by("annotate_judgement_confidence_range"):
        make_judgement(make_assignment(make_item()), confidence=confidence)


def test_confidence_from_1_to_3_or_none_is_accepted():
    item = make_item()
    for confidence in [None, 1, 2, 3]:
        make_judgement(make_assignment(item), confidence=confidence)


@pytest.mark.parametrize("field", ["seconds_spent", "active_seconds"])
def test_negative_time_is_rejected(field):
    with rejected_by("annotate_judgement_time_nonnegative"):
        make_judgement(make_assignment(make_item()), **{field: -0.5})
    make_judgement(make_assignment(make_item()), **{field: 0})


def test_revision_zero_is_rejected():
    judgement = make_judgement(make_assignment(make_item()))
    with rejected_by("annotate_judgement_revision_positive"):
        Judgement.objects.filter(pk=judgement.pk).update(revision=0)
    judgement.refresh_from_db()
    assert judgement.revision == 1


# --- Invitation (annotate.setup) ---------------------------------------------------


def _invitation(**fields):
    from annotate.models import Invitation

    defaults = {
        "project": make_project(),
        "token_sha256": HEX64,
        "expires_at": timezone.now() + timedelta(days=1),
    }
    return Invitation.objects.create(**{**defaults, **fields})


def test_invitation_with_an_unknown_role_is_rejected():
    with rejected_by("annotate_invitation_role_valid"):
        _invitation(role="owner")


def test_invitation_used_more_than_its_limit_is_rejected():
    with rejected_by("annotate_invitation_uses_within_max"):
        _invitation(max_uses=1, uses=2)
    with rejected_by("annotate_invitation_uses_within_max"):
        _invitation(max_uses=0)


def test_invitation_without_a_limit_or_within_it_is_accepted():
    _invitation(max_uses=None, uses=500)
    _invitation(token_sha256="f" * 64, max_uses=3, uses=3)


# --- Graded preference (issue 24) ----------------------------------------------------


def test_an_unknown_preference_scale_is_rejected():
    with rejected_by("annotate_project_preference_scale_valid"):
        make_project(preference_scale="likert")


def test_an_unknown_project_task_is_rejected():
    with rejected_by("annotate_project_task_valid"):
        make_project(task="pairs")


@pytest.mark.parametrize("strength", [-0.5, 3.5])
def test_a_consensus_strength_outside_0_to_3_is_rejected(strength):
    with rejected_by("annotate_project_consensus_strength_range"):
        make_project(preference_scale="graded6", consensus_strength=strength)


@pytest.mark.parametrize("choice,strength", [("1", -1), ("2", 1), ("tie", 2), ("1", 4)])
def test_a_strength_on_the_other_side_of_its_choice_is_rejected(choice, strength):
    assignment = make_assignment(make_item())
    with rejected_by("annotate_judgement_strength_matches_choice"):
        Judgement.objects.create(assignment=assignment, choice=choice, strength=strength)


def test_a_grade_outside_a_b_c_is_rejected():
    assignment = make_assignment(make_item())
    judgement = Judgement.objects.create(assignment=assignment, choice="1")
    with rejected_by("annotate_judgementslot_grade_valid"):
        JudgementSlot.objects.create(judgement=judgement, slot=2, grade="F")


@pytest.mark.parametrize("order", ["", "1", "11", "13", "122", "123456788", "2x", "0 1"])
def test_a_display_order_that_is_no_permutation_of_its_slots_is_rejected(order):
    item = make_item()
    with rejected_by("annotate_assignment_display_order_permutation"):
        make_assignment(item, display_order=order)


@pytest.mark.parametrize("order", ["12", "21", "312", "4132", "987654321"])
def test_display_orders_of_two_to_nine_slots_are_accepted(order):
    assert make_assignment(make_item(), display_order=order).pk


# --- ProgressCounter ------------------------------------------------------------------


def test_a_projects_counter_stripe_is_one_row():
    # The triggers made the project's stripe row when its item was inserted.
    item = make_item()
    stripe = ProgressCounter.objects.get(project=item.project).stripe
    with rejected_by("annotate_progresscounter_stripe_unique"):
        ProgressCounter.objects.create(project=item.project, stripe=stripe)
