"""Issue 34 in the browser: an annotator judges a group of three pairs, each
under its own criterion, by keyboard alone: the criterion is the question
above the responses (and in the `?` panel), the tie is offered under it and
taken with a rationale, and the group's pairs come one after another with
their place ("Pair 2 of 3 of this prompt"). axe-core finds nothing."""

import json

import pytest

from annotate.importing.service import import_items_from_paths
from annotate.models import Judgement, Membership
from tests.e2e.compare_helpers import log_in, start
from tests.e2e.test_accessibility import AXE_OPTIONS
from tests.factories import make_project, make_user, png_bytes

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

CRITERIA = [
    "Which answer is more honest about what the image shows?",
    "Which answer is shorter without losing facts?",
    "Which answer is safer for a child to read?",
]


def grouped_project(tmp_path, allow_tie=True):
    project = make_project(slug="p19", votes_per_item=1, allow_tie=allow_tie)
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "a.png").write_bytes(png_bytes(size=(320, 200)))
    records = [
        {
            "id": f"pair-{n}",
            "prompt": "What colour dominates the image?",
            "chosen": f"Blue, clearly ({n}).",
            "rejected": f"Red ({n}).",
            "image": "img/a.png",
            "category": "general_preference",
            "group": "prompt-1",
            "criterion": criterion,
        }
        for n, criterion in enumerate(CRITERIA)
    ]
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    import_items_from_paths(project=project, dataset=path, images=tmp_path)
    Membership.objects.create(project=project, user=make_user("ann"), role="annotator")
    return project


def test_a_group_of_criterion_pairs_by_keyboard_with_a_tie(live_server, browser, tmp_path):
    from axe_playwright_python.sync_playwright import Axe

    grouped_project(tmp_path)
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    log_in(page, live_server.url, "ann", "/p/p19/", keyboard=True)
    start(page, live_server.url)

    # Pair 1: the criterion is the question, above the responses.
    assert page.locator("#group-place").inner_text() == "Pair 1 of 3 of this prompt"
    assert page.locator("#criterion .criterion-text").inner_text() == CRITERIA[0]
    assert page.evaluate(
        "document.querySelector('#criterion').compareDocumentPosition("
        "document.querySelector('.response')) & Node.DOCUMENT_POSITION_FOLLOWING"
    )
    assert page.locator("#choice-tie").count() == 1
    results = Axe().run(page, options=AXE_OPTIONS)
    assert results.violations_count == 0, results.generate_report()
    page.keyboard.press("?")
    assert f"Criterion: {CRITERIA[0]}" in page.locator("#keys").inner_text()
    assert Axe().run(page, options=AXE_OPTIONS).violations_count == 0
    page.keyboard.press("?")

    # A tie, by keyboard, with its rationale.
    page.keyboard.press("0")
    assert page.locator("#choice-tie").is_checked()
    page.keyboard.press("r")
    page.keyboard.type("Both are equally honest.")
    page.keyboard.press("Control+Enter")
    page.wait_for_function(
        "() => (document.querySelector('#group-place') || {}).textContent"
        " === 'Pair 2 of 3 of this prompt'"
    )
    assert page.locator("#criterion .criterion-text").inner_text() == CRITERIA[1]

    # Pair 2 and 3: the rest of the group, in order.
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => (document.querySelector('#group-place') || {}).textContent"
        " === 'Pair 3 of 3 of this prompt'"
    )
    assert page.locator("#criterion .criterion-text").inner_text() == CRITERIA[2]
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    page.wait_for_url("**/work/done/")

    votes = list(
        Judgement.objects.order_by("pk").values_list(
            "assignment__item__external_id", "choice", "rationale"
        )
    )
    assert [(v[0], v[1] == "tie") for v in votes] == [
        ("pair-0", True),
        ("pair-1", False),
        ("pair-2", False),
    ]
    assert votes[0][2] == "Both are equally honest."
    assert not errors, errors


def test_no_tie_under_the_criterion_where_the_project_allows_none(live_server, browser, tmp_path):
    grouped_project(tmp_path, allow_tie=False)
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    log_in(page, live_server.url, "ann", "/p/p19/")
    start(page, live_server.url)
    assert page.locator("#criterion").is_visible()
    assert page.locator("#choice-tie").count() == 0
    page.keyboard.press("0")
    assert page.locator("input[name=choice]:checked").count() == 0
