"""Issue 24, item 3: a graded project judged by keyboard. Keys 1 to 6 pick
the scale's points in displayed order (1: A, the left response, much
better), arrows move one point, z/c/v and n/m/, grade the left and right
responses where the domain asks; the `?` panel lists them; the vote is
stored oriented to response 1 whatever side it was shown on; the page has
no axe violation."""

import pytest

from annotate.models import Assignment, Domain, Judgement
from tests.e2e.compare_helpers import annotator_project, log_in, start
from tests.e2e.test_accessibility import AXE_OPTIONS

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_a_graded_item_is_judged_by_keyboard(live_server, browser, tmp_path, artifacts):
    project, _ = annotator_project(
        tmp_path,
        ["general_preference", "reasoning"],
        votes_per_item=1,
        preference_scale="graded6",
    )
    Domain.objects.filter(project=project, slug="reasoning").update(asks_grade=True)
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    log_in(page, live_server.url, "ann", "/p/p19/")
    start(page, live_server.url)

    stored = {}
    for _ in range(2):
        work = page.locator("#work")
        assignment = Assignment.objects.get(pk=int(work.get_attribute("data-assignment")))
        domain = assignment.item.domain
        assert work.get_attribute("data-scale") == "graded6"
        assert page.locator("input[name=strength]").count() == 6
        assert page.locator("input[name=choice]").count() == 0

        page.keyboard.press("?")
        keys = page.locator("#keys").inner_text()
        assert "A much better" in keys and "B much better" in keys
        page.keyboard.press("Escape")

        # 5 (B better), then one point towards A: 4 (B slightly better).
        page.keyboard.press("5")
        assert page.locator("#strength-5").is_checked()
        page.keyboard.press("ArrowLeft")
        assert page.locator("#strength-4").is_checked()
        assert page.locator("label:has(#strength-4)").inner_text().startswith("B slightly better")
        if domain.is_correctness:
            page.keyboard.press("q")
            page.keyboard.press("p")
        if domain.asks_grade:
            assert "Grade of response A: A" in keys and "Grade of response B: C" in keys
            page.keyboard.press("z")  # left: A
            page.keyboard.press(",")  # right: C
            assert page.locator("#grade_left-A").is_checked()
            assert page.locator("#grade_right-C").is_checked()
            from axe_playwright_python.sync_playwright import Axe

            results = Axe().run(page, options=AXE_OPTIONS)
            assert not results.violations_count, results.generate_report()
            page.screenshot(path=str(artifacts / "graded-compare.png"), full_page=True)
        url = page.url
        page.keyboard.press("Enter")
        page.wait_for_function("u => location.href !== u", arg=url)
        stored[domain.slug] = assignment.pk

    page.wait_for_url("**/work/done/")
    for slug, assignment_id in stored.items():
        a = Assignment.objects.get(pk=assignment_id)
        j = Judgement.objects.with_pair_answers().get(assignment=a)
        # "B slightly better" as displayed: response 1 if it was shown on the right.
        assert j.strength == (1 if a.shown_swapped else -1)
        assert j.choice == ("1" if a.shown_swapped else "2")
        if slug == "reasoning":
            assert (j.grade_1, j.grade_2) == (("C", "A") if a.shown_swapped else ("A", "C"))
        else:
            assert (j.grade_1, j.grade_2) == ("", "")
    assert not errors, errors
