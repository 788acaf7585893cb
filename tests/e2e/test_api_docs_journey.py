"""Swagger UI at /api/docs/ renders the generated schema in real Chromium from
the vendored files, with no inline script and no policy violation."""

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

LISTEN = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__cspViolations.push(`${e.violatedDirective} blocked ${e.blockedURI || "inline"}`);
});
"""


def test_swagger_ui_lists_the_api_operations(live_server, browser):
    page = browser.new_page()
    problems: list[str] = []
    page.add_init_script(LISTEN)
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    page.on(
        "console",
        lambda m: problems.append(m.text) if "Content Security Policy" in m.text else None,
    )
    external: list[str] = []
    page.on(
        "request",
        lambda r: external.append(r.url) if not r.url.startswith(live_server.url) else None,
    )
    page.goto(f"{live_server.url}/api/docs/")
    page.wait_for_selector(".opblock-summary-path", timeout=20_000)
    paths = page.locator(".opblock-summary-path").all_inner_texts()
    assert any("/api/v1/projects/{slug}/assignments/next/" in p for p in paths)
    assert any("/api/v1/assignments/{assignment_id}/judgement/" in p for p in paths)
    problems += page.evaluate("window.__cspViolations")
    assert not problems
    assert not [u for u in external if not u.startswith("data:")]
    page.close()
