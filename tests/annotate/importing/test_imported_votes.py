"""Issue 30, deliverable B: published annotations can become votes. An MMRB2
task file's human_annotations, imported with the option, are votes of
pseudonymous imported annotators (inactive, no password), marked imported
in every view and export; the contested rule, agreement and the audit read
them; a release from them reproduces the published files; they never take
a lease from the live queue."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.urls import reverse
from rest_framework.test import APIClient

from annotate.importing.formats.mmrb2 import import_mmrb2_from_paths
from annotate.importing.records import ImportFailed
from annotate.importing.service import import_items_from_paths
from annotate.loop import scales
from annotate.loop.service import claim_next_item
from annotate.models import Assignment, AssignmentStatus, Item, Judgement, Membership
from curation.exports.records import VOTE_COLUMNS
from curation.exports.service import export_rows
from curation.models import ReleaseStatus, Verdict
from curation.releases.build import build_release
from curation.releases.service import create_release
from curation.verdicts.decisions import resolve_item
from tests.annotate.importing.test_mmrb2 import published_fixture
from tests.factories import make_member, make_project

pytestmark = pytest.mark.django_db

TASKS = ("t2i", "edit", "interleaved", "reasoning")


def import_all(project, source: Path, **options):
    return [
        import_mmrb2_from_paths(project=project, dataset=source / f"{task}.json", **options)
        for task in TASKS
    ]


@pytest.fixture
def source(tmp_path):
    published_fixture(tmp_path / "src")
    return tmp_path / "src"


def test_without_the_option_annotations_stay_metadata(source):
    project = make_project(preference_scale=scales.GRADED6)
    results = import_all(project, source)
    assert sum(r.votes_cast for r in results) == 0
    assert not Judgement.objects.exists()
    assert not get_user_model().objects.filter(username__startswith="imported-").exists()


def test_annotations_become_votes_of_imported_annotators(source, client):
    project = make_project(slug="mm", preference_scale=scales.GRADED6)
    results = import_all(project, source, cast_votes=True)
    # t2i 3 + 3, edit 3, interleaved 3, reasoning 3 + 0 (vstar has no ratings).
    assert [r.votes_cast for r in results] == [6, 3, 3, 3]
    users = get_user_model().objects.filter(username__startswith="imported-mm-").order_by("pk")
    assert [u.username for u in users] == ["imported-mm-1", "imported-mm-2", "imported-mm-3"]
    for n, user in enumerate(users, start=1):
        assert not user.is_active and not user.has_usable_password()
        member = Membership.objects.get(project=project, user=user)
        assert (member.pseudonym, member.role, member.is_active) == (
            f"imported-{n}",
            "annotator",
            False,
        )
        client.post(reverse("login"), {"username": user.username, "password": ""})
        assert "_auth_user_id" not in client.session
    t2i = Item.objects.get(
        external_id="oneigbench_124_-8004320511907750318_imagen4_4116_imagen4_116"
    )
    votes = list(
        Judgement.objects.filter(assignment__item=t2i).order_by("assignment__annotator_id")
    )
    assert [(v.choice, v.strength, v.imported) for v in votes] == [
        ("2", -2, True),
        ("2", -2, True),
        ("2", -3, True),
    ]  # [2, 2, 1]: B better, B better, B much better
    reasoning = Item.objects.get(external_id="mindcube_gpt-4o_claude_1")
    grades = (
        Judgement.objects.with_pair_answers()
        .filter(assignment__item=reasoning)
        .order_by("assignment_id")
    )
    assert [(j.grade_1, j.grade_2, j.choice) for j in grades] == [
        ("A", "C", "1"),
        ("B", "C", "1"),
        ("A", "B", "1"),
    ]
    # Submitted, never open: no lease, nobody's work in progress.
    assert not Assignment.objects.filter(status=AssignmentStatus.OPEN).exists()
    t2i.refresh_from_db()
    assert (t2i.votes_2, t2i.live_assignments, t2i.votes_needed) == (3, 3, 3)
    # The contested rule read them.
    status = dict(Verdict.objects.values_list("item__external_id", "status"))
    assert status["genai_7:gpt-image-1_flux"] == "agreed"  # [6, 5, 4]
    assert status["emu_edit_9_a_b"] == "contested"  # [4, 4, 3]: 2-1, nobody left to ask
    assert status["vstar_claude_claude_2"] == "needs_votes"  # no annotations


def test_imported_votes_leave_the_live_queue_to_the_team(source):
    project = make_project(slug="mm", preference_scale=scales.GRADED6)
    live = make_member(project)
    import_all(project, source, cast_votes=True)
    claimed = []
    while (assignment := claim_next_item(project=project, annotator=live)) is not None:
        claimed.append(assignment.item.external_id)
        Assignment.objects.filter(pk=assignment.pk).update(status=AssignmentStatus.SKIPPED)
        Item.objects.filter(pk=assignment.item_id).update(live_assignments=0, votes_needed=0)
    # Only what the published votes leave open: the 2-1 split escalated to the one
    # live annotator, and the pair nobody annotated.
    assert sorted(claimed) == ["emu_edit_9_a_b", "vstar_claude_claude_2"]
    assert Membership.objects.get(project=project, user=live).judged == 0


def test_a_release_from_the_imported_votes_reproduces_the_published_files(source):
    project = make_project(slug="mm", preference_scale=scales.GRADED6)
    curator = make_member(project, role="curator")
    import_all(project, source, cast_votes=True)
    published = {
        pair["id"]: pair["chosen"]
        for task in TASKS
        for pair in json.loads((source / f"{task}.json").read_text())["pairs"]
    }
    # What the votes could not decide, a curator decides as the publishers did.
    for verdict in Verdict.objects.exclude(status="agreed").select_related("item"):
        resolve_item(
            project=project, item_id=verdict.item_id, curator=curator,
            choice={"A": "1", "B": "2"}[published[verdict.item.external_id]],
            reason="as published", version=verdict.version,
        )  # fmt: skip
    release = create_release(
        project=project, version="v1", notes="", domains=[f"mmrb2-{t}" for t in TASKS],
        seed=1, user=None, enqueue=False,
    )  # fmt: skip
    release = build_release(release_id=release.pk)
    assert release.status == ReleaseStatus.READY, release.error
    folder = Path(settings.MEDIA_ROOT) / release.folder
    for task in TASKS:
        assert (folder / "mmrb2" / f"{task}.json").read_bytes() == (
            source / f"{task}.json"
        ).read_bytes(), task
    provenance = [json.loads(line) for line in (folder / "provenance.jsonl").open()]
    votes = [v for record in provenance for v in record.get("votes", [])]
    assert votes and all(v["imported"] and v["annotator"].startswith("imported-") for v in votes)


def test_an_ab_project_casts_sides_and_still_writes_the_published_points(source):
    project = make_project(slug="ab")
    import_all(project, source, cast_votes=True)
    votes = Judgement.objects.filter(assignment__item__external_id="emu_edit_9_a_b")
    assert sorted((v.choice, v.strength) for v in votes) == [("1", None), ("1", None), ("2", None)]


def test_every_view_and_export_marks_imported_votes(source, client):
    project = make_project(slug="mm", preference_scale=scales.GRADED6)
    curator = make_member(project, role="curator")
    import_all(project, source, cast_votes=True)
    columns = [name for name, _ in VOTE_COLUMNS]
    rows = [
        dict(zip(columns, row, strict=True)) for row in export_rows(project=project, kind="votes")
    ]
    assert rows and all(r["imported"] and r["annotator"].startswith("imported-") for r in rows)
    item = Item.objects.get(external_id="emu_edit_9_a_b")
    client.force_login(curator)
    page = client.get(reverse("adjudicate", args=[project.slug, item.pk]))
    assert page.status_code == 200
    assert page.content.count(b'<span class="tag">imported</span>') == 3
    api = APIClient()
    api.force_authenticate(curator)
    body = api.get(f"/api/v1/projects/{project.slug}/verdicts/{item.pk}/").json()
    assert [v["imported"] for v in body["current_votes"]] == [True, True, True]
    assert {v["annotator"] for v in body["current_votes"]} == {
        "imported-1",
        "imported-2",
        "imported-3",
    }


def test_the_audit_reads_imported_graded_votes(source):
    pytest.importorskip("cleanlab")
    from curation.models import ItemQuality, LabelQualityRun
    from curation.quality.service import compute_label_quality, request_label_quality

    project = make_project(slug="mm", preference_scale=scales.GRADED6)
    import_all(project, source, cast_votes=True)
    request_label_quality(project=project, evaluations=[])
    compute_label_quality(project_id=project.pk)
    run = LabelQualityRun.objects.get(project=project)
    assert run.payload["n_votes"] == 15 and run.payload["graded"]
    assert ItemQuality.objects.filter(project=project).count() == 5


def test_a_bad_annotation_names_file_pair_and_field_and_writes_nothing(source):
    data = json.loads((source / "t2i.json").read_text())
    data["pairs"][1]["human_annotations"] = [6, 7, 4]
    (source / "t2i.json").write_text(json.dumps(data, indent=2))
    project = make_project(preference_scale=scales.GRADED6)
    with pytest.raises(ImportFailed) as exc:
        import_mmrb2_from_paths(project=project, dataset=source / "t2i.json", cast_votes=True)
    message = str(exc.value)
    assert "t2i.json" in message and "genai_7:gpt-image-1_flux" in message
    assert "human_annotations[1]" in message and "7" in message
    assert not Item.objects.exists() and not Judgement.objects.exists()
    assert not get_user_model().objects.filter(username__startswith="imported-").exists()


def test_a_seven_point_project_and_a_format_without_annotators_are_refused(source, tmp_path):
    project = make_project(preference_scale=scales.GRADED7)
    with pytest.raises(ImportFailed, match="six-point scale"):
        import_mmrb2_from_paths(project=project, dataset=source / "t2i.json", cast_votes=True)
    assert not Item.objects.exists()
    mrb = tmp_path / "mrb.json"
    from tests.factories import mrb_record

    mrb.write_text(json.dumps([mrb_record()]))
    with pytest.raises(ImportFailed, match="per-annotator labels"):
        import_items_from_paths(project=make_project(), dataset=mrb, cast_votes=True)
    assert not Item.objects.exists()


def test_importing_again_casts_nothing_more(source):
    project = make_project(preference_scale=scales.GRADED6)
    import_all(project, source, cast_votes=True)
    again = import_all(project, source, cast_votes=True)
    assert sum(r.votes_cast for r in again) == 0
    assert Judgement.objects.count() == 15


def test_the_api_and_the_form_offer_the_option(source, client, tmp_path):
    import zipfile

    from django.core.files.uploadedfile import SimpleUploadedFile

    project = make_project(slug="mm", preference_scale=scales.GRADED6)
    admin = make_member(project, role="admin")
    images = tmp_path / "images.zip"
    with zipfile.ZipFile(images, "w") as zf:
        for folder in ("images", "input_images"):
            for path in (source / folder).iterdir():
                zf.write(path, f"{folder}/{path.name}")
    api = APIClient()
    api.force_authenticate(admin)
    response = api.post(
        f"/api/v1/projects/{project.slug}/imports/",
        {
            "dataset": SimpleUploadedFile("t2i.json", (source / "t2i.json").read_bytes()),
            "images": SimpleUploadedFile("images.zip", images.read_bytes()),
            "cast_votes": "true",
        },
        format="multipart",
    )
    assert response.status_code == 200, response.content[:2000]
    assert response.json()["votes_cast"] == 6
    client.force_login(admin)
    page = client.get(reverse("import", args=[project.slug]))
    assert b"Cast published annotations as votes" in page.content
    response = client.post(
        reverse("import", args=[project.slug]),
        {
            "dataset": SimpleUploadedFile("edit.json", (source / "edit.json").read_bytes()),
            "images": SimpleUploadedFile("images.zip", images.read_bytes()),
            "cast_votes": "on",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Judgement.objects.filter(assignment__item__domain__slug="mmrb2-edit").count() == 3
