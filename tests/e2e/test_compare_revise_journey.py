"""Issue 19, defect 3: a revision returns to where the annotator came from
as a whole page, says "revised", and the address bar names what is on
screen (it used to swap the whole History page, top bar included, into
#work and leave the item's URL)."""

import pytest

from annotate.models import Judgement
from tests.e2e.compare_helpers import annotator_project, log_in, start

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_revise_from_history_returns_to_history(live_server, browser, tmp_path):
    annotator_project(tmp_path, ["general_preference"] * 3)
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    log_in(page, live_server.url, "ann", "/p/p19/")
    start(page, live_server.url)
    url = page.url
    page.keyboard.press("1")
    with page.expect_response(lambda r: r.url.endswith("/submit/")):
        page.keyboard.press("Enter")
    page.wait_for_function("u => location.href !== u", arg=url)

    page.goto(f"{live_server.url}/p/p19/history/?status=submitted")
    page.click("text=Open")
    page.wait_for_selector("#work[data-submitted='1']")
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    page.wait_for_url("**/p/p19/history/?status=submitted")
    assert page.locator(".topbar").count() == 1 and page.locator("#work").count() == 0
    assert "revised (revision 2)" in page.locator(".messages").inner_text()
    assert page.locator(".status-revised").count() == 1
    assert Judgement.objects.filter(is_current=True).get().revision == 2
    assert not errors, errors


def test_revise_after_back_returns_to_the_item_in_hand(live_server, browser, tmp_path):
    annotator_project(tmp_path, ["general_preference"] * 3)
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    log_in(page, live_server.url, "ann", "/p/p19/")
    start(page, live_server.url)
    first = page.url
    page.keyboard.press("1")
    with page.expect_response(lambda r: r.url.endswith("/submit/")):
        page.keyboard.press("Enter")
    page.wait_for_function("u => location.href !== u", arg=first)
    second = page.url

    page.go_back()
    page.wait_for_selector("#work[data-submitted='1']")
    assert page.url == first
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    page.wait_for_url(second)
    assert page.locator(".topbar").count() == 1
    assert page.locator("#work[data-submitted='0']").count() == 1
    assert "revised" in page.locator(".messages").inner_text()

    # Issue 31: the banner is about the revision; once the next item is
    # shown it goes (it used to stay above every later item).
    page.keyboard.press("1")
    with page.expect_response(lambda r: r.url.endswith("/submit/")):
        page.keyboard.press("Enter")
    page.wait_for_function("u => location.href !== u", arg=second)
    page.wait_for_selector("#work[data-submitted='0']")
    assert page.locator(".messages").count() == 0
    assert not errors, errors
