"""Issue 36 item 2 in Chromium: an annotator answers the check items mixed
into their queue wrongly (with the keyboard) until the check rule pauses
them and they see the paused page; a curator reinstates them from the
annotator table with the keyboard; they continue. axe finds nothing on the
paused page and the annotator table, on a desktop and a phone."""

import pytest

from annotate.models import Assignment, Item, ItemPurpose, ProjectPause
from curation.models import AuditEvent, Verdict
from tests.e2e.compare_helpers import annotator_project, log_in, start
from tests.factories import make_member, make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

AXE_OPTIONS = {
    "resultTypes": ["violations"],
    "runOnly": {
        "type": "tag",
        "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"],
    },
}
SIZES = {
    "desktop": {"viewport": {"width": 1280, "height": 800}},
    "phone": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True},
}
CATEGORIES = ["open_generation/preference_task"] * 6


def checks_project(tmp_path):
    """Six imported items, three of them made gold checks (right answer:
    response 1); every claim is a check's turn while one is unseen."""
    project, user = annotator_project(
        tmp_path,
        CATEGORIES,
        votes_per_item=1,
        check_rate=1.0,
        check_threshold=0.8,
        check_minimum=3,
    )
    ids = list(Item.objects.filter(project=project).order_by("pk").values_list("pk", flat=True))
    Item.objects.filter(pk__in=ids[:3]).update(
        purpose=ItemPurpose.CHECK, gold_choice="1", votes_needed=0
    )
    Verdict.objects.filter(item_id__in=ids[:3]).delete()  # imported before they became checks
    return project, user


def axe_clean(browser, base, username, url, artifacts, name):
    from axe_playwright_python.sync_playwright import Axe

    found = []
    for size, options in SIZES.items():
        context = browser.new_context(**options)
        page = context.new_page()
        log_in(page, base, username, url)
        results = Axe().run(page, options=AXE_OPTIONS)
        page.screenshot(path=str(artifacts / f"checks-{name}-{size}.png"), full_page=True)
        if results.violations_count:
            found.append(f"{size} {url}\n{results.generate_report()}")
        context.close()
    assert not found, "\n\n".join(found)


def answer_wrongly(page) -> None:
    """Pick the response that is not the gold one, as displayed."""
    assignment = Assignment.objects.get(pk=int(page.url.rstrip("/").rsplit("/", 1)[1]))
    gold_on_left = assignment.display_order.startswith("1")
    page.keyboard.press("ArrowRight" if gold_on_left else "1")
    page.keyboard.press("Enter")


def test_a_paused_annotator_is_reinstated_by_a_curator_and_continues(
    live_server, browser, artifacts, tmp_path
):
    project, user = checks_project(tmp_path)
    make_member(project, make_user("cur"), role="curator")
    base = live_server.url

    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    log_in(page, base, user.username, f"/p/{project.slug}/", keyboard=True)
    start(page, base, project.slug)
    for _ in range(3):
        page.wait_for_selector("#work[data-submitted='0']")
        url = page.url
        answer_wrongly(page)
        page.wait_for_function("u => location.href !== u", arg=url)
    page.wait_for_selector("#pause-reason")
    assert "paused" in page.locator("h1").inner_text()
    assert "0/3" in page.locator("#pause-reason").inner_text()
    assert ProjectPause.objects.open().filter(project=project, annotator=user).exists()
    assert AuditEvent.objects.filter(project=project, action="pause").exists()
    axe_clean(browser, base, user.username, f"/p/{project.slug}/work/done/", artifacts, "paused")

    # The curator reinstates them from the annotator table, by keyboard.
    table = f"/p/{project.slug}/annotators/"
    axe_clean(browser, base, "cur", table, artifacts, "annotators")
    curator = browser.new_page(viewport={"width": 1280, "height": 800})
    log_in(curator, base, "cur", table, keyboard=True)
    button = curator.get_by_role("button", name="Reinstate")
    assert "Paused" in curator.locator("#annotators").inner_text()
    button.focus()
    curator.keyboard.press("Enter")
    curator.wait_for_selector("text=is reinstated")
    assert curator.get_by_role("button", name="Reinstate").count() == 0
    assert "Active" in curator.locator("#annotators").inner_text()

    # They continue: the next item comes (a benchmark item: every check is seen).
    start(page, base, project.slug)
    assignment = Assignment.objects.get(pk=int(page.url.rstrip("/").rsplit("/", 1)[1]))
    assert assignment.item.purpose == ItemPurpose.BENCHMARK
    url = page.url
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    page.wait_for_function("u => location.href !== u", arg=url)
    page.wait_for_selector("#work[data-submitted='0']")
    # Let the page's background requests (the next item kept ready) end
    # before the test's database is flushed.
    page.wait_for_load_state("networkidle")
    page.close()
    curator.close()
    assert not errors, errors
