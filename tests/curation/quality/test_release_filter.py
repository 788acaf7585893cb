"""The release form's optional "consensus quality >= x" filter."""

import json

import pytest
from django.urls import reverse
from django.utils import timezone

from annotate.models import Item
from curation.models import ItemQuality, LabelQualityRun, LabelQualityStatus, Release
from curation.releases.service import ReleaseError, create_release
from tests.curation.releases.test_releases import (
    ALL_DOMAINS,
    INCLUDED,
    built,
    make_release_project,
    media,
)
from tests.factories import make_member

pytestmark = pytest.mark.django_db

# (external ID, current label, CROWDLAB probability of it)
SCORES = [
    ("pref_1", "1", 0.12),  # unanimous, low: left out
    ("gc_2", "2", 0.30),  # majority, low: left out
    ("gc_3", "1", 0.05),  # adjudicated by a curator: kept
    ("vqa_1", "1", 0.97),  # high: kept
    ("vqa_2", "1", 0.10),  # scored when the label was 1; it is 2 now: stale, kept
]


@pytest.fixture
def project(tmp_path):
    project = make_release_project(tmp_path, slug="lqf")
    for ext_id, label, quality in SCORES:
        item = Item.objects.get(project=project, external_id=ext_id)
        ItemQuality.objects.create(
            project=project,
            item=item,
            n1=2,
            n2=0,
            consensus="2",
            consensus_quality=1 - quality,
            annotator_agreement=1.0,
            ds_p1=0.9,
            label=label,
            label_quality=quality,
        )
    LabelQualityRun.objects.create(
        project=project,
        status=LabelQualityStatus.READY,
        computed_at=timezone.now(),
        payload={"entries": ["judge-a", "judge-b"]},
    )
    return project


def test_filter_leaves_out_low_quality_rule_agreed_labels_and_records_it(project):
    from curation.releases.build import build_release

    release = create_release(
        project=project,
        version="v-filtered",
        notes="",
        domains=ALL_DOMAINS,
        seed=11,
        user=None,
        enqueue=False,
        min_label_quality=0.5,
    )
    release = build_release(release_id=release.pk)
    assert release.status == "ready", release.error
    records = json.loads((media(release.folder) / "all_data.json").read_text())
    assert {r["ID"] for r in records} == INCLUDED - {"pref_1", "gc_2"}
    manifest = json.loads((media(release.folder) / "manifest.json").read_text())
    f = manifest["label_quality_filter"]
    assert f["min"] == 0.5 and f["excluded"] == 2 and f["entries"] == ["judge-a", "judge-b"]
    card = (media(release.folder) / "README.md").read_text()
    assert "Consensus-quality filter" in card and "below 0.5" in card and "2 left out" in card


def test_without_the_filter_nothing_changes(project):
    release = built(project, "v-plain")
    records = json.loads((media(release.folder) / "all_data.json").read_text())
    assert {r["ID"] for r in records} == INCLUDED
    manifest = json.loads((media(release.folder) / "manifest.json").read_text())
    assert "label_quality_filter" not in manifest


def test_filter_needs_a_computed_analysis_and_a_threshold_in_range(project):
    LabelQualityRun.objects.filter(project=project).update(status=LabelQualityStatus.FAILED)
    with pytest.raises(ReleaseError, match="Compute label quality first"):
        create_release(
            project=project,
            version="v-x",
            notes="",
            domains=ALL_DOMAINS,
            seed=1,
            user=None,
            enqueue=False,
            min_label_quality=0.5,
        )
    assert not Release.objects.filter(version="v-x").exists()


def test_release_form_takes_the_threshold(client, project):
    client.force_login(make_member(project, role="curator"))
    response = client.post(
        reverse("release_new", args=[project.slug]),
        {"version": "v-form", "domains": ALL_DOMAINS, "seed": 3, "min_label_quality": "0.4"},
    )
    assert response.status_code == 302
    assert Release.objects.get(version="v-form").min_label_quality == 0.4
    bad = client.post(
        reverse("release_new", args=[project.slug]),
        {"version": "v-bad", "domains": ALL_DOMAINS, "seed": 3, "min_label_quality": "1.5"},
    )
    assert bad.status_code == 400
