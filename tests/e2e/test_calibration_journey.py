"""Calibrated judges (issue 36 item 3) in real Chromium, by keyboard alone: a
curator judges the project from its calibration page (the fake
OpenAI-compatible judge answers), follows the finished run to its report,
and both pages pass axe."""

import pytest

from curation.models import JudgeRun, JudgeRunStatus
from tests.curation.evaluation.fake_openai import FakeJudge
from tests.curation.evaluation.test_project_judge_runs import API_KEY, BIASED, MODEL, World
from tests.e2e.compare_helpers import log_in
from tests.e2e.test_accessibility import AXE_OPTIONS

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def tab_to(page, text: str, limit: int = 80) -> None:
    """Press Tab until the focused element's text (or label) contains `text`."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        focused = page.evaluate(
            "() => (document.activeElement.innerText || '') + ' '"
            " + (document.activeElement.getAttribute('aria-label') || '')"
        )
        if text in focused:
            return
    raise AssertionError(f"never reached {text!r} by Tab")


def test_a_curator_judges_the_project_and_reads_its_calibration_by_keyboard(
    live_server, browser, artifacts, settings
):
    from axe_playwright_python.sync_playwright import Axe

    settings.JUDGE_HEARTBEAT_SECONDS = 0.2
    settings.JUDGE_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    world = World()
    with FakeJudge(api_key=API_KEY, model=MODEL, records=world.records) as fake:
        biased = {r["ID"] for r in world.records[:BIASED]}
        fake.decide = lambda ext, order, right: "A" if ext in biased else right
        fake.after_verdict = lambda ext, order: " Confidence: 0.9"
        world.endpoint(fake)
        axe = Axe()
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        url = f"/p/{world.project.slug}/calibration/"
        log_in(page, live_server.url, world.curator.username, url, keyboard=True)
        assert not axe.run(page, options=AXE_OPTIONS).violations_count

        # The form by keyboard: endpoint (preselected), name, prompt, concurrency, submit.
        tab_to(page, f"fake ({MODEL})")  # the endpoint select, its one option chosen
        page.keyboard.press("Tab")
        page.keyboard.type("keyboard judge")
        page.keyboard.press("Tab")  # judge prompt: the first (MRB)
        page.keyboard.press("Tab")
        page.keyboard.press("Control+A")
        page.keyboard.type("2")
        page.keyboard.press("Tab")
        page.keyboard.press("Enter")  # eager in tests: the run finishes in the request
        page.wait_for_selector("text=Its calibration report")
        run = JudgeRun.objects.get(project=world.project)
        assert run.status == JudgeRunStatus.COMPLETE and run.name == "keyboard judge"
        assert not axe.run(page, options=AXE_OPTIONS).violations_count

        tab_to(page, "Its calibration report")
        page.keyboard.press("Enter")
        page.wait_for_selector("text=All domains")
        content = page.content()
        assert "keyboard judge" in content and "83.3%" in content  # 20 of 24 consistent
        tab_to(page, "Calibration of keyboard judge")  # the scrollable table takes focus
        results = axe.run(page, options=AXE_OPTIONS)
        assert not results.violations_count, results.generate_report()
        page.screenshot(path=str(artifacts / "calibration.png"), full_page=True)
        assert errors == []
