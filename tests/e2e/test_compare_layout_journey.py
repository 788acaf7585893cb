"""Issue 19, defect 4's layout: the decision bar never hides a field of a
long response (it was sticky and covered the correctness row), a phone's
top bar is one line (it wrapped to four), and a touch screen shows no key
hints until a key is pressed."""

import pytest

from tests.e2e.compare_helpers import annotator_project, log_in, start

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

UNCOVERED = """el => {
    const r = el.getBoundingClientRect();
    const x = r.left + r.width / 2, y = r.top + r.height / 2;
    if (y < 0 || y > innerHeight) return "off screen";
    const top = document.elementFromPoint(x, y);
    return top === el || el.contains(top) || (top && top.contains(el)) || top === el.labels?.[0]
        ? "" : (top ? top.outerHTML.slice(0, 80) : "nothing");
}"""


@pytest.mark.parametrize("size", [(1280, 800), (390, 844)])
def test_no_field_is_hidden_behind_the_decision_bar(
    live_server, browser, tmp_path, size, artifacts
):
    annotator_project(tmp_path, ["vqa", "vqa"], long_text=True)
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    log_in(page, live_server.url, "ann", "/p/p19/")
    start(page, live_server.url)
    fields = page.locator("#judge-form input:not([type=hidden]), #judge-form textarea")
    assert fields.count() > 10
    for n in range(fields.count()):
        field = fields.nth(n)
        # Scrolled to as Tab scrolls to it, and as reading down the page does.
        for block in ("nearest", "end"):
            page.evaluate(
                "([el, b]) => el.scrollIntoView({block: b})", [field.element_handle(), block]
            )
            covered = field.evaluate(UNCOVERED)
            assert not covered, (field.get_attribute("id"), block, covered)
    page.screenshot(path=str(artifacts / f"compare-long-{size[0]}x{size[1]}.png"))


def test_a_phone_gets_one_top_bar_line_and_no_key_hints(live_server, browser, tmp_path, artifacts):
    annotator_project(tmp_path, ["vqa", "vqa"])
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True
    )
    page = context.new_page()
    log_in(page, live_server.url, "ann", "/p/p19/")
    start(page, live_server.url)
    bar = page.locator(".topbar").bounding_box()
    assert bar["height"] < 48, bar  # one line
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    head = page.locator(".work-head").bounding_box()
    assert head["height"] < 100, head  # at most three short lines
    hints = page.locator("#work kbd")
    assert hints.count() > 10
    assert all(not h.is_visible() for h in hints.all())
    assert not page.locator(".head-actions [data-action=keys]").is_visible()
    page.screenshot(path=str(artifacts / "compare-390x844-touch.png"))
    # A keyboard on the tablet: the hints come back.
    page.keyboard.press("1")
    assert page.locator("label:has(#choice-left) kbd").is_visible()
    context.close()
