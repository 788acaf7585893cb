"""Real Chromium enforces the Content-Security-Policy (no 'unsafe-inline') on
the pages with the most moving parts: log-in, the compare page (htmx swap,
KaTeX, zoom), adjudication (KaTeX), the agreement dashboard and a release page
that polls with htmx. Not one violation may be reported."""

import pytest

from annotate.importing.service import import_items_from_paths
from annotate.models import Membership
from curation.models import Verdict, VerdictStatus
from curation.releases.service import create_release
from tests.e2e.compare_helpers import log_in
from tests.e2e.test_annotate_journey import make_dataset
from tests.e2e.test_curation_journey import SLUG, make_contested_project
from tests.factories import make_project, make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

# Collects violations as the page reports them; injected by Playwright before
# any page script, so the policy does not apply to it.
LISTEN = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__cspViolations.push(
    `${e.violatedDirective} blocked ${e.blockedURI || "inline"}` +
      ` at ${e.sourceFile}:${e.lineNumber} ${e.sample}`
  );
});
"""


class Watch:
    """Violations from the DOM event and the console, plus page errors."""

    def __init__(self, page):
        self.page = page
        self.problems: list[str] = []
        page.add_init_script(LISTEN)
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.problems.append(f"page error: {exc}"))
        page.on(
            "response",
            lambda r: r.status >= 400 and self.problems.append(f"HTTP {r.status} {r.url}"),
        )

    def _console(self, message):
        # Failed requests are caught above, by URL; the console's copy also
        # covers the browser's own /favicon.ico probe on admin pages.
        if message.text.startswith("Failed to load resource"):
            return
        if message.type == "error" or "Content Security Policy" in message.text:
            self.problems.append(f"console {message.type}: {message.text}")

    def collect(self, where: str) -> list[str]:
        seen = self.page.evaluate("window.__cspViolations || []")
        found = [f"{where}: {v}" for v in seen] + [f"{where}: {p}" for p in self.problems]
        self.problems.clear()
        return found


def test_no_page_of_the_studio_violates_the_content_security_policy(live_server, browser, tmp_path):
    (tmp_path / "contested").mkdir()
    project, curator, order, _ = make_contested_project(tmp_path / "contested")
    # A second project where an annotator still has items with math to judge.
    (tmp_path / "work").mkdir()
    work_project = make_project(slug="csp-work", name="CSP work")
    import_items_from_paths(
        project=work_project, dataset=make_dataset(tmp_path / "work"), images=tmp_path / "work"
    )
    annotator = make_user("csp-annotator")
    Membership.objects.create(project=work_project, user=annotator, role="annotator")
    # A release holds decided items only (an empty one is refused): one is resolved.
    resolved = Verdict.objects.get(item_id=order[-1])
    Verdict.objects.filter(pk=resolved.pk).update(
        status=VerdictStatus.RESOLVED, final_choice="1", provenance="adjudicated"
    )
    release = create_release(
        project=project,
        version="v0.1",
        notes="",
        domains=[resolved.item.domain.slug],
        seed=1,
        user=curator,
        enqueue=False,
    )

    found: list[str] = []
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    watch = Watch(page)

    # Annotator: log-in page, project page, compare page, one vote swapped in by htmx.
    log_in(page, live_server.url, "csp-annotator", "/p/csp-work/")
    found += watch.collect("log-in and project page")
    page.get_by_role("button", name="Start annotating").click()
    page.wait_for_url("**/a/*/")
    page.wait_for_selector(".math-rendered .katex")  # KaTeX typeset the responses
    page.keyboard.press("+")  # zoom: the image's transform is set from script
    for key in ("1", "q", "o"):  # left better, both correct (a vqa item)
        page.keyboard.press(key)
    with page.expect_response(lambda r: r.url.endswith("/submit/")):
        page.keyboard.press("Enter")  # submit (maybe in the background)
    page.wait_for_selector(".math-rendered .katex")
    page.wait_for_load_state("networkidle")  # the look-ahead of the next item too
    found += watch.collect("compare page")
    page.goto("about:blank")  # signed out next: the compare page must not fetch on

    # Curator: adjudication, agreement dashboard, a release page polling its progress.
    page.context.clear_cookies()
    log_in(page, live_server.url, "curator", f"/p/{SLUG}/curation/{order[0]}/")
    page.wait_for_selector(".math-rendered .katex")
    found += watch.collect("adjudication page")
    page.goto(f"{live_server.url}/p/{SLUG}/agreement/")
    page.wait_for_selector("h1")
    found += watch.collect("agreement dashboard")
    page.goto(f"{live_server.url}/p/{SLUG}/releases/{release.pk}/")
    with page.expect_response(lambda r: "/progress" in r.url and r.status == 200):
        pass  # htmx polled at least once
    page.wait_for_timeout(300)
    found += watch.collect("release page")

    # The admin and the API's Swagger UI run under the same policy.
    make_user("csp-admin", is_staff=True, is_superuser=True)
    page.context.clear_cookies()
    log_in(page, live_server.url, "csp-admin", "/admin/")
    for path in ["/admin/annotate/item/", f"/admin/annotate/item/{order[0]}/change/"]:
        page.goto(f"{live_server.url}{path}")
        page.wait_for_load_state("load")
        found += watch.collect(path)
    page.goto(f"{live_server.url}/api/docs/")
    page.wait_for_selector(".swagger-ui .opblock", timeout=15_000)
    found += watch.collect("API docs")
    assert found == [], "\n".join(found)

    # The watch itself works: an inline style on a page is reported.
    page.evaluate("document.body.insertAdjacentHTML('beforeend', '<p style=\"color:red\">x</p>')")
    page.wait_for_timeout(200)
    assert any("style-src" in v for v in watch.collect("control"))
