"""Issue 33 leftover: per-response correctness and grades by keyboard on the
N-slot compare page, where the domain asks them: y / n / u then a response's
number (correct / incorrect / unsure), z / c / v then a number (grade A / B /
C); the `?` panel lists the keys. Stored per canonical slot."""

import pytest

from annotate.models import Assignment, Judgement, Membership, Task, text_part, write_item_content
from tests.e2e.compare_helpers import log_in, start
from tests.e2e.test_accessibility import SIZES
from tests.e2e.test_ranking_journey import ANSWERS, live_text
from tests.factories import make_item, make_project, make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_label_and_grade_four_responses_by_keyboard(live_server, browser):
    project = make_project(slug="label4", task=Task.BEST_OF_N)
    domain = project.domains.get(slug="knowledge")  # a correctness domain
    domain.asks_grade = True
    domain.save()
    item = make_item(project=project, domain=domain)
    write_item_content(
        item,
        [text_part("A rectangle is **3 cm** by **4 cm**. What is its area?")],
        [[text_part(answer)] for answer in ANSWERS],
    )
    Membership.objects.create(project=project, user=make_user("labeller"), role="annotator")
    context = browser.new_context(**SIZES["desktop"])
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    log_in(page, live_server.url, "labeller", "/p/label4/", keyboard=True)
    start(page, live_server.url, "label4")
    page.wait_for_selector('#work[data-task="best_of_n"]')
    order = Assignment.objects.get(item=item).display_order

    # The `?` panel documents the keys.
    panel = page.locator("[data-action-key='label-yes']")
    assert panel.count() == 1 and panel.inner_text() == "y"
    assert page.locator("[data-action-key='grade-A']").inner_text() == "z"

    # y then 3: response C is correct (the digit does not pick C).
    page.keyboard.press("y")
    assert "which response" in live_text(page)
    page.keyboard.press("3")
    page.wait_for_function(
        "() => document.getElementById('rank-live').textContent.includes('response C')"
    )
    assert page.is_checked("#correct_3-yes") and not page.is_checked("#pick-3")
    # Answers for the others, then grades: z 3 (A), c 1 (B), v 2 (C), v 4.
    for key, position in (("n", 1), ("n", 2), ("u", 4)):
        page.keyboard.press(key)
        page.keyboard.press(str(position))
    for key, position in (("z", 3), ("c", 1), ("v", 2), ("v", 4)):
        page.keyboard.press(key)
        page.keyboard.press(str(position))
    assert page.is_checked("#correct_4-unsure") and page.is_checked("#grade_2-C")
    # A first key, then another key: cancelled, nothing answered.
    page.keyboard.press("y")
    page.keyboard.press("Escape")
    page.wait_for_function(
        "() => document.getElementById('rank-live').textContent.includes('Cancelled')"
    )
    page.keyboard.press("3")  # a digit picks again
    assert page.is_checked("#pick-3")
    page.keyboard.press("Enter")
    page.wait_for_url("**/done/")

    judgement = Judgement.objects.get(assignment__item=item, is_current=True)
    assert judgement.choice == order[2]
    stored = {
        row.slot: (row.correctness, row.grade) for row in judgement.slots.all().order_by("slot")
    }
    shown = {
        1: ("no", "B"),
        2: ("no", "C"),
        3: ("yes", "A"),
        4: ("unsure", "C"),
    }
    # Canonical slots: the response shown at position p is slot order[p - 1].
    assert stored == {int(order[p - 1]): answer for p, answer in shown.items()}
    assert errors == []
    context.close()
