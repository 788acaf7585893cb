"""The release's "too easy" filter (issue 36 item 4)."""

import json
import random

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from curation.models import Evaluation, ItemPrediction, Verdict
from curation.releases.filters import exclude_too_easy
from curation.releases.service import ReleaseError, create_release, included_verdicts
from tests.curation.releases.test_releases import (
    ALL_DOMAINS,
    INCLUDED,
    make_release_project,
    media,
)

pytestmark = pytest.mark.django_db


def pick(rng, label):
    """The label 80 % of the time, the other side otherwise."""
    return label if rng.random() < 0.8 else ("2" if label == "1" else "1")


@pytest.fixture
def ensemble(tmp_path):
    project = make_release_project(tmp_path, slug="tef")
    base = create_release(
        project=project,
        version="v0",
        notes="",
        domains=ALL_DOMAINS,
        seed=3,
        user=None,
        enqueue=False,
    )
    rng = random.Random(36)
    verdicts = list(included_verdicts(project, ALL_DOMAINS).select_related("item"))
    evals = []
    for name in ("judge-a", "judge-b"):
        ev = Evaluation.objects.create(release=base, name=name, predictions="p.jsonl")
        evals.append(ev)
        rows = []
        for v in verdicts:
            if rng.random() < 0.1:
                continue  # not predicted: never "right"
            label = v.final_choice
            swapped = rng.random() < 0.9
            choice = pick(rng, label)
            rows.append(
                ItemPrediction(
                    evaluation=ev,
                    item=v.item,
                    external_id=v.item.external_id,
                    category="c",
                    sub_bucket="s",
                    chosen=label,
                    choice=choice,
                    swapped_choice=pick(rng, label) if swapped else "",
                    has_swapped=swapped,
                    correct=choice == label,
                )
            )
        ItemPrediction.objects.bulk_create(rows)
    return project, evals


def reference(project, ids):
    """Direct computation: items every entry got right in both orders."""
    labels = dict(included_verdicts(project, ALL_DOMAINS).values_list("item_id", "final_choice"))
    right = {}
    for p in ItemPrediction.objects.filter(evaluation_id__in=ids):
        if p.has_swapped and p.choice == labels.get(p.item_id) == p.swapped_choice:
            right.setdefault(p.item_id, set()).add(p.evaluation_id)
    dropped = {i for i, evs in right.items() if evs == set(ids)}
    assert dropped  # the seeded fixture drops something
    return dropped


def test_too_easy_selection_equals_reference(ensemble):
    project, evals = ensemble
    ids = [e.pk for e in evals]
    everything = included_verdicts(project, ALL_DOMAINS)
    with CaptureQueriesContext(connection) as ctx:
        kept = set(exclude_too_easy(everything, ids).values_list("item_id", flat=True))
    # Set-based: the verdicts and the predictions read once each, then the
    # kept ones: three queries, whatever the item count.
    assert len(ctx.captured_queries) == 3
    dropped = set(everything.values_list("item_id", flat=True)) - kept
    assert dropped == reference(project, ids)


def test_release_with_too_easy_filter_states_what_it_dropped(ensemble):
    from curation.releases.build import build_release

    project, evals = ensemble
    ids = [e.pk for e in evals]
    expected = reference(project, ids)
    release = create_release(
        project=project,
        version="v-easy",
        notes="",
        domains=ALL_DOMAINS,
        seed=11,
        user=None,
        enqueue=False,
        too_easy_ensemble=ids,
    )
    release = build_release(release_id=release.pk)
    assert release.status == "ready", release.error
    records = json.loads((media(release.folder) / "all_data.json").read_text())
    dropped_ext = set(
        Verdict.objects.filter(item_id__in=expected).values_list("item__external_id", flat=True)
    )
    assert {r["ID"] for r in records} == INCLUDED - dropped_ext
    manifest = json.loads((media(release.folder) / "manifest.json").read_text())
    f = manifest["release_filters"]["too_easy"]
    assert f["dropped"] == len(expected)
    assert [e["name"] for e in f["ensemble"]] == ["judge-a", "judge-b"]
    card = (media(release.folder) / "README.md").read_text()
    assert "Too-easy filter" in card and f"{len(expected)} pair(s)" in card


def test_unknown_ensemble_entry_is_refused(ensemble):
    project, _ = ensemble
    with pytest.raises(ReleaseError, match="Unknown evaluation"):
        create_release(
            project=project,
            version="v-x",
            notes="",
            domains=ALL_DOMAINS,
            seed=1,
            user=None,
            enqueue=False,
            too_easy_ensemble=[999999],
        )
