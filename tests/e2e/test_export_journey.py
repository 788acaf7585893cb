"""A curator downloads raw exports in real Chromium with the keyboard only:
the votes of one domain as CSV from the agreement page, the verdicts as
JSON Lines from the curation queue; the Export form has no axe violation."""

import csv
import io
import json

import pytest

from annotate.models import Membership
from curation.models import Verdict
from tests.e2e.compare_helpers import log_in
from tests.e2e.test_accessibility import AXE_OPTIONS
from tests.factories import (
    make_assignment,
    make_item,
    make_judgement,
    make_member,
    make_project,
    make_user,
)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def make_world():
    project = make_project(slug="exp-e2e", votes_per_item=2)
    curator = make_user("exporter")
    Membership.objects.create(project=project, user=curator, role="curator", pseudonym="C1")
    vqa = project.domains.get(slug="vqa")
    pref = project.domains.get(slug="general_preference")
    for n, (domain, swapped) in enumerate([(vqa, True), (vqa, False), (pref, True)]):
        item = make_item(project, domain=domain, external_id=f"e2e_{n}", model_1="secret-m")
        Verdict.objects.create(item=item, project=project)
        annotator = make_member(project, pseudonym=f"A{n}")
        labels = {"correct_1": "yes", "correct_2": "no"} if domain == vqa else {}
        make_judgement(
            make_assignment(item, annotator, shown_swapped=swapped), "1", rationale="ok", **labels
        )
    return project


def tab_to(page, selector: str, limit: int = 80) -> None:
    """Press Tab until `selector` has the focus."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate(f"document.activeElement.matches({json.dumps(selector)})"):
            return
    raise AssertionError(f"{selector} never got the focus")


def test_a_curator_exports_by_keyboard(live_server, browser, tmp_path, artifacts):
    from axe_playwright_python.sync_playwright import Axe

    make_world()
    context = browser.new_context(accept_downloads=True, viewport={"width": 1280, "height": 800})
    page = context.new_page()
    log_in(page, live_server.url, "exporter", "/p/exp-e2e/agreement/")

    # Votes of the VQA domain, CSV (the default format), from the agreement page.
    tab_to(page, "section.export select[name=domain]")
    page.keyboard.press("End")  # the last option (domains in their order: VQA last)
    assert page.input_value("section.export select[name=domain]") == "vqa"
    tab_to(page, "section.export button:not([formaction])")
    with page.expect_download() as info:
        page.keyboard.press("Enter")
    download = info.value
    assert download.suggested_filename.startswith("exp-e2e-vqa-votes-")
    assert download.suggested_filename.endswith(".csv")
    download.save_as(tmp_path / "votes.csv")
    rows = list(csv.DictReader(io.StringIO((tmp_path / "votes.csv").read_text())))
    assert [(r["item"], r["shown_left"], r["choice_displayed"]) for r in rows] == [
        ("e2e_0", "2", "right"),
        ("e2e_1", "1", "left"),
    ]
    assert [r["annotator"] for r in rows] == ["A0", "A1"]
    results = Axe().run(page, options=AXE_OPTIONS)
    assert not results.violations_count, results.generate_report()
    page.locator("section.export").screenshot(path=str(artifacts / "export-form.png"))

    # Verdicts of every domain as JSON Lines, from the curation queue.
    page.goto(f"{live_server.url}/p/exp-e2e/curation/")
    tab_to(page, "section.export select[name=file_format]")
    page.keyboard.press("ArrowDown")  # CSV -> JSON Lines
    assert page.input_value("section.export select[name=file_format]") == "jsonl"
    tab_to(page, "section.export button[formaction]")
    with page.expect_download() as info:
        page.keyboard.press("Enter")
    download = info.value
    assert download.suggested_filename.startswith("exp-e2e-all-verdicts-")
    download.save_as(tmp_path / "verdicts.jsonl")
    lines = (tmp_path / "verdicts.jsonl").read_text().splitlines()
    assert [json.loads(line)["item"] for line in lines] == ["e2e_0", "e2e_1", "e2e_2"]
    assert "secret-m" not in (tmp_path / "verdicts.jsonl").read_text()
    results = Axe().run(page, options=AXE_OPTIONS)
    assert not results.violations_count, results.generate_report()
    context.close()
