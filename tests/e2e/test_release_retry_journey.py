"""A curator finds a release whose build stalled (its worker died) and retries
it with the keyboard in real Chromium; the page is axe-clean before and
after, and the retry is in the audit log (issue 29)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotate.models import Membership
from curation.models import AuditEvent, Release, ReleaseStatus
from curation.releases.service import create_release
from tests.curation.releases.test_releases import ALL_DOMAINS, INCLUDED, make_release_project
from tests.e2e.test_accessibility import AXE_OPTIONS
from tests.e2e.test_release_journey import SLUG, login
from tests.factories import make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def tab_to(page, name: str, limit: int = 60) -> None:
    """Press Tab until the focused element is the button called `name`."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        focused = page.evaluate(
            "() => document.activeElement && document.activeElement.tagName === 'BUTTON'"
            " ? document.activeElement.innerText.trim() : ''"
        )
        if focused == name:
            return
    raise AssertionError(f"Tab never reached the {name!r} button")


def test_a_curator_retries_a_stalled_build_with_the_keyboard(
    live_server, browser, artifacts, tmp_path
):
    from axe_playwright_python.sync_playwright import Axe

    project = make_release_project(tmp_path)
    user = make_user("releaser")
    Membership.objects.create(project=project, user=user, role="curator")
    release = create_release(
        project=project, version="v1.0", notes="", domains=ALL_DOMAINS, seed=2, user=user,
        enqueue=False,
    )  # fmt: skip
    # As a killed worker left it: building, silent for five minutes.
    now = timezone.now()
    Release.objects.filter(pk=release.pk).update(
        status=ReleaseStatus.BUILDING,
        started_at=now - timedelta(minutes=6),
        heartbeat_at=now - timedelta(minutes=5),
        progress_total=len(INCLUDED),
        progress_done=7,
        attempts=1,
    )

    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    url = f"/p/{SLUG}/releases/{release.pk}/"
    login(page, live_server.url, "releaser", url)
    alert = page.get_by_role("alert")
    assert "stopped reporting at 7 of" in alert.inner_text()
    assert page.locator("#release-progress").count() == 0  # nothing polls under the button
    axe = Axe()
    results = axe.run(page, options=AXE_OPTIONS)
    assert not results.violations_count, results.generate_report()
    page.screenshot(path=str(artifacts / "release-stalled-1280x800.png"), full_page=True)

    tab_to(page, "Retry the build")
    page.screenshot(path=str(artifacts / "release-stalled-retry-focused.png"))
    page.keyboard.press("Enter")  # the build runs (eagerly, in tests) once the retry commits
    page.wait_for_selector("h1 .status-ready", timeout=30_000)
    assert "The build starts again from scratch." in page.inner_text(".messages")
    results = axe.run(page, options=AXE_OPTIONS)
    assert not results.violations_count, results.generate_report()
    page.screenshot(path=str(artifacts / "release-retried-1280x800.png"), full_page=True)

    release.refresh_from_db()
    assert release.status == ReleaseStatus.READY and release.manifest["total"] == len(INCLUDED)
    event = AuditEvent.objects.get(project=project, action="release_retried")
    assert event.actor == user and event.before["stalled"] is True
    assert not errors, errors
    page.close()
