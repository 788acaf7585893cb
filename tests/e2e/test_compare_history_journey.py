"""Issue 19, defect 5: History shows each item with its thumbnail, a prompt
snippet, its ID, the annotator's choice and status (submitted, skipped,
flagged, revised), and filters by status (it used to leave out skipped
items and show no prompt or ID)."""

import pytest

from annotate.models import Assignment
from tests.e2e.compare_helpers import annotator_project, log_in, start

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_history_shows_every_status_and_filters(live_server, browser, tmp_path, artifacts):
    annotator_project(tmp_path, ["general_preference"] * 5)
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    log_in(page, live_server.url, "ann", "/p/p19/")
    start(page, live_server.url)

    def next_item(*keys, text=None):
        url = page.url
        for key in keys:
            page.keyboard.press(key)
        if text:
            page.keyboard.type(text)
        # (the vote may go in the background: wait for its answer)
        with page.expect_response(lambda r: r.request.method == "POST" and "/a/" in r.url):
            page.keyboard.press("Enter")
        page.wait_for_function("u => location.href !== u", arg=url)

    next_item("1")  # submitted
    next_item("2", "x", text="image is blank")  # flagged (Enter from the reason box)
    next_item("s", text="Not my field")  # skipped
    next_item("1")  # then revised from the history
    page.goto(f"{live_server.url}/p/p19/history/")
    rows = page.locator("tbody tr")
    assert rows.count() == 4
    page.locator("tbody tr").first.locator("text=Open").click()
    page.wait_for_selector("#work[data-submitted='1']")
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    page.wait_for_url("**/p/p19/history/")

    text = page.locator("tbody").inner_text()
    for status in ("Submitted", "Flagged", "Skipped", "Revised (revision 2)"):
        assert status in text, status
    assert "Not my field" in text
    assert "Question" in text  # prompt snippet
    mine = Assignment.objects.filter(annotator__username="ann").exclude(status="open")
    for a in mine:
        assert f"Item {a.item_id}" in text
    thumbs = page.locator("tbody img.thumb")
    assert thumbs.count() == 4
    page.wait_for_function(
        "() => [...document.querySelectorAll('tbody img.thumb')].every(i => i.naturalWidth > 0)"
    )
    page.screenshot(path=str(artifacts / "history-1280x800.png"), full_page=True)

    for status, n in (("Skipped", 1), ("Flagged", 1), ("Revised", 1), ("Submitted", 3), ("All", 4)):
        page.click(f".filters >> text={status}")
        page.wait_for_load_state()
        assert page.locator(".filters [aria-current=page]").inner_text() == status
        assert page.locator("tbody tr").count() == n, status
    assert not errors, errors
