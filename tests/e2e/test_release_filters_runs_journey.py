"""A curator puts a project judge run in the "too easy" ensemble in real
Chromium, by keyboard (issue 36 items 3+4): the release page names the run and
its model beside the evaluation, and both pages pass axe-core."""

import pytest

from annotate.models import Membership
from curation.models import Release, ReleaseStatus
from tests.curation.releases.test_release_filter_judge_runs import mirror
from tests.curation.releases.test_release_filters import ensemble, reference  # noqa: F401
from tests.e2e.test_mix_journey import no_axe_violations
from tests.e2e.test_release_journey import login
from tests.factories import make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SLUG = "tef"  # the ensemble fixture's project


def test_a_curator_adds_a_project_judge_run_to_the_too_easy_ensemble(
    live_server,
    browser,
    artifacts,
    ensemble,  # noqa: F811
):
    project, evals = ensemble
    run = mirror(project, evals[1].pk, name="calibrated judge", model="judge-model-7b")
    expected = reference(project, [e.pk for e in evals])  # the run stands for evals[1]
    user = make_user("run-filterer")
    Membership.objects.create(project=project, user=user, role="curator")

    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    login(page, live_server.url, "run-filterer", f"/p/{SLUG}/releases/new/")
    no_axe_violations(page, "release_new with project judge runs")

    page.fill("input[name=version]", "v-runs")
    for name, value in (("too_easy_ensemble", evals[0].pk), ("too_easy_judge_runs", run.pk)):
        box = page.locator(f"input[name={name}][value='{value}']")
        box.focus()
        page.keyboard.press("Space")
        assert box.is_checked()
    page.locator("input[name=version]").focus()
    page.keyboard.press("Enter")

    page.wait_for_url(f"**/p/{SLUG}/releases/*/")
    page.wait_for_selector("h1 .status-ready", timeout=60_000)
    release = Release.objects.get(project=project, version="v-runs")
    assert release.status == ReleaseStatus.READY
    text = page.get_by_role("region", name="Benchmark-construction filters").inner_text()
    assert f"calibrated judge (project judge run #{run.pk}, model judge-model-7b)" in text
    assert release.manifest["release_filters"]["too_easy"]["dropped"] == len(expected)
    assert str(len(expected)) in text
    page.screenshot(path=str(artifacts / "release-too-easy-runs-1280x800.png"), full_page=True)
    no_axe_violations(page, "release_detail with a project judge run")
    assert not errors
