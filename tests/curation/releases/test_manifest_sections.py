"""The release manifest: the agreement dashboard's own bootstrap intervals
(one seed for both), the release's real creation time, and the contested
rule in force when each released verdict was decided."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from annotate.importing.service import import_items_from_paths
from annotate.loop.service import Vote, claim_next_item, submit_judgement
from annotate.models import Item, Project
from curation.agreement import reports
from curation.models import RELEASABLE, AgreementCache, AuditEvent, Release, Verdict
from curation.verdicts.decisions import resolve_item
from curation.verdicts.service import update_thresholds
from tests.curation.releases.test_releases import built, media, write_dataset
from tests.factories import make_member

pytestmark = pytest.mark.django_db

# 40 vqa items and 10 preference items: enough that every bootstrap resample
# of a domain varies (a 5-item domain's interval is undefined).
PLAN = [(f"vqa_{i}", "vqa") for i in range(40)]
PLAN += [(f"pref_{i}", "general_preference") for i in range(10)]


def winner(index: int) -> str:
    return "1" if index % 2 == 0 else "2"


def voted_release_project(tmp_path, slug="mr") -> Project:
    """Three annotators vote on every item: items whose number is a multiple
    of 3 split 2-1 (contested at agree_share 0.8, no escalation), the others
    are unanimous."""
    project = Project.objects.create(
        slug=slug, name="Manifest", seed=5, votes_per_item=3, escalation_votes=0
    )
    project.create_default_domains()
    source = tmp_path / f"source-{slug}"
    import_items_from_paths(
        project=project, dataset=write_dataset(source, plan=PLAN), images=source
    )
    annotators = [make_member(project, pseudonym=f"A{k}") for k in range(3)]
    for k, user in enumerate(annotators):
        while (a := claim_next_item(project=project, annotator=user)) is not None:
            number = int(a.item.external_id.rsplit("_", 1)[1])
            choice = winner(number)
            if number % 3 == 0 and k == 2:
                choice = "2" if choice == "1" else "1"
            labels = {"correct_1": "unsure", "correct_2": "unsure"}
            vote = Vote(choice=choice, **(labels if a.item.domain.is_correctness else {}))
            submit_judgement(assignment_id=a.pk, annotator=user, vote=vote)
    return project


def test_the_manifest_shows_the_dashboards_intervals_drawn_with_one_seed(tmp_path):
    project = voted_release_project(tmp_path)
    update_thresholds(
        project=project, actor=None, votes_per_item=3, agree_share=0.6, escalation_votes=0
    )
    # The release's own seed (the Output1/Output2 shuffle) is not the bootstrap's.
    release = built(project, seed=99)
    reports.refresh_cache(project=project)
    dashboard = {row.key: row for row in reports.build_report(project).domains}
    manifest = json.loads(media(release.folder).joinpath("manifest.json").read_text())
    seed = manifest["agreement_bootstrap"]["seed"]
    assert seed == project.seed == 5
    assert AgreementCache.objects.get(project=project).payload["seed"] == seed
    assert manifest["agreement_bootstrap"]["n_resamples"] == reports.BOOTSTRAP_RESAMPLES
    for slug in ("vqa", "general_preference"):
        row, written = dashboard[slug], manifest["agreement"][slug]
        ci = row.alpha_ci
        assert isinstance(ci, reports.agreement.Interval), (slug, ci)
        assert written["ci95"] == {"low": ci.low, "high": ci.high}
        assert written["ci"] == reports.fmt(ci)
        assert written["alpha_value"] == row.summary.choice.alpha
        assert written["alpha"] == reports.fmt(row.summary.choice.alpha)
    assert release.manifest["agreement"] == manifest["agreement"]  # the stored copy too


def test_the_dashboard_intervals_do_not_change_with_the_source_of_the_votes(tmp_path):
    """The cache and the manifest draw from the same function and seed."""
    project = voted_release_project(tmp_path)
    payload = reports.compute_expensive(project)
    direct = reports.alpha_intervals(project)
    for key, names in direct.items():
        for name, ci in names.items():
            assert reports.from_json(payload["ci"][key][name]) == ci


def test_created_at_is_the_releases_real_creation_time_and_snapshot_is_kept(tmp_path):
    project = voted_release_project(tmp_path)
    release = built(project)
    manifest = release.manifest
    assert manifest["created_at"] == release.created_at.isoformat()
    assert datetime.fromisoformat(manifest["created_at"]) == release.created_at
    newest = Verdict.objects.filter(RELEASABLE, project=project).latest("updated_at").updated_at
    assert manifest["snapshot_at"] == newest.isoformat()
    # Another release of the same state: other created_at, same records.
    again = built(project, "v2.0")
    assert again.manifest["created_at"] == again.created_at.isoformat() != manifest["created_at"]
    assert (
        media(again.folder).joinpath("all_data.json").read_bytes()
        == media(release.folder).joinpath("all_data.json").read_bytes()
    )


def test_each_verdict_records_the_rule_in_force_when_it_was_decided(tmp_path):
    project = voted_release_project(tmp_path)
    curator = make_member(project, role="curator")
    # Decided by a curator under the first thresholds.
    vqa_0 = Item.objects.get(project=project, external_id="vqa_0")
    resolve_item(
        project=project,
        item_id=vqa_0.pk,
        curator=curator,
        choice="1",
        reason="checked the image",
        version=None,
    )
    # The other splits become agreed when the share threshold drops.
    update_thresholds(
        project=project, actor=curator, votes_per_item=3, agree_share=0.6, escalation_votes=0
    )
    release = built(project)
    rules = release.manifest["decision_rules"]
    changed = AuditEvent.objects.get(project=project, action="thresholds").created_at
    first, second = rules["versions"]
    assert first["votes_per_item"] == 3 and first["agree_share"] == 0.8
    assert first["escalation_votes"] == 0
    assert first["in_force_from"] is None and first["in_force_until"] == changed.isoformat()
    assert second["agree_share"] == 0.6 and second["in_force_from"] == changed.isoformat()
    assert second["in_force_until"] is None
    released = {
        r["ID"] for r in json.loads(media(release.folder).joinpath("all_data.json").read_text())
    }
    decided = {}
    for v in rules["versions"]:
        for by in ("rule", "curator"):
            for ext_id in v[f"decided_by_{by}"]:
                assert ext_id not in decided, ext_id  # in exactly one list
                decided[ext_id] = (v["version"], by)
        assert v["verdicts"] == len(v["decided_by_rule"]) + len(v["decided_by_curator"])
    assert set(decided) == released == {ext for ext, _ in PLAN}
    for ext_id, entry in decided.items():
        number = int(ext_id.rsplit("_", 1)[1])
        if ext_id == "vqa_0":
            assert entry == (0, "curator")
        elif number % 3 == 0:  # agreed only under the lower threshold
            assert entry == (1, "rule"), ext_id
        else:  # unanimous at the third vote
            assert entry == (0, "rule"), ext_id
    # the decision times behind it, from the audit trail
    split = Item.objects.get(project=project, external_id="vqa_3")
    assert (
        AuditEvent.objects.filter(item=split, action="rule").latest("created_at").created_at
        >= changed
    )


def test_without_a_threshold_change_every_verdict_names_the_current_rule(tmp_path):
    project = voted_release_project(tmp_path)
    release = built(project)
    (only,) = release.manifest["decision_rules"]["versions"]
    assert (only["votes_per_item"], only["agree_share"], only["escalation_votes"]) == (3, 0.8, 0)
    assert only["in_force_from"] is None and only["in_force_until"] is None
    assert only["verdicts"] == len(only["decided_by_rule"]) == release.manifest["total"]
    assert only["decided_by_curator"] == []
    assert Release.objects.get(pk=release.pk).manifest == release.manifest
