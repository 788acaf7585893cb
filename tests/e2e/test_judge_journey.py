"""An admin sets up a judge endpoint and runs it on a release in real
Chromium, against the fake OpenAI-compatible server; a run done by a worker
is followed live on its page (htmx polling, no inline script)."""

from pathlib import Path

import pytest

from annotate.models import Membership
from curation.benchmarks.mrb import scoring_input
from curation.evaluation.judge_runs import run_judge, start_judge_run
from curation.models import JudgeEndpoint, JudgeRun, JudgeRunStatus
from curation.releases.build import build_release
from curation.releases.service import create_release
from tests.curation.evaluation.fake_openai import FakeJudge
from tests.curation.releases.test_releases import ALL_DOMAINS, make_release_project
from tests.e2e.test_release_journey import login
from tests.factories import make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

KEY = "sk-e2e-secret-key-5150"


def test_an_admin_sets_up_a_judge_and_runs_it_on_a_release(
    live_server, browser, artifacts, tmp_path, settings
):
    settings.JUDGE_HEARTBEAT_SECONDS = 0.2
    settings.JUDGE_ALLOWED_NETWORKS = ["127.0.0.1/32"]  # the fake judge's address
    project = make_release_project(tmp_path, slug="judge")
    user = make_user("boss")
    Membership.objects.create(project=project, user=user, role="admin")
    release = build_release(
        release_id=create_release(
            project=project, version="v1.0", notes="", domains=ALL_DOMAINS, seed=3, user=user,
            enqueue=False,
        ).pk
    )  # fmt: skip
    records = scoring_input.load_release_records(Path(settings.MEDIA_ROOT) / release.folder)
    with FakeJudge(api_key=KEY, model="judge-e2e", records=records) as fake:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on(
            "console",
            lambda m: errors.append(m.text) if "Content Security Policy" in m.text else None,
        )
        login(page, live_server.url, "boss", "/p/judge/")
        page.get_by_role("link", name="Judge endpoints").click()
        page.fill("input[name=name]", "fake")
        page.fill("input[name=base_url]", fake.base_url)
        page.fill("input[name=model]", "judge-e2e")
        page.fill("input[name=api_key]", KEY)
        page.get_by_role("button", name="Add endpoint").click()
        page.wait_for_selector("text=Judge endpoint fake saved.")
        assert KEY not in page.content()
        assert JudgeEndpoint.objects.get().api_key() == KEY

        page.goto(f"{live_server.url}/p/judge/releases/{release.pk}/leaderboard/")
        page.fill("input[name=name]", "fake judge")
        page.check("input[name=swapped]")
        page.fill("input[name=concurrency]", "3")
        page.get_by_role("button", name="Start the run").click()
        # Tasks run eagerly in tests: the run is done when the page loads.
        page.wait_for_selector("h1 .status-complete", timeout=30_000)
        page.screenshot(path=str(artifacts / "judge-run-1280x800.png"), full_page=True)
        page.get_by_role("link", name="On the leaderboard as fake judge").click()
        page.wait_for_selector("table.leaderboard >> text=fake judge")

        # A run a worker does: its page polls and reloads when it finishes.
        fake.answer_delay = 0.05
        run = start_judge_run(
            release=release,
            endpoint=JudgeEndpoint.objects.get(),
            name="worker run",
            swapped=False,
            concurrency=1,
            user=user,
            enqueue=False,
        )
        page.goto(f"{live_server.url}/p/judge/judge-runs/{run.pk}/")
        page.wait_for_selector("#judge-run-progress progress")
        assert run_judge(run_id=run.pk).status == JudgeRunStatus.COMPLETE
        page.wait_for_selector("h1 .status-complete", timeout=10_000)
        assert page.locator("#judge-run-progress").count() == 0
        assert KEY not in page.content()

        # Pointing the endpoint elsewhere drops the key, and the page says so;
        # an internal address is refused by the form.
        page.goto(f"{live_server.url}/p/judge/judges/")
        page.get_by_role("link", name="Edit").click()
        page.fill("input[name=base_url]", "http://10.0.0.5:8000/v1")
        page.get_by_role("button", name="Save", exact=True).click()
        page.wait_for_selector("text=JUDGE_ALLOWED_NETWORKS")
        page.fill("input[name=base_url]", fake.base_url.replace("127.0.0.1", "localhost"))
        page.get_by_role("button", name="Save", exact=True).click()
        page.wait_for_selector("text=The stored API key was removed")
        page.screenshot(path=str(artifacts / "judge-key-removed-1280x800.png"), full_page=True)
        assert not JudgeEndpoint.objects.get().has_api_key
        assert not errors, errors
        page.close()
    assert fake.problems == []
    assert JudgeRun.objects.filter(status=JudgeRunStatus.COMPLETE).count() == 2
