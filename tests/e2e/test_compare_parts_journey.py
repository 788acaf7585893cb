"""Issue 24: the compare page shows an item's content part by part (text
and images in order) for MMRB2's text-to-image, edit and interleaved pairs;
images arrive decoded, the page is axe-clean, and the keyboard judges them
as any other item."""

import pytest

from annotate.importing.formats.mmrb2 import import_mmrb2_from_paths
from annotate.models import Judgement, Membership
from tests.annotate.importing.test_mmrb2 import published_fixture
from tests.e2e.compare_helpers import log_in, start
from tests.e2e.test_accessibility import AXE_OPTIONS
from tests.factories import make_project, make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_parts_render_in_order_and_are_judged_by_keyboard(
    live_server, browser, tmp_path, artifacts
):
    from axe_playwright_python.sync_playwright import Axe

    published_fixture(tmp_path)
    project = make_project(slug="p24", votes_per_item=1)
    for task in ("t2i", "edit", "interleaved"):
        import_mmrb2_from_paths(project=project, dataset=tmp_path / f"{task}.json")
    Membership.objects.create(project=project, user=make_user("ann"), role="annotator")
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    log_in(page, live_server.url, "ann", "/p/p24/")
    start(page, live_server.url, "p24")
    axe = Axe()
    seen = 0
    while "/work/done/" not in page.url:
        page.wait_for_selector("#work .parts")
        # Every image is there, at its own size, decoded; no ID, model or path shows.
        page.wait_for_function(
            "() => [...document.querySelectorAll('img.part-img')]"
            ".every(i => i.complete && i.naturalWidth > 0)"
        )
        text = page.locator("#work").inner_text()
        for secret in ("imagen4", "gpt-image-1", "GPTGeminiAgent", "oneigbench", "emu_edit"):
            assert secret not in text
        assert page.locator("img.part-img").count() >= 2
        results = axe.run(page, options=AXE_OPTIONS)
        assert not results.violations_count, results.generate_report()
        page.screenshot(path=str(artifacts / f"parts-{seen}.png"), full_page=True)
        url = page.url
        page.keyboard.press("1")
        page.keyboard.press("Enter")
        page.wait_for_function("u => location.href !== u", arg=url)
        seen += 1
    assert seen == 4 and Judgement.objects.count() == 4
    assert not errors, errors
