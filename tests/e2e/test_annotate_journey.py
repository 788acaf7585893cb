"""An annotator judges five items in real Chromium with the keyboard only."""

import json

import pytest

from annotate.importing.service import import_items_from_paths
from annotate.loop import rules
from annotate.models import Assignment, AssignmentStatus, Judgement, Membership
from tests.factories import make_project, make_user, png_bytes

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

MATH = "Euler: $e^{i\\pi} + 1 = 0$ and\n\n$$\\int_0^1 x^2\\,dx = \\tfrac13$$"
CODE = "```python\ndef area(r):\n    return 3.14159 * r ** 2\n```"


def make_dataset(tmp_path, n=6):
    records = []
    for i in range(n):
        name = f"img/{i}.png"
        (tmp_path / "img").mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(png_bytes(size=(320, 200), color=(30 * i, 80, 160)))
        category = "vqa" if i % 2 == 0 else "open_generation/preference_task"
        records.append(
            {
                "ID": f"demo_{i}",
                "Text": f"**Question {i}:** what colour dominates the image?",
                "Image": name,
                "Output1": f"CANON-ONE-{i}. {MATH}",
                "Output2": f"CANON-TWO-{i}.\n\n{CODE}\n\n- a list item",
                "Better": "Output1",
                "Category": category,
            }
        )
    path = tmp_path / "data.json"
    path.write_text(json.dumps(records))
    return path


def test_annotator_judges_five_items_with_the_keyboard(live_server, browser, artifacts, tmp_path):
    project = make_project(slug="e2e", votes_per_item=1)
    import_items_from_paths(project=project, dataset=make_dataset(tmp_path), images=tmp_path)
    user = make_user("keyboarder")
    Membership.objects.create(project=project, user=user, role="annotator")

    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_server.url}/accounts/login/?next=/p/e2e/")
    page.wait_for_selector("input[name=username]:focus")  # autofocus
    page.keyboard.type("keyboarder")
    page.keyboard.press("Tab")
    page.keyboard.type("pw")
    page.keyboard.press("Enter")
    page.wait_for_url("**/p/e2e/")
    page.wait_for_selector("button:focus")  # "Start annotating" has autofocus
    page.keyboard.press("Enter")
    page.wait_for_url("**/a/*/")

    planned = ["left", "right", "left", "right", "right"]
    for n, side in enumerate(planned):
        page.wait_for_selector("#work")
        url = page.url
        if n == 0:
            # KaTeX is fetched on demand and typesets every formula
            page.wait_for_selector(".math-display.math-rendered")
            assert page.locator(".math-error").count() == 0
            assert page.locator(".highlight .k").count() > 0  # Pygments classes
            page.screenshot(path=str(artifacts / "compare-1280x800.png"), full_page=True)
        correctness = page.locator("#work").get_attribute("data-correctness") == "1"
        page.keyboard.press("1" if side == "left" else "ArrowRight")
        if correctness:
            page.keyboard.press("q")  # A (left): correct
            page.keyboard.press("p")  # B (right): incorrect
        page.keyboard.press("Enter")
        # the next item is swapped in and its URL pushed (6 items, so there is one)
        page.wait_for_function("u => location.href !== u", arg=url)
        page.wait_for_selector("#work[data-submitted='0']")
    assert not errors, errors

    submitted = Assignment.objects.filter(annotator=user, status=AssignmentStatus.SUBMITTED)
    assert submitted.count() == 5
    swapped_seen = 0
    # In the order judged: with the next item leased ahead (issue 19), a lease
    # taken by the page ahead can be older than the one a submit took.
    for a, side in zip(submitted.order_by("submitted_at", "pk"), planned, strict=True):
        j = Judgement.objects.with_pair_answers().get(assignment=a)
        assert j.choice == rules.response_on(side, swapped=a.shown_swapped)
        swapped_seen += a.shown_swapped
        if a.item.domain.is_correctness:
            left, right = (rules.response_on(s, swapped=a.shown_swapped) for s in rules.SIDES)
            assert getattr(j, "correct_" + left) == "yes"
            assert getattr(j, "correct_" + right) == "no"
    # Back button returns to the previous (judged) item.
    page.go_back()
    page.wait_for_selector("#work[data-submitted='1']")

    mobile = browser.new_page(viewport={"width": 390, "height": 844})
    mobile.context.add_cookies(page.context.cookies())
    open_assignment = Assignment.objects.get(annotator=user, status=AssignmentStatus.OPEN)
    mobile.goto(f"{live_server.url}/a/{open_assignment.pk}/")
    mobile.wait_for_selector("#work")
    mobile.screenshot(path=str(artifacts / "compare-390x844.png"), full_page=True)
    page.close()
    mobile.close()
