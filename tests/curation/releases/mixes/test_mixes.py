"""Training mixes from the database: sources, filters, deduplication and its
report, seeded limits, files and checksums, immutability, permissions, the
pages and the API, bounded query counts."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.test import APIClient

from annotate.models import Membership
from curation.models import Mix, ReleaseStatus
from curation.releases import publishing
from curation.releases.mixes.build import build_mix
from curation.releases.mixes.service import (
    PROVENANCES,
    STATUSES,
    MixError,
    MixVersionTaken,
    SourceChoice,
    create_mix,
)
from tests.curation.releases.test_releases import INCLUDED, built, make_release_project
from tests.factories import make_member, make_user

pytestmark = pytest.mark.django_db

N = len(INCLUDED)


@pytest.fixture
def world(tmp_path):
    """Projects `ma` (with a ready release) and `mb`, imported from the same
    file: every pair of mb is a duplicate of ma's; a curator of both."""
    a = make_release_project(tmp_path, slug="ma")
    b = make_release_project(tmp_path, slug="mb")
    user = make_user("mixer")
    for p in (a, b):
        Membership.objects.create(project=p, user=user, role="curator")
    release = built(a, "v1.0", user=user)
    return a, b, release, user


def mixed(user, version="v1", sources=None, **kw) -> Mix:
    args = {"statuses": list(STATUSES), "provenances": list(PROVENANCES), "seed": 3}
    args.update(kw)
    sources = sources or [SourceChoice("ma", "v1.0"), SourceChoice("mb")]
    mix = create_mix(user=user, name="mix", version=version, sources=sources, enqueue=False, **args)
    return build_mix(mix_id=mix.pk)


def unzip(mix: Mix, to: Path) -> Path:
    archive = publishing.release_storage().path(mix.archive)
    assert hashlib.sha256(Path(archive).read_bytes()).hexdigest() == mix.sha256
    with zipfile.ZipFile(archive) as zf:
        zf.extractall(to)
    return to / f"mix-{mix.version}"


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_mix_of_a_release_and_a_duplicate_project_keeps_each_pair_once(world, tmp_path):
    mix = mixed(world[3])
    assert mix.status == ReleaseStatus.READY, mix.error
    first, second = mix.report["sources"]
    assert (first["source"], first["kept"], first["duplicates"]) == ("ma@v1.0", N, 0)
    assert (second["source"], second["kept"], second["duplicates"]) == ("mb", 0, N)
    assert second["duplicate_of"] == {"ma@v1.0": N}
    root = unzip(mix, tmp_path / "out")
    dropped = lines(root / "dropped.jsonl")
    assert {d["reason"] for d in dropped} == {"duplicate"} and len(dropped) == N
    assert all(d["duplicate_of"] == f"ma@v1.0:{d['id']}" for d in dropped)
    rows = [r for f in sorted((root / "dpo").glob("*.jsonl")) for r in lines(f)]
    assert sorted(r["id"] for r in rows) == sorted(f"ma@v1.0:{i}" for i in INCLUDED)
    row = rows[0]
    assert row["prompt"][0]["role"] == "user" and row["chosen"][0]["role"] == "assistant"
    # Image paths are relative to the JSONL file's own folder.
    for r in rows:
        assert (root / "dpo" / r["images"][0]).resolve().is_file()
    # Every file's checksum is in the manifest; the card names sources and counts.
    manifest = json.loads((root / "manifest.json").read_text())
    for name, entry in manifest["files"].items():
        assert hashlib.sha256((root / name).read_bytes()).hexdigest() == entry["sha256"]
    assert manifest["total"] == N and sum(manifest["counts"].values()) == N
    card = (root / "README.md").read_text()
    assert "`ma@v1.0`" in card and "`mb`" in card and "NFKC" in card and "configs:" in card


def test_parquet_rows_embed_the_images(world, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    root = unzip(mixed(world[3]), tmp_path / "out")
    table = pq.read_table(root / "trl" / "vqa.parquet")
    assert table.column_names == [
        "id",
        "prompt",
        "chosen",
        "rejected",
        "images",
        "category",
        "source",
    ]
    row = table.to_pylist()[0]
    image = row["images"][0]
    assert hashlib.sha256(image["bytes"]).hexdigest() == image["path"].split(".")[0]
    assert row["prompt"] == [{"role": "user", "content": row["prompt"][0]["content"]}]
    assert b"huggingface" in table.schema.metadata


def test_filters_apply_to_both_kinds_of_source_and_are_reported(world, tmp_path):
    # pref_1 and vqa_1 have two votes for response 1; nothing else has votes.
    mix = mixed(world[3], min_share=0.9, sources=[SourceChoice("mb")], dedup=False)
    assert mix.manifest["total"] == 2
    assert mix.report["sources"][0]["filtered"] == {"min_share": N - 2}
    mix = mixed(world[3], "v2", provenances=["adjudicated"], statuses=["resolved"], domains=["vqa"])
    rows = mix.report["sources"]
    assert rows[0]["kept"] == 1  # vqa_4
    assert rows[0]["filtered"]["domain"] > 0 and rows[1]["duplicates"] == 1


def test_caps_are_seeded_and_the_same_seed_gives_the_same_files(world, tmp_path):
    caps = [SourceChoice("ma", "v1.0", cap=5), SourceChoice("mb", cap=4)]
    one = unzip(mixed(world[3], "v1", sources=caps), tmp_path / "a")
    two = unzip(mixed(world[3], "v2", sources=caps), tmp_path / "b")
    files = sorted(p.relative_to(one).as_posix() for p in (one / "dpo").rglob("*.jsonl"))
    assert files and all((one / f).read_bytes() == (two / f).read_bytes() for f in files)
    report = Mix.objects.get(version="v1").report["sources"]
    # mb's cap is filled by the pairs ma left out for its own cap.
    assert [r["kept"] for r in report] == [5, 4]
    assert report[0]["over_limit"] == N - 5


def test_weights_split_the_mix(world):
    sources = [SourceChoice("ma", "v1.0", weight=3), SourceChoice("mb", weight=1)]
    mix = mixed(world[3], sources=sources, mode="weights", size=8, dedup=False)
    assert [r["kept"] for r in mix.report["sources"]] == [6, 2]


def test_a_ready_mix_is_immutable_and_its_version_is_taken(world):
    mix = mixed(world[3])
    before = (mix.sha256, mix.finished_at)
    again = build_mix(mix_id=mix.pk)
    assert (again.sha256, again.finished_at) == before
    with pytest.raises(MixVersionTaken):
        mixed(world[3])


def test_an_empty_mix_fails_with_a_clear_message_and_publishes_nothing(world):
    with pytest.raises(Exception, match="would be empty"):
        mixed(world[3], min_share=1.0, provenances=["gold"])
    mix = Mix.objects.get()
    assert mix.status == ReleaseStatus.FAILED and "would be empty" in mix.error
    assert not (Path(publishing.release_storage().path("mixes")) / str(mix.pk)).exists()


def test_only_projects_the_user_curates_can_be_mixed(world):
    a, b, _, _ = world
    annotator_of_b = make_member(a, role="curator")
    Membership.objects.create(project=b, user=annotator_of_b, role="annotator")
    with pytest.raises(MixError, match="You do not curate: mb"):
        mixed(annotator_of_b)
    with pytest.raises(MixError, match="no ready release"):
        mixed(world[3], sources=[SourceChoice("mb", "v9")])


def test_a_mix_is_hidden_from_who_does_not_curate_every_source(world, client):
    a, _, _, user = world
    mix = mixed(user)
    only_a = make_member(a, role="admin")
    annotator = make_member(a, role="annotator")
    assert list(Mix.objects.visible_to(user)) == [mix]
    assert not Mix.objects.visible_to(only_a).exists()
    client.force_login(only_a)
    assert client.get(reverse("mix_detail", args=[mix.pk])).status_code == 404
    assert client.get(reverse("mix_download", args=[mix.pk])).status_code == 404
    assert client.get(reverse("mixes")).status_code == 200
    client.force_login(annotator)
    for name, args in (
        ("mixes", []),
        ("mix_new", []),
        ("mix_detail", [mix.pk]),
        ("mix_download", [mix.pk]),
    ):
        assert client.get(reverse(name, args=args)).status_code == 403
    api = APIClient()
    api.force_authenticate(only_a)
    assert api.get(reverse("api_mix", args=[mix.pk])).status_code == 404
    assert api.get(reverse("api_mixes")).json()["count"] == 0


def test_the_form_records_a_mix_that_builds_and_downloads(
    world, client, django_capture_on_commit_callbacks
):
    user = world[3]
    client.force_login(user)
    page = client.get(reverse("mix_new"))
    assert page.status_code == 200
    form = page.context["form"]
    keys = {label: key for key, label, _, _ in form.sources}
    rel_key = next(k for lbl, k in keys.items() if "release v1.0" in lbl)
    proj_key = next(k for lbl, k in keys.items() if lbl.startswith("Release test mb"))
    data = {
        "name": "web",
        "version": "v1",
        "statuses": ["agreed", "resolved"],
        "provenances": list(PROVENANCES),
        "mode": "caps",
        "dedup": "on",
        "seed": "1",
        f"{rel_key}-on": "on",
        f"{rel_key}-order": "1",
        f"{proj_key}-on": "on",
        f"{proj_key}-order": "2",
        f"{proj_key}-cap": "3",
    }
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("mix_new"), data)
    assert response.status_code == 302, response.content[:2000]
    mix = Mix.objects.get(name="web")
    assert mix.status == ReleaseStatus.READY, mix.error
    detail = client.get(reverse("mix_detail", args=[mix.pk])).content.decode()
    assert mix.sha256 in detail and "Dataset card" in detail
    download = client.get(reverse("mix_download", args=[mix.pk]))
    body = b"".join(download.streaming_content)
    assert hashlib.sha256(body).hexdigest() == mix.sha256 == download["X-Content-SHA256"]


def test_the_api_records_reports_and_serves_a_mix(world, django_capture_on_commit_callbacks):
    api = APIClient()
    api.force_authenticate(world[3])
    body = {
        "name": "api",
        "version": "v1",
        "sources": [{"project": "ma", "release": "v1.0"}, {"project": "mb", "cap": 2}],
        "provenances": ["unanimous", "majority"],
    }
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(reverse("api_mixes"), body, format="json")
    assert response.status_code == 202, response.json()
    detail = api.get(reverse("api_mix", args=[response.json()["id"]])).json()
    assert detail["status"] == "ready" and detail["report"]["sources"][1]["source"] == "mb"
    download = api.get(detail["download_url"])
    assert hashlib.sha256(b"".join(download.streaming_content)).hexdigest() == detail["sha256"]
    again = api.post(reverse("api_mixes"), body, format="json")
    assert again.status_code == 409
    bad = api.post(
        reverse("api_mixes"),
        {**body, "version": "v2", "sources": [{"project": "nope"}]},
        format="json",
    )
    assert bad.status_code == 400 and "nope" in bad.json()["error"]["message"]


def test_pages_and_api_lists_run_a_constant_number_of_queries(world, client):
    user = world[3]
    client.force_login(user)
    api = APIClient()
    api.force_authenticate(user)

    def count(url, c) -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert c.get(url).status_code == 200
        return len(ctx.captured_queries)

    mix = mixed(user, "v1")
    urls = [
        (reverse("mixes"), client),
        (reverse("api_mixes"), api),
        (reverse("mix_detail", args=[mix.pk]), client),
    ]
    few = [count(url, c) for url, c in urls]
    for n in range(2, 6):
        mixed(user, f"v{n}", sources=[SourceChoice("mb"), SourceChoice("ma", "v1.0")])
    assert [count(url, c) for url, c in urls] == few


def test_a_name_that_is_not_a_slug_is_refused(world):
    for name in ("../x", "a b", ""):
        with pytest.raises(MixError, match="slug"):
            create_mix(
                user=world[3],
                name=name,
                version="v1",
                sources=[SourceChoice("mb")],
                statuses=list(STATUSES),
                provenances=list(PROVENANCES),
                enqueue=False,
            )


def test_a_pending_mix_is_queued_again_by_the_sweep(world):
    from curation.tasks import requeue_unsent_work

    mix = create_mix(
        user=world[3],
        name="swept",
        version="v1",
        sources=[SourceChoice("mb")],
        statuses=list(STATUSES),
        provenances=list(PROVENANCES),
        enqueue=False,
    )
    requeue_unsent_work()  # eager: the build runs inline
    mix.refresh_from_db()
    assert mix.status == ReleaseStatus.READY and mix.manifest["total"] == N


# --- Issue 29: a taken name is revealed only within what the user can see -----------------


def test_a_name_taken_by_a_mix_the_user_cannot_see_is_theirs_to_use(world, tmp_path):
    a, _, _, user = world
    theirs = mixed(user)  # "mix v1" of ma and mb
    only_a = make_member(a, role="curator")
    assert not Mix.objects.visible_to(only_a).exists()
    mine = mixed(only_a, sources=[SourceChoice("ma", "v1.0")])
    assert (mine.name, mine.version, mine.status) == ("mix", "v1", ReleaseStatus.READY)
    # Published apart: neither build touched the other's files.
    assert mine.folder != theirs.folder and mine.archive != theirs.archive
    for mix in (theirs, mine):
        assert unzip(mix, tmp_path / str(mix.pk)).is_dir()
    # Within what each can see, the name is taken.
    with pytest.raises(MixVersionTaken):
        mixed(only_a, sources=[SourceChoice("ma", "v1.0")])
    with pytest.raises(MixVersionTaken):
        mixed(user, sources=[SourceChoice("mb")])  # they see only_a's mix (they curate ma)


def test_the_api_answers_409_only_for_a_mix_the_caller_can_see(world):
    a, _, _, user = world
    mixed(user)
    only_a = make_member(a, role="curator")
    api = APIClient()
    api.force_authenticate(only_a)
    body = {"name": "mix", "version": "v1", "sources": [{"project": "ma", "release": "v1.0"}]}
    first = api.post(reverse("api_mixes"), body, format="json")
    assert first.status_code == 202, first.json()
    again = api.post(reverse("api_mixes"), body, format="json")
    assert (
        again.status_code == 409 and "Mix mix v1 already exists" in again.json()["error"]["message"]
    )


def test_two_racing_mixes_of_the_same_projects_end_in_one_and_a_409(world, monkeypatch):
    from django.db.models import QuerySet

    user = world[3]
    mixed(user)
    exists = QuerySet.exists
    # Both passed the visible-name check: the constraint (same scope) decides.
    monkeypatch.setattr(QuerySet, "exists", lambda qs: False if qs.model is Mix else exists(qs))
    with pytest.raises(MixVersionTaken):
        mixed(user)
    assert Mix.objects.filter(name="mix", version="v1").count() == 1
