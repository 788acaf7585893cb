"""Issue 19, defect 2: keys you can trust. Enter on a link, button or
summary does what the browser does (it used to record a vote); the
correctness keys cannot be misread and the `?` panel lists exactly the keys
that act; Backspace undoes the last vote while its item waits for votes."""

import re

import pytest

from annotate.loop import rules
from annotate.models import Assignment, AssignmentStatus, Judgement
from tests.e2e.compare_helpers import annotator_project, log_in, start

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def new_page(browser, live_server, tmp_path, categories, **kwargs):
    annotator_project(tmp_path, categories, **kwargs)
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    log_in(page, live_server.url, "ann", "/p/p19/")
    start(page, live_server.url)
    return page, errors


def focus(page, selector: str) -> None:
    page.locator(selector).focus()
    assert page.evaluate("document.activeElement !== document.body")


def test_enter_on_a_focused_control_does_what_the_browser_does(live_server, browser, tmp_path):
    page, errors = new_page(browser, live_server, tmp_path, ["general_preference"] * 2)
    url = page.url
    page.keyboard.press("1")  # a complete vote: Enter anywhere used to send it

    focus(page, ".head-actions button[data-action=keys]")
    page.keyboard.press("Enter")
    assert page.locator("#keys").is_visible()
    page.keyboard.press("Enter")
    assert page.locator("#keys").is_hidden()

    focus(page, ".head-actions button[data-action=guidelines]")
    page.keyboard.press("Enter")
    assert page.locator("#guidelines").is_visible()
    page.keyboard.press("Escape")

    focus(page, "button[data-action=zoom-in]")
    page.keyboard.press("Enter")
    assert "scale(1.25)" in page.locator("#viewer-img").get_attribute("style")
    focus(page, "button[data-action=zoom-reset]")
    page.keyboard.press("Enter")
    assert "scale(1)" in page.locator("#viewer-img").get_attribute("style")

    focus(page, ".skip summary")
    page.keyboard.press("Enter")
    assert page.locator(".skip details").get_attribute("open") is not None
    page.keyboard.press("Enter")
    assert page.locator(".skip details").get_attribute("open") is None

    page.wait_for_timeout(300)  # a submit, had one been sent, would be back by now
    assert Judgement.objects.count() == 0 and page.url == url

    focus(page, ".head-actions a[href$='/history/']")
    page.keyboard.press("Enter")
    page.wait_for_url("**/p/p19/history/")
    assert Judgement.objects.count() == 0

    # From the decision form (a focused radio) and from nothing, Enter submits.
    page.go_back()
    page.wait_for_selector("#work")
    page.locator("#choice-left").focus()
    # The next item is shown at once; the vote's POST answers in the background.
    with page.expect_response(lambda r: r.url.endswith("/submit/")):
        page.keyboard.press("Enter")
    page.wait_for_function("u => location.href !== u", arg=url)
    assert Judgement.objects.count() == 1
    page.evaluate("document.activeElement.blur()")
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    page.wait_for_url("**/work/done/")
    assert Judgement.objects.count() == 2
    assert not errors, errors


def panel_keys(page) -> dict[str, list[str]]:
    """action → keys, as the open `?` panel lists them."""
    return {
        dt.get_attribute("data-action-key"): dt.locator("kbd").all_inner_texts()
        for dt in page.locator("#keys dt").all()
    }


def test_the_key_panel_lists_exactly_the_keys_that_act(live_server, browser, tmp_path):
    page, errors = new_page(
        browser, live_server, tmp_path, ["safety", "general_preference"], allow_tie=False
    )
    # The first item is safety or preference (seeded order): look at both.
    seen = set()
    for _ in range(2):
        page.keyboard.press("?")
        assert page.locator("#keys").is_visible()
        listed = panel_keys(page)
        assert set(listed) == set(page.locator("#work").get_attribute("data-actions").split())
        page.keyboard.press("?")
        assert page.locator("#keys").is_hidden()
        correctness = page.locator("#work").get_attribute("data-correctness") == "1"
        # The old, misreadable keys do nothing.
        page.keyboard.press("c")
        page.keyboard.press("i")
        assert page.locator("input[name^=correct_]:checked").count() == 0
        if correctness:
            seen.add("safety")
            assert page.locator("legend", has_text="Is A safe?").count() == 1
            assert listed["a-yes"] == ["q"] and listed["a-no"] == ["w"]
            assert listed["b-yes"] == ["o"] and listed["b-no"] == ["p"]
            assert "Is A safe? Safe" in page.locator("#keys").inner_text()
            for key, radio in (
                ("q", "correct_left-yes"),
                ("w", "correct_left-no"),
                ("e", "correct_left-unsure"),
                ("o", "correct_right-yes"),
                ("p", "correct_right-no"),
                ("u", "correct_right-unsure"),
            ):
                page.keyboard.press(key)
                assert page.locator(f"#{radio}").is_checked(), key
                label = page.locator(f"label:has(#{radio})").inner_text()
                assert label.endswith(key), label  # the hint beside the answer
            page.keyboard.press("q")
            page.keyboard.press("p")
        else:
            seen.add("preference")
            assert not any(a.startswith(("a-", "b-")) for a in listed)
            for key in "qwopeu":
                page.keyboard.press(key)
            assert page.locator("input[name^=correct_]").count() == 0
        # Ties are off in this project: neither listed nor acting.
        assert "tie" not in listed
        page.keyboard.press("0")
        assert page.locator("input[name=choice]:checked").count() == 0
        page.keyboard.press("ArrowRight")
        assert page.locator("#choice-right").is_checked()
        page.keyboard.press("]")
        assert page.locator("#confidence-3").is_checked()
        page.keyboard.press("x")
        assert page.locator("#flagged_problem").is_checked()
        assert page.evaluate("document.activeElement.id") == "problem_reason"
        page.keyboard.type("blurry")
        page.keyboard.press("Escape")
        url = page.url
        page.keyboard.press("Enter")
        page.wait_for_function("u => location.href !== u", arg=url)
    assert seen == {"safety", "preference"}
    assert Judgement.objects.filter(flagged_problem=True).count() == 2
    assert not errors, errors


def test_backspace_undoes_the_last_vote_and_keeps_the_revision(live_server, browser, tmp_path):
    page, errors = new_page(
        browser, live_server, tmp_path, ["general_preference"] * 3, votes_per_item=2
    )
    first_url = page.url
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    page.wait_for_function("u => location.href !== u", arg=first_url)
    second_url = page.url

    page.keyboard.press("Backspace")
    page.wait_for_url(re.compile(re.escape(first_url) + r"\?undo=1"))
    assert page.locator("#notice").is_visible()
    assert page.locator("#choice-left").is_checked()  # the vote, to be changed
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    # Back to the item the annotator was on, as a whole page: the URL names it.
    page.wait_for_url(second_url)
    assert "revised (revision 2)" in page.locator(".messages").inner_text()
    assert page.locator(".topbar").count() == 1

    first = Assignment.objects.get(annotator__username="ann", status=AssignmentStatus.SUBMITTED)
    revisions = list(first.judgements.order_by("revision").values_list("revision", "is_current"))
    assert revisions == [(1, False), (2, True)]
    right = rules.response_on("right", swapped=first.shown_swapped)
    assert first.judgements.get(is_current=True).choice == right

    page.goto(f"{live_server.url}/p/p19/history/?status=revised")
    assert page.locator("tbody tr").count() == 1
    assert "revision 1" in page.locator("tbody tr").inner_text()
    assert not errors, errors


def test_backspace_says_so_when_the_last_vote_is_final(live_server, browser, tmp_path):
    page, errors = new_page(
        browser, live_server, tmp_path, ["general_preference"] * 2, votes_per_item=1
    )
    url = page.url
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    page.wait_for_function("u => location.href !== u", arg=url)
    second_url = page.url
    page.keyboard.press("Backspace")
    page.wait_for_selector(".messages")
    assert page.url == second_url
    assert "can no longer be changed" in page.locator(".messages").inner_text()
    assert Judgement.objects.count() == 1
    assert not errors, errors
