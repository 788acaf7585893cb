"""Issue 33 item 2: rank four responses and pick the best of four by
keyboard alone on the compare page, and check what is stored: canonical
JudgementSlot ranks (the display order, drawn on the server when the item
was leased, never reaches them). The ranking page is axe-clean at desktop
and phone sizes, nothing wider than the screen; screenshots in
tests/artifacts/."""

import pytest

from annotate.models import Assignment, Judgement, Membership, Task, text_part, write_item_content
from tests.e2e.compare_helpers import log_in, start
from tests.e2e.test_accessibility import AXE_OPTIONS, SIZES
from tests.factories import make_item, make_project, make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

ANSWERS = [
    "The area is 12 cm², from 3 by 4.",
    "The area is 7 cm²: the sides were added, not multiplied. " + "More words. " * 20,
    "It is 12 square centimetres (3 cm by 4 cm).",
    "About 10 cm².",
]


def four_response_project(slug: str, task: str, username: str):
    project = make_project(slug=slug, task=task)
    item = make_item(project=project, domain=project.domains.get(slug="general_preference"))
    write_item_content(
        item,
        [text_part("A rectangle is **3 cm** by **4 cm**. What is its area?")],
        [[text_part(answer)] for answer in ANSWERS],
    )
    user = make_user(username)
    Membership.objects.create(project=project, user=user, role="annotator")
    return project, item


def live_text(page) -> str:
    page.wait_for_function("() => document.getElementById('rank-live').textContent !== ''")
    return page.locator("#rank-live").inner_text()


def test_rank_four_responses_by_keyboard_with_a_tie_and_a_take_back(live_server, browser):
    _, item = four_response_project("rank4", Task.RANKING, "ranker")
    context = browser.new_context(**SIZES["desktop"])
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    log_in(page, live_server.url, "ranker", "/p/rank4/", keyboard=True)
    start(page, live_server.url, "rank4")
    order = Assignment.objects.get(item=item).display_order
    assert sorted(order) == ["1", "2", "3", "4"]  # drawn at the lease, stored
    page.wait_for_selector('#work[data-task="ranking"]')
    # C first; A second; D third, taken back; D tied with A; B last.
    page.keyboard.press("3")
    assert "Response C placed 1st" in live_text(page)
    page.keyboard.press("1")
    page.keyboard.press("4")
    page.keyboard.press("Backspace")
    page.wait_for_function(
        "() => document.getElementById('rank-live').textContent.includes('taken back')"
    )
    assert page.input_value("#rank_4") == ""
    page.keyboard.press("=")
    page.keyboard.press("4")
    page.wait_for_function(
        "() => document.getElementById('rank-live').textContent.includes('Response D tied 2nd')"
    )
    page.keyboard.press("2")
    page.wait_for_function(
        "() => document.getElementById('rank-live').textContent"
        ".includes('Every response is placed')"
    )
    shown = [page.input_value(f"#rank_{p}") for p in range(1, 5)]
    assert shown == ["2", "4", "1", "2"]
    assert page.locator("#places .place").count() == 3  # 1st, 2nd (tie), 4th
    page.keyboard.press("Enter")
    page.wait_for_url("**/done/")
    judgement = Judgement.objects.get(assignment__item=item, is_current=True)
    assert (judgement.task, judgement.choice) == ("ranking", "")
    stored = dict(judgement.slots.values_list("slot", "rank"))
    displayed = {1: 2, 2: 4, 3: 1, 4: 2}  # by position A..D
    assert stored == {int(order[p - 1]): rank for p, rank in displayed.items()}
    assert not errors, errors
    context.close()


def test_pick_the_best_of_four_by_keyboard(live_server, browser):
    _, item = four_response_project("best4", Task.BEST_OF_N, "picker")
    context = browser.new_context(**SIZES["desktop"])
    page = context.new_page()
    log_in(page, live_server.url, "picker", "/p/best4/", keyboard=True)
    start(page, live_server.url, "best4")
    order = Assignment.objects.get(item=item).display_order
    page.wait_for_selector('#work[data-task="best_of_n"]')
    page.keyboard.press("2")
    assert "Response B picked as the best" in live_text(page)
    assert page.is_checked("#pick-2")
    page.keyboard.press("Enter")
    page.wait_for_url("**/done/")
    judgement = Judgement.objects.get(assignment__item=item, is_current=True)
    assert (judgement.task, judgement.choice) == ("best_of_n", order[1])
    context.close()


@pytest.mark.parametrize("size", list(SIZES))
def test_the_ranking_page_is_axe_clean(live_server, browser, size, artifacts):
    from axe_playwright_python.sync_playwright import Axe

    four_response_project("rank4", Task.RANKING, "ranker")
    context = browser.new_context(**SIZES[size])
    page = context.new_page()
    log_in(page, live_server.url, "ranker", "/p/rank4/")
    start(page, live_server.url, "rank4")
    page.keyboard.press("3")
    page.keyboard.press("1")
    page.keyboard.press("=")
    page.keyboard.press("4")
    page.wait_for_function(
        "() => document.getElementById('rank-live').textContent.includes('tied')"
    )
    results = Axe().run(page, options=AXE_OPTIONS)
    page.screenshot(path=str(artifacts / f"ranking-{size}.png"), full_page=True)
    assert not results.violations_count, results.generate_report()
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    context.close()


def test_rank_with_the_mouse_by_drag_and_drop(live_server, browser):
    _, item = four_response_project("drag4", Task.RANKING, "dragger")
    context = browser.new_context(**SIZES["desktop"])
    page = context.new_page()
    log_in(page, live_server.url, "dragger", "/p/drag4/")
    start(page, live_server.url, "drag4")
    page.wait_for_selector('#work[data-task="ranking"]')
    # D, then B onto the next place; A onto D's place (a tie); C next.
    page.drag_and_drop('.response[data-position="4"]', "#places .place.next")
    page.drag_and_drop('.response[data-position="2"]', "#places .place.next")
    page.drag_and_drop('.response[data-position="1"]', '#places .place[data-place="0"]')
    page.drag_and_drop('.response[data-position="3"]', "#places .place.next")
    shown = [page.input_value(f"#rank_{p}") for p in range(1, 5)]
    assert shown == ["1", "3", "4", "1"]
    # A chip dragged back onto the responses is unplaced.
    page.drag_and_drop('#places .chip[data-position="3"]', '.response[data-position="2"]')
    assert page.input_value("#rank_3") == ""
    page.drag_and_drop('.response[data-position="3"]', "#places .place.next")
    page.click("button[type=submit]")
    page.wait_for_url("**/done/")
    order = Assignment.objects.get(item=item).display_order
    stored = dict(Judgement.objects.get(assignment__item=item).slots.values_list("slot", "rank"))
    assert stored == {int(order[p - 1]): rank for p, rank in {1: 1, 2: 3, 3: 4, 4: 1}.items()}
    context.close()


def test_the_next_ranking_item_is_shown_at_once_and_the_vote_saved_behind(live_server, browser):
    project, first = four_response_project("next4", Task.RANKING, "nexter")
    second = make_item(project=project, domain=project.domains.get(slug="general_preference"))
    write_item_content(second, [text_part("Second prompt")], [[text_part(a)] for a in ANSWERS])
    context = browser.new_context(**SIZES["desktop"])
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    log_in(page, live_server.url, "nexter", "/p/next4/")
    start(page, live_server.url, "next4")
    url = page.url
    # The item kept ready is leased in the background (work.js prefetch).
    held = Assignment.objects.filter(annotator__username="nexter").order_by("claimed_at", "pk")
    for _ in range(50):
        if held.count() == 2:
            break
        page.wait_for_timeout(100)
    assert held.count() == 2
    page.wait_for_timeout(300)  # parsed
    for key in "4321":
        page.keyboard.press(key)
    page.wait_for_function(
        "() => document.getElementById('rank-live').textContent"
        ".includes('Every response is placed')"
    )
    page.keyboard.press("Enter")
    page.wait_for_function(f"() => location.href !== {url!r}")
    page.wait_for_selector('#work[data-task="ranking"]')
    # The next item takes keys at once.
    page.keyboard.press("2")
    page.wait_for_function(
        "() => document.getElementById('rank-live').textContent.includes('Response B placed 1st')"
    )
    done = held.filter(status="submitted")
    for _ in range(50):
        if done.exists():
            break
        page.wait_for_timeout(100)
    judgement = Judgement.objects.get(assignment__in=done)
    order = judgement.assignment.display_order
    stored = dict(judgement.slots.values_list("slot", "rank"))
    assert stored == {int(order[p - 1]): 5 - p for p in range(1, 5)}
    assert {first.pk, second.pk} == set(held.values_list("item_id", flat=True))
    assert not errors, errors
    context.close()
