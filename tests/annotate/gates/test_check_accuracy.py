"""Issue 36: item purposes, check accuracy with a Wilson interval, and
check votes that decide no verdict."""

from unittest import mock

import pytest
from django.db import IntegrityError, transaction
from statsmodels.stats.proportion import proportion_confint

from annotate.gates import CheckAccuracy, below_threshold, check_accuracy, wilson_interval
from annotate.models import Item, ItemPurpose
from curation.verdicts import receivers
from tests.factories import make_assignment, make_item, make_judgement, make_project, make_user


@pytest.mark.parametrize(
    ("right", "total"), [(0, 1), (1, 1), (3, 7), (17, 20), (0, 20), (20, 20), (123, 456)]
)
def test_wilson_equals_statsmodels(right, total):
    low, high = wilson_interval(right, total)
    ref_low, ref_high = proportion_confint(right, total, alpha=0.05, method="wilson")
    assert low == pytest.approx(ref_low, abs=1e-9)
    assert high == pytest.approx(ref_high, abs=1e-9)


def test_wilson_without_trials_is_uninformative():
    assert wilson_interval(0, 0) == (0.0, 1.0)


@pytest.mark.django_db
def test_gate_items_need_gold():
    project = make_project()
    with pytest.raises(IntegrityError), transaction.atomic():
        make_item(project, purpose=ItemPurpose.CHECK)
    item = make_item(project, purpose=ItemPurpose.QUALIFICATION, gold_choice="1")
    assert list(Item.objects.benchmark()) == []
    assert item.purpose == "qualification"


@pytest.mark.django_db
def test_check_accuracy_counts_current_votes_on_check_items_only():
    project = make_project()
    annotator, other = make_user(), make_user()
    checks = [make_item(project, purpose=ItemPurpose.CHECK, gold_choice="1") for _ in range(4)]
    for item, choice in zip(checks, ["1", "1", "2", "tie"], strict=True):
        make_judgement(make_assignment(item, annotator), choice)
    make_judgement(make_assignment(checks[0], other), "2")  # another annotator
    benchmark = make_item(project, gold_choice="1")
    make_judgement(make_assignment(benchmark, annotator), "2")  # not a check
    acc = check_accuracy(project, annotator)
    assert (acc.right, acc.total) == (2, 4)
    ref = proportion_confint(2, 4, method="wilson")
    assert acc.low == pytest.approx(ref[0], abs=1e-9)
    assert acc.high == pytest.approx(ref[1], abs=1e-9)
    assert acc.point == 0.5


def test_below_threshold_uses_upper_bound_after_minimum():
    low, high = wilson_interval(2, 10)
    acc = CheckAccuracy(right=2, total=10, low=low, high=high)
    assert below_threshold(acc, threshold=0.8, minimum=10)
    assert not below_threshold(acc, threshold=0.8, minimum=11)
    # 7/10 has an upper bound above 0.8: not paused on a short run.
    low, high = wilson_interval(7, 10)
    assert not below_threshold(
        CheckAccuracy(right=7, total=10, low=low, high=high), threshold=0.8, minimum=5
    )


@pytest.mark.django_db
def test_a_check_vote_moves_no_verdict():
    project = make_project()
    check = make_item(project, purpose=ItemPurpose.CHECK, gold_choice="1")
    benchmark = make_item(project)
    with mock.patch.object(receivers, "update_verdict") as update:
        receivers.update_verdict_on_vote(sender=None, item=check)
        update.assert_not_called()
        receivers.update_verdict_on_vote(sender=None, item=benchmark)
        update.assert_called_once_with(item=benchmark)
