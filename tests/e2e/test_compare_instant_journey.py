"""Issue 19, deliverable 4: the page keeps the next item (leased, parsed,
its image decoded) ready, so a complete vote shows it without waiting for
the network; the vote goes in the background, and if the server refuses or
fails, the item just left comes back as it was."""

import time

import pytest

from annotate.models import Assignment, Judgement
from tests.e2e.compare_helpers import annotator_project, log_in, start

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def ready_ahead(page) -> None:
    """Wait until the page holds the next item (its lease exists)."""
    page.wait_for_function(
        "() => performance.getEntriesByType('resource').some(e => e.name.endsWith('/work/ahead/'))"
    )
    page.wait_for_timeout(200)  # its image decoded


def test_the_next_item_shows_before_the_vote_is_answered(live_server, browser, tmp_path):
    annotator_project(tmp_path, ["general_preference"] * 4, votes_per_item=1)
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    log_in(page, live_server.url, "ann", "/p/p19/")
    start(page, live_server.url)
    ready_ahead(page)
    assert Assignment.objects.filter(annotator__username="ann", status="open").count() == 2

    # Timed in the page: Enter, the next item in, the vote's answer.
    page.evaluate(
        """() => {
            document.addEventListener("keydown", e => {
                if (e.key === "Enter") window.__enter = performance.now();
            }, true);
            document.addEventListener("work:shown", () => { window.__shown = performance.now(); });
        }"""
    )
    first = page.url
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    page.wait_for_function("u => location.href !== u", arg=first)
    page.wait_for_function(
        "() => performance.getEntriesByType('resource').some(e => e.name.endsWith('/submit/'))"
    )
    enter, shown, answered = page.evaluate(
        """() => [window.__enter, window.__shown, performance.getEntriesByType('resource')
                  .find(e => e.name.endsWith('/submit/')).responseStart]"""
    )
    # Shown before the server even began to answer, with its image decoded.
    assert enter < shown < answered, (enter, shown, answered)
    assert page.evaluate(
        "() => { const i = document.getElementById('viewer-img');"
        " return i.complete && i.naturalWidth > 0; }"
    )
    assert page.locator("#work").get_attribute("data-submitted") == "0"
    assert "You: 1 judged" in page.locator("#progress").inner_text()
    page.wait_for_function("() => !document.querySelector('#work-alert:not([hidden])')")
    # The vote arrives; the server's next item is the one on screen.
    for _ in range(50):
        if Judgement.objects.count() == 1:
            break
        time.sleep(0.1)
    assert Judgement.objects.count() == 1
    shown = int(page.url.rstrip("/").rpartition("/")[2])
    assert Assignment.objects.get(pk=shown).status == "open"
    # Back: the address and the item on screen agree again.
    page.go_back()
    page.wait_for_selector("#work[data-submitted='1']")
    assert page.url == first
    assert first.endswith(f"/a/{page.locator('#work').get_attribute('data-assignment')}/")
    assert not errors, errors


def test_a_failed_background_vote_brings_the_item_back(live_server, browser, tmp_path):
    annotator_project(tmp_path, ["general_preference"] * 4, votes_per_item=1)
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    log_in(page, live_server.url, "ann", "/p/p19/")
    start(page, live_server.url)
    ready_ahead(page)
    first = page.url
    page.route("**/submit/", lambda route: route.fulfill(status=500, body="boom"))
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    page.locator("#work-alert").wait_for(state="visible")
    assert page.url == first
    assert page.locator("#choice-right").is_checked()  # as it was
    assert Judgement.objects.count() == 0
    # Enter again, the server back: saved.
    page.unroute("**/submit/")
    page.keyboard.press("Enter")
    page.wait_for_function("u => location.href !== u", arg=first)
    for _ in range(50):
        if Judgement.objects.count() == 1:
            break
        time.sleep(0.1)
    assert Judgement.objects.count() == 1
