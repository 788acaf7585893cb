"""Issue 19, defect 4's progress: after each vote the line says the
annotator's count, how many items are left for them and the project's
votes, all exact (it showed "Project: 0.0 %" from a cached total, and
nothing about what was left)."""

import pytest

from tests.e2e.compare_helpers import annotator_project, log_in, start

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_progress_is_right_after_each_vote(live_server, browser, tmp_path):
    annotator_project(tmp_path, ["general_preference"] * 3, votes_per_item=3)
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    log_in(page, live_server.url, "ann", "/p/p19/")
    start(page, live_server.url)
    for n in range(3):
        text = page.locator("#progress").inner_text()
        assert f"You: {n} judged" in text, text
        assert f"{3 - n} left for you" in text, text
        assert f"Project: {n}/9 votes" in text, text
        assert page.locator("#progress progress").get_attribute("value") == str(n)
        url = page.url
        page.keyboard.press("1")
        page.keyboard.press("Enter")
        if n < 2:
            page.wait_for_function("u => location.href !== u", arg=url)
    page.wait_for_url("**/work/done/")
