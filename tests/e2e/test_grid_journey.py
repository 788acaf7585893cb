"""The data grid in real Chromium, by keyboard alone: a curator searches,
filters, moves between rows, selects two, excludes them in bulk with a
reason, and reads the two audit entries back; axe at both sizes."""

import pytest

from curation.models import AuditEvent, Verdict
from tests.e2e.compare_helpers import log_in
from tests.e2e.test_accessibility import AXE_OPTIONS, SIZES
from tests.factories import make_assignment, make_item, make_judgement, make_member, make_project

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def grid_project():
    project = make_project(slug="grid-e2e", votes_per_item=3)
    vqa = project.domains.get(slug="vqa")
    for n in range(8):
        item = make_item(
            project, domain=vqa, external_id=f"chart_{n}", prompt=f"Read chart {n}: which bar?"
        )
        Verdict.objects.create(item=item, project=project)
        make_judgement(make_assignment(item), "1", flagged_problem=n < 3)
    other = make_item(project, external_id="sign_1", prompt="What does the sign say?")
    Verdict.objects.create(item=other, project=project)
    return project


def axe_clean(page):
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page, options=AXE_OPTIONS)
    assert not results.violations_count, results.generate_report()


@pytest.mark.parametrize("size", SIZES)
def test_curator_excludes_flagged_items_from_the_grid_by_keyboard(live_server, browser, size):
    project = grid_project()
    curator = make_member(project, role="curator")
    context = browser.new_context(**SIZES[size])
    page = context.new_page()
    url = f"/p/{project.slug}/items/"
    log_in(page, live_server.url, curator.username, url)
    axe_clean(page)

    # "/" searches; the filter form submits with Enter.
    page.keyboard.press("/")
    page.keyboard.type("chart")
    page.keyboard.press("Enter")
    page.wait_for_url("**q=chart**")
    assert page.locator("#grid tbody tr").count() == 8
    page.select_option("#id_flagged", "yes")
    page.locator("#id_q").press("Enter")
    page.wait_for_url("**flagged=yes**")
    assert page.locator("#grid tbody tr").count() == 3

    # j/k move between rows; x selects the focused one.
    page.locator("#grid tbody tr").first.focus()
    page.keyboard.press("x")
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("x")
    page.keyboard.press("k")
    assert page.evaluate("document.activeElement.rowIndex") == 2
    assert page.locator("#selected-count").inner_text() == "2"

    # b goes to the bulk form: action, category, reason, Enter on the button.
    page.keyboard.press("b")
    assert page.evaluate("document.activeElement.name") == "action"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.name") == "category"
    page.select_option("#id_category", "broken")
    page.keyboard.press("Tab")
    page.keyboard.type("Blank chart: xjkb 12 / nothing to read")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.wait_for_selector(".messages .msg-success")
    assert "2 items excluded." in page.locator(".messages").inner_text()
    axe_clean(page)

    events = AuditEvent.objects.filter(project=project, action="exclude").order_by("item_id")
    assert [e.reason for e in events] == ["Blank chart: xjkb 12 / nothing to read"] * 2
    assert [e.item.external_id for e in events] == ["chart_0", "chart_2"]
    assert Verdict.objects.filter(project=project, status="excluded").count() == 2
    context.close()
