"""Issue 33 deliverable 4 in a browser: a curator adjudicates one contested
four-response ranking by keyboard alone (Tab to the final ranks, type them,
the reason, Enter), the audit log holds the decision with its final ranks,
and the page is axe-clean before and after."""

import pytest

from annotate.models import Membership
from curation.models import AuditEvent, Verdict, VerdictRank
from tests.curation.verdicts.ranked_factories import rank_vote, ranked_item, ranked_project
from tests.e2e.compare_helpers import log_in
from tests.e2e.test_accessibility import AXE_OPTIONS, SIZES
from tests.factories import make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _tab_to(page, selector: str, limit: int = 120) -> None:
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("(s) => document.activeElement.matches(s)", selector):
            return
    raise AssertionError(f"Tab never reached {selector}")


def test_a_curator_adjudicates_a_contested_ranking_by_keyboard(live_server, browser, artifacts):
    from axe_playwright_python.sync_playwright import Axe

    project = ranked_project(team=3, slug="rank4")
    item = ranked_item(project)
    for n, (user, ranks) in enumerate(
        zip(list(project.team), [(1, 2, 3, 4), (2, 1, 3, 4), (1, 2, 4, 3)], strict=True)
    ):
        Membership.objects.filter(project=project, user=user).update(pseudonym=f"annotator-{n}")
        rank_vote(item, ranks, order="3142")
    assert Verdict.objects.get(item=item).status == "contested"
    curator = make_user("cur")
    Membership.objects.create(project=project, user=curator, role="curator")
    url = f"/p/rank4/curation/{item.pk}/"
    axe = Axe()
    context = browser.new_context(**SIZES["desktop"])
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    log_in(page, live_server.url, "cur", url, keyboard=True)
    assert page.locator("#rankings tbody tr").count() == 3
    assert "Kemeny" in page.locator("#proposed").inner_text()
    results = axe.run(page, options=AXE_OPTIONS)
    page.screenshot(path=str(artifacts / "ranked-adjudication-desktop.png"), full_page=True)
    assert not results.violations_count, results.generate_report()

    _tab_to(page, "input[name=rank_1]")
    for rank in ("2", "1", "3", "4"):
        page.keyboard.press("Control+A")
        page.keyboard.type(rank)
        page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.name") == "reason"
    page.keyboard.type("Response 2 is the only complete answer.")
    page.keyboard.press("Tab")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert "Saved" in page.locator("body").inner_text()

    verdict = Verdict.objects.get(item=item)
    assert (verdict.status, verdict.final_choice) == ("resolved", "2")
    assert list(VerdictRank.objects.filter(verdict=verdict).values_list("slot", "rank")) == [
        (1, 2),
        (2, 1),
        (3, 3),
        (4, 4),
    ]
    event = AuditEvent.objects.get(item=item, action="resolve")
    assert event.actor == curator and event.after["final_ranks"] == [2, 1, 3, 4]
    assert event.reason == "Response 2 is the only complete answer."
    # The audit log page lists it too.
    page.goto(f"{live_server.url}/p/rank4/audit/?action=resolve")
    assert "ranks 2, 1, 3, 4" in page.locator("body").inner_text()
    page.goto(live_server.url + url)
    results = axe.run(page, options=AXE_OPTIONS)
    page.screenshot(path=str(artifacts / "ranked-adjudication-resolved.png"), full_page=True)
    assert not results.violations_count, results.generate_report()
    # The ranked agreement dashboard: statistics and position bias, axe-clean.
    page.goto(f"{live_server.url}/p/rank4/agreement/")
    assert page.locator("#ranked-stats tbody tr").count() == 4
    assert page.locator("#position-bias tbody tr").count() == 3
    results = axe.run(page, options=AXE_OPTIONS)
    page.screenshot(path=str(artifacts / "ranked-agreement-desktop.png"), full_page=True)
    assert not results.violations_count, results.generate_report()
    phone = browser.new_context(**SIZES["phone"])
    small = phone.new_page()
    log_in(small, live_server.url, "cur", url)
    results = axe.run(small, options=AXE_OPTIONS)
    small.screenshot(path=str(artifacts / "ranked-adjudication-phone.png"), full_page=True)
    assert not results.violations_count, results.generate_report()
    assert small.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    assert not errors, errors
    phone.close()
    context.close()
