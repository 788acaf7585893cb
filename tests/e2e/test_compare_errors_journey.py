"""Issue 19, defect 1: a rejected submit, tie, skip or flag shows its
messages beside the fields, moves focus to the first invalid field and
announces a summary (htmx used to drop 4xx answers: nothing happened)."""

import pytest

from annotate.models import Judgement
from tests.e2e.compare_helpers import annotator_project, log_in, start

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def focused_id(page) -> str:
    return page.evaluate("document.activeElement && document.activeElement.id")


def test_a_new_annotators_first_enter_shows_what_is_missing(live_server, browser, tmp_path):
    annotator_project(tmp_path, ["vqa", "vqa"], allow_tie=True)
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    log_in(page, live_server.url, "ann", "/p/p19/")
    start(page, live_server.url)
    url = page.url

    # Enter with nothing chosen: the 422 answer is swapped in.
    page.keyboard.press("Enter")
    page.wait_for_selector("#error-summary")
    assert page.url == url
    assert page.locator("#error-summary h2").inner_text() == "3 things to fix before submitting"
    page.wait_for_function("() => document.activeElement.id === 'correct_left-yes'")
    first = page.locator("#correct_left-yes")
    assert first.get_attribute("aria-invalid") == "true"
    assert first.get_attribute("aria-describedby") == "err-correct_left"
    assert page.locator("#err-correct_left").is_visible()
    assert page.locator("#err-choice").inner_text() == "Choose the better response."
    page.wait_for_function(
        "() => document.getElementById('announce').textContent.includes('3 things to fix')"
    )
    assert page.locator("#announce").get_attribute("aria-live") == "polite"

    # A tie without a rationale: the rationale is what is missing now.
    page.keyboard.press("Escape")
    for key in ("q", "p", "0", "Enter"):
        page.keyboard.press(key)
    page.wait_for_function("() => document.activeElement.id === 'rationale'")
    assert page.locator("#error-summary h2").inner_text() == "1 thing to fix before submitting"
    assert page.locator("#err-rationale").inner_text() == (
        "Explain why the responses are equally good."
    )
    assert page.locator("#rationale").get_attribute("aria-invalid") == "true"
    # What was chosen is still chosen.
    assert page.locator("#choice-tie").is_checked()
    assert page.locator("#correct_left-yes").is_checked()

    # A flag without its reason.
    page.keyboard.press("Escape")
    page.keyboard.press("x")  # flags and focuses the reason box
    page.keyboard.press("Escape")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.activeElement.id === 'rationale'")
    assert page.locator("#err-problem_reason").inner_text() == "Say what is wrong with the item."
    assert page.locator("#problem_reason").get_attribute("aria-invalid") == "true"

    # A skip without a reason.
    page.keyboard.press("Escape")
    page.keyboard.press("s")
    page.wait_for_function("() => document.activeElement.id === 'skip-reason'")
    page.keyboard.press("Enter")
    page.wait_for_selector("#err-skip")
    page.wait_for_function("() => document.activeElement.id === 'skip-reason'")
    assert page.locator("#err-skip").inner_text() == "Say why you skip."
    assert page.locator(".skip details").get_attribute("open") is not None
    assert page.locator("#error-summary h2").inner_text() == "1 thing to fix before skipping"

    assert page.url == url
    assert Judgement.objects.count() == 0
    assert not errors, errors


def test_a_server_failure_is_said_not_swallowed(live_server, browser, tmp_path):
    annotator_project(tmp_path, ["general_preference", "general_preference"])
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    log_in(page, live_server.url, "ann", "/p/p19/")
    start(page, live_server.url)
    page.route("**/submit/", lambda route: route.fulfill(status=500, body="boom"))
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    alert = page.locator("#work-alert")
    alert.wait_for(state="visible")
    assert "nothing was saved" in alert.inner_text()
    assert alert.get_attribute("role") == "alert"
