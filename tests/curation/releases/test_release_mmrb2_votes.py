"""A release of MMRB2 pairs from the studio's own votes (issue 24, item 4):
human_annotations written from each annotator's latest graded vote (and the
reasoning task's letter grades), chosen from the verdict, provenance.jsonl
with canonical strengths and grades, pairs only in task files counted as
members, and label-free IDs on request."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from annotate.importing.formats.mmrb2 import import_mmrb2_from_paths
from annotate.loop import scales
from annotate.models import Domain, Item, Project
from curation.benchmarks.mmrb2.annotations import Vote, human_annotations, published_fields
from curation.benchmarks.mrb.release_part import record_prefix
from curation.models import ReleaseItem, ReleaseStatus, Verdict
from curation.releases.build import build_release
from curation.releases.rekey import rekeyed_id
from curation.releases.service import create_release
from tests.annotate.importing.test_mmrb2 import agree_as_published, published_fixture
from tests.factories import make_assignment, make_judgement, make_member, make_user

T2I_1 = "oneigbench_124_-8004320511907750318_imagen4_4116_imagen4_116"
T2I_2 = "genai_7:gpt-image-1_flux"
MINDCUBE = "mindcube_gpt-4o_claude_1"  # MRB-shaped: in all_data.json too
VSTAR = "vstar_claude_claude_2"


# --- pure rules ------------------------------------------------------------------


def test_graded_votes_give_the_published_points_in_vote_order():
    votes = [Vote(3), Vote(-1), Vote(-2)]
    assert human_annotations(task="t2i", votes=votes, scale="graded6", imported=[1, 1, 1]) == [
        6,
        3,
        2,
    ]
    # The published rule: A exactly when the mean is above 3.5.
    assert sum([6, 3, 2]) / 3 > 3.5
    # graded7 writes its own points (4 = tie).
    assert human_annotations(
        task="edit", votes=[Vote(0), Vote(1)], scale="graded7", imported=[]
    ) == [4, 5]
    for strength in (3, 2, 1, -1, -2, -3):
        assert scales.strength_of_value(scales.scale_value(strength, "graded6"), "graded6") == (
            strength
        )


def test_without_studio_votes_the_imported_annotations_stay():
    imported = [2, 2, 1]
    assert human_annotations(task="t2i", votes=[], scale="graded6", imported=imported) is imported
    # A/B votes carry no strength: nothing to write in the 1-6 scale.
    assert human_annotations(task="t2i", votes=[Vote()], scale="ab", imported=imported) is (
        imported
    )
    ratings = {"response_a_ratings": [], "response_b_ratings": []}
    assert human_annotations(
        task="reasoning", votes=[Vote(2)], scale="graded6", imported=ratings
    ) is (ratings)


def test_reasoning_takes_the_letter_grades_per_response():
    votes = [Vote(2, "A", "C"), Vote(-1, "B", "B"), Vote(None, "", "")]
    assert human_annotations(task="reasoning", votes=votes, scale="graded6", imported={}) == {
        "response_a_ratings": ["A", "B"],
        "response_b_ratings": ["C", "B"],
    }


def test_chosen_follows_a_decided_verdict_and_key_order_is_kept():
    fields = {"chosen": "A", "human_annotations": [6, 6, 6], "prompt_source": "x", "x": 1}
    out = published_fields(fields, task="t2i", votes=[], scale="graded6", final_choice="2")
    assert list(out) == list(fields) and out["chosen"] == "B"
    same = published_fields(fields, task="t2i", votes=[], scale="graded6", final_choice=None)
    assert same == fields


def test_rekeyed_mrb_ids_keep_their_official_sub_bucket():
    from curation.benchmarks.mrb.records import sub_bucket

    for category, old in (
        ("reasoning", "math_gpt4_1"),
        ("reasoning", "code_2"),
        ("safety", "pairs_bias_3"),
        ("safety", "tox_4"),
        ("general", "vqa_5"),
    ):
        new = rekeyed_id("salt", record_prefix(category, old), old)
        assert sub_bucket(category, new) == sub_bucket(category, old)
        assert re.fullmatch(r"[a-z-]+_[0-9a-f]{16}", new) and new != old
    assert record_prefix("mmrb2/reasoning", MINDCUBE) == "reasoning"


# --- releases (database) ----------------------------------------------------------------------


def graded_project(tmp_path: Path, tasks=("t2i", "interleaved", "reasoning")) -> Project:
    source = tmp_path / "src"
    published_fixture(source)
    project = Project.objects.create(
        slug="mmv", name="MMRB2 votes", seed=3, preference_scale="graded6"
    )
    for task in tasks:
        import_mmrb2_from_paths(project=project, dataset=source / f"{task}.json")
    Domain.objects.filter(project=project, slug="mmrb2-reasoning").update(asks_grade=True)
    # Every pair decided as published, except T2I_1 (curator: response 1, "A").
    agree_as_published(project)
    Verdict.objects.filter(project=project, item__external_id=T2I_1).update(
        status="resolved", final_choice="1", provenance="adjudicated", reason="clearer sign"
    )
    return project


def vote(item, user, at, strength=None, grades=("", ""), revisions=()):
    """A submitted vote (first submitted at `at`), with earlier revisions."""
    assignment = make_assignment(item, user, status="submitted", submitted_at=at)
    for n, old in enumerate(revisions, start=1):
        make_judgement(
            assignment,
            scales.choice_of(old),
            strength=old,
            revision=n,
            is_current=False,
        )
    make_judgement(
        assignment,
        scales.choice_of(strength) if strength is not None else "1",
        strength=strength,
        grade_1=grades[0],
        grade_2=grades[1],
        revision=len(revisions) + 1,
    )


def cast_votes(project):
    t0 = timezone.now() - timedelta(hours=1)
    ann = [make_member(project, make_user(f"ann{n}"), pseudonym=f"p{n}") for n in range(3)]
    t2i = Item.objects.get(project=project, external_id=T2I_1)
    # First submitted: ann2, then ann0, then ann1; ann0 revised -3 to +1.
    vote(t2i, ann[2], t0, strength=3)
    vote(t2i, ann[0], t0 + timedelta(minutes=1), strength=1, revisions=(-3,))
    vote(t2i, ann[1], t0 + timedelta(minutes=2), strength=-2)
    mindcube = Item.objects.get(project=project, external_id=MINDCUBE)
    vote(mindcube, ann[0], t0, strength=2, grades=("A", "B"))
    vote(mindcube, ann[1], t0 + timedelta(minutes=1), strength=1, grades=("B", "C"))
    return ann


def release_of(project, *, domains=None, rekey=False, version="v1"):
    release = create_release(
        project=project,
        version=version,
        notes="",
        domains=domains or list(project.domains.values_list("slug", flat=True)),
        seed=1,
        user=None,
        enqueue=False,
        rekey=rekey,
    )
    release = build_release(release_id=release.pk)
    assert release.status == ReleaseStatus.READY, release.error
    return release, Path(settings.MEDIA_ROOT) / release.folder


def task_pairs(folder: Path, task: str) -> dict[str, dict]:
    return {
        p["id"]: p for p in json.loads((folder / "mmrb2" / f"{task}.json").read_text())["pairs"]
    }


@pytest.mark.django_db
def test_release_writes_human_annotations_from_votes_and_chosen_from_the_verdict(tmp_path):
    project = graded_project(tmp_path)
    cast_votes(project)
    _, folder = release_of(project)
    t2i = task_pairs(folder, "t2i")
    # Latest revisions, in the order of first submission: +3, +1, -2.
    assert t2i[T2I_1]["human_annotations"] == [6, 4, 2]
    assert t2i[T2I_1]["chosen"] == "A"  # the curator's verdict, not the published "B"
    # No studio votes: as imported, and the file otherwise the published bytes.
    source = json.loads((tmp_path / "src" / "t2i.json").read_text())["pairs"]
    assert t2i[T2I_2] == source[1]
    reasoning = task_pairs(folder, "reasoning")
    assert reasoning[MINDCUBE]["human_annotations"] == {
        "response_a_ratings": ["A", "B"],
        "response_b_ratings": ["B", "C"],
    }
    assert reasoning[VSTAR]["human_annotations"] == {
        "response_a_ratings": [],
        "response_b_ratings": [],
    }
    assert (folder / "mmrb2" / "interleaved.json").read_bytes() == (
        tmp_path / "src" / "interleaved.json"
    ).read_bytes()


@pytest.mark.django_db
def test_provenance_carries_canonical_strengths_and_grades_of_every_member(tmp_path):
    project = graded_project(tmp_path)
    cast_votes(project)
    _, folder = release_of(project)
    lines = [json.loads(line) for line in (folder / "provenance.jsonl").read_text().splitlines()]
    by_id = {line["ID"]: line for line in lines}
    # Every member has a record: the MRB one and the pairs only in task files.
    assert set(by_id) == {T2I_1, T2I_2, "isg_3", MINDCUBE, VSTAR}
    t2i = by_id[T2I_1]
    assert t2i["Better"] is None and t2i["mmrb2"] == {"file": "mmrb2/t2i.json", "chosen": "A"}
    assert t2i["provenance"] == "adjudicated" and t2i["curator_reason"] == "clearer sign"
    assert sorted((v["annotator"], v["strength"]) for v in t2i["votes"]) == [
        ("p0", 1),
        ("p1", -2),
        ("p2", 3),
    ]
    mindcube = by_id[MINDCUBE]
    assert mindcube["Better"] in ("Output1", "Output2")
    assert sorted((v["strength"], v["grade_1"], v["grade_2"]) for v in mindcube["votes"]) == [
        (1, "B", "C"),
        (2, "A", "B"),
    ]


@pytest.mark.django_db
def test_pairs_only_in_task_files_are_members_and_counted(client, tmp_path):
    project = graded_project(tmp_path)
    release, folder = release_of(project)
    card = (folder / "README.md").read_text()
    assert "| `mmrb2/t2i.json` | 2 | 2 |" in card
    members = dict(ReleaseItem.objects.filter(release=release).values_list("external_id", "better"))
    assert members[T2I_1] == "A" and members[T2I_2] == "A" and members["isg_3"] == "A"
    assert members[VSTAR] == "B"
    assert members[MINDCUBE] in ("Output1", "Output2")
    assert ReleaseItem.objects.filter(release=release).mrb_records().count() == 1
    manifest = release.manifest
    assert manifest["total"] == 1  # MRB records
    assert manifest["members"] == {"mmrb2-t2i": 2, "mmrb2-interleaved": 1, "mmrb2-reasoning": 2}
    assert manifest["members_total"] == 5
    assert manifest["mmrb2"]["tasks"]["reasoning"] == {
        "file": "mmrb2/reasoning.json",
        "domain": "mmrb2-reasoning",
        "pairs": 2,
        "mmrb2_only": 1,
        "prompt_source": {"mindcube": 1, "vstar": 1},
        "provenance": {"unanimous": 2},
        "human_annotations_from_votes": 0,
    }
    curator = make_member(project, role="curator")
    client.force_login(curator)
    page = client.get(reverse("release_detail", args=[project.slug, release.pk])).content.decode()
    assert '<td class="num">5</td>' in page and "mmrb2/t2i.json" in page
    listing = client.get(reverse("releases", args=[project.slug])).content.decode()
    assert '<td class="num">5</td>' in listing


@pytest.mark.django_db
def test_a_release_of_image_pairs_only_is_built(tmp_path):
    project = graded_project(tmp_path, tasks=("t2i",))
    release, folder = release_of(project, domains=["mmrb2-t2i"])
    assert release.manifest["members_total"] == 2 and release.manifest["total"] == 0
    assert ReleaseItem.objects.filter(release=release).count() == 2
    assert json.loads((folder / "all_data.json").read_text()) == []
    assert set(task_pairs(folder, "t2i")) == {T2I_1, T2I_2}


@pytest.mark.django_db
def test_rekeyed_release_shows_no_old_id_and_keeps_new_ids_stable(client, tmp_path):
    project = graded_project(tmp_path)
    cast_votes(project)
    release, folder = release_of(project, rekey=True)
    olds = [T2I_1, T2I_2, "isg_3", MINDCUBE, VSTAR]
    for path in folder.rglob("*"):
        if path.is_file():
            assert not any(old in path.name for old in olds), path
            if path.suffix in (".json", ".jsonl", ".md"):
                text = path.read_text()
                leaked = [old for old in olds if old in text]
                assert not leaked, (path.name, leaked)
    assert release.rekey_salt not in (folder / "manifest.json").read_text()
    assert "id_rekey" in release.manifest
    mapping = dict(
        ReleaseItem.objects.filter(release=release).values_list("external_id", "released_id")
    )
    assert set(mapping) == set(olds) and all(mapping.values())
    # The MRB-shaped pair has one new ID in both files.
    records = json.loads((folder / "all_data.json").read_text())
    assert [r["ID"] for r in records] == [mapping[MINDCUBE]]
    assert mapping[MINDCUBE] in task_pairs(folder, "reasoning")
    assert task_pairs(folder, "t2i")[mapping[T2I_1]]["human_annotations"] == [6, 4, 2]
    # Response images renamed with the new ID.
    pair = task_pairs(folder, "t2i")[mapping[T2I_2]]
    assert pair["response_b"]["response_content"][1][1] == f"images/{mapping[T2I_2]}_4.jpg"
    # The next re-keyed release of the project gives the same IDs.
    second, _ = release_of(project, rekey=True, version="v2")
    assert second.rekey_salt == release.rekey_salt
    assert (
        dict(ReleaseItem.objects.filter(release=second).values_list("external_id", "released_id"))
        == mapping
    )
    # The map: curators only, never in the files.
    curator = make_member(project, role="curator")
    client.force_login(curator)
    response = client.get(reverse("release_id_map", args=[project.slug, release.pk]))
    assert response.status_code == 200
    assert json.loads(b"".join(response.streaming_content)) == mapping
    api = client.get(reverse("api_release_id_map", args=[project.slug, release.pk]))
    assert {r["external_id"]: r["released_id"] for r in api.json()["results"]} == mapping
    client.force_login(make_member(project))
    assert client.get(reverse("release_id_map", args=[project.slug, release.pk])).status_code in (
        403,
        404,
    )


@pytest.mark.django_db
def test_a_release_that_kept_its_ids_has_no_map(client, tmp_path):
    project = graded_project(tmp_path, tasks=("t2i",))
    release, _ = release_of(project)
    client.force_login(make_member(project, role="curator"))
    assert client.get(reverse("release_id_map", args=[project.slug, release.pk])).status_code == 404
    api = client.get(reverse("api_release_id_map", args=[project.slug, release.pk]))
    assert api.status_code == 409 and api.json()["error"]["code"] == "not_rekeyed"


@pytest.mark.django_db
def test_rekey_is_an_option_of_the_page_the_api_and_the_command(client, tmp_path):
    project = graded_project(tmp_path, tasks=("t2i",))
    client.force_login(make_member(project, role="curator"))
    page = client.get(reverse("release_new", args=[project.slug])).content.decode()
    assert 'name="rekey"' in page
    response = client.post(
        reverse("release_new", args=[project.slug]),
        {"version": "p1", "domains": ["mmrb2-t2i"], "seed": 1, "rekey": "on"},
    )
    assert response.status_code == 302
    api = client.post(
        reverse("api_releases", args=[project.slug]),
        {"version": "a1", "domains": ["mmrb2-t2i"], "rekey": True},
        content_type="application/json",
    )
    assert api.status_code == 202 and api.json()["rekeyed"] is True
    call_command("build_release", project.slug, "c1", "--rekey", verbosity=0)
    call_command("build_release", project.slug, "c2", verbosity=0)
    rekeyed = dict(project.releases.values_list("version", "rekey_salt"))
    assert rekeyed["p1"] and rekeyed["p1"] == rekeyed["a1"] == rekeyed["c1"]
    assert rekeyed["c2"] == ""


@pytest.mark.django_db
def test_the_export_reads_votes_and_verdicts_in_a_fixed_number_of_queries(tmp_path):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from curation.benchmarks.mmrb2.release_files import export_mmrb2

    project = graded_project(tmp_path)
    with CaptureQueriesContext(connection) as few:
        export_mmrb2(project=project, folder=tmp_path / "a")
    cast_votes(project)  # more votes, same number of queries
    with CaptureQueriesContext(connection) as more:
        export_mmrb2(project=project, folder=tmp_path / "b")
    assert len(more) == len(few)
    # Per task: the ids, then parts, votes, verdicts and items of the batch.
    assert len(few) <= 2 + 3 * 5
