"""Adaptive votes (issue 36, item 5) in Chromium: an admin reaches the page
from the project page, switches the project to adaptive mode by keyboard
alone, and reads the rule in plain words there and on the project page; no
axe-core violation at desktop and phone sizes."""

import pytest

from annotate.models import Project, VoteMode
from tests.e2e.compare_helpers import log_in
from tests.e2e.test_accessibility import AXE_OPTIONS, SIZES
from tests.factories import make_item, make_member, make_project, make_user

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.django_db(transaction=True),
]


@pytest.mark.parametrize("size", SIZES)
def test_admin_switches_to_adaptive_by_keyboard(live_server, browser, size):
    from axe_playwright_python.sync_playwright import Axe

    project = make_project(slug=f"adaptive-{size}")
    for _ in range(3):
        make_item(project)
    make_member(project, make_user(f"boss-{size}"), role="admin")
    context = browser.new_context(**SIZES[size])
    page = context.new_page()
    log_in(page, live_server.url, f"boss-{size}", f"/p/{project.slug}/")
    axe, found = Axe(), []
    page.get_by_role("link", name="Adaptive votes").focus()
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/p/{project.slug}/adaptive/")
    results = axe.run(page, options=AXE_OPTIONS)
    if results.violations_count:
        found.append(results.generate_report())
    page.locator("#id_vote_mode").focus()
    page.keyboard.press("ArrowDown")  # Fixed -> Adaptive
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")  # the base votes stay 2; the budget
    page.keyboard.press("Control+a")
    page.keyboard.type("4")
    page.keyboard.press("Enter")
    page.wait_for_load_state()
    page.get_by_text("This project is in adaptive mode").wait_for()
    assert "up to 4 votes" in page.inner_text("main")
    project = Project.objects.get(pk=project.pk)
    assert (project.vote_mode, project.adaptive_budget) == (VoteMode.ADAPTIVE, 4)
    results = axe.run(page, options=AXE_OPTIONS)
    if results.violations_count:
        found.append(results.generate_report())
    page.goto(f"{live_server.url}/p/{project.slug}/")
    assert "least certain get one more vote" in page.inner_text("#adaptive-rule")
    results = axe.run(page, options=AXE_OPTIONS)
    if results.violations_count:
        found.append(results.generate_report())
    context.close()
    assert not found, "\n\n".join(found)
