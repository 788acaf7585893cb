"""A curator cuts a release in real Chromium, watches it build, downloads the
zip; the format reader (written from the spec) checks what was downloaded."""

import hashlib

import pytest

from annotate.models import Membership
from curation.models import Release, ReleaseStatus
from curation.releases.build import build_release
from curation.releases.service import create_release
from tests.curation.releases.test_exporter import check_release_zip
from tests.curation.releases.test_releases import INCLUDED, make_release_project
from tests.e2e.compare_helpers import log_in
from tests.factories import make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SLUG = "rel"  # make_release_project's default


def login(page, base, username, next_url):
    log_in(page, base, username, next_url, keyboard=True)


def test_a_curator_builds_watches_and_downloads_a_release(
    live_server, browser, artifacts, tmp_path
):
    project = make_release_project(tmp_path)
    user = make_user("releaser")
    Membership.objects.create(project=project, user=user, role="curator")

    page = browser.new_page(viewport={"width": 1280, "height": 800}, accept_downloads=True)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    login(page, live_server.url, "releaser", f"/p/{SLUG}/releases/new/")

    # The form comes filled in: next version, every domain, the project's seed.
    assert page.input_value("input[name=version]") == "v1.0"
    assert page.locator("input[name=domains]:checked").count() == 6
    page.fill("textarea[name=notes]", "First public cut.")
    page.get_by_role("button", name="Build release").click()

    # The build runs once the release is committed (eagerly, in tests) and the
    # detail page ends up ready, whether or not it had to poll for it.
    page.wait_for_url(f"**/p/{SLUG}/releases/*/")
    page.wait_for_selector("h1 .status-ready", timeout=30_000)
    release = Release.objects.get(project=project, version="v1.0")
    assert release.status == ReleaseStatus.READY
    assert page.locator("code.sha").first.inner_text() == release.sha256
    page.screenshot(path=str(artifacts / "release-1280x800.png"), full_page=True)

    with page.expect_download() as info:
        page.get_by_role("link", name=f"Download {SLUG}-v1.0.zip").click()
    download = info.value
    assert download.suggested_filename == f"{SLUG}-v1.0.zip"
    path = tmp_path / "downloaded.zip"
    download.save_as(path)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == release.sha256
    root = check_release_zip(path, tmp_path / "unzipped")
    records = (root / "all_data.json").read_text(encoding="utf-8")
    assert all(f'"{ext_id}"' in records for ext_id in INCLUDED)

    # A release built elsewhere (a worker): its page polls and reloads when done.
    pending = create_release(
        project=project,
        version="v2.0",
        notes="",
        domains=["vqa"],
        seed=1,
        user=user,
        enqueue=False,
    )
    page.goto(f"{live_server.url}/p/{SLUG}/releases/{pending.pk}/")
    page.wait_for_selector("#release-progress progress")
    assert "Pending" in page.inner_text("#release-progress")
    Release.objects.filter(pk=pending.pk).update(
        status=ReleaseStatus.BUILDING, progress_total=5, progress_done=2
    )
    page.wait_for_function(
        "() => document.querySelector('#release-progress')?.innerText.includes('2 of 5')"
    )
    Release.objects.filter(pk=pending.pk).update(status=ReleaseStatus.PENDING, progress_done=0)
    assert build_release(release_id=pending.pk).status == ReleaseStatus.READY
    page.wait_for_selector("h1 .status-ready", timeout=10_000)
    assert page.locator("#release-progress").count() == 0

    # The list shows both, and the diff of v2 against v1 loads.
    page.goto(f"{live_server.url}/p/{SLUG}/releases/")
    assert page.locator("table.releases tbody tr").count() == 2
    page.get_by_role("link", name="Diff").first.click()
    page.wait_for_selector("text=compared with v1.0")
    assert not errors, errors
    page.close()
