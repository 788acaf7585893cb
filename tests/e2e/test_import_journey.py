"""Issue 31: an admin imports the published VL-RewardBench file in real
Chromium. The first attempt (no domain options, repeated IDs) is refused
with one report naming each kind of problem once; the admin fixes the
options by keyboard, without choosing either file again, and the second
attempt imports. The page passes axe-core at 1280 and 390 px."""

import pytest

from annotate.models import Item, Membership
from tests.annotate.importing.public_sets import VL_DOMAIN_MAP, vl_rewardbench
from tests.e2e.test_mix_journey import no_axe_violations
from tests.e2e.test_release_journey import login
from tests.factories import make_project, make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_a_refused_import_is_fixed_with_options_only(live_server, browser, artifacts, tmp_path):
    project = make_project(slug="vlrb")
    user = make_user("importer")
    Membership.objects.create(project=project, user=user, role="admin")
    vl = vl_rewardbench()
    dataset, images = tmp_path / "vl_rewardbench.jsonl", tmp_path / "images.zip"
    dataset.write_bytes(vl.jsonl())
    images.write_bytes(vl.images_zip())

    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    login(page, live_server.url, "importer", "/p/vlrb/import/")
    page.set_input_files("input[name=dataset]", str(dataset))
    page.set_input_files("input[name=images]", str(images))
    page.get_by_role("button", name="Import").click()

    report = page.get_by_role("alert")
    report.wait_for()
    items = report.locator("li")
    assert items.count() == 2  # the missing domain and the repeated IDs, once each
    assert "field 'category': is missing" in items.nth(0).inner_text()
    assert "25 IDs occur more than once" in items.nth(1).inner_text()
    kept = page.locator("#staged-files")
    assert "vl_rewardbench.jsonl" in kept.inner_text()
    assert "images.zip" in kept.inner_text()
    no_axe_violations(page, "import (refused)")
    page.screenshot(path=str(artifacts / "import-refused-1280.png"), full_page=True)

    # The options, by keyboard: the domain source is a choice, not free text.
    page.focus("select[name=domain_from]")
    page.select_option("select[name=domain_from]", "id-prefix")
    page.focus("textarea[name=domain_map]")
    page.keyboard.type(VL_DOMAIN_MAP)
    page.select_option("select[name=duplicates]", "suffix")
    page.focus("button.primary")
    page.keyboard.press("Enter")
    page.wait_for_url("**/p/vlrb/")
    assert Item.objects.filter(project=project).count() == len(vl.rows)
    assert "105 created" in page.locator("body").inner_text()

    small = browser.new_page(viewport={"width": 390, "height": 844})
    login(small, live_server.url, "importer", "/p/vlrb/import/")
    small.set_input_files("input[name=dataset]", str(dataset))
    small.get_by_role("button", name="Import").click()
    small.get_by_role("alert").wait_for()
    no_axe_violations(small, "import (refused, phone)")
    assert not errors
