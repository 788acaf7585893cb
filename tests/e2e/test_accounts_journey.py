"""Issue 29 in real Chromium: a project admin's members page offers no
"Password link" (a project role grants no power over an account); a site
admin's does, for a member without mail, who opens the link, sets a password
and signs in with it; the site admin then chooses the project's import roots
on its settings page. Both pages pass axe-core, and screenshots are kept
under tests/artifacts/."""

import pytest

from tests.e2e.compare_helpers import log_in
from tests.e2e.test_accessibility import AXE_OPTIONS
from tests.factories import make_member, make_project, make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

NEW = "kims-Own-secret-58"


def no_axe_violations(page) -> None:
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page, options=AXE_OPTIONS)
    assert not results.violations_count, results.generate_report()


def test_only_a_site_admin_makes_a_password_link_and_it_works(
    live_server, browser, artifacts, settings, tmp_path
):
    roots = [str(tmp_path / "team-a"), str(tmp_path / "team-b")]
    settings.IMPORT_ROOTS = roots
    base = live_server.url
    project = make_project(slug="team", name="Team bench")
    make_member(project, make_user("lead"), role="admin")
    make_member(project, make_user("kim"), role="annotator")
    make_user("root", is_superuser=True, is_staff=True)
    members = f"/p/{project.slug}/members/"

    # The project's admin: the team, and no password button anywhere.
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    log_in(page, base, "lead", members)
    assert page.locator("#members td", has_text="kim").count() >= 1
    assert page.get_by_role("button", name="Password link for kim").count() == 0
    assert page.get_by_role("button", name="Deactivate kim").count() == 1
    page.screenshot(path=str(artifacts / "accounts-members-project-admin.png"), full_page=True)
    context.close()

    # The site admin: the button, the link shown once, keyboard only.
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    log_in(page, base, "root", members)
    button = page.get_by_role("button", name="Password link for kim")
    button.focus()
    page.keyboard.press("Enter")
    page.wait_for_selector("#password-link")
    assert "Set-password link for kim" in page.locator(".banner").inner_text()
    link = page.locator("#password-link").input_value()
    assert link.startswith(f"{base}/accounts/reset/")
    no_axe_violations(page)
    page.screenshot(path=str(artifacts / "accounts-members-site-admin.png"), full_page=True)

    # Kim opens it in their own browser, sets a password, signs in with it.
    kim = browser.new_context().new_page()
    kim.goto(link)
    kim.fill("input[name=new_password1]", NEW)
    kim.fill("input[name=new_password2]", NEW)
    kim.keyboard.press("Enter")
    kim.wait_for_url("**/accounts/reset/done/")
    kim.goto(f"{base}/accounts/login/?next=/")
    kim.fill("input[name=username]", "kim")
    kim.fill("input[name=password]", NEW)
    kim.keyboard.press("Enter")
    kim.wait_for_url(f"{base}/")
    assert "Team bench" in kim.content()
    # The link is spent.
    kim.goto(link)
    assert "This link is not valid" in kim.content()
    kim.context.close()

    # The site admin opens one import root to the project.
    page.goto(f"{base}/p/{project.slug}/settings/")
    page.get_by_label(roots[0]).check()
    page.get_by_role("button", name="Save import roots").click()
    page.wait_for_selector(".messages .msg-success")
    assert f"Import roots: {roots[0]}." in page.content()
    project.refresh_from_db()
    assert project.import_roots == [roots[0]]
    no_axe_violations(page)
    page.screenshot(path=str(artifacts / "accounts-import-roots.png"), full_page=True)
    context.close()
