"""Issue 24 item 6: what `make run` shows of the generation demo. A demo
annotator judges the items left for them in the text-to-image/editing and
the interleaved demo projects by keyboard alone, on the six-point scale
(and the letter grades the interleaved domain asks); every picture arrives
decoded, every text part shows whole (no step's second line hidden under
its picture), and the pages are axe-clean."""

import io

import pytest
from django.core.management import call_command

from annotate.management.commands.seed_demo import DEMO_PASSWORD
from annotate.models import Judgement
from tests.e2e.compare_helpers import start
from tests.e2e.test_accessibility import AXE_OPTIONS

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

# Text parts whose box is shorter than their text (clipped or overlapped).
CLIPPED_TEXT = """() => [...document.querySelectorAll('#work .parts > .md')]
    .filter(e => e.scrollHeight > e.clientHeight + 1).map(e => e.innerText.slice(0, 60))"""


def test_a_demo_annotator_judges_the_generation_demo_by_keyboard(live_server, browser, artifacts):
    from axe_playwright_python.sync_playwright import Axe

    call_command("seed_demo", verbosity=0, stdout=io.StringIO())
    before = Judgement.objects.filter(assignment__annotator__username="annotator1").count()
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", "annotator1")
    page.fill("input[name=password]", DEMO_PASSWORD)
    page.press("input[name=password]", "Enter")
    page.wait_for_url(f"{live_server.url}/")
    axe = Axe()
    judged = {}
    for slug in ("demo-t2i", "demo-interleaved"):
        start(page, live_server.url, slug)
        judged[slug] = 0
        while "/work/done/" not in page.url:
            page.wait_for_selector("#work .parts")
            page.wait_for_function(
                "() => [...document.querySelectorAll('img.part-img')]"
                ".every(i => i.complete && i.naturalWidth > 0)"
            )
            assert page.locator("#work .response img.part-img").count() >= 2
            assert page.evaluate(CLIPPED_TEXT) == []
            if judged[slug] == 0:
                results = axe.run(page, options=AXE_OPTIONS)
                assert not results.violations_count, results.generate_report()
                page.screenshot(path=str(artifacts / f"demo-{slug}.png"), full_page=True)
            url = page.url
            page.keyboard.press("2")  # A better
            if slug == "demo-interleaved":
                page.keyboard.press("z")  # grade A for response A
                page.keyboard.press("m")  # grade B for response B
            page.keyboard.press("Enter")
            page.wait_for_function("u => location.href !== u", arg=url)
            judged[slug] += 1
    # The demo annotators judged two thirds; annotator1 finishes the rest.
    assert judged == {"demo-t2i": 8, "demo-interleaved": 4}
    mine = Judgement.objects.filter(assignment__annotator__username="annotator1")
    assert mine.count() == before + 12
    graded = (
        mine.with_pair_answers()
        .filter(assignment__item__project__slug="demo-interleaved")
        .exclude(grade_1="")
    )
    assert graded.count() == 8 + 4
    assert not errors, errors
