"""A curator scores MMRB2 predictions on an MMRB2 release's leaderboard in
real Chromium, by keyboard (the file itself goes in through the file input),
reads the MMRB2 table and opens the per-prompt-source breakdown; axe-core
finds nothing on the page at desktop and phone sizes."""

import json

import pytest

from annotate.models import Membership
from tests.curation.evaluation.test_mmrb2_evaluation import PREDICTIONS, mmrb2_release
from tests.e2e.test_accessibility import AXE_OPTIONS, SIZES
from tests.e2e.test_release_journey import login
from tests.factories import make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def tab_to(page, selector: str, limit: int = 80) -> None:
    """Press Tab until the focused element matches `selector`."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate(f"document.activeElement.matches({json.dumps(selector)})"):
            return
    raise AssertionError(f"never reached {selector} by Tab")


def test_a_curator_scores_mmrb2_predictions_by_keyboard(live_server, browser, artifacts, tmp_path):
    from axe_playwright_python.sync_playwright import Axe

    release = mmrb2_release(tmp_path)
    user = make_user("scorer")
    Membership.objects.create(project=release.project, user=user, role="curator")
    board = f"/p/{release.project.slug}/releases/{release.pk}/leaderboard/"
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    login(page, live_server.url, "scorer", board)
    page.wait_for_selector("h1:has-text('Leaderboard')")
    assert page.get_by_text("No MMRB2 predictions scored yet.").is_visible()

    tab_to(page, "input[name=name]")
    page.keyboard.type("judge-2")
    page.set_input_files(
        "input[name=predictions]",
        {
            "name": "judge-2.json",
            "mimeType": "application/json",
            "buffer": json.dumps(PREDICTIONS, indent=2).encode(),
        },
    )
    tab_to(page, "select[name=format]")
    tab_to(page, "form[enctype='multipart/form-data'] button[type=submit]")
    page.keyboard.press("Enter")
    page.wait_for_selector("text=Scored judge-2")

    row = page.locator('table.mmrb2-leaderboard tr[data-name="judge-2"]')
    assert row.locator("td[data-overall]").inner_text() == "57.14"
    assert row.locator('td[data-task="t2i"]').inner_text().startswith("100.00")
    assert row.locator('td[data-task="reasoning"]').inner_text().startswith("50.00")

    # The per-source breakdown opens from the keyboard.
    sources = page.locator("details.mmrb2-sources table")
    assert not sources.is_visible()
    tab_to(page, "details.mmrb2-sources summary")
    page.keyboard.press("Enter")
    sources.wait_for(state="visible")
    assert "vstar" in sources.inner_text()
    page.screenshot(path=str(artifacts / "mmrb2-leaderboard-1280x900.png"), full_page=True)

    axe = Axe()
    found = []
    for size, options in SIZES.items():
        context = browser.new_context(**options)
        sized = context.new_page()
        login(sized, live_server.url, "scorer", board)
        sized.wait_for_selector("h1:has-text('Leaderboard')")
        sized.locator("details.mmrb2-sources").evaluate("d => d.open = true")
        results = axe.run(sized, options=AXE_OPTIONS)
        if results.violations_count:
            found.append(f"{size}\n{results.generate_report()}")
        # Wide tables scroll inside their region; the page itself does not.
        assert sized.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        if size == "phone":
            sized.screenshot(path=str(artifacts / "mmrb2-leaderboard-phone.png"), full_page=True)
        context.close()
    assert not found, "\n\n".join(found)
    assert errors == []
