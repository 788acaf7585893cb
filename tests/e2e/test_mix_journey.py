"""A curator builds a training mix from two sources in real Chromium (a
release of one project and the whole of another), by keyboard where it
matters, watches it build and downloads it; the zip is checked against its
checksum and the report of what was dropped. Each mix page passes axe-core."""

import hashlib
import json
import zipfile

import pytest

from annotate.models import Membership, Project
from curation.models import Mix, ReleaseStatus
from curation.releases.mixes.build import build_mix
from tests.curation.releases.test_releases import INCLUDED, built, make_release_project
from tests.e2e.test_accessibility import AXE_OPTIONS, SIZES
from tests.e2e.test_release_journey import login
from tests.factories import make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def no_axe_violations(page, where: str) -> None:
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page, options=AXE_OPTIONS)
    assert not results.violations_count, f"{where}\n{results.generate_report()}"


def test_a_curator_mixes_two_sources_and_downloads_the_mix(
    live_server, browser, artifacts, tmp_path, settings
):
    first = make_release_project(tmp_path, slug="mxa")
    make_release_project(tmp_path, slug="mxb")  # the same pairs: all duplicates of mxa's
    user = make_user("mixer")
    for project in Project.objects.filter(slug__in=["mxa", "mxb"]):
        Membership.objects.create(project=project, user=user, role="curator")
    built(first, "v1.0", user=user)

    page = browser.new_page(viewport={"width": 1280, "height": 800}, accept_downloads=True)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    login(page, live_server.url, "mixer", "/mixes/")
    page.wait_for_selector("h1:text('Training mixes')")
    assert page.locator("text=No training mixes yet.").count() == 1
    no_axe_violations(page, "mixes (empty)")
    page.get_by_role("link", name="New mix").click()
    page.wait_for_url("**/mixes/new/")
    no_axe_violations(page, "mix_new")

    # By keyboard: name, version, then both sources (Space ticks a checkbox);
    # the whole project mxb is capped at 5.
    page.locator("#id_name").focus()
    page.keyboard.type("basereward")
    page.keyboard.press("Tab")
    page.keyboard.press("Control+A")
    page.keyboard.type("v1")
    page.get_by_role("checkbox", name="Release test mxa — release v1.0", exact=True).focus()
    page.keyboard.press("Space")
    page.get_by_role(
        "checkbox", name="Release test mxb — whole project (decided items now)", exact=True
    ).focus()
    page.keyboard.press("Space")
    page.get_by_role(
        "spinbutton", name="Cap of Release test mxb — whole project (decided items now)"
    ).fill("5")
    page.get_by_role("button", name="Build mix").focus()
    page.keyboard.press("Enter")

    # Built once committed (eagerly, in tests): the page ends up ready.
    page.wait_for_url("**/mixes/*/")
    page.wait_for_selector("h1 .status-ready", timeout=30_000)
    mix = Mix.objects.get(name="basereward")
    assert mix.status == ReleaseStatus.READY, mix.error
    assert page.locator("code.sha").first.inner_text() == mix.sha256
    report = page.inner_text("table")
    assert "mxa@v1.0" in report and f"{len(INCLUDED)} of mxa@v1.0" in report
    assert "training mix basereward" in page.inner_text("pre.card-text").lower()
    no_axe_violations(page, "mix_detail")
    page.screenshot(path=str(artifacts / "mix-1280x800.png"), full_page=True)

    with page.expect_download() as info:
        page.get_by_role("link", name="Download basereward-v1.zip").click()
    path = tmp_path / "mix.zip"
    info.value.save_as(path)
    assert info.value.suggested_filename == "basereward-v1.zip"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == mix.sha256
    with zipfile.ZipFile(path) as zf:
        zf.extractall(tmp_path / "unzipped")
    root = tmp_path / "unzipped" / "basereward-v1"
    rows = [
        json.loads(x)
        for f in (root / "dpo").glob("*.jsonl")
        for x in f.read_text().split("\n")
        if x
    ]
    assert sorted(r["id"] for r in rows) == sorted(f"mxa@v1.0:{i}" for i in INCLUDED)
    dropped = [json.loads(x) for x in (root / "dropped.jsonl").read_text().splitlines()]
    assert {d["reason"] for d in dropped} == {"duplicate"} and len(dropped) == len(INCLUDED)

    # A mix built elsewhere (a worker): its page polls and reloads when done.
    pending = Mix.objects.create(
        name="basereward", version="v2", filters=mix.filters, created_by=user
    )
    for source in mix.sources.all():
        source.pk, source.mix = None, pending
        source.save()
    page.goto(f"{live_server.url}/mixes/{pending.pk}/")
    page.wait_for_selector("#mix-progress progress")
    Mix.objects.filter(pk=pending.pk).update(status="building", progress_total=5, progress_done=2)
    page.wait_for_function(
        "() => document.querySelector('#mix-progress')?.innerText.includes('2 of 5')"
    )
    no_axe_violations(page, "mix_detail (building)")
    Mix.objects.filter(pk=pending.pk).update(status="pending", progress_done=0)
    assert build_mix(mix_id=pending.pk).status == ReleaseStatus.READY
    page.wait_for_selector("h1 .status-ready", timeout=10_000)

    page.goto(f"{live_server.url}/mixes/")
    assert page.locator("table.releases tbody tr").count() == 2
    no_axe_violations(page, "mixes")
    assert not errors, errors
    page.close()

    # The same pages on a touch phone.
    phone = browser.new_context(**SIZES["phone"])
    small = phone.new_page()
    login(small, live_server.url, "mixer", "/mixes/")
    small.wait_for_selector("h1:text('Training mixes')")
    for url in ("/mixes/", "/mixes/new/", f"/mixes/{mix.pk}/"):
        small.goto(live_server.url + url)
        no_axe_violations(small, f"{url} (phone)")
    phone.close()
