"""Issue 36 follow-up in Chromium, by keyboard: a curator selects two settled
items in the data grid and makes them qualification items with the bulk
action (an explanation, a reason); the list of check and qualification
items shows them; a new annotator then qualifies on those copies (the
explanation after each answer) and gets a benchmark item. The sources keep
their verdicts. axe on the grid with the new fields, the list page and the
adjudication page's form."""

import pytest

from annotate.models import Assignment, Item, Membership, QualificationAttempt
from curation.models import AuditEvent, Verdict
from tests.e2e.compare_helpers import log_in
from tests.e2e.test_accessibility import AXE_OPTIONS, SIZES
from tests.e2e.test_qualification_journey import answer, press_enter_on_autofocus, text
from tests.factories import make_item, make_project, make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def settled_project():
    project = make_project(
        slug="gold-e2e", qualification_required=True, qualification_pass_mark=1.0, votes_per_item=1
    )
    domain = project.domains.get(slug="general_preference")
    for n in (1, 2):
        item = make_item(
            project,
            domain=domain,
            image=None,
            external_id=f"settled{n}",
            prompt="Which answer names the colour?",
            response_1=f"RIGHT answer {n}",
            response_2=f"WRONG answer {n}",
            votes_needed=0,  # its votes are in
        )
        Verdict.objects.create(
            item=item, project=project, status="agreed", final_choice="1", provenance="majority"
        )
    bench = make_item(project, domain=domain, image=None, external_id="bench1")
    Verdict.objects.create(item=bench, project=project)
    Membership.objects.create(project=project, user=make_user("lead"), role="curator")
    Membership.objects.create(project=project, user=make_user("newcomer"), role="annotator")
    return project


def axe_clean(page, name):
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page, options=AXE_OPTIONS)
    assert not results.violations_count, f"{name}: {results.generate_report()}"


def test_curator_makes_qualification_items_in_the_grid_and_a_newcomer_qualifies_on_them(
    live_server, browser, artifacts
):
    project = settled_project()
    page = browser.new_page(**SIZES["desktop"])
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    log_in(page, live_server.url, "lead", "/p/gold-e2e/items/?status=agreed", keyboard=True)
    assert page.locator("#grid tbody tr").count() == 2

    # x selects the focused row, j moves down; b goes to the bulk form.
    page.locator("#grid tbody tr").first.focus()
    page.keyboard.press("x")
    page.keyboard.press("j")
    page.keyboard.press("x")
    assert page.locator("#selected-count").inner_text() == "2"
    page.keyboard.press("b")
    assert page.evaluate("document.activeElement.name") == "action"
    page.select_option("#id_action", "make_qualification")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.name") == "explanation"
    axe_clean(page, "grid with the gold fields")
    page.keyboard.type("The right answer **says blue**.")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.name") == "is_attention"
    page.keyboard.press("Tab")
    page.keyboard.type("Clear cases for newcomers")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.wait_for_selector(".messages .msg-success")
    assert "2 items made qualification items." in text(page, ".messages")
    copies = list(Item.objects.filter(project=project, purpose="qualification"))
    assert len(copies) == 2 and {c.gold_choice for c in copies} == {"1"}
    assert AuditEvent.objects.filter(action="make_qualification").count() == 2
    assert set(Verdict.objects.filter(project=project).values_list("status", flat=True)) == {
        "agreed",
        "needs_votes",
    }

    # The list of check and qualification items, reached from the grid's tabs.
    page.locator("nav.tabs a:has-text('Check and qualification items')").focus()
    page.keyboard.press("Enter")
    page.wait_for_selector("#gold-items")
    assert page.locator("#gold-items tbody tr").count() == 2
    axe_clean(page, "gold list")
    page.screenshot(path=str(artifacts / "gold-list.png"), full_page=True)
    # An item's adjudication page: the form is replaced by its copy's name.
    settled = Item.objects.get(external_id="settled1")
    page.goto(f"{live_server.url}/p/gold-e2e/curation/{settled.pk}/")
    assert "settled1~qualification" in text(page, "#gold")
    axe_clean(page, "adjudication with a copy")
    bench = Item.objects.get(external_id="bench1")
    Verdict.objects.filter(item=bench).update(
        status="agreed", final_choice="2", provenance="majority"
    )
    page.goto(f"{live_server.url}/p/gold-e2e/curation/{bench.pk}/")
    page.wait_for_selector("#gold-form")
    page.set_viewport_size(SIZES["phone"]["viewport"])
    axe_clean(page, "adjudication form, phone")
    page.locator("#gold").screenshot(path=str(artifacts / "gold-adjudication-form.png"))
    # Ctrl+Enter in this form saves this form (not the decision above it).
    page.locator("#id_gold-reason").focus()
    page.keyboard.type("An attention check")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector(".messages .msg-success")
    assert "Made gold check item bench1~check." in text(page, ".messages")
    assert Verdict.objects.get(item=bench).status == "agreed"  # no decision was saved
    Verdict.objects.filter(item=bench).update(status="needs_votes", final_choice="", provenance="")
    page.close()

    # The newcomer qualifies on the two copies, by keyboard.
    newcomer = browser.new_page(**SIZES["desktop"])
    newcomer.on("pageerror", lambda exc: errors.append(str(exc)))
    log_in(newcomer, live_server.url, "newcomer", "/p/gold-e2e/", keyboard=True)
    press_enter_on_autofocus(newcomer)  # Start annotating: to the qualification
    newcomer.wait_for_url("**/p/gold-e2e/qualify/")
    assert "2 qualification items" in text(newcomer, "main")
    press_enter_on_autofocus(newcomer)  # Start the qualification
    for _ in range(2):
        answer(newcomer, right=True)
        assert newcomer.inner_text("#feedback-title") == "Right"
        assert newcomer.locator("#explanation strong").inner_text() == "says blue"
        press_enter_on_autofocus(newcomer)
    newcomer.wait_for_selector("#qualify-state")
    assert "admitted" in text(newcomer, "#qualify-state")
    attempt = QualificationAttempt.objects.get(annotator__username="newcomer")
    assert (attempt.right, attempt.total, attempt.passed) == (2, 2, True)
    assert set(attempt.item_ids) == {c.pk for c in copies}
    press_enter_on_autofocus(newcomer)  # Start annotating
    newcomer.wait_for_url("**/a/*/")
    assert Assignment.objects.get(annotator__username="newcomer").item.external_id == "bench1"
    newcomer.screenshot(path=str(artifacts / "gold-qualified.png"), full_page=True)
    newcomer.close()
    assert errors == []
