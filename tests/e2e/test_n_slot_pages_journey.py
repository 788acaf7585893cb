"""Issue 32 item 1: an item of four responses (a best-of-N project's) on
the compare page and the curator's adjudication page, at desktop and phone
sizes: every response shown, images decoded, axe-core finds no violation."""

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from annotate.models import Membership, Task, image_part, text_part, write_item_content
from curation.models import Verdict
from tests.e2e.compare_helpers import log_in
from tests.e2e.test_accessibility import AXE_OPTIONS, SIZES
from tests.factories import (
    make_assignment,
    make_image,
    make_item,
    make_project,
    make_user,
    png_bytes,
)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("size", list(SIZES))
def test_four_responses_are_shown_and_axe_clean(live_server, browser, size, artifacts):
    from axe_playwright_python.sync_playwright import Axe

    project = make_project(slug="four", task=Task.BEST_OF_N)
    item = make_item(project=project)
    image = make_image()
    default_storage.save(image.file, ContentFile(png_bytes(size=(32, 24))))
    write_item_content(
        item,
        [text_part("Which **answer** is best?")],
        [
            [text_part("Answer one")],
            [text_part("Answer two, " + "long text " * 40)],
            [text_part("Answer three")],
            [text_part("Answer four"), image_part(image.pk, "r4.png")],
        ],
    )
    Verdict.objects.get_or_create(item=item, project=project)
    annotator, curator = make_user("ann"), make_user("cur")
    Membership.objects.create(project=project, user=annotator, role="annotator")
    Membership.objects.create(project=project, user=curator, role="curator")
    assignment = make_assignment(item, annotator, display_order="3142")
    axe = Axe()
    pages = (
        ("ann", f"/a/{assignment.pk}/", "compare", ["A", "B", "C", "D"]),
        ("cur", f"/p/four/curation/{item.pk}/", "adjudicate", ["1", "2", "3", "4"]),
    )
    for username, url, name, headings in pages:
        context = browser.new_context(**SIZES[size])
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc, errors=errors: errors.append(str(exc)))
        log_in(page, live_server.url, username, url)
        page.goto(live_server.url + url)
        page.wait_for_function(
            "() => [...document.querySelectorAll('img.part-img')]"
            ".every(i => i.complete && i.naturalWidth > 0)"
        )
        shown = page.locator(".response h2").all_inner_texts()
        assert [h.split()[-1] for h in shown] == headings
        results = axe.run(page, options=AXE_OPTIONS)
        page.screenshot(path=str(artifacts / f"four-{name}-{size}.png"), full_page=True)
        assert not results.violations_count, results.generate_report()
        # Nothing wider than the screen (a phone scrolls down, never sideways).
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
        assert not errors, errors
        context.close()
