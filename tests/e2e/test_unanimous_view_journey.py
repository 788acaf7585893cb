"""The suspected-errors queue's view "unanimous, but the models disagree"
(issue 30) in Chromium: reached from the queue by keyboard, its rows in the
models' order, paginated, and no axe-core violation on either view at
desktop and phone sizes."""

import pytest

from tests.curation.quality.conftest import needs_quality_extra
from tests.e2e.compare_helpers import log_in
from tests.e2e.test_accessibility import AXE_OPTIONS, SIZES
from tests.factories import make_member, make_user

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.django_db(transaction=True),
    needs_quality_extra,
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]


@pytest.mark.parametrize("size", SIZES)
def test_unanimous_view_by_keyboard_and_axe_clean(live_server, browser, size):
    from axe_playwright_python.sync_playwright import Axe

    from curation.models import ItemPrediction
    from tests.curation.quality.test_graded_audit import compute_again, graded_project

    project, items = graded_project()
    ItemPrediction.objects.filter(item=items[1]).update(p1=0.7)
    compute_again(project)
    make_member(project, make_user("cur"), role="curator")
    context = browser.new_context(**SIZES[size])
    page = context.new_page()
    queue = f"/p/{project.slug}/label-quality/"
    log_in(page, live_server.url, "cur", "/")
    page.goto(live_server.url + queue)
    axe = Axe()
    found = []
    results = axe.run(page, options=AXE_OPTIONS)
    if results.violations_count:
        found.append(results.generate_report())
    tab = page.get_by_role("link", name="Unanimous, but the models disagree")
    tab.focus()
    page.keyboard.press("Enter")
    page.wait_for_url("**view=unanimous**")
    rows = page.locator("#suspect-table tbody tr td:nth-child(2)").all_inner_texts()
    assert rows == ["g0", "g2", "g1"]
    assert (
        page.get_by_role("link", name="Unanimous, but the models disagree").get_attribute(
            "aria-current"
        )
        == "page"
    )
    results = axe.run(page, options=AXE_OPTIONS)
    if results.violations_count:
        found.append(results.generate_report())
    context.close()
    assert not found, "\n\n".join(found)
