"""Issue 31, "no dead ends": the pages this issue touched pass axe-core at
1280x800 and on a 390x844 phone, none scrolls sideways on the phone, and
each is photographed (tests/artifacts/dead-ends-*.png) to be looked at."""

import pytest
from django.urls import reverse

from annotate.models import Membership
from curation.evaluation.judge_runs import save_endpoint
from tests.e2e.compare_helpers import log_in
from tests.e2e.test_accessibility import AXE_OPTIONS, SIZES
from tests.e2e.test_curation_journey import SLUG, make_contested_project
from tests.factories import make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

OVERFLOW = """() => {
  const doc = document.documentElement;
  const wide = [...document.querySelectorAll('body *')].filter(e => {
    const r = e.getBoundingClientRect();
    return r.right > doc.clientWidth + 1 && getComputedStyle(e).position !== 'fixed'
      && !e.closest('.scroll, [role=region]');
  }).slice(0, 5).map(e => e.tagName + '.' + e.className);
  return {scroll: doc.scrollWidth - doc.clientWidth, wide};
}"""


@pytest.fixture
def site(tmp_path):
    project, _curator, order, _conflict = make_contested_project(tmp_path)
    admin = make_user("adm")
    Membership.objects.create(project=project, user=admin, role="admin", pseudonym="Ad")
    endpoint = save_endpoint(
        project=project, actor=admin, name="local", base_url="https://judge.example.org/v1",
        model="judge", temperature=None, max_tokens=64, timeout_seconds=5, api_key="",
    )  # fmt: skip
    item = order[0]
    return {
        "ann1": [
            ("project", reverse("project", args=[SLUG]), 200),
            ("forbidden", reverse("curation_queue", args=[SLUG]), 403),
            ("not-found", "/p/no-such-project/", 404),
            ("form-url", reverse("decide", args=[SLUG, item]), 405),
            ("token", reverse("api_token"), 200),
        ],
        "curator": [
            ("project-curator", reverse("project", args=[SLUG]), 200),
            ("queue", reverse("curation_queue", args=[SLUG]), 200),
            ("adjudicate", reverse("adjudicate", args=[SLUG, item]), 200),
            ("agreement", reverse("agreement", args=[SLUG]), 200),
        ],
        "adm": [
            ("project-admin", reverse("project", args=[SLUG]), 200),
            ("members", reverse("members", args=[SLUG]), 200),
            ("settings", reverse("project_settings", args=[SLUG]), 200),
            ("judge-endpoint", reverse("judge_endpoint_edit", args=[SLUG, endpoint.pk]), 200),
            ("judge-endpoints", reverse("judge_endpoints", args=[SLUG]), 200),
        ],
    }


@pytest.mark.parametrize("size", SIZES)
def test_touched_pages_pass_axe_and_fit_the_screen(live_server, browser, site, size, artifacts):
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe()
    found = []
    for user, pages in site.items():
        context = browser.new_context(**SIZES[size])
        page = context.new_page()
        log_in(page, live_server.url, user, "/")
        for name, url, status in pages:
            response = page.goto(live_server.url + url)
            assert response.status == status, (url, response.status)
            page.wait_for_load_state("load")
            results = axe.run(page, options=AXE_OPTIONS)
            if results.violations_count:
                found.append(f"{url}\n{results.generate_report()}")
            if size == "phone":
                overflow = page.evaluate(OVERFLOW)
                if overflow["scroll"] > 0:
                    found.append(f"{url} scrolls sideways by {overflow['scroll']}px: {overflow}")
            page.screenshot(path=str(artifacts / f"dead-ends-{size}-{name}.png"), full_page=True)
        context.close()
    assert not found, "\n\n".join(found)


def test_the_token_copy_button_copies(live_server, browser):
    make_user("solo")
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    page = context.new_page()
    log_in(page, live_server.url, "solo", "/")
    page.goto(live_server.url + reverse("api_token"))
    page.click("button[value=create]")
    page.wait_for_selector("#token-key")
    key = page.locator("#token-key").input_value()
    page.click("button[data-copy=token-key]")
    page.wait_for_function("() => document.getElementById('copy-status').textContent !== ''")
    assert page.locator("#copy-status").inner_text() in (
        "Copied to the clipboard.",
        "Select the token and copy it (Ctrl+C).",
    )
    if page.locator("#copy-status").inner_text() == "Copied to the clipboard.":
        assert page.evaluate("navigator.clipboard.readText()") == key
    context.close()
