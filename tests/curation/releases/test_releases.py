"""Releases from the database: membership, prefixes and warnings, balance and
determinism, atomic publishing, round trip through the importer, the pages.

Every built release is checked with the format reader of test_exporter."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from annotate.importing.service import import_items_from_paths
from annotate.models import Item, Membership, Project
from curation.benchmarks.mrb.release_part import wrong_bucket_warnings
from curation.models import Release, ReleaseItem, ReleaseStatus, Verdict
from curation.releases import build, exporter, publishing
from curation.releases.build import build_release
from curation.releases.service import ReleaseError, create_release
from curation.verdicts.decisions import exclude_item, reopen_item, resolve_item
from tests.curation.releases.test_exporter import (
    CATEGORIES,
    check_release_folder,
    check_release_zip,
)
from tests.factories import make_assignment, make_judgement, make_member, make_user, png_bytes

pytestmark = pytest.mark.django_db

ALL_DOMAINS = list(CATEGORIES)

# ID, domain slug, status, final choice, provenance. Only agreed and resolved go out.
PLAN = [
    ("gc_1", "general_correctness", "agreed", "1", "unanimous"),
    ("gc_2", "general_correctness", "agreed", "2", "majority"),
    ("gc_3", "general_correctness", "resolved", "1", "adjudicated"),
    ("pref_1", "general_preference", "agreed", "1", "unanimous"),
    ("pref_2", "general_preference", "agreed", "2", "unanimous"),
    ("pref_3", "general_preference", "agreed", "1", "majority"),
    ("pref_4", "general_preference", "resolved", "2", "adjudicated"),
    ("pref_5", "general_preference", "contested", "", ""),
    ("know_1", "knowledge", "agreed", "1", "unanimous"),
    ("know_2", "knowledge", "excluded", "", ""),
    ("math_1", "reasoning", "agreed", "2", "unanimous"),
    ("coding_2", "reasoning", "agreed", "1", "unanimous"),
    ("geo_math_3", "reasoning", "resolved", "1", "adjudicated"),
    ("pairs_1", "safety", "agreed", "1", "unanimous"),
    ("toxic_2", "safety", "agreed", "2", "majority"),
    ("my_pairs_3", "safety", "agreed", "2", "unanimous"),
    ("safety_4", "safety", "needs_votes", "", ""),
    ("vqa_1", "vqa", "agreed", "1", "unanimous"),
    ("vqa_2", "vqa", "agreed", "2", "unanimous"),
    ("vqa_3", "vqa", "agreed", "2", "majority"),
    ("vqa_4", "vqa", "resolved", "1", "adjudicated"),
    ("vqa_5", "vqa", "agreed", "1", "unanimous"),
]
INCLUDED = {row[0] for row in PLAN if row[2] in ("agreed", "resolved")}


def write_dataset(folder: Path, plan=PLAN, *, reverse_order=False) -> Path:
    """An MRB-format file with its images. vqa_1 and vqa_2 share one image."""
    (folder / "img").mkdir(parents=True, exist_ok=True)
    records = []
    for n, (ext_id, slug, *_rest) in enumerate(plan):
        name = "img/shared.png" if ext_id in ("vqa_1", "vqa_2") else f"img/{ext_id}.png"
        (folder / name).write_bytes(png_bytes(size=(40, 30), color=(7 * n % 256, 90, 200)))
        records.append(
            {
                "ID": ext_id,
                "Text": f'Question about {ext_id}: «what» is "shown"?\nTwo lines.',
                "Image": name,
                "Output1": f"{ext_id} first response",
                "Output2": f"{ext_id} second response",
                "Better": "Output1",
                "Category": CATEGORIES[slug],
            }
        )
    if reverse_order:
        records.reverse()
    path = folder / "data.json"
    path.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    return path


def apply_plan(project: Project, plan=PLAN) -> None:
    """Set verdicts as planned, and give two items votes by pseudonymous annotators."""
    for ext_id, _slug, status, choice, provenance in plan:
        Verdict.objects.filter(project=project, item__external_id=ext_id).update(
            status=status,
            final_choice=choice,
            provenance=provenance,
            reason="curator: response text checked" if provenance == "adjudicated" else "",
            exclusion_category="ambiguous" if status == "excluded" else "",
        )
    voters = []
    for n in (1, 2):
        user = make_user(f"{project.slug}-voter{n}")
        Membership.objects.create(project=project, user=user, role="annotator", pseudonym=f"A{n}")
        voters.append(user)
    now = timezone.now()
    for ext_id in ("pref_1", "vqa_1"):
        item = Item.objects.get(project=project, external_id=ext_id)
        for user in voters:
            a = make_assignment(item, user, status="submitted", submitted_at=now)
            make_judgement(a, choice="1", rationale="clear")


def make_release_project(tmp_path: Path, slug="rel", **kw) -> Project:
    project = Project.objects.create(slug=slug, name=f"Release test {slug}", seed=5)
    project.create_default_domains()
    source = tmp_path / f"source-{slug}"
    import_items_from_paths(project=project, dataset=write_dataset(source, **kw), images=source)
    apply_plan(project)
    return project


@pytest.fixture
def project(tmp_path):
    return make_release_project(tmp_path)


@pytest.fixture
def curator(project):
    return make_member(project, role="curator")


def new_release(
    project, version="v1.0", *, seed=11, domains=None, user=None, rekey=False
) -> Release:
    return create_release(
        project=project,
        version=version,
        notes="notes",
        domains=domains or ALL_DOMAINS,
        seed=seed,
        user=user,
        enqueue=False,
        rekey=rekey,
    )


def built(project, version="v1.0", **kw) -> Release:
    release = build_release(release_id=new_release(project, version, **kw).pk)
    assert release.status == ReleaseStatus.READY, release.error
    return release


def media(path: str) -> Path:
    return Path(settings.MEDIA_ROOT) / path


def all_bytes(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def published(project) -> list[Path]:
    root = publishing.releases_root() / project.slug
    return sorted(root.rglob("*")) if root.exists() else []


def building_leftovers() -> list[Path]:
    root = publishing.releases_root() / ".building"
    return sorted(root.rglob("*")) if root.exists() else []


# --- Contents -------------------------------------------------------------------------


def test_a_release_holds_exactly_the_agreed_and_resolved_items(project):
    release = built(project)
    records = check_release_folder(media(release.folder))
    assert {r["ID"] for r in records} == INCLUDED
    assert set(
        ReleaseItem.objects.filter(release=release).values_list("external_id", flat=True)
    ) == (INCLUDED)
    assert release.manifest["total"] == len(INCLUDED)
    assert release.counts == {
        "general_correctness": 3,
        "general_preference": 4,
        "knowledge": 1,
        "reasoning": 3,
        "safety": 3,
        "vqa": 5,
    }
    assert len(release.sha256) == 64
    assert release.sha256 == hashlib.sha256(media(release.archive).read_bytes()).hexdigest()
    assert release.size_bytes == media(release.archive).stat().st_size


def test_records_carry_the_decided_response_and_the_frozen_membership_matches(project):
    release = built(project)
    records = {r["ID"]: r for r in check_release_folder(media(release.folder))}
    members = {m.external_id: m for m in ReleaseItem.objects.filter(release=release)}
    for ext_id, _slug, _status, choice, provenance in PLAN:
        if ext_id not in INCLUDED:
            continue
        record = records[ext_id]
        assert (
            record[record["Better"]]
            == f"{ext_id} {'first' if choice == '1' else 'second'} response"
        )
        assert (members[ext_id].chosen, members[ext_id].better) == (choice, record["Better"])
        assert members[ext_id].provenance == provenance
    provenance = {
        line["ID"]: line
        for line in map(
            json.loads, (media(release.folder) / "provenance.jsonl").read_text().splitlines()
        )
    }
    assert [v["annotator"] for v in provenance["pref_1"]["votes"]] == ["A1", "A2"]
    assert provenance["gc_3"]["curator_reason"] == "curator: response text checked"
    assert provenance["gc_1"]["curator_reason"] == ""


def test_the_zip_equals_the_published_folder(project, tmp_path):
    release = built(project)
    root = check_release_zip(
        media(release.archive), tmp_path / "unzipped", folder=media(release.folder)
    )
    assert root.name == f"{project.slug}-{release.version}"


def test_ids_keep_their_prefixes_and_misleading_ids_are_warned(project):
    release = built(project)
    ids = {r["ID"] for r in check_release_folder(media(release.folder))}
    assert {"math_1", "coding_2", "geo_math_3", "pairs_1", "toxic_2", "my_pairs_3"} <= ids
    assert release.manifest["sub_buckets"] == {
        "knowledge": 1,
        "open_generation/correctness_task": 3,
        "open_generation/preference_task": 4,
        "reasoning/coding": 2,
        "reasoning/math": 1,
        "safety/bias": 1,
        "safety/toxicity": 2,
        "vqa": 5,
    }
    assert len(release.warnings) == 2
    assert (
        release.warnings[0].startswith("geo_math_3:") and "reasoning/coding" in release.warnings[0]
    )
    assert (
        release.warnings[1].startswith("my_pairs_3:") and "safety/toxicity" in release.warnings[1]
    )


def test_wrong_bucket_warnings_name_only_misleading_ids():
    pairs = [
        ("reasoning", "math_1"),
        ("reasoning", "MATH_2"),
        ("reasoning", "coding_1"),
        ("reasoning", "geo_math_3"),
        ("safety", "pairs_9"),
        ("safety", "toxic_pairs_2"),
        ("safety", "toxic_1"),
        ("vqa", "vqa_math_1"),  # other categories have no sub-buckets
        ("knowledge", "pairs_2"),
    ]
    warnings = wrong_bucket_warnings(pairs)
    assert [w.split(":")[0] for w in warnings] == ["geo_math_3", "toxic_pairs_2"]


def test_a_release_of_some_domains_has_only_their_files(project):
    release = built(project, domains=["vqa", "safety"])
    folder = media(release.folder)
    records = check_release_folder(folder)
    assert {r["Category"] for r in records} == {"vqa", "safety"}
    assert sorted(p.name for p in folder.glob("*.json")) == [
        "all_data.json",
        "manifest.json",
        "safety.json",
        "vqa.json",
    ]


# --- Balance and determinism ------------------------------------------------------------


def test_output_slots_are_balanced_within_each_domain(project):
    release = built(project)
    for slug, b in release.manifest["balance"].items():
        assert abs(b["Output1"] - b["Output2"]) <= 1, slug
    # the reader checks the same from the records themselves
    check_release_folder(media(release.folder), balanced=True)


def test_the_same_state_and_seed_rebuild_byte_identical_files(project):
    release = built(project)
    before = all_bytes(media(release.folder))
    archive = media(release.archive).read_bytes()
    # the build died after publishing (say): it is failed, and a retry rebuilds
    Release.objects.filter(pk=release.pk).update(status=ReleaseStatus.FAILED)
    again = build_release(release_id=release.pk)
    assert again.status == ReleaseStatus.READY
    assert all_bytes(media(again.folder)) == before
    assert media(again.archive).read_bytes() == archive
    assert again.sha256 == release.sha256 == hashlib.sha256(archive).hexdigest()
    assert ReleaseItem.objects.filter(release=release).count() == len(INCLUDED)


def test_two_projects_with_the_same_data_and_seed_write_the_same_records(tmp_path):
    """Record files depend on the data and the seed only, not on primary keys
    or the order items were imported in."""
    a = make_release_project(tmp_path, slug="twin-a")
    b = make_release_project(tmp_path, slug="twin-b", reverse_order=True)
    fa = all_bytes(media(built(a, seed=3).folder))
    fb = all_bytes(media(built(b, seed=3).folder))
    assert set(fa) == set(fb)
    same = [n for n in fa if n not in ("manifest.json", "README.md")]
    assert {n: fa[n] for n in same} == {n: fb[n] for n in same}
    assert "all_data.json" in same and "provenance.jsonl" in same


def test_a_different_seed_changes_the_slots_not_the_triplets(project):
    one = check_release_folder(media(built(project, "v1.0", seed=1).folder))
    two = check_release_folder(media(built(project, "v2.0", seed=2).folder))

    def triplets(records):
        out = set()
        for r in records:
            other = "Output2" if r["Better"] == "Output1" else "Output1"
            out.add((r["ID"], r["Text"], r[r["Better"]], r[other], r["Category"]))
        return out

    assert triplets(one) == triplets(two)
    assert [r["Better"] for r in one] != [r["Better"] for r in two]
    # the same seed in a later version gives the same slots
    three = check_release_folder(media(built(project, "v3.0", seed=1).folder))
    assert three == one


# --- Atomicity --------------------------------------------------------------------------


def test_a_build_that_dies_midway_publishes_nothing_and_a_retry_succeeds(project, monkeypatch):
    release = new_release(project)
    real = build._copy_image
    copied = []

    def dying_copy(item, destination):
        if len(copied) == 4:
            raise OSError("disk full")
        copied.append(item.external_id)
        real(item, destination)

    monkeypatch.setattr(build, "_copy_image", dying_copy)
    with pytest.raises(OSError):
        build_release(release_id=release.pk)
    release.refresh_from_db()
    assert release.status == ReleaseStatus.FAILED
    assert "disk full" in release.error
    assert (release.sha256, release.folder, release.archive) == ("", "", "")
    assert not ReleaseItem.objects.filter(release=release).exists()
    assert [p for p in published(project) if p.is_file()] == []
    assert building_leftovers() == []

    monkeypatch.setattr(build, "_copy_image", real)
    again = build_release(release_id=release.pk)
    assert again.status == ReleaseStatus.READY and again.error == ""
    check_release_folder(media(again.folder))
    assert ReleaseItem.objects.filter(release=release).count() == len(INCLUDED)
    assert building_leftovers() == []


def test_a_build_that_dies_while_zipping_publishes_nothing(project, monkeypatch):
    release = new_release(project)

    def broken_zip(folder, archive, root):
        archive.write_bytes(b"PK half a zip")
        raise RuntimeError("killed while zipping")

    monkeypatch.setattr(exporter, "write_zip", broken_zip)
    with pytest.raises(RuntimeError):
        build_release(release_id=release.pk)
    release.refresh_from_db()
    assert (release.status, release.error) == ("failed", "RuntimeError: killed while zipping")
    assert published(project) == [] and building_leftovers() == []
    monkeypatch.undo()
    assert build_release(release_id=release.pk).status == ReleaseStatus.READY


def test_a_build_that_dies_recording_the_release_publishes_nothing(project, monkeypatch):
    """The last step (membership rows and the ready status) fails: the files,
    complete by then, must not stay published beside a failed release."""
    release = new_release(project)

    def database_down(*args, **kwargs):
        raise RuntimeError("database went away")

    monkeypatch.setattr(ReleaseItem.objects, "bulk_create", database_down)
    with pytest.raises(RuntimeError):
        build_release(release_id=release.pk)
    release.refresh_from_db()
    assert release.status == ReleaseStatus.FAILED and "went away" in release.error
    assert [p for p in published(project) if p.is_file()] == []
    assert building_leftovers() == []
    monkeypatch.undo()
    again = build_release(release_id=release.pk)
    assert again.status == ReleaseStatus.READY
    check_release_folder(media(again.folder))


def test_the_failed_page_says_nothing_was_published(client, project, curator, monkeypatch):
    release = new_release(project)
    monkeypatch.setattr(exporter, "write_zip", lambda *a, **k: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        build_release(release_id=release.pk)
    client.force_login(curator)
    page = client.get(reverse("release_detail", args=[project.slug, release.pk]))
    assert page.status_code == 200
    assert b"nothing was published" in page.content and b"ZeroDivisionError" in page.content
    assert b"Download" not in page.content
    download = client.get(reverse("release_download", args=[project.slug, release.pk]))
    assert download.status_code == 404


def test_a_ready_release_is_immutable(project, curator):
    release = built(project)
    files = all_bytes(media(release.folder))
    stamp = media(release.archive).stat().st_mtime_ns
    # decisions change after the release...
    item = Item.objects.get(project=project, external_id="pref_1")
    reopen_item(
        project=project, item_id=item.pk, curator=curator, reason="look again", version=None
    )
    # ...and building it again changes nothing
    again = build_release(release_id=release.pk)
    assert (again.status, again.sha256, again.finished_at) == (
        ReleaseStatus.READY,
        release.sha256,
        release.finished_at,
    )
    assert all_bytes(media(release.folder)) == files
    assert media(release.archive).stat().st_mtime_ns == stamp
    assert "pref_1" in set(
        ReleaseItem.objects.filter(release=release).values_list("external_id", flat=True)
    )
    with pytest.raises(ReleaseError):
        new_release(project, "v1.0")


def test_a_live_build_is_not_taken_over_but_a_dead_one_is(project, settings):
    """Dead: no heartbeat for RELEASE_STALE_SECONDS (two minutes by default),
    however recently it started."""
    release = new_release(project)
    now = timezone.now()
    Release.objects.filter(pk=release.pk).update(
        status=ReleaseStatus.BUILDING, started_at=now, heartbeat_at=now - timedelta(seconds=100)
    )
    assert build_release(release_id=release.pk).status == ReleaseStatus.BUILDING
    Release.objects.filter(pk=release.pk).update(heartbeat_at=now - timedelta(seconds=121))
    assert build_release(release_id=release.pk).status == ReleaseStatus.READY
    settings.RELEASE_STALE_SECONDS = 3600  # settings-driven
    Release.objects.filter(pk=release.pk).update(
        status=ReleaseStatus.BUILDING, heartbeat_at=now - timedelta(seconds=121)
    )
    assert build_release(release_id=release.pk).status == ReleaseStatus.BUILDING


def test_a_build_overtaken_by_a_retry_does_not_spoil_the_published_release(project, monkeypatch):
    """A slow build is taken for dead and rebuilt by another worker, which
    publishes first (after a decision changed). When the slow one finishes,
    the ready release stays ready, with the files its checksum describes."""
    release = new_release(project)
    real = build._copy_image
    overtaken = {}

    def slow_copy(item, destination):
        if not overtaken:
            Release.objects.filter(pk=release.pk).update(
                heartbeat_at=timezone.now() - timedelta(hours=2)
            )
            Verdict.objects.filter(project=project, item__external_id="vqa_5").update(
                status="excluded", final_choice="", provenance="", exclusion_category="other"
            )
            monkeypatch.setattr(build, "_copy_image", real)
            overtaken["release"] = build_release(release_id=release.pk)
        real(item, destination)

    monkeypatch.setattr(build, "_copy_image", slow_copy)
    with pytest.raises(ReleaseError, match="changed state"):
        build_release(release_id=release.pk)  # the slow build says it lost, and undoes nothing
    assert overtaken["release"].status == ReleaseStatus.READY
    release.refresh_from_db()
    assert release.status == ReleaseStatus.READY
    assert release.sha256 == overtaken["release"].sha256
    assert exporter.sha256_file(media(release.archive)) == release.sha256
    ids = {r["ID"] for r in check_release_folder(media(release.folder))}
    assert ids == INCLUDED - {"vqa_5"}
    assert building_leftovers() == []


@pytest.mark.parametrize("version", ["../../images", "a/b", "..", ".x", "v1\\0", "v1\t0"])
def test_a_version_that_is_not_a_plain_folder_name_is_refused_by_every_caller(project, version):
    """The version names the published folder; `../../images` once made
    publishing delete every stored image of the site."""
    images = Path(settings.MEDIA_ROOT) / "images"
    stored = sorted(images.rglob("*.png"))
    with pytest.raises(ReleaseError):
        new_release(project, version)
    with pytest.raises(CommandError):
        call_command("build_release", project.slug, version, verbosity=0)
    assert not Release.objects.exists()
    assert sorted(images.rglob("*.png")) == stored and stored


def test_the_management_command_builds_and_then_leaves_a_ready_release_alone(project, capsys):
    call_command("build_release", project.slug, "v9.0", "--seed", "4", verbosity=0)
    release = Release.objects.get(project=project, version="v9.0")
    assert release.status == ReleaseStatus.READY and release.seed == 4
    assert release.domains == sorted(ALL_DOMAINS)
    check_release_folder(media(release.folder))
    capsys.readouterr()
    call_command("build_release", project.slug, "v9.0", verbosity=0)
    assert "already ready" in capsys.readouterr().out
    assert Release.objects.get(pk=release.pk).finished_at == release.finished_at


# --- Round trip -------------------------------------------------------------------------


def test_importing_a_release_reproduces_its_triplets(project):
    release = built(project)
    folder = media(release.folder)
    copy = Project.objects.create(slug="copy", name="Copy")
    copy.create_default_domains()
    result = import_items_from_paths(project=copy, dataset=folder / "all_data.json", images=folder)
    assert result.created == len(INCLUDED)

    def triplets(items, chosen_of):
        out = {}
        for i in items:
            chosen = chosen_of(i)
            out[i.external_id] = (
                i.prompt,
                i.response_1 if chosen == "1" else i.response_2,
                i.response_2 if chosen == "1" else i.response_1,
                i.domain.export_category,
                i.image.sha256,
            )
        return out

    originals = Item.objects.filter(project=project, external_id__in=INCLUDED).select_related(
        "verdict", "domain", "image"
    )
    imported = Item.objects.filter(project=copy).select_related("domain", "image")
    assert triplets(imported, lambda i: i.meta["prior_better"][-1]) == triplets(
        originals, lambda i: i.verdict.final_choice
    )


# --- Pages ------------------------------------------------------------------------------


def form_data(version="v1.0", seed=3, domains=None):
    return {
        "version": version,
        "notes": "First cut",
        "domains": domains or ALL_DOMAINS,
        "seed": seed,
    }


def test_a_curator_creates_a_release_and_downloads_it(
    client, project, curator, django_capture_on_commit_callbacks, tmp_path
):
    client.force_login(curator)
    new = client.get(reverse("release_new", args=[project.slug]))
    assert new.status_code == 200 and b'value="v1.0"' in new.content
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = client.post(reverse("release_new", args=[project.slug]), form_data())
    assert len(callbacks) == 1
    release = Release.objects.get(project=project)
    assert response.status_code == 302
    assert response["Location"] == reverse("release_detail", args=[project.slug, release.pk])
    assert (release.status, release.created_by, release.seed) == ("ready", curator, 3)

    detail = client.get(response["Location"])
    html = detail.content.decode()
    assert detail.status_code == 200
    assert "Ready" in html and release.sha256 in html
    download_url = reverse("release_download", args=[project.slug, release.pk])
    assert f'href="{download_url}"' in html
    assert "geo_math_3" in html  # the prefix warning is shown

    listing = client.get(reverse("releases", args=[project.slug])).content.decode()
    assert "v1.0" in listing and download_url in listing

    download = client.get(download_url)
    assert download.status_code == 200
    assert download["Content-Type"] == "application/zip"
    assert download["X-Content-SHA256"] == release.sha256
    assert f"{project.slug}-v1.0.zip" in download["Content-Disposition"]
    body = b"".join(download.streaming_content)
    assert hashlib.sha256(body).hexdigest() == release.sha256
    (tmp_path / "got.zip").write_bytes(body)
    check_release_zip(tmp_path / "got.zip", tmp_path / "got")


def test_progress_returns_a_fragment_while_building_and_refreshes_when_done(
    client, project, curator
):
    client.force_login(curator)
    release = new_release(project)
    url = reverse("release_progress", args=[project.slug, release.pk])
    pending = client.get(url)
    assert pending.status_code == 200 and b'id="release-progress"' in pending.content
    assert b"Pending" in pending.content
    Release.objects.filter(pk=release.pk).update(
        status=ReleaseStatus.BUILDING, progress_total=19, progress_done=7
    )
    building = client.get(url)
    assert building.status_code == 200
    assert b"7 of 19 records" in building.content and b'hx-trigger="every 1s"' in building.content
    detail = client.get(reverse("release_detail", args=[project.slug, release.pk]))
    assert b'id="release-progress"' in detail.content and b"htmx" in detail.content
    Release.objects.filter(pk=release.pk).update(status=ReleaseStatus.PENDING, progress_done=0)
    build_release(release_id=release.pk)
    done = client.get(url)
    assert done.status_code == 204 and done["HX-Refresh"] == "true"
    Release.objects.filter(pk=release.pk).update(status=ReleaseStatus.FAILED)
    failed = client.get(url)
    assert failed.status_code == 204 and failed["HX-Refresh"] == "true"


def test_the_diff_shows_added_removed_and_flipped_items(client, project, curator):
    client.force_login(curator)
    v1 = built(project, "v1.0")
    flip = Item.objects.get(project=project, external_id="pref_1")  # agreed on response 1
    reopen_item(
        project=project, item_id=flip.pk, curator=curator, reason="look again", version=None
    )
    resolve_item(
        project=project,
        item_id=flip.pk,
        curator=curator,
        choice="2",
        reason="the second one reads the chart",
        version=None,
    )
    gone = Item.objects.get(project=project, external_id="vqa_2")
    exclude_item(
        project=project,
        item_id=gone.pk,
        curator=curator,
        category="broken",
        reason="image does not load for everyone",
        version=None,
    )
    added = Item.objects.get(project=project, external_id="pref_5")  # contested
    resolve_item(
        project=project, item_id=added.pk, curator=curator, choice="1", reason="ok", version=None
    )
    v2 = built(project, "v2.0")
    records = {r["ID"]: r for r in check_release_folder(media(v2.folder))}
    assert records["pref_1"][records["pref_1"]["Better"]] == "pref_1 second response"

    page = client.get(reverse("release_diff", args=[project.slug, v2.pk]))
    assert page.status_code == 200
    diff = page.context["diff"]
    assert page.context["against"] == v1
    assert [r.external_id for r in diff["added"]] == ["pref_5"]
    assert [r.external_id for r in diff["removed"]] == ["vqa_2"]
    assert [(a.external_id, a.chosen, b.chosen) for a, b in diff["flipped"]] == [
        ("pref_1", "1", "2")
    ]
    assert diff["unchanged"] == len(INCLUDED) - 2
    html = page.content.decode()
    assert "1</strong> added" in html and "1</strong> removed" in html
    assert "1</strong> label flipped" in html
    assert "pref_1" in html and "vqa_2" in html and "pref_5" in html

    explicit = client.get(reverse("release_diff", args=[project.slug, v2.pk]), {"against": v1.pk})
    assert explicit.context["against"] == v1
    first = client.get(reverse("release_diff", args=[project.slug, v1.pk]))
    assert first.status_code == 200 and first.context["against"] is None
    assert b"no earlier ready release" in first.content


def test_a_diff_against_a_malformed_release_id_is_not_a_server_error(client, project, curator):
    client.force_login(curator)
    v1 = built(project, "v1.0")
    url = reverse("release_diff", args=[project.slug, v1.pk])
    for against in ("x1", "²", "1.0", "99999"):
        response = client.get(url, {"against": against})
        assert response.status_code == 200 and response.context["against"] is None, against


def release_urls(project, ready, pending):
    return [
        ("get", reverse("releases", args=[project.slug])),
        ("get", reverse("release_new", args=[project.slug])),
        ("get", reverse("release_detail", args=[project.slug, ready.pk])),
        ("get", reverse("release_detail", args=[project.slug, pending.pk])),
        ("get", reverse("release_progress", args=[project.slug, pending.pk])),
        ("get", reverse("release_download", args=[project.slug, ready.pk])),
        ("get", reverse("release_diff", args=[project.slug, ready.pk])),
    ]


@pytest.mark.parametrize("role", ["anonymous", "outsider", "annotator", "curator", "admin"])
def test_permission_matrix_for_every_release_url(client, project, role, tmp_path):
    ready = built(project, "v1.0")
    pending = new_release(project, "v2.0")
    if role == "outsider":
        client.force_login(make_user())
    elif role != "anonymous":
        client.force_login(make_member(project, role=role))
    for method, url in release_urls(project, ready, pending):
        response = getattr(client, method)(url)
        code = response.status_code
        if role == "anonymous":
            assert code == 302 and "/accounts/login/" in response["Location"], url
        elif role == "outsider":
            assert code == 404, url
        elif role == "annotator":
            assert code == 403, url
        else:
            assert code == 200, (url, code)
    post = client.post(reverse("release_new", args=[project.slug]), form_data("v3.0"))
    expected = {"anonymous": 302, "outsider": 404, "annotator": 403}.get(role, 302)
    assert post.status_code == expected
    assert Release.objects.filter(version="v3.0").exists() == (role in ("curator", "admin"))


@pytest.mark.parametrize(
    "version", ["", "   ", "a/b", "v 1", ".hidden", "..", "a\\b", "v1\t0", "x" * 41]
)
def test_an_invalid_version_is_a_form_error_and_creates_nothing(client, project, curator, version):
    client.force_login(curator)
    response = client.post(reverse("release_new", args=[project.slug]), form_data(version))
    assert response.status_code == 400
    assert response.context["form"].errors
    assert not Release.objects.exists()


def test_a_duplicate_version_is_a_form_error_and_creates_nothing(
    client, project, curator, django_capture_on_commit_callbacks
):
    client.force_login(curator)
    first = built(project, "v1.0")
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = client.post(reverse("release_new", args=[project.slug]), form_data("v1.0"))
    assert response.status_code == 400 and not callbacks
    assert b"already exists" in response.content
    assert list(Release.objects.all()) == [first]
    assert Release.objects.get().sha256 == first.sha256


@pytest.mark.parametrize(
    "data",
    [
        form_data(domains=["nonexistent"]),
        {**form_data(), "domains": []},
        {**form_data(), "seed": "not a number"},
    ],
)
def test_bad_domains_or_seed_are_form_errors(client, project, curator, data):
    client.force_login(curator)
    response = client.post(reverse("release_new", args=[project.slug]), data)
    assert response.status_code == 400
    assert not Release.objects.exists()


def test_the_release_list_runs_a_constant_number_of_queries(client, project, curator):
    client.force_login(curator)
    url = reverse("releases", args=[project.slug])

    def make(n):
        for i in range(n):
            Release.objects.create(
                project=project,
                version=f"q{Release.objects.count()}-{i}",
                status=ReleaseStatus.READY,
                sha256="ab" * 32,
                folder="releases/x",
                archive="releases/x.zip",
                manifest={"total": 3},
                warnings=["w"],
                created_by=make_member(project, role="curator"),
            )

    make(1)
    client.get(url)  # warm the session and caches
    with CaptureQueriesContext(connection) as one:
        assert client.get(url).status_code == 200
    make(6)
    with CaptureQueriesContext(connection) as seven:
        page = client.get(url)
    assert page.status_code == 200 and page.content.count(b"Download zip") == 7
    assert len(seven) == len(one), [q["sql"] for q in seven.captured_queries]


def test_a_retry_replaces_files_left_by_a_dead_attempt(project):
    """Files an earlier attempt published without recording (it died between
    the rename and the database update) are replaced by the retry."""
    release = new_release(project)
    stale = publishing.releases_root() / project.slug / release.version
    stale.mkdir(parents=True)
    (stale / "junk.txt").write_text("from a dead attempt")
    (publishing.releases_root() / project.slug / f"{project.slug}-v1.0.zip").write_bytes(b"junk")
    release = build_release(release_id=release.pk)
    assert not (media(release.folder) / "junk.txt").exists()
    check_release_folder(media(release.folder))
    assert exporter.sha256_file(media(release.archive)) == release.sha256


def test_releases_only_read_shared_images(project):
    """Building never moves or changes the project's stored images."""
    before = {
        p.relative_to(settings.MEDIA_ROOT).as_posix(): p.read_bytes()
        for p in (Path(settings.MEDIA_ROOT) / "images").rglob("*")
        if p.is_file()
    }
    built(project)
    after = {
        p.relative_to(settings.MEDIA_ROOT).as_posix(): p.read_bytes()
        for p in (Path(settings.MEDIA_ROOT) / "images").rglob("*")
        if p.is_file()
    }
    assert after == before


def test_a_version_longer_than_the_column_is_refused_with_a_message(project):
    from curation.releases.service import ReleaseError, create_release

    with pytest.raises(ReleaseError, match="longer than 40"):
        create_release(
            project=project, version="v" * 41, notes="", domains=["vqa"], seed=1, user=None
        )
    assert not Release.objects.filter(project=project).exists()
