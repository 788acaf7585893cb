"""Issue 31, deliverable 1: every keyboard path of the adjudication and
compare pages leaves focus where the next key belongs. Each path is typed in
real Chromium and what the server recorded (the audit entry, the vote, the
skip) is read back: the reason typed is the reason stored, to the letter.

The reasons hold digits and every shortcut letter (1 2 0 x c m o r n b s):
while a text box has focus they are text, never shortcuts."""

import pytest

from annotate.models import Assignment, AssignmentStatus, Judgement
from curation.models import AuditEvent, Verdict, VerdictStatus
from tests.e2e.compare_helpers import annotator_project, log_in, start
from tests.e2e.test_curation_journey import SLUG, make_contested_project

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

TRICKY = "2r checked the image: 10 x 20 px, colour bars, no answer in 0 of them."


def last_event(item_id: int) -> AuditEvent:
    return AuditEvent.objects.filter(item_id=item_id).order_by("-pk").first()


def open_item(page, base: str, item_id: int) -> None:
    page.goto(f"{base}/p/{SLUG}/curation/{item_id}/")
    page.wait_for_selector("#decision")
    page.wait_for_function("() => document.readyState === 'complete'")


def focused(page) -> str:
    return page.evaluate(
        "() => { const e = document.activeElement;"
        " return e ? e.tagName + ':' + (e.name || '') : ''; }"
    )


def save_and_wait(page, url: str) -> None:
    """Save; the answer redirects to the next contested item (or this one)."""
    with page.expect_navigation():
        page.keyboard.press("Control+Enter")
    page.wait_for_selector(".messages .msg-success")


def test_every_adjudication_key_path_records_the_reason_typed(live_server, browser, tmp_path):
    _project, _curator, order, conflict_id = make_contested_project(tmp_path)
    free = [pk for pk in order if pk != conflict_id]
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    log_in(page, live_server.url, "curator", f"/p/{SLUG}/curation/")
    base = live_server.url

    # x: exclude, focus in the reason box. Saving with no reason is refused
    # by the browser, which leaves focus in the reason box; the keys typed
    # next are the reason, nothing else (the "2rChecked…" of the issue).
    open_item(page, base, free[0])
    url = page.url
    page.keyboard.press("x")
    assert focused(page) == "TEXTAREA:reason"
    assert page.locator("#decision input[name=action][value=exclude]").is_checked()
    page.keyboard.press("Control+Enter")
    page.wait_for_timeout(200)
    assert page.url == url and focused(page) == "TEXTAREA:reason"
    assert last_event(free[0]).action == "rule"
    page.keyboard.type(TRICKY)
    save_and_wait(page, url)
    event = last_event(free[0])
    assert (event.action, event.reason) == ("exclude", TRICKY)
    assert event.after["exclusion_category"] == "ambiguous"  # the first category, as shown

    # c: the category list; an arrow picks the next category, Enter goes on
    # to the reason, which is typed and saved.
    open_item(page, base, free[1])
    url = page.url
    page.keyboard.press("c")
    assert focused(page) == "SELECT:category"
    assert page.locator("#decision input[name=action][value=exclude]").is_checked()
    page.keyboard.press("ArrowDown")
    assert page.locator("#decision select[name=category]").input_value() == "both_bad"
    page.keyboard.press("Enter")
    assert focused(page) == "TEXTAREA:reason"
    page.keyboard.type("Both miss the point; " + TRICKY)
    save_and_wait(page, url)
    event = last_event(free[1])
    assert (event.action, event.reason) == ("exclude", "Both miss the point; " + TRICKY)
    assert event.after["exclusion_category"] == "both_bad"

    # c then r: r in the category list is not a category letter, it goes on.
    open_item(page, base, free[2])
    url = page.url
    page.keyboard.press("c")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("r")
    assert focused(page) == "TEXTAREA:reason"
    page.keyboard.type("broken, " + TRICKY)
    save_and_wait(page, url)
    event = last_event(free[2])
    assert (event.action, event.reason, event.after["exclusion_category"]) == (
        "exclude", "broken, " + TRICKY, "broken",
    )  # fmt: skip

    # 2: resolve for response 2; Escape leaves the box, then r comes back to it.
    open_item(page, base, free[3])
    url = page.url
    page.keyboard.press("2")
    assert focused(page) == "TEXTAREA:reason"
    page.keyboard.type("Response 2 ")
    page.keyboard.press("Escape")
    assert focused(page) == "BODY:"
    page.keyboard.press("r")
    assert focused(page) == "TEXTAREA:reason"
    page.keyboard.type(TRICKY)
    save_and_wait(page, url)
    event = last_event(free[3])
    assert (event.action, event.reason) == ("resolve", "Response 2 " + TRICKY)
    assert event.after["final_choice"] == "2"

    # o: reopen the resolved item; m: then ask it for more votes.
    open_item(page, base, free[3])
    url = page.url
    page.keyboard.press("o")
    assert focused(page) == "TEXTAREA:reason"
    page.keyboard.type("reopened: " + TRICKY)
    save_and_wait(page, url)
    event = last_event(free[3])
    assert (event.action, event.reason) == ("reopen", "reopened: " + TRICKY)
    open_item(page, base, free[3])
    url = page.url
    page.keyboard.press("m")
    assert focused(page) == "TEXTAREA:reason"
    assert page.locator("#decision input[name=action][value=more_votes]").is_checked()
    page.keyboard.type("one more, " + TRICKY)
    save_and_wait(page, url)
    event = last_event(free[3])
    assert (event.action, event.reason) == ("more_votes", "one more, " + TRICKY)

    # 1 resolves the first excluded item after all (a mouse change of the
    # category would have switched the action to exclude: not pressed here).
    open_item(page, base, free[0])
    url = page.url
    page.keyboard.press("1")
    assert focused(page) == "TEXTAREA:reason"
    page.keyboard.type("On reflection 1; " + TRICKY)
    save_and_wait(page, url)
    event = last_event(free[0])
    assert (event.action, event.reason, event.after["final_choice"]) == (
        "resolve", "On reflection 1; " + TRICKY, "1",
    )  # fmt: skip
    assert Verdict.objects.get(item_id=free[0]).status == VerdictStatus.RESOLVED
    assert not errors, errors


def test_every_compare_key_path_records_what_was_typed(live_server, browser, tmp_path):
    annotator_project(tmp_path, ["general_preference"] * 3)
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    log_in(page, live_server.url, "ann", "/p/p19/")
    start(page, live_server.url)

    # r: the rationale box; Escape leaves it; x: the problem box; Ctrl+Enter
    # submits from there.
    url = page.url
    page.keyboard.press("2")
    page.keyboard.press("r")
    assert focused(page) == "TEXTAREA:rationale"
    page.keyboard.type(TRICKY)
    page.keyboard.press("Escape")
    assert focused(page) == "BODY:"
    page.keyboard.press("x")
    assert focused(page) == "INPUT:problem_reason"
    page.keyboard.type("image 2r cut off")
    with page.expect_response(lambda r: r.url.endswith("/submit/")):
        page.keyboard.press("Control+Enter")
    page.wait_for_function("u => location.href !== u", arg=url)
    vote = Judgement.objects.get()
    assert (vote.rationale, vote.problem_reason, vote.flagged_problem) == (
        TRICKY, "image 2r cut off", True,
    )  # fmt: skip

    # s: the skip reason; Enter skips with it.
    page.wait_for_selector("#work")
    url = page.url
    page.keyboard.press("s")
    assert focused(page) == "INPUT:reason"
    page.keyboard.type("Outside my expertise: " + TRICKY)
    with page.expect_response(lambda r: "/skip/" in r.url):
        page.keyboard.press("Enter")
    page.wait_for_function("u => location.href !== u", arg=url)
    skipped = Assignment.objects.get(status=AssignmentStatus.SKIPPED)
    assert skipped.skip_reason == "Outside my expertise: " + TRICKY

    # 1, r, rationale, Ctrl+Enter from the rationale box.
    page.wait_for_selector("#work")
    url = page.url
    page.keyboard.press("1")
    page.keyboard.press("r")
    page.keyboard.type("1 is right; " + TRICKY)
    with page.expect_response(lambda r: r.url.endswith("/submit/")):
        page.keyboard.press("Control+Enter")
    page.wait_for_function("u => location.href !== u", arg=url)
    assert Judgement.objects.order_by("-pk").first().rationale == "1 is right; " + TRICKY
    assert not errors, errors
