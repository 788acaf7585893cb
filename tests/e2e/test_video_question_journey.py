"""A VideoRewardBench-style item on the compare page (issue 35 item 5): a
video question with text answers. The prompt's video has its own controls
(no transport drives it), is reached by Tab and played with Space; the
pair is judged by keyboard and the vote stored; axe-core finds nothing at
desktop and phone sizes."""

import time

import pytest

from annotate.importing.service import import_items_from_paths
from annotate.models import Judgement, Membership
from tests.annotate.importing import videorb_sets
from tests.e2e.compare_helpers import log_in, start
from tests.e2e.test_accessibility import AXE_OPTIONS, SIZES
from tests.e2e.test_mmrb2_leaderboard_journey import tab_to
from tests.factories import make_project, make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
VIDEO = ".prompt video.clip"


def test_a_video_question_is_watched_and_judged_by_keyboard(live_server, browser, tmp_path,
                                                            artifacts):  # fmt: skip
    from axe_playwright_python.sync_playwright import Axe

    project = make_project(slug="vrb-page", votes_per_item=1)
    path = videorb_sets.write(tmp_path, videorb_sets.rows()[:3])
    assert import_items_from_paths(project=project, dataset=path).created == 3
    user = make_user("ann")
    Membership.objects.create(project=project, user=user, role="annotator")
    axe = Axe()
    errors: list[str] = []
    for n, (size, options) in enumerate(SIZES.items(), start=1):
        context = browser.new_context(**options)
        page = context.new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        log_in(page, live_server.url, "ann", "/")
        start(page, live_server.url, project.slug)
        assert page.locator(VIDEO).count() == 1
        assert page.locator(VIDEO).get_attribute("controls") is not None
        assert "videos/" not in page.content()  # the file's path is not shown
        results = axe.run(page, options=AXE_OPTIONS)
        assert not results.violations_count, f"{size}\n{results.generate_report()}"
        page.wait_for_function(f"() => document.querySelector('{VIDEO}').readyState >= 2")
        tab_to(page, VIDEO, limit=60)
        page.keyboard.press(" ")
        page.wait_for_function(f"() => !document.querySelector('{VIDEO}').paused")
        page.screenshot(path=str(artifacts / f"videorb-question-{size}.png"), full_page=True)
        page.keyboard.press("Escape")
        page.evaluate("document.activeElement.blur()")
        page.keyboard.press("1")
        url = page.url
        page.keyboard.press("Enter")
        page.wait_for_function("u => location.href !== u", arg=url)
        # The page moves on before the vote's request is answered (it is sent
        # in the background): wait for it to be stored before closing.
        deadline = time.monotonic() + 15
        while Judgement.objects.filter(assignment__annotator=user).count() < n:
            assert time.monotonic() < deadline, "the vote was never stored"
            time.sleep(0.1)
        context.close()
    assert Judgement.objects.filter(assignment__annotator=user).count() == 2
    assert not errors, errors
