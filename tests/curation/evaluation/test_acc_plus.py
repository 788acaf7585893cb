"""Issue 34: a release freezes each member's group key, and scoring a
release with groups reports Acc+ (the share of groups whose every member is
right; strict: a tie or a missing prediction is wrong; a member without a
group is a group of its own), equal to a re-derivation from the lines; the
leaderboard shows it (page and CSV) only where the release has groups."""

import json

import pytest
from django.urls import reverse

from annotate.models import Item
from curation.models import Evaluation, ReleaseItem
from curation.releases.groups import acc_plus
from tests.curation.evaluation.test_evaluations import records_of, upload
from tests.curation.releases.test_releases import built, make_release_project
from tests.factories import make_member

pytestmark = pytest.mark.django_db


def score_lines(records, wrong=(), tie=(), missing=()):
    lines = []
    for r in records:
        if r["ID"] in missing:
            continue
        good = r["Better"] == "Output1"
        if r["ID"] in wrong:
            good = not good
        s1, s2 = (1.0, 0.0) if good else (0.0, 1.0)
        if r["ID"] in tie:
            s1 = s2 = 0.5
        lines.append(json.dumps({"ID": r["ID"], "score_1": s1, "score_2": s2}))
    return "\n".join(lines).encode()


def reference_acc_plus(records, groups, wrong, tie, missing):
    """Straight from the definition: group the IDs, a group is right when
    none of its IDs is wrong, tied or missing."""
    by_group: dict[str, list[str]] = {}
    for r in records:
        by_group.setdefault(groups.get(r["ID"]) or "own:" + r["ID"], []).append(r["ID"])
    bad = set(wrong) | set(tie) | set(missing)
    right = [g for g, ids in by_group.items() if not bad & set(ids)]
    return len(right) / len(by_group), len(right), len(by_group)


@pytest.fixture
def grouped_release(tmp_path):
    project = make_release_project(tmp_path, slug="accp")
    items = list(Item.objects.filter(project=project).order_by("pk"))
    # Groups of two, the last item alone.
    for n, item in enumerate(items[:-1]):
        Item.objects.filter(pk=item.pk).update(group_key=f"prompt-{n // 2}")
    return built(project)


def test_the_release_freezes_each_members_group_key(grouped_release):
    members = ReleaseItem.objects.filter(release=grouped_release).select_related("item")
    assert members.exists()
    for m in members:
        assert m.group_key == m.item.group_key
    # Frozen: a later change of the item leaves the release alone.
    Item.objects.filter(project=grouped_release.project).update(group_key="moved")
    assert not ReleaseItem.objects.filter(release=grouped_release, group_key="moved").exists()


def test_scoring_reports_acc_plus_strictly(client, grouped_release):
    release = grouped_release
    client.force_login(make_member(release.project, role="curator"))
    records = records_of(release)
    groups = {
        m.released_id or m.external_id: m.group_key
        for m in ReleaseItem.objects.filter(release=release)
    }
    ids = [r["ID"] for r in records]
    assert len(ids) >= 5
    wrong, tie, missing = {ids[0]}, {ids[2]}, {ids[4]}
    response = upload(client, release, "rm", score_lines(records, wrong, tie, missing))
    assert response.status_code == 302
    report = Evaluation.objects.get(release=release, name="rm").report
    got = report["extras"]["acc_plus"]
    value, right, total = reference_acc_plus(records, groups, wrong, tie, missing)
    assert got["value"] == pytest.approx(value, abs=1e-9)
    assert (got["correct_groups"], got["groups"], got["members"]) == (right, total, len(ids))
    page = client.get(reverse("leaderboard", args=[release.project.slug, release.pk]))
    assert b"Acc+" in page.content
    assert f"{right}/{total} groups".encode() in page.content


def test_no_acc_plus_without_groups(client, tmp_path):
    release = built(make_release_project(tmp_path, slug="nogr"))
    client.force_login(make_member(release.project, role="curator"))
    records = records_of(release)
    assert upload(client, release, "rm", score_lines(records)).status_code == 302
    report = Evaluation.objects.get(release=release, name="rm").report
    assert "acc_plus" not in report["extras"]
    page = client.get(reverse("leaderboard", args=[release.project.slug, release.pk]))
    assert b"Acc+" not in page.content


def test_acc_plus_rule_on_edge_cases():
    groups = {"a1": "a", "a2": "a", "b1": "b", "b2": "b"}
    members = ["a1", "a2", "b1", "b2", "solo", "solo2"]
    right = {"a1": True, "a2": True, "b1": True, "b2": None, "solo": True}
    result = acc_plus(members, groups, right)  # b2 tied, solo2 missing
    assert (result.correct_groups, result.groups, result.members) == (2, 4, 6)
    assert result.value == pytest.approx(0.5, abs=1e-12)
    assert acc_plus([], {}, {}).value is None


def test_the_leaderboard_csv_has_acc_plus_only_with_groups():
    from types import SimpleNamespace

    from curation.benchmarks.mrb import leaderboard

    official = {"groups": [{"name": "all", "correct": 1, "total": 2, "accuracy": 0.5}]}
    grouped = SimpleNamespace(
        name="grouped",
        report={
            "official": official,
            "extras": {"acc_plus": {"value": 0.25, "correct_groups": 1, "groups": 4}},
        },
    )
    plain = SimpleNamespace(name="plain", report={"official": official, "extras": {}})
    columns, rows = leaderboard.rows_of([grouped, plain])
    leaderboard.sort_rows(rows, columns, "acc_plus")
    assert [r["evaluation"].name for r in rows] == ["grouped", "plain"]
    out = leaderboard.csv_rows(columns, rows)
    assert out[0][-1] == "acc_plus_extra"
    assert out[1][-1] == "0.250000" and out[2][-1] == ""
    _, rows = leaderboard.rows_of([plain])
    assert "acc_plus_extra" not in leaderboard.csv_rows(columns, rows)[0]
