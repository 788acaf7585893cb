"""A curator cuts a release with the "too easy" filter in real Chromium (issue
36's done-when), choosing the ensemble by keyboard; the release page states
what the filter dropped, per domain, and the balance. Both pages pass axe-core."""

import pytest

from annotate.models import Membership
from curation.models import Release, ReleaseStatus
from tests.curation.releases.test_release_filters import ensemble, reference  # noqa: F401
from tests.e2e.test_mix_journey import no_axe_violations
from tests.e2e.test_release_journey import login
from tests.factories import make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SLUG = "tef"  # the ensemble fixture's project


def test_a_curator_builds_a_release_with_the_too_easy_filter(
    live_server,
    browser,
    artifacts,
    ensemble,  # noqa: F811
):
    project, evals = ensemble
    expected = reference(project, [e.pk for e in evals])
    user = make_user("filterer")
    Membership.objects.create(project=project, user=user, role="curator")

    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    login(page, live_server.url, "filterer", f"/p/{SLUG}/releases/new/")
    no_axe_violations(page, "release_new with filters")

    # The ensemble by keyboard: focus each entry's checkbox and press Space.
    page.fill("input[name=version]", "v-easy")
    for e in evals:
        box = page.locator(f"input[name=too_easy_ensemble][value='{e.pk}']")
        box.focus()
        page.keyboard.press("Space")
        assert box.is_checked()
    page.locator("input[name=version]").focus()
    page.keyboard.press("Enter")  # submits the form

    page.wait_for_url(f"**/p/{SLUG}/releases/*/")
    page.wait_for_selector("h1 .status-ready", timeout=60_000)
    release = Release.objects.get(project=project, version="v-easy")
    assert release.status == ReleaseStatus.READY
    table = page.get_by_role("region", name="Benchmark-construction filters")
    text = table.inner_text()
    assert "Too easy" in text and "dropped" in text
    assert "judge-a" in text and "judge-b" in text
    assert str(len(expected)) in text
    per_domain = release.manifest["release_filters"]["too_easy"]["dropped_per_domain"]
    assert sum(per_domain.values()) == len(expected)
    for domain, n in per_domain.items():
        assert f"{domain}: {n}" in text
    assert page.get_by_role("region", name="Side and length balance").is_visible()
    page.screenshot(path=str(artifacts / "release-too-easy-1280x800.png"), full_page=True)
    no_axe_violations(page, "release_detail with filters")
    assert not errors
