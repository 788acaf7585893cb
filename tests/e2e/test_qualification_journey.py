"""Issue 36 item 1: a new annotator qualifies in Chromium, by keyboard. The
qualification items come in through the import (a `purpose` field); the
newcomer's Start annotating leads to the qualification; they fail once
(each answer shows whether it was right and the item's explanation), cannot
retry before the wait (the button is disabled and the server refuses a
start), then, with the project's wait set to 0 hours, pass and get a
benchmark item. axe at desktop and phone sizes on every qualification page."""

import json

import pytest

from annotate.importing.service import import_items_from_paths
from annotate.models import Assignment, Membership, QualificationAttempt
from tests.e2e.compare_helpers import log_in
from tests.e2e.test_accessibility import AXE_OPTIONS, SIZES
from tests.factories import make_project, make_user, png_bytes

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def qualifying_project(tmp_path):
    project = make_project(
        slug="p36", qualification_required=True, qualification_pass_mark=1.0, votes_per_item=1
    )
    (tmp_path / "img.png").write_bytes(png_bytes(size=(320, 200)))
    base = {"prompt": "Which answer names the colour?", "image": "img.png",
            "category": "general_preference"}  # fmt: skip
    records = [
        {**base, "id": f"q{n}", "purpose": "qualification", "chosen": f"RIGHT answer {n}",
         "rejected": f"WRONG answer {n}",
         "explanation": f"The right answer **says blue** (item {n})."}
        for n in (1, 2)
    ] + [{**base, "id": "bench1", "chosen": "Bench one", "rejected": "Bench two"}]  # fmt: skip
    data = tmp_path / "data.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in records))
    import_items_from_paths(project=project, dataset=data, images=tmp_path)
    user = make_user("newcomer")
    Membership.objects.create(project=project, user=user, role="annotator")
    Membership.objects.create(project=project, user=make_user("curator"), role="curator")
    return project, user


def text(page, selector: str) -> str:
    """The element's text, white space as one space (the layout breaks lines)."""
    return " ".join(page.inner_text(selector).split())


def press_enter_on_autofocus(page) -> None:
    """Enter on the page's autofocused button, once the browser has focused it
    (autofocus is applied after the load event, at the next rendering step)."""
    page.wait_for_selector("main button:focus")
    page.keyboard.press("Enter")


def check_axe(page, name, artifacts):
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page, options=AXE_OPTIONS)
    if results.violations_count:
        page.screenshot(path=str(artifacts / f"axe-qualify-{name}.png"), full_page=True)
    assert not results.violations_count, f"{name}: {results.generate_report()}"


def answer(page, *, right: bool) -> None:
    """Pick the right (or the wrong) response by its key and submit with Enter."""
    page.wait_for_selector("#work")
    page.wait_for_function("() => window.htmx && document.readyState === 'complete'")
    left = page.locator('.response[data-side="left"]').inner_text()
    left_is_right = "RIGHT" in left
    page.keyboard.press("1" if left_is_right == right else "2")
    page.keyboard.press("Enter")
    page.wait_for_selector("#feedback-title")


def test_a_newcomer_fails_waits_passes_and_gets_a_benchmark_item(
    live_server, browser, tmp_path, artifacts
):
    project, user = qualifying_project(tmp_path)
    page = browser.new_page(**SIZES["desktop"])
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    log_in(page, live_server.url, "newcomer", "/p/p36/", keyboard=True)
    press_enter_on_autofocus(page)  # Start annotating (autofocused): to the qualification
    page.wait_for_url("**/p/p36/qualify/")
    assert "2 qualification items" in text(page, "main")
    check_axe(page, "overview-desktop", artifacts)
    press_enter_on_autofocus(page)  # Start the qualification (autofocused)

    # First attempt: one wrong answer, then one right (the pass mark is 100 %).
    page.wait_for_selector("#work")
    assert "Qualification: item 1 of 2" in text(page, "#progress")
    assert page.locator("form.skip").count() == 0
    assert "says blue" not in page.inner_text("#work")  # not before the answer
    check_axe(page, "compare-desktop", artifacts)
    answer(page, right=False)
    assert page.inner_text("#feedback-title") == "Not right"
    assert page.locator("#explanation strong").inner_text() == "says blue"
    check_axe(page, "feedback-desktop", artifacts)
    press_enter_on_autofocus(page)  # Next item
    answer(page, right=True)
    assert page.inner_text("#feedback-title") == "Right"
    press_enter_on_autofocus(page)  # See your result
    page.wait_for_selector("#qualify-state")
    assert "1 of 2" in text(page, "#qualify-state")
    retry = page.locator("button:has-text('Retry')")
    assert retry.is_disabled()
    assert "You may retry after" in text(page, "#retry-at")

    # The server refuses a start before the wait is over, whatever the page says.
    status = page.evaluate(
        """() => fetch(document.querySelector("form[action$='/qualify/start/']").action, {
             method: "POST", credentials: "same-origin",
             body: new FormData(document.querySelector("form[action$='/qualify/start/']"))
           }).then(r => r.status)"""
    )
    assert status == 200  # back on the overview, with the refusal as a message
    assert QualificationAttempt.objects.filter(annotator=user).count() == 1
    assert not Assignment.objects.filter(annotator=user).exists()

    # Phone size: the overview with its disabled retry.
    phone = browser.new_page(**SIZES["phone"])
    phone.context.add_cookies(page.context.cookies())
    phone.goto(f"{live_server.url}/p/p36/qualify/")
    check_axe(phone, "overview-phone", artifacts)
    phone.close()

    # The project's wait is set to 0 hours: the retry is open now.
    project.qualification_retry_hours = 0
    project.save(update_fields=["qualification_retry_hours"])
    page.reload()
    page.wait_for_selector("button:has-text('Retry'):focus")
    page.keyboard.press("Enter")
    page.wait_for_selector("#work")
    page.set_viewport_size(SIZES["phone"]["viewport"])
    check_axe(page, "compare-phone", artifacts)
    answer(page, right=True)
    check_axe(page, "feedback-phone", artifacts)
    page.set_viewport_size(SIZES["desktop"]["viewport"])
    press_enter_on_autofocus(page)
    answer(page, right=True)
    press_enter_on_autofocus(page)  # See your result
    page.wait_for_selector("#qualify-state")
    assert "admitted" in text(page, "#qualify-state")
    page.screenshot(path=str(artifacts / "qualification-passed.png"), full_page=True)
    press_enter_on_autofocus(page)  # Start annotating (autofocused)
    page.wait_for_url("**/a/*/")
    assignment = Assignment.objects.get(annotator=user)
    assert assignment.item.external_id == "bench1"
    assert "Bench" in page.inner_text("#work")
    attempts = list(QualificationAttempt.objects.filter(annotator=user).order_by("started_at"))
    assert [(a.right, a.total, a.passed) for a in attempts] == [(1, 2, False), (2, 2, True)]

    # The curators' page lists both attempts and the admission.
    curator = browser.new_page(**SIZES["desktop"])
    log_in(curator, live_server.url, "curator", "/p/p36/qualification/", keyboard=True)
    row = text(curator, "#qualification-people tbody tr")
    assert "1/2 failed" in row and "2/2 passed" in row and "(passed)" in row
    check_axe(curator, "people-desktop", artifacts)
    curator.set_viewport_size(SIZES["phone"]["viewport"])
    check_axe(curator, "people-phone", artifacts)
    curator.close()
    assert errors == []
